//! The background task of one subscription: list, watch, re-list, and survive ZooKeeper trouble.
//!
//! Watches are one-shot and re-armed by the listing itself (`list_and_watch_children` lists and sets the
//! watch in one request), so no change between a watch firing and the next listing can be missed, and
//! ZooKeeper re-delivers on reconnect what changed while the connection was down (ZOOKEEPER-43). As a
//! further guard against lost events across reconnects (ZOOKEEPER-4698), every return to `SyncConnected`
//! re-lists both categories.
//!
//! | what happens | what the task does |
//! |---|---|
//! | a child list changes | re-list that category, re-arm its watch, update the directory |
//! | connection lost | keep the directory as it is, mark not connected, wait |
//! | reconnected (same session) | re-list both categories |
//! | a listing fails | keep the directory, retry with backoff |
//! | session expired | open a new session, re-list, register the consumer again |
//! | registering the consumer fails | keep discovering; retry the registration with backoff |
//! | a config-center configurator rule changes | re-apply the rules, hand the whole list over |
//!
//! An empty list read over a live connection is honoured (no provider); a failed read never is.
//!
//! Registration never holds discovery up: a consumer node that cannot be written (an ACL, a quota, a
//! read-only server) leaves [`SubscriptionStatus::registered`] false and the last error in
//! [`SubscriptionStatus::registration_error`], and is retried in the background (doubling pauses up to
//! the registry's retry maximum) while providers and configurators are followed as usual.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio::time::Instant;

use tokio::sync::oneshot;
use zookeeper_client::{Client, CreateMode, OneshotWatcher, SessionState, WatchedEvent};

use crate::error::RegistryError;
use crate::following::{instances_changed, rules_arrived, Following, InterfaceLevel};
use crate::paths::ServicePaths;
use crate::registration::Registration;
use crate::session::Sessions;
use crate::timing::sleep_opt;

mod registering;

type WatchFuture = Pin<Box<dyn Future<Output = WatchedEvent> + Send>>;

/// Which category a listing concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Category {
    Providers,
    Configurators,
}

/// Armed watches and pending re-lists of the current session.
#[derive(Default)]
pub(crate) struct Watches {
    pub(crate) providers: Option<WatchFuture>,
    configurators: Option<WatchFuture>,
    pub(crate) providers_dirty: bool,
    configurators_dirty: bool,
}

impl Watches {
    pub(crate) fn all_dirty() -> Watches {
        Watches {
            providers_dirty: true,
            configurators_dirty: true,
            ..Watches::default()
        }
    }

    fn is_dirty(&self) -> bool {
        self.providers_dirty || self.configurators_dirty
    }
}

/// A category node that does not exist, read without creating it: no children, and a watch that
/// fires when someone creates it (or, created meanwhile, its children and their watch).
async fn await_creation(
    client: &Client,
    path: &str,
) -> Result<(Vec<String>, OneshotWatcher), RegistryError> {
    match client.check_and_watch_stat(path).await {
        Ok((None, created)) => Ok((Vec::new(), created)),
        Ok((Some(_), _)) => client
            .list_and_watch_children(path)
            .await
            .map_err(|e| RegistryError::zookeeper("list", path, e)),
        Err(e) => Err(RegistryError::zookeeper("watch", path, e)),
    }
}

/// Why the event loop stopped waiting.
enum Wake {
    Stop,
    Watch(Category, WatchedEvent),
    State(SessionState),
    Retry,
    Rules,
    Instances,
    Migration,
}

pub(crate) struct Subscriber {
    pub(crate) sessions: Arc<Sessions>,
    pub(crate) paths: ServicePaths,
    /// The consumer node, when registering.
    pub(crate) registration: Option<Registration>,
    /// The views, rules and migration state (shared with every registry).
    pub(crate) f: Following,
}

/// ZooKeeper's interface-level listing, for one wake of the subscription's loop.
pub(crate) struct ZkInterface<'a> {
    sessions: &'a Arc<Sessions>,
    paths: &'a ServicePaths,
    client: &'a Client,
    watches: &'a mut Watches,
}

