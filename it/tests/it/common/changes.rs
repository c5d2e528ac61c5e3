//! Waiting for what the registry delivers to a reference without polling: the reference's
//! directories and router chains notify of every snapshot and rule version they publish
//! (`Directory::watch`, `RouterChain::watch`), and a condition is checked again on each change.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use rudder::Reference;
use tokio::sync::watch;

/// Waits until `ready` holds, checking it again each time one of `reference`'s directories publishes
/// a snapshot or one of its router chains a rule version; panics after `wait` saying `what` did not
/// happen. Subscribes before the first check, so a change between the check and the wait is never
/// missed.
pub(crate) async fn reference_reaches(
    reference: &Reference,
    what: &str,
    wait: Duration,
    mut ready: impl FnMut() -> bool,
) {
    let mut changes: Vec<watch::Receiver<u64>> = std::iter::once(reference.directory())
        .chain(reference.directories())
        .map(|directory| directory.watch())
        .chain(reference.routers().iter().map(|chain| chain.watch()))
        .collect();
    let reached = async {
        while !ready() {
            any_changed(&mut changes).await;
        }
    };
    if tokio::time::timeout(wait, reached).await.is_err() {
        panic!("waited {wait:?} for {what}");
    }
}

/// Resolves when any of `receivers` sees a new value.
async fn any_changed(receivers: &mut [watch::Receiver<u64>]) {
    let mut changed: Vec<Pin<Box<_>>> = receivers
        .iter_mut()
        .map(|receiver| Box::pin(receiver.changed()))
        .collect();
    let result = std::future::poll_fn(|cx| {
        for future in &mut changed {
            if let Poll::Ready(result) = future.as_mut().poll(cx) {
                return Poll::Ready(result);
            }
        }
        Poll::Pending
    })
    .await;
    result.expect("a reference's directories and chains live as long as it does");
}
