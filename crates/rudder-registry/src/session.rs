//! The ZooKeeper session shared by a registry's subscriptions, and its replacement after expiry.
//!
//! zookeeper-client reconnects by itself while a session lives (and re-arms watches), so a short outage
//! needs nothing from rudder. A session that ends (`Expired`, `AuthFailed`, `Closed`) cannot be revived:
//! every operation on it fails, and rebuilding is the caller's job. [`Sessions::renew`] does that once for
//! all subscriptions.
//!
//! Waits that end:
//!
//! * **Single flight, no lock across I/O.** One connector task per registry address opens sessions
//!   (retrying with backoff until it succeeds or the registry is closed) and publishes each on a
//!   `watch` channel; whoever needs a session waits on the channel. No mutex is held across a connect or
//!   a renewal loop, so a registry that is down delays only those who wait for it, and each waiter bounds
//!   its own wait (`tokio::time::timeout`).
//! * **Closing ends at once.** [`Sessions::close`] publishes `Closed`: the connector stops mid-attempt and
//!   every waiter returns [`RegistryError::Closed`].
//! * **Nothing polls a watch after its session is gone.** Every task that follows a watch (subscriptions,
//!   rule watches) is spawned through [`Sessions::spawn`] and counted; `close` waits for them to end
//!   before it lets the session go, then waits (briefly) for ZooKeeper to confirm the close. See
//!   `Sessions::close` for why this order matters at process exit.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{watch, Notify};
use tokio::task::JoinHandle;
use zookeeper_client::{Acls, Client, CreateMode, CreateOptions, SessionId, SessionState};

use crate::address::RegistryAddress;
use crate::error::RegistryError;
use crate::options::RegistryOptions;
use crate::probe;
use crate::tls_probe;

/// How long [`Sessions::close`] waits for ZooKeeper to confirm that a connected session is closed (its
/// ephemeral nodes are then gone at once rather than after the session timeout).
const CLOSE_CONFIRMATION: Duration = Duration::from_secs(2);

/// Where the registry's session stands, as published to every waiter.
#[derive(Debug, Clone)]
enum Link {
    /// No live session. `connecting` tells whether the connector task runs (one at most).
    Down {
        connecting: bool,
        /// Failed attempts since the last session, and the last failure (for the deadline's error).
        attempts: u32,
        last_error: Option<RegistryError>,
    },
    /// The current session.
    Up(Client),
    /// [`Sessions::close`] was called; nothing opens again.
    Closed,
}

impl Link {
    const fn down() -> Link {
        Link::Down {
            connecting: false,
            attempts: 0,
            last_error: None,
        }
    }
}

/// The current session of one registry.
#[derive(Debug)]
pub(crate) struct Sessions {
    address: RegistryAddress,
    options: RegistryOptions,
    link: watch::Sender<Link>,
    established: AtomicU64,
    closed: AtomicBool,
    close_notify: Notify,
    /// Tasks spawned through [`Sessions::spawn`] still alive.
    tasks: watch::Sender<usize>,
}

/// What [`Sessions::step`] found.
enum Step {
    Ready(Client),
    Closed,
    Wait { spawn_connector: bool },
}

impl Sessions {
    pub(crate) fn new(address: RegistryAddress, options: RegistryOptions) -> Sessions {
        Sessions {
            address,
            options,
            link: watch::channel(Link::down()).0,
            established: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            close_notify: Notify::new(),
            tasks: watch::channel(0).0,
        }
    }

    pub(crate) fn address(&self) -> &RegistryAddress {
        &self.address
    }

    pub(crate) fn options(&self) -> &RegistryOptions {
        &self.options
    }

    /// How many sessions have been established so far (1 after connect, +1 per renewal).
    pub(crate) fn established(&self) -> u64 {
        self.established.load(Ordering::Relaxed)
    }

    /// Whether a session is up now (connected or reconnecting within its timeout).
    pub(crate) fn is_up(&self) -> bool {
        matches!(&*self.link.borrow(), Link::Up(client) if !client.state().is_terminated())
    }

