//! Waiting for what the registry delivers to a reference without polling: the reference's
//! directories and router chains notify of every snapshot and rule version they publish
//! (`Directory::watch`, `RouterChain::watch`), its subscriptions of every status they report
//! (`Reference::registry_status_changes`), and a condition is checked again on each change.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use rudder::{Reference, SubscriptionStatus};
use tokio::sync::watch;

/// Waits until `ready` holds, checking it again each time one of `reference`'s directories publishes
/// a snapshot, one of its router chains a rule version or one of its subscriptions a status; panics
/// after `wait` saying `what` did not happen. Subscribes before each check, so a change between the
/// check and the wait is never missed, and a subscription replaced meanwhile (its status channel
/// closed) is followed through its successor.
pub(crate) async fn reference_reaches(
    reference: &Reference,
    what: &str,
    wait: Duration,
    mut ready: impl FnMut() -> bool,
) {
    let reached = async {
        loop {
            let mut versions: Vec<watch::Receiver<u64>> = std::iter::once(reference.directory())
                .chain(reference.directories())
                .map(|directory| directory.watch())
                .chain(reference.routers().iter().map(|chain| chain.watch()))
                .collect();
            // A closed status channel would wake at once, forever: left out.
            let mut statuses: Vec<watch::Receiver<SubscriptionStatus>> = reference
                .registry_status_changes()
                .into_iter()
                .flatten()
                .filter(|status| status.has_changed().is_ok())
                .collect();
            statuses.iter_mut().for_each(|s| s.mark_unchanged());
            if ready() {
                return;
            }
            let mut changed: Vec<Pin<Box<dyn Future<Output = ()> + Send + '_>>> = versions
                .iter_mut()
                .map(|v| {
                    Box::pin(async { v.changed().await.expect("lives with the reference") }) as _
                })
                .chain(statuses.iter_mut().map(|s| {
                    // Closed means the subscription was replaced: collect the receivers again.
                    Box::pin(async { _ = s.changed().await }) as _
                }))
                .collect();
            std::future::poll_fn(|cx| {
                for future in &mut changed {
                    if future.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(());
                    }
                }
                Poll::Pending
            })
            .await;
        }
    };
    if tokio::time::timeout(wait, reached).await.is_err() {
        panic!("waited {wait:?} for {what}");
    }
}
