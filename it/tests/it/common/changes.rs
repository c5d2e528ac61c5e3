//! Waiting for what the registry delivers to a reference without polling: `Reference::changes`
//! wakes on every snapshot, rule version and subscription status the reference's registries
//! publish, and a condition is checked again on each change.

use std::time::Duration;

use rudder::Reference;

/// Waits until `ready` holds, checking it again each time something `reference` routes over changes
/// (a snapshot, a rule version, a subscription status); panics after `wait` saying `what` did not
/// happen. Takes a new `Changes` before each check, so a change between the check and the wait is
/// never missed, and a subscription replaced meanwhile is followed through its successor.
pub(crate) async fn reference_reaches(
    reference: &Reference,
    what: &str,
    wait: Duration,
    mut ready: impl FnMut() -> bool,
) {
    let reached = async {
        loop {
            let mut changes = reference.changes();
            if ready() {
                return;
            }
            assert!(
                changes.changed().await,
                "the reference ended while waiting for {what}"
            );
        }
    };
    // The deadline is polled first: a wait that missed its wake-up and is only polled again by the
    // deadline's timer fails here, rather than passing late (a lost wake-up in `Changes` once did).
    let deadline = tokio::time::sleep(wait);
    tokio::pin!(deadline);
    tokio::select! {
        biased;
        () = &mut deadline => panic!("waited {wait:?} for {what}"),
        () = reached => {}
    }
}
