//! Writing and removing a subscriber's consumer node (the node and its retry pacing are
//! [`crate::registration::Registration`]).

use tokio::time::Instant;
use zookeeper_client::{Client, SessionState};

use super::Subscriber;
use crate::registration::{register, UNREGISTER_WAIT};

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
            Ok(false) => {
                // Read-only and the service is not in the registry: tried again later, quietly.
                let delay = self.sessions.options().retry_delay(registration.failures);
                registration.failures = registration.failures.saturating_add(1);
                registration.due = Some(Instant::now() + delay);
                tracing::debug!(parent = %self.paths.consumers, retry_in = ?delay, "consumer node not written: the service has no node in the registry (read-only)");
            }
            Ok(true) => {
                registration.due = None;
                registration.failures = 0;
                self.f.status.send_modify(|s| {
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
                    && self.f.status.borrow().registration_error.as_deref() == Some(&message);
                if repeated {
                    tracing::debug!(error = &error as &dyn std::error::Error, retry_in = ?delay, "consumer registration failed again");
                } else {
                    tracing::warn!(error = &error as &dyn std::error::Error, retry_in = ?delay, "consumer registration failed; discovery goes on");
                }
                self.f.status.send_modify(|s| {
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
