//! The ZooKeeper session shared by a registry's subscriptions, and its replacement after expiry.
//!
//! zookeeper-client reconnects by itself while a session lives (and re-arms watches), so a short outage
//! needs nothing from rudder. A session that ends (`Expired`, `AuthFailed`, `Closed`) cannot be revived:
//! every operation on it fails, and rebuilding is the caller's job. [`Sessions::renew`] does that once for
//! all subscriptions (whichever notices first reconnects; the others get the new client), retrying with
//! backoff until it succeeds or the registry is closed.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use tokio::sync::{Mutex, Notify};
use zookeeper_client::{Acls, Client, CreateMode, CreateOptions, SessionId};

use crate::address::RegistryAddress;
use crate::error::RegistryError;
use crate::options::RegistryOptions;

/// The current session of one registry.
#[derive(Debug)]
pub(crate) struct Sessions {
    address: RegistryAddress,
    options: RegistryOptions,
    current: Mutex<Option<Client>>,
    established: AtomicU64,
    closed: AtomicBool,
    close_notify: Notify,
}

impl Sessions {
    pub(crate) fn new(address: RegistryAddress, options: RegistryOptions) -> Sessions {
        Sessions {
            address,
            options,
            current: Mutex::new(None),
            established: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            close_notify: Notify::new(),
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

    /// ACLs for the nodes rudder creates: creator-only with credentials (as Dubbo's Curator client).
    pub(crate) fn create_options(&self, mode: CreateMode) -> CreateOptions<'static> {
        if self.address.has_credentials() {
            mode.with_acls(Acls::creator_all())
        } else {
            mode.with_acls(Acls::anyone_all())
        }
    }

    /// Opens the first session, failing after the connect timeout.
    pub(crate) async fn start(&self) -> Result<Client, RegistryError> {
        let client = self.connect_once().await?;
        *self.current.lock().await = Some(client.clone());
        Ok(client)
    }

    /// A live client: the current one unless its session is `stale` (or over), else a new session.
    ///
    /// # Errors
    /// [`RegistryError::Closed`] once the registry is closed; connection failures are retried.
    pub(crate) async fn renew(&self, stale: Option<SessionId>) -> Result<Client, RegistryError> {
        let mut current = self.current.lock().await;
        if let Some(client) = current.as_ref() {
            let is_stale = stale.is_some_and(|s| s == client.session_id());
            if !is_stale && !client.state().is_terminated() {
                return Ok(client.clone());
            }
        }
        *current = None;
        let mut attempt = 0;
        loop {
            if self.is_closed() {
                return Err(RegistryError::Closed);
            }
            match self.connect_once().await {
                Ok(client) => {
                    tracing::info!(session = %client.session_id(), "new ZooKeeper session");
                    *current = Some(client.clone());
                    return Ok(client);
                }
                Err(error) => {
                    let delay = self.options.retry_delay(attempt);
                    attempt += 1;
                    tracing::warn!(%error, retry_in = ?delay, "ZooKeeper session not re-established");
                    tokio::select! {
                        () = tokio::time::sleep(delay) => {}
                        () = self.close_notify.notified() => {}
                    }
                }
            }
        }
    }

    async fn connect_once(&self) -> Result<Client, RegistryError> {
        let hosts = self.address.connect_string();
        let mut connector =
            Client::connector().with_session_timeout(self.options.session_timeout());
        if let Some(digest) = self.address.digest() {
            connector = connector.with_auth("digest", &digest);
        }
        let waited = self.options.connect_timeout();
        let unreachable = |reason: String| RegistryError::Unreachable {
            hosts: hosts.clone(),
            waited,
            reason,
        };
        match tokio::time::timeout(waited, connector.connect(&hosts)).await {
            Ok(Ok(client)) => {
                self.established.fetch_add(1, Ordering::Relaxed);
                Ok(client)
            }
            Ok(Err(zookeeper_client::Error::AuthFailed)) => Err(RegistryError::AuthFailed {
                hosts: hosts.clone(),
            }),
            Ok(Err(error)) => Err(unreachable(error.to_string())),
            Err(_) => Err(unreachable("no server answered".to_owned())),
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Wakes when [`Sessions::close`] is called.
    pub(crate) async fn closed(&self) {
        let notified = self.close_notify.notified();
        if self.is_closed() {
            return;
        }
        notified.await;
    }

    /// Ends the session and stops every retry loop.
    pub(crate) async fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.close_notify.notify_waiters();
        // Dropping the last client closes the ZooKeeper session, removing its ephemeral nodes.
        self.current.lock().await.take();
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