impl ZkInterface<'_> {
    /// Lists `category`, arms its watch and updates the catalog (not yet the directory).
    async fn list(&mut self, f: &mut Following, category: Category) -> Result<(), RegistryError> {
        let (client, watches) = (self.client, &mut *self.watches);
        if category == Category::Providers && !f.migration.follow_interface {
            // FORCE_APPLICATION: the interface-level providers are not followed at all.
            watches.providers_dirty = false;
            return Ok(());
        }
        let path = match category {
            Category::Providers => self.paths.providers.clone(),
            Category::Configurators => self.paths.configurators.clone(),
        };
        let (children, watcher) = match client.list_and_watch_children(&path).await {
            Ok(listed) => listed,
            // Read-only: the category node is not created, its creation is awaited.
            Err(zookeeper_client::Error::NoNode) if self.sessions.options().read_only() => {
                await_creation(client, &path).await?
            }
            // Someone deleted the category node: nothing is listed there, and it is watched again once
            // re-created by the next listing's mkdir.
            Err(zookeeper_client::Error::NoNode) => {
                let persistent = self.sessions.create_options(CreateMode::Persistent);
                client
                    .mkdir(&path, &persistent)
                    .await
                    .map_err(|e| RegistryError::zookeeper("create", &path, e))?;
                client
                    .list_and_watch_children(&path)
                    .await
                    .map_err(|e| RegistryError::zookeeper("list", &path, e))?
            }
            Err(e) => return Err(RegistryError::zookeeper("list", &path, e)),
        };
        let armed: WatchFuture = Box::pin(changed(watcher));
        match category {
            Category::Providers => {
                let delta = crate::empty_push::apply_providers(
                    &mut f.catalog,
                    children,
                    self.sessions.address().empty_protection(),
                    &self.paths.providers,
                    &f.status,
                );
                f.pending.added.extend(delta.added);
                f.pending.removed.extend(delta.removed);
                watches.providers = Some(armed);
                watches.providers_dirty = false;
            }
            Category::Configurators => {
                f.migration.mirror.configurators(&children);
                if let Some(app_level) = &mut f.app_level {
                    app_level.catalog.set_configurators(children.clone());
                }
                if f.catalog.set_configurators(children) {
                    f.rules_changed = true;
                }
                watches.configurators = Some(armed);
                watches.configurators_dirty = false;
            }
        }
        Ok(())
    }

    /// Re-lists whatever is dirty, then feeds the directory if the provider list changed.
    async fn refresh(&mut self, f: &mut Following) -> Result<(), RegistryError> {
        // Configurators first, so one listing of providers already sees the new rules.
        if self.watches.configurators_dirty {
            self.list(f, Category::Configurators).await?;
        }
        if self.watches.providers_dirty {
            self.list(f, Category::Providers).await?;
        }
        f.feed();
        Ok(())
    }
}

impl InterfaceLevel for ZkInterface<'_> {
    fn start<'a>(
        &'a mut self,
        following: &'a mut Following,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(async move {
            self.watches.providers_dirty = true;
            if let Err(error) = self.refresh(following).await {
                // The loop retries the dirty listing with backoff.
                tracing::warn!(
                    error = &error as &dyn std::error::Error,
                    "interface-level listing failed; retrying"
                );
            }
        })
    }

    fn stop(&mut self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        self.watches.providers = None;
        self.watches.providers_dirty = false;
        Box::pin(async {})
    }
}

impl Subscriber {
    /// Takes `client`'s session as the current one: the consumer node is due for (re-)registration,
    /// which [`Subscriber::register_if_due`] does after the listing, so it never delays discovery.
    pub(crate) fn attach(&mut self) {
        if let Some(registration) = &mut self.registration {
            registration.due = Some(Instant::now());
            registration.failures = 0;
        }
        self.f.status.send_modify(|s| {
            s.sessions += 1;
            s.connected = true;
            s.registered = false;
        });
    }

    /// Re-lists whatever is dirty, then feeds the directory if the provider list changed.
    pub(crate) async fn refresh(
        &mut self,
        client: &Client,
        watches: &mut Watches,
    ) -> Result<(), RegistryError> {
        let mut interface = ZkInterface {
            sessions: &self.sessions,
            paths: &self.paths,
            client,
            watches,
        };
        interface.refresh(&mut self.f).await
    }

