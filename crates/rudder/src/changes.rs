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
        std::future::poll_fn(|cx| self.poll_changed(cx)).await
    }

    fn poll_changed(&mut self, cx: &mut Context<'_>) -> Poll<bool> {
        let mut open = false;
        for version in &mut self.versions {
            match poll_receiver(version, cx) {
                Poll::Ready(true) => return Poll::Ready(true),
                Poll::Ready(false) => {}
                Poll::Pending => open = true,
            }
        }
        let mut index = 0;
        while index < self.statuses.len() {
            match poll_receiver(&mut self.statuses[index], cx) {
                Poll::Ready(true) => return Poll::Ready(true),
                Poll::Ready(false) => {
                    // Replaced: a change, once.
                    self.statuses.swap_remove(index);
                    return Poll::Ready(true);
                }
                Poll::Pending => {
                    open = true;
                    index += 1;
                }
            }
        }
        if open {
            Poll::Pending
        } else {
            Poll::Ready(false)
        }
    }
}

/// Whether `receiver` saw a new value (`true`) or closed (`false`); marks the value seen.
fn poll_receiver<T>(receiver: &mut watch::Receiver<T>, cx: &mut Context<'_>) -> Poll<bool> {
    let changed = receiver.changed();
    tokio::pin!(changed);
    match Future::poll(Pin::as_mut(&mut changed), cx) {
        Poll::Ready(Ok(())) => Poll::Ready(true),
        Poll::Ready(Err(_)) => Poll::Ready(false),
        Poll::Pending => Poll::Pending,
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
