//! [`Changes`]: waiting for what a [`Reference`](crate::Reference) routes over to change, and
//! [`RulesInForce`], the routing rules it holds.
//!
//! A reference changes when its registry sends providers, when a configurator or routing rule
//! arrives, and when a subscription's status moves (a migration step, a session lost). Code that must
//! see such a change take effect (a deployment check, a test) waits on [`Changes::changed`] between
//! looks at the read-only views ([`Reference::snapshot`](crate::Reference::snapshot),
//! [`Reference::explain`](crate::Reference::explain), [`Reference::rules`](crate::Reference::rules)),
//! instead of polling them on a timer.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use rudder_cluster::router::{RuleError, RuleKey};
use tokio::sync::watch;

/// Wakes when something a reference routes over changed since it was made: a provider set, a
/// routing rule or configurator, or a registry subscription's status. Made by
/// [`Reference::changes`](crate::Reference::changes).
///
/// The pattern that never misses a change: take a `Changes`, look, and wait only if what you look
/// for is not there yet; then take a new one (a subscription replaced meanwhile, say after a
/// migration step, is followed by the new `Changes` only). Give the whole wait a deadline.
///
/// ```
/// use std::time::Duration;
/// use rudder::Reference;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let greeter = Reference::builder("com.acme.Greeter")
///     .provider("dubbo://10.0.0.1:20880/com.acme.Greeter")
///     .build()
///     .await?;
/// let rule = "conditions:\n  - => host = 10.0.0.1\n";
/// let before = greeter.rules().version();
/// let key = rudder::rules::RuleKey::service_condition("com.acme.Greeter", "", "");
/// greeter.set_rule(key, Some(rule))?;
/// let applied = async {
///     loop {
///         let mut changes = greeter.changes();
///         if greeter.rules().version() > before {
///             return;
///         }
///         if !changes.changed().await {
///             return; // the reference is gone: nothing more will change
///         }
///     }
/// };
/// tokio::time::timeout(Duration::from_secs(5), applied).await?;
/// assert_eq!(greeter.rules().keys().len(), 1);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Changes {
    versions: Vec<watch::Receiver<u64>>,
    statuses: Vec<watch::Receiver<Status>>,
}

/// A subscription's status (there are none without a registry implementation).
#[cfg(feature = "zookeeper")]
type Status = rudder_registry::SubscriptionStatus;
#[cfg(not(feature = "zookeeper"))]
type Status = std::convert::Infallible;

impl Changes {
    /// Changes of these version channels (directories, router chains) and subscription statuses,
    /// counted from now.
    pub(crate) fn new(
        mut versions: Vec<watch::Receiver<u64>>,
        statuses: impl IntoIterator<Item = watch::Receiver<Status>>,
    ) -> Changes {
        versions.iter_mut().for_each(|v| v.mark_unchanged());
        // A closed status channel (a subscription replaced) would wake at once, forever: left out.
        let mut statuses: Vec<_> = statuses
            .into_iter()
            .filter(|status| status.has_changed().is_ok())
            .collect();
        statuses.iter_mut().for_each(|s| s.mark_unchanged());
        Changes { versions, statuses }
    }

