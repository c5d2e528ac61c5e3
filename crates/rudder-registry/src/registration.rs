//! The consumer node of a subscription (`<root>/<interface>/consumers/<URL>`): written after the first
//! listing, retried in the background with backoff, re-written in every new session, removed on close.

use tokio::time::Instant;
use zookeeper_client::{Client, CreateMode, SessionState};

use crate::error::RegistryError;
use crate::session::Sessions;
use crate::subscriber::Subscriber;

/// The longest a subscription that ends waits for ZooKeeper to delete its consumer node.
const UNREGISTER_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The consumer node, and when to try writing it again.
pub(crate) struct Registration {
    /// The encoded consumer URL.
    pub(crate) node: String,
    /// Consecutive failed attempts.
    pub(crate) failures: u32,
    /// When the next attempt is due; `None` once registered in the current session.
    pub(crate) due: Option<Instant>,
}

impl Registration {
    pub(crate) fn new(node: String) -> Registration {
        Registration {
            node,
            failures: 0,
            due: Some(Instant::now()),
        }
    }
}

impl Subscriber {
    /// Writes the consumer node if an attempt is due; on failure, schedules the next one.
    pub(crate) async fn register_if_due(&mut self, client: &Client) {
        let Some(registration) = &mut self.registration else {
            return;
        };
        if registration.due.is_none_or(|due| due > Instant::now()) {
            return;
        }
        let outcome = register(
            &self.sessions,
            &self.paths.consumers,
            &registration.node,
            client,
        )
        .await;
        match outcome {
            Ok(()) => {
                registration.due = None;
                registration.failures = 0;
                self.status.send_modify(|s| {
                    s.registered = true;
                    s.registration_error = None;
                });
            }
            Err(error) => {
                let delay = self.sessions.options().retry_delay(registration.failures);
                registration.failures = registration.failures.saturating_add(1);
                registration.due = Some(Instant::now() + delay);
                let message = error.chain_text();
                // A warning when a failure starts or changes; the same failure again only at debug.
                let repeated = registration.failures > 1
                    && self.status.borrow().registration_error.as_deref() == Some(&message);
                if repeated {
                    tracing::debug!(error = &error as &dyn std::error::Error, retry_in = ?delay, "consumer registration failed again");
                } else {
                    tracing::warn!(error = &error as &dyn std::error::Error, retry_in = ?delay, "consumer registration failed; discovery goes on");
                }
                self.status.send_modify(|s| {
                    s.registered = false;
                    s.registration_error = Some(message);
                });
            }
        }
    }

    /// Removes the consumer node, if the session can be reached now. Bounded: a subscription that
    /// ends during an outage must not hold up a close (the node goes with the session anyway).
    pub(crate) async fn unregister(&self, client: &Client) {
        let Some(registration) = &self.registration else {
            return;
        };
        if client.state() != SessionState::SyncConnected {
            return;
        }
        let path = format!("{}/{}", self.paths.consumers, registration.node);
        let bound = self
            .sessions
            .options()
            .connect_timeout()
            .min(UNREGISTER_WAIT);
        match tokio::time::timeout(bound, client.delete(&path, None)).await {
            Ok(Ok(()) | Err(zookeeper_client::Error::NoNode)) => {}
            Ok(Err(error)) => tracing::debug!(
                error = &error as &dyn std::error::Error,
                "consumer node not removed"
            ),
            Err(_) => tracing::debug!("consumer node not removed: no answer in time"),
        }
    }
}

/// Creates the ephemeral consumer node (and its persistent parent), replacing a leftover of ours.
async fn register(
    sessions: &Sessions,
    parent: &str,
    node: &str,
    client: &Client,
) -> Result<(), RegistryError> {
    let persistent = sessions.create_options(CreateMode::Persistent);
    let ephemeral = sessions.create_options(CreateMode::Ephemeral);
    client
        .mkdir(parent, &persistent)
        .await
        .map_err(|e| RegistryError::zookeeper("create", parent, e))?;
    let path = format!("{parent}/{node}");
    let created = match client.create(&path, b"", &ephemeral).await {
        // Left over from an expired session of ours: replace it, as Dubbo does.
        Err(zookeeper_client::Error::NodeExists) => {
            match client.delete(&path, None).await {
                Ok(()) | Err(zookeeper_client::Error::NoNode) => {}
                Err(e) => return Err(RegistryError::zookeeper("delete", &path, e)),
            }
            client.create(&path, b"", &ephemeral).await
        }
        other => other,
    };
    created
        .map(|_| ())
        .map_err(|e| RegistryError::zookeeper("create", &path, e))
}