    /// ACLs for the nodes rudder creates: creator-only with credentials, world-open without, as Dubbo's
    /// Curator client (`Curator5ZookeeperClient` installs an `ACLProvider` answering `CREATOR_ALL_ACL`
    /// when the URL has user information; Curator's default otherwise is `OPEN_ACL_UNSAFE`). With
    /// `sasl=digest-md5` the creator is the SASL identity (`sasl:user`).
    pub(crate) fn create_options(&self, mode: CreateMode) -> CreateOptions<'static> {
        if self.address.has_credentials() {
            mode.with_acls(Acls::creator_all())
        } else {
            mode.with_acls(Acls::anyone_all())
        }
    }

    /// A live client within `wait`: the first session of [`ZookeeperRegistry::connect`]
    /// (crate::ZookeeperRegistry::connect) and of builds with a deadline.
    ///
    /// # Errors
    /// [`RegistryError::Unreachable`] with the last failure once `wait` has passed,
    /// [`RegistryError::AuthFailed`] as soon as ZooKeeper refuses the credentials,
    /// [`RegistryError::Refused`] and [`RegistryError::NotZookeeper`] as soon as an attempt tells
    /// (see the `probe` module), [`RegistryError::Closed`].
    pub(crate) async fn connect_within(
        self: &Arc<Self>,
        wait: Duration,
    ) -> Result<Client, RegistryError> {
        match tokio::time::timeout(wait, self.client(None, true)).await {
            Ok(outcome) => outcome,
            Err(_) => Err(self.unreachable(wait)),
        }
    }

    /// The error for a wait of `waited` that saw no session: the hosts and the last failure.
    pub(crate) fn unreachable(&self, waited: Duration) -> RegistryError {
        let source = match &*self.link.borrow() {
            Link::Down {
                last_error: Some(error),
                ..
            } => match error {
                RegistryError::Unreachable { source, .. } => source.clone(),
                // An attempt failed otherwise (credentials refused): that is the answer.
                other => return other.clone(),
            },
            Link::Closed => return RegistryError::Closed,
            _ => None,
        };
        RegistryError::Unreachable {
            hosts: self.address.connect_string(),
            waited,
            source,
        }
    }

    /// A live client: the current one unless its session is `stale` (or over), else the next one the
    /// connector opens. Waits as long as it takes: bound it with a timeout where a deadline applies.
    ///
    /// # Errors
    /// [`RegistryError::Closed`] once the registry is closed; connection failures are retried.
    pub(crate) async fn renew(
        self: &Arc<Self>,
        stale: Option<SessionId>,
    ) -> Result<Client, RegistryError> {
        self.client(stale, false).await
    }

    async fn client(
        self: &Arc<Self>,
        stale: Option<SessionId>,
        fail_on_verdict: bool,
    ) -> Result<Client, RegistryError> {
        let mut link = self.link.subscribe();
        loop {
            match self.step(stale) {
                Step::Ready(client) => return Ok(client),
                Step::Closed => return Err(RegistryError::Closed),
                Step::Wait { spawn_connector } => {
                    if spawn_connector {
                        self.spawn_connector();
                    }
                }
            }
            if fail_on_verdict {
                // `borrow`, not `borrow_and_update`: a change seen here must still wake `changed`.
                // Refused credentials or unusable TLS files: retrying cannot help.
                if let Link::Down {
                    last_error: Some(error),
                    ..
                } = &*link.borrow()
                {
                    if is_verdict(error) {
                        return Err(error.clone());
                    }
                }
            }
            // The sender lives in `self`: `changed` cannot fail while we hold it.
            let _ = link.changed().await;
        }
    }

    /// One look at the link, under the channel's lock so that two waiters never start two connectors
    /// and a stale session is dropped by exactly one of them.
    fn step(&self, stale: Option<SessionId>) -> Step {
        let mut step = Step::Closed;
        self.link.send_if_modified(|link| {
            if let Link::Up(client) = link {
                let is_stale = stale.is_some_and(|s| s == client.session_id());
                if !is_stale && !client.state().is_terminated() {
                    step = Step::Ready(client.clone());
                    return false;
                }
                *link = Link::down();
            }
            match link {
                Link::Closed => {
                    step = Step::Closed;
                    false
                }
                Link::Down { connecting, .. } if !*connecting => {
                    *connecting = true;
                    step = Step::Wait {
                        spawn_connector: true,
                    };
                    true
                }
                _ => {
                    step = Step::Wait {
                        spawn_connector: false,
                    };
                    false
                }
            }
        });
        step
    }

    /// The connector: attempts with backoff until a session is up or the registry is closed. It holds
    /// the registry only during an attempt, so a registry whose handles are all dropped stops it.
    fn spawn_connector(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        let mut link = self.link.subscribe();
        link.borrow_and_update();
        let spawned = self.spawn(async move {
            let mut attempt: u32 = 0;
            loop {
                let Some(sessions) = weak.upgrade() else {
                    return;
                };
                let outcome = tokio::select! {
                    outcome = sessions.connect_once() => outcome,
                    () = sessions.closed() => return,
                };
                match outcome {
                    Ok(client) => {
                        tracing::info!(session = %client.session_id(), "ZooKeeper session established");
                        sessions.link.send_if_modified(|l| match l {
                            Link::Closed => false,
                            _ => {
                                *l = Link::Up(client);
                                true
                            }
                        });
                        return;
                    }
                    Err(error) => {
                        let delay = sessions.options.retry_delay(attempt);
                        attempt = attempt.saturating_add(1);
                        // A verdict goes to whoever waits for the session (`renew`), which reports
                        // it: logging it here too would print the same cause twice.
                        if attempt == 1 && !is_verdict(&error) {
                            tracing::warn!(error = &error as &dyn std::error::Error, retry_in = ?delay, "ZooKeeper session not established");
                        } else {
                            tracing::debug!(error = &error as &dyn std::error::Error, retry_in = ?delay, "ZooKeeper session not established");
                        }
                        sessions.link.send_if_modified(|l| match l {
                            Link::Down {
                                attempts,
                                last_error,
                                ..
                            } => {
                                *attempts = attempt;
                                *last_error = Some(error);
                                true
                            }
                            _ => false,
                        });
                        link.borrow_and_update();
                        drop(sessions);
                        tokio::select! {
                            () = tokio::time::sleep(delay) => {}
                            // Closed (or the registry dropped): stop at once.
                            _ = link.changed() => {
                                if matches!(&*link.borrow(), Link::Closed) {
                                    return;
                                }
                            }
                        }
                    }
                }
            }
        });
        if spawned.is_none() {
            self.link.send_if_modified(|l| match l {
                Link::Down { connecting, .. } => {
                    *connecting = false;
                    true
                }
                _ => false,
            });
        }
    }

    async fn connect_once(&self) -> Result<Client, RegistryError> {
        let hosts = self.address.connect_string();
        // Eagerly: a refused connection is one failed attempt (retried with backoff here), not a
        // silent wait until the session timeout inside the client.
        let mut connector = Client::connector()
            .with_session_timeout(self.options.session_timeout())
            .with_fail_eagerly();
        if let Some(digest) = self.address.digest() {
            connector = connector.with_auth("digest", &digest);
        }
        let (user, password) = self.address.credentials();
        let security = self.address.security();
        connector = security.apply(connector, user, password)?;
        let waited = self.options.connect_timeout();
        let unreachable = |source: Option<zookeeper_client::Error>| RegistryError::Unreachable {
            hosts: hosts.clone(),
            waited,
            source,
        };
        let connecting = tokio::time::timeout(waited, async {
            if security.is_tls() {
                connector.secure_connect(&hosts).await
            } else {
                connector.connect(&hosts).await
            }
        });
        // A session that does not come at once: a look at the servers may tell why (nothing listens,
        // or not ZooKeeper; on a secure port, why the handshake fails: zookeeper-client says only
        // "connection loss") long before the timeout. The plain look speaks ZooKeeper's `srvr`, the
        // secure one makes a handshake with the URL's TLS files.
        let look = || async {
            match &security.tls {
                Some(files) => {
                    // Within the connect timeout: a stalled handshake is no verdict.
                    let within = probe::LOOK_WITHIN.min(waited);
                    tls_probe::diagnose(self.address.hosts(), files, within).await
                }
                None => probe::diagnose(self.address.hosts(), probe::LOOK_WITHIN).await,
            }
        };
        let looking = async {
            tokio::time::sleep(probe::LOOK_AFTER).await;
            look().await
        };
        let outcome = tokio::select! {
            outcome = connecting => outcome,
            Some(error) = looking => return Err(error),
        };
        if matches!(&outcome, Ok(Err(e)) if *e != zookeeper_client::Error::AuthFailed) {
            if let Some(error) = look().await {
                return Err(error);
            }
        }
        match outcome {
            Ok(Ok(client)) => {
                self.established.fetch_add(1, Ordering::Relaxed);
                Ok(client)
            }
            Ok(Err(zookeeper_client::Error::AuthFailed)) => Err(RegistryError::AuthFailed {
                hosts: hosts.clone(),
            }),
            Ok(Err(error)) => Err(unreachable(Some(error))),
            Err(_) => Err(unreachable(None)),
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Wakes when [`Sessions::close`] is called.
    pub(crate) async fn closed(&self) {
        let notified = self.close_notify.notified();
        if self.is_closed() {
            return;
        }
        notified.await;
    }

    /// Spawns a task that belongs to this registry: [`Sessions::close`] waits for it to end (it must
    /// end on [`Sessions::closed`]). `None` once the registry is closed.
    pub(crate) fn spawn<F>(&self, task: F) -> Option<JoinHandle<F::Output>>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let guard = TaskGuard::enter(&self.tasks);
        // Counted before the check, so `close` (which sets the flag, then waits for the count) either
        // sees this task or this task sees the flag.
        if self.is_closed() {
            return None;
        }
        Some(tokio::spawn(async move {
            let _guard = guard;
            task.await
        }))
    }

    /// Ends the session and stops every retry loop, in an order that never leaves a watch to be
    /// polled after its session is gone:
    ///
    /// 1. publish `Closed`: the connector stops, waiters return [`RegistryError::Closed`];
    /// 2. wait for every task of this registry (subscriptions, rule watches) to end: they stop on
    ///    `closed`, removing their consumer nodes on the way;
    /// 3. drop the last client, which makes zookeeper-client close the session, and wait (at most
    ///    [`CLOSE_CONFIRMATION`], and only if connected) until ZooKeeper confirms it.
    ///
    /// Step 2 matters at process exit: zookeeper-client's session task is detached, and a runtime that
    /// shuts down drops it without telling its watchers; a task of ours still awaiting one of those
    /// watches then panics inside the crate (`OneshotReceiver::recv` unwraps a cancelled channel).
    /// Awaiting `Consumer::shutdown` (or this) before the runtime ends leaves no such task.
    pub(crate) async fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.close_notify.notify_waiters();
        let previous = self.link.send_replace(Link::Closed);
        let mut tasks = self.tasks.subscribe();
        let _ = tasks.wait_for(|live| *live == 0).await;
        if let Link::Up(client) = previous {
            let mut state = client.state_watcher();
            let connected = client.state() == SessionState::SyncConnected;
            drop(client);
            if connected {
                let confirmed = async { while !state.changed().await.is_terminated() {} };
                let _ = tokio::time::timeout(CLOSE_CONFIRMATION, confirmed).await;
            }
        }
    }
}

