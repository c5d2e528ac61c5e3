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

use rudder_common::discovery::{ProviderSink, ProviderUpdate, RuleKey};
use tokio::sync::{oneshot, watch};
use zookeeper_client::{Client, CreateMode, OneshotWatcher, SessionState, WatchedEvent};

use crate::app_level::AppLevel;
use crate::catalog::{Catalog, ProviderDelta};
use crate::config_center::{RuleInbox, RuleOutcome, RuleSource, RuleWatch};
use crate::error::RegistryError;
use crate::migrating::Migration;
use crate::migration::{DiscoveryView, MigrationStep};
use crate::paths::ServicePaths;
use crate::registration::Registration;
use crate::session::Sessions;
use crate::split::SplitFeed;
use crate::subscription::SubscriptionStatus;
use crate::timing::sleep_opt;

mod migrate;
mod registering;
mod views;

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

/// The config-center configurator rules a subscription follows.
pub(crate) struct RuleFeed {
    pub(crate) inbox: Arc<RuleInbox>,
    /// Owns the watcher task; closed with the subscription.
    pub(crate) watch: RuleWatch,
    /// `<application>.configurators`.
    pub(crate) application: RuleKey,
    /// `<interface>:<version>:<group>.configurators`.
    pub(crate) service: RuleKey,
}

pub(crate) struct Subscriber {
    pub(crate) sessions: Arc<Sessions>,
    pub(crate) paths: ServicePaths,
    /// The consumer node, when registering.
    pub(crate) registration: Option<Registration>,
    pub(crate) catalog: Catalog,
    pub(crate) sink: Arc<dyn ProviderSink>,
    pub(crate) status: watch::Sender<SubscriptionStatus>,
    /// Provider changes listed but not yet fed to the directory.
    pub(crate) pending: ProviderDelta,
    /// Whether the directory has had its first full list.
    pub(crate) fed_once: bool,
    /// Whether the configurator rules changed since the last feed.
    pub(crate) rules_changed: bool,
    /// The config-center rules, unless dynamic configuration is off.
    pub(crate) rules: Option<RuleFeed>,
    /// Which views are followed and used (`migration.step`).
    pub(crate) step: MigrationStep,
    /// The comparator's threshold (`migration.threshold`).
    pub(crate) threshold: f32,
    /// The view feeding the sink now.
    pub(crate) view: DiscoveryView,
    /// The application-level view, unless the step is `FORCE_INTERFACE`.
    pub(crate) app_level: Option<AppLevel>,
    /// The migration rule and the switches it makes.
    pub(crate) migration: Migration,
    /// Where the interface view goes while a rule's `proportion` shares the calls, if anywhere.
    pub(crate) split: Option<SplitFeed>,
}

impl Subscriber {
    /// Takes `client`'s session as the current one: the consumer node is due for (re-)registration,
    /// which [`Subscriber::register_if_due`] does after the listing, so it never delays discovery.
    pub(crate) fn attach(&mut self) {
        if let Some(registration) = &mut self.registration {
            registration.due = Some(Instant::now());
            registration.failures = 0;
        }
        self.status.send_modify(|s| {
            s.sessions += 1;
            s.connected = true;
            s.registered = false;
        });
    }

    /// Applies the config-center rule texts that arrived; whether the rules in effect changed.
    pub(crate) fn take_rules(&mut self) -> bool {
        let Some(feed) = &self.rules else {
            return false;
        };
        let mut changed = false;
        let mut updates = 0;
        let mut errors = Vec::new();
        for (key, text) in feed.inbox.take() {
            let source = if key == feed.service {
                RuleSource::Service
            } else if key == feed.application {
                RuleSource::Application
            } else {
                continue;
            };
            updates += 1;
            self.migration.mirror.dynamic(source, text.as_deref());
            if let Some(app_level) = &mut self.app_level {
                app_level.catalog.set_dynamic_rule(source, text.as_deref());
            }
            match self.catalog.set_dynamic_rule(source, text.as_deref()) {
                RuleOutcome::Changed => changed = true,
                RuleOutcome::Unchanged => {}
                RuleOutcome::Rejected(error) => {
                    tracing::warn!(rule = %key, %error, "failed to parse a dynamic configuration rule; keeping the last good one");
                    errors.push(format!("{key}: {error}"));
                }
            }
        }
        let in_effect = self.catalog.dynamic_rules();
        self.status.send_modify(|s| {
            s.rule_updates += updates;
            s.rule_errors += errors.len() as u64;
            if let Some(last) = errors.pop() {
                s.last_rule_error = Some(last);
            }
            s.dynamic_rules = in_effect;
        });
        self.rules_changed |= changed;
        changed
    }

