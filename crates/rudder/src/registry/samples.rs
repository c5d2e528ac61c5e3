//! The status of live subscriptions, for the metrics (`rudder_registry_*`, see `metrics`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use rudder_registry::SubscriptionStatus;
use tokio::sync::watch;

use crate::metrics::SubscriptionSample;

/// The status channels of one consumer's live subscriptions, with their labels.
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    watched: Mutex<Vec<Watched>>,
    next_id: AtomicU64,
}

/// One subscription's labels and status channel; its sender closes when the subscription ends.
#[derive(Debug)]
struct Watched {
    id: u64,
    registry: String,
    service: String,
    status: watch::Receiver<SubscriptionStatus>,
}

impl Subscriptions {
    /// Follows the status of a subscription to `service` in the registry at `servers` (the servers
    /// only: a label never holds credentials), until the subscription ends.
    pub(crate) fn watch(
        &self,
        servers: &str,
        service: &str,
        status: watch::Receiver<SubscriptionStatus>,
    ) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut watched = self.watched.lock().unwrap_or_else(PoisonError::into_inner);
        // Forget ended subscriptions here too, so the list stays bounded without scrapes.
        watched.retain(|w| w.status.has_changed().is_ok());
        watched.push(Watched {
            id,
            registry: servers.to_owned(),
            service: service.to_owned(),
            status,
        });
    }

    /// The status of every live subscription, in subscription order.
    pub(crate) fn samples(&self) -> Vec<SubscriptionSample> {
        let mut watched = self.watched.lock().unwrap_or_else(PoisonError::into_inner);
        watched.retain(|w| w.status.has_changed().is_ok());
        watched
            .iter()
            .map(|w| {
                let status = w.status.borrow();
                SubscriptionSample {
                    id: w.id,
                    registry: w.registry.clone(),
                    service: w.service.clone(),
                    generation: status.generation,
                    listings: status.listings,
                    providers: status.providers as u64,
                    configurators: status.configurators as u64,
                    malformed: status.malformed,
                    rejected: status.rejected,
                    connected: status.connected,
                    sessions: status.sessions,
                    registered: status.registered,
                    empty_protected: status.empty_protected,
                    empty_pushes_kept: status.empty_pushes_kept,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ended_subscriptions_leave_the_samples() {
        let subscriptions = Subscriptions::default();
        let (kept_tx, kept) = watch::channel(SubscriptionStatus::default());
        let (ended_tx, ended) = watch::channel(SubscriptionStatus::default());
        subscriptions.watch("10.0.0.1:2181", "com.acme.A", kept);
        subscriptions.watch("10.0.0.1:2181", "com.acme.B", ended);
        kept_tx.send_modify(|s| s.providers = 3);
        assert_eq!(subscriptions.samples().len(), 2);
        drop(ended_tx);
        let samples = subscriptions.samples();
        assert_eq!(samples.len(), 1);
        assert_eq!(samples[0].service, "com.acme.A");
        assert_eq!(samples[0].registry, "10.0.0.1:2181");
        assert_eq!(samples[0].providers, 3);
    }
}