/// Counts one task of a registry for as long as it lives (dropped when the task ends or is aborted).
struct TaskGuard(watch::Sender<usize>);

impl TaskGuard {
    fn enter(tasks: &watch::Sender<usize>) -> TaskGuard {
        tasks.send_modify(|live| *live += 1);
        TaskGuard(tasks.clone())
    }
}

impl Drop for TaskGuard {
    fn drop(&mut self) {
        self.0.send_modify(|live| *live = live.saturating_sub(1));
    }
}

/// The address this consumer registers with when its spec names none: Dubbo's choice,
/// `DUBBO_IP_TO_REGISTRY` else this machine's first non-loopback address
/// ([`rudder_common::net::consumer_host`], the address the facade's routers read too).
pub(crate) fn local_host() -> Result<String, crate::RegistryError> {
    rudder_common::net::consumer_host().map_err(|invalid| crate::RegistryError::BadConsumer {
        reason: invalid.to_string(),
    })
}

/// A failure that retrying cannot mend (refused credentials, unusable TLS files, a peer that is not
/// ZooKeeper): a waiter for the session gets it at once.
fn is_verdict(error: &RegistryError) -> bool {
    matches!(
        error,
        RegistryError::AuthFailed { .. }
            | RegistryError::Security { .. }
            | RegistryError::Tls { .. }
            | RegistryError::Refused { .. }
            | RegistryError::NotZookeeper { .. }
    )
}