    /// Lists `category`, arms its watch and updates the catalog (not yet the directory).
    async fn list(
        &mut self,
        client: &Client,
        category: Category,
        watches: &mut Watches,
    ) -> Result<(), RegistryError> {
        if category == Category::Providers && !self.migration.follow_interface {
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
                    &mut self.catalog,
                    children,
                    self.sessions.address().empty_protection(),
                    &self.paths.providers,
                    &self.status,
                );
                self.pending.added.extend(delta.added);
                self.pending.removed.extend(delta.removed);
                watches.providers = Some(armed);
                watches.providers_dirty = false;
            }
            Category::Configurators => {
                self.migration.mirror.configurators(&children);
                if let Some(app_level) = &mut self.app_level {
                    app_level.catalog.set_configurators(children.clone());
                }
                if self.catalog.set_configurators(children) {
                    self.rules_changed = true;
                }
                watches.configurators = Some(armed);
                watches.configurators_dirty = false;
            }
        }
        Ok(())
    }

    /// Re-lists whatever is dirty, then feeds the directory if the provider list changed.
    pub(crate) async fn refresh(
        &mut self,
        client: &Client,
        watches: &mut Watches,
    ) -> Result<(), RegistryError> {
        // Configurators first, so one listing of providers already sees the new rules.
        if watches.configurators_dirty {
            self.list(client, Category::Configurators, watches).await?;
        }
        if watches.providers_dirty {
            self.list(client, Category::Providers, watches).await?;
        }
        self.feed();
        Ok(())
    }

    /// Hands what changed to the directory: the whole list the first time and whenever the rules
    /// changed (every provider may be affected), otherwise only the providers that came or went, so a
    /// change among 10,000 providers costs work for one.
    pub(crate) fn feed(&mut self) {
        let view = self.choose_view();
        let switched = view != self.view;
        if switched {
            tracing::info!(from = %self.view, to = %view, step = %self.step, "discovery view switched");
        }
        self.view = view;
        let interface_pending = std::mem::take(&mut self.pending);
        let app_pending = self
            .app_level
            .as_mut()
            .map(|a| std::mem::take(&mut a.pending))
            .unwrap_or_default();
        let full = !self.fed_once || self.rules_changed || switched;
        let percent = self.split_percent();
        if let Some(split) = &mut self.split {
            split.feed(percent, &self.catalog, &interface_pending, full);
        }
        let (catalog, pending) = match (view, &self.app_level) {
            (DiscoveryView::Application, Some(app_level)) => (&app_level.catalog, app_pending),
            _ => (&self.catalog, interface_pending),
        };
        let update = if full {
            self.fed_once = true;
            self.rules_changed = false;
            Some(
                self.sink
                    .update(ProviderUpdate::Full(catalog.provider_urls())),
            )
        } else if !pending.is_empty() {
            Some(
                self.sink
                    .update(ProviderUpdate::Delta(catalog.changes(&pending))),
            )
        } else {
            None
        };
        let malformed = self.catalog.malformed();
        let configurators = self.catalog.configurators().len();
        let dynamic_rules = self.catalog.dynamic_rules();
        let disabled = if update.is_some() {
            Some((catalog.disabled(), catalog.reweighted()))
        } else {
            None
        };
        self.report_views();
        self.status.send_modify(|s| {
            if let Some((disabled, reweighted)) = disabled {
                s.disabled = disabled;
                s.reweighted = reweighted;
            }
            s.dynamic_rules = dynamic_rules;
            s.listings += 1;
            if let Some(update) = update {
                s.generation += 1;
                s.providers = update.total;
                s.rejected = if full {
                    update.rejected as u64
                } else {
                    s.rejected + update.rejected as u64
                };
            }
            s.malformed = malformed;
            s.configurators = configurators;
        });
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
        let inbox = self.rules.as_ref().map(|r| Arc::clone(&r.inbox));
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
                () = instances_changed(self.app_level.as_mut()) => Wake::Instances,
                () = self.migration.wake() => Wake::Migration,
            };
            let mut session_over = false;
            match wake {
                Wake::Stop => {
                    self.unregister(&client).await;
                    if let Some(app_level) = self.app_level.take() {
                        app_level.feed.close().await;
                    }
                    if let Some(feed) = self.rules.take() {
                        feed.watch.close().await;
                    }
                    self.migration.close().await;
                    return;
                }
                Wake::Migration => self.on_migration(&client, &mut watches).await,
                Wake::Instances => {
                    self.take_instances();
                    self.feed();
                }
                Wake::Rules => {
                    // A rule change touches every provider: the whole list goes to the sink.
                    if self.take_rules() {
                        self.feed();
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
                    self.status.send_modify(|s| s.connected = false);
                }
                Wake::State(s) if s.is_terminated() => session_over = true,
                Wake::State(_) => {
                    tracing::info!("ZooKeeper connection back; re-listing");
                    self.status.send_modify(|s| s.connected = true);
                    watches.providers_dirty = true;
                    watches.configurators_dirty = true;
                }
                Wake::Retry => {}
            }
            if session_over {
                tracing::warn!("ZooKeeper session ended; opening a new one");
                self.status.send_modify(|s| {
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

async fn instances_changed(app_level: Option<&mut AppLevel>) {
    match app_level {
        Some(app_level) => app_level.feed.changed().await,
        None => std::future::pending().await,
    }
}

async fn rules_arrived(inbox: Option<&RuleInbox>) {
    match inbox {
        Some(inbox) => inbox.arrived().await,
        None => std::future::pending().await,
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