    /// Waits until something changed since this `Changes` was made or last returned; `false` when
    /// nothing ever can any more (the reference and its consumer are gone). A subscription that was
    /// replaced counts as a change: look again through a new [`Reference::changes`](crate::Reference::changes).
    pub async fn changed(&mut self) -> bool {
        // One `watch::Receiver::changed` future per channel, kept for the whole wait: each holds
        // its channel's wake-up registration, which a future made and dropped on every poll would
        // give up (and the wait would then sleep through the change).
        let seen = {
            // The status's index (`None`: a version channel) and its wait.
            let mut waits: Vec<(Option<usize>, Wait<'_>)> = Vec::new();
            for version in &mut self.versions {
                waits.push((None, Box::pin(async { version.changed().await.is_ok() })));
            }
            for (index, status) in self.statuses.iter_mut().enumerate() {
                waits.push((
                    Some(index),
                    Box::pin(async { status.changed().await.is_ok() }),
                ));
            }
            std::future::poll_fn(|cx| poll_waits(&mut waits, cx)).await
        };
        match seen {
            Seen::Changed => true,
            Seen::Replaced(index) => {
                // Replaced: a change, once.
                self.statuses.swap_remove(index);
                true
            }
            Seen::Closed => false,
        }
    }
}

/// One channel's wait for its next value: `false` when the channel closed.
type Wait<'a> = Pin<Box<dyn Future<Output = bool> + Send + 'a>>;

/// What a wait on the channels found.
enum Seen {
    Changed,
    /// The status channel at this index closed: its subscription was replaced.
    Replaced(usize),
    /// Every channel is closed.
    Closed,
}

/// Polls each wait: a new value, a status channel closed, or every channel closed. A version channel
/// that closed is dropped from `waits` (polled no more).
fn poll_waits(waits: &mut Vec<(Option<usize>, Wait<'_>)>, cx: &mut Context<'_>) -> Poll<Seen> {
    let mut index = 0;
    while index < waits.len() {
        let (status, wait) = &mut waits[index];
        match wait.as_mut().poll(cx) {
            Poll::Ready(true) => return Poll::Ready(Seen::Changed),
            Poll::Ready(false) => match status {
                Some(status) => return Poll::Ready(Seen::Replaced(*status)),
                None => {
                    drop(waits.swap_remove(index));
                }
            },
            Poll::Pending => index += 1,
        }
    }
    if waits.is_empty() {
        Poll::Ready(Seen::Closed)
    } else {
        Poll::Pending
    }
}

/// The routing rules (tag and condition rules) a reference holds now, from its config center and
/// [`Reference::set_rule`](crate::Reference::set_rule); made by
/// [`Reference::rules`](crate::Reference::rules). With several registries, the first registry's.
#[derive(Debug, Clone)]
pub struct RulesInForce {
    pub(crate) version: u64,
    pub(crate) keys: Vec<RuleKey>,
    pub(crate) refused: Vec<RuleError>,
}

impl RulesInForce {
    /// Grows with every rule set or deleted and every consumer change the routers took (a refused
    /// rule changes nothing): compare two readings to see that a change took effect.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The rules in force, by slot and then key.
    pub fn keys(&self) -> &[RuleKey] {
        &self.keys
    }

    /// The rules last refused (one per key at most; the last good rule of that key stays in force).
    pub fn refused(&self) -> &[RuleError] {
        &self.refused
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// A value sent while `changed` waits wakes it (the wait's registration is kept between polls).
    /// On a paused clock, a wait that lost its wake-up sleeps until the runtime skips to the
    /// deadline, whose timer polls the wait again: it then sees the value, but 30 s late.
    #[tokio::test(start_paused = true)]
    async fn a_change_during_the_wait_wakes_it() {
        let started = tokio::time::Instant::now();
        let (version, version_rx) = watch::channel(0_u64);
        let (other, other_rx) = watch::channel(0_u64);
        let mut changes = Changes::new(vec![version_rx, other_rx], Vec::new());
        let sender = tokio::spawn(async move {
            // Let the wait start and be polled (and go idle) first.
            tokio::task::yield_now().await;
            version.send_replace(1);
            version
        });
        let woke = tokio::time::timeout(Duration::from_secs(30), changes.changed()).await;
        assert_eq!(woke, Ok(true), "the change woke the wait");
        assert_eq!(
            started.elapsed(),
            Duration::ZERO,
            "woken by the change, not the deadline"
        );
        let version = sender.await.unwrap();
        // Seen: nothing new until the next value, on either channel.
        let again = tokio::time::timeout(Duration::from_secs(1), changes.changed()).await;
        assert!(again.is_err(), "no new value, no wake");
        other.send_replace(7);
        assert!(changes.changed().await);
        drop((version, other));
        assert!(!changes.changed().await, "every channel closed");
    }

    #[cfg(feature = "zookeeper")]
    #[tokio::test(start_paused = true)]
    async fn a_replaced_subscription_is_a_change_once() {
        let (version, version_rx) = watch::channel(0_u64);
        let (status, status_rx) = watch::channel(Status::default());
        let mut changes = Changes::new(vec![version_rx], vec![status_rx]);
        drop(status);
        assert!(changes.changed().await, "replaced: a change");
        let later = tokio::time::timeout(Duration::from_secs(1), changes.changed()).await;
        assert!(later.is_err(), "once");
        version.send_replace(2);
        assert!(changes.changed().await);
    }
}