    /// Follows ZooKeeper until `stop` fires or the registry is closed.
    ///
    /// `watches` are those armed by the first [`Subscriber::refresh`], done by `subscribe`.
    pub(crate) async fn run(
        mut self,
        mut client: Client,
        mut watches: Watches,
        mut stop: oneshot::Receiver<()>,
    ) {
        let mut state = client.state_watcher();
        let mut failures: u32 = 0;
        let inbox = self.f.rules.as_ref().map(|r| Arc::clone(&r.inbox));
        loop {
            let retry_after = (watches.is_dirty() && failures > 0)
                .then(|| self.sessions.options().retry_delay(failures - 1));
            // Only while connected: a due attempt would otherwise wake the loop over and over.
            let register_at = self
                .registration
                .as_ref()
                .and_then(|r| r.due)
                .filter(|_| client.state() == SessionState::SyncConnected);
            let wake = tokio::select! {
                _ = &mut stop => Wake::Stop,
                () = self.sessions.closed() => Wake::Stop,
                event = poll_armed(&mut watches.providers) => Wake::Watch(Category::Providers, event),
                event = poll_armed(&mut watches.configurators) => Wake::Watch(Category::Configurators, event),
                s = state.changed() => Wake::State(s),
                () = sleep_opt(retry_after) => Wake::Retry,
                () = sleep_until_opt(register_at) => Wake::Retry,
                () = rules_arrived(inbox.as_deref()) => Wake::Rules,
                () = instances_changed(self.f.app_level.as_mut()) => Wake::Instances,
                () = self.f.migration.wake() => Wake::Migration,
            };
            let mut session_over = false;
            match wake {
                Wake::Stop => {
                    self.unregister(&client).await;
                    self.f.close().await;
                    return;
                }
                Wake::Migration => {
                    let mut interface = ZkInterface {
                        sessions: &self.sessions,
                        paths: &self.paths,
                        client: &client,
                        watches: &mut watches,
                    };
                    self.f.on_migration(&mut interface).await;
                }
                Wake::Instances => {
                    self.f.take_instances();
                    self.f.feed();
                }
                Wake::Rules => {
                    // A rule change touches every provider: the whole list goes to the sink.
                    if self.f.take_rules() {
                        self.f.feed();
                    }
                }
                Wake::Watch(category, event) => {
                    match category {
                        Category::Providers => watches.providers = None,
                        Category::Configurators => watches.configurators = None,
                    }
                    if event.session_state.is_terminated() {
                        session_over = true;
                    } else {
                        match category {
                            Category::Providers => watches.providers_dirty = true,
                            Category::Configurators => watches.configurators_dirty = true,
                        }
                    }
                }
                Wake::State(SessionState::Disconnected) => {
                    tracing::warn!("ZooKeeper connection lost; keeping the last known providers");
                    self.f.status.send_modify(|s| s.connected = false);
                }
                Wake::State(s) if s.is_terminated() => session_over = true,
                Wake::State(_) => {
                    tracing::info!("ZooKeeper connection back; re-listing");
                    self.f.status.send_modify(|s| s.connected = true);
                    watches.providers_dirty = true;
                    watches.configurators_dirty = true;
                }
                Wake::Retry => {}
            }
            if session_over {
                tracing::warn!("ZooKeeper session ended; opening a new one");
                self.f.status.send_modify(|s| {
                    s.connected = false;
                    s.registered = false;
                });
                let renewed = tokio::select! {
                    _ = &mut stop => return,
                    renewed = self.sessions.renew(Some(client.session_id())) => renewed,
                };
                // Err only once the registry is closed: connection failures are retried inside.
                let Ok(fresh) = renewed else { return };
                client = fresh;
                self.attach();
                state = client.state_watcher();
                watches = Watches::all_dirty();
                failures = 0;
            }
            if watches.is_dirty() && client.state() != SessionState::Disconnected {
                match self.refresh(&client, &mut watches).await {
                    Ok(()) => failures = 0,
                    Err(error) => {
                        failures = failures.saturating_add(1);
                        tracing::warn!(
                            error = &error as &dyn std::error::Error,
                            "registry listing failed; keeping the last known providers"
                        );
                    }
                }
            }
            if client.state() == SessionState::SyncConnected {
                self.register_if_due(&client).await;
            }
        }
    }
}

async fn changed(watcher: OneshotWatcher) -> WatchedEvent {
    watcher.changed().await
}

async fn poll_armed(slot: &mut Option<WatchFuture>) -> WatchedEvent {
    match slot {
        Some(future) => future.await,
        None => std::future::pending().await,
    }
}

async fn sleep_until_opt(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
