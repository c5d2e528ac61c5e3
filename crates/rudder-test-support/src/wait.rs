//! Waiting on an event, with a deadline: a test waits for what it needs (a notification, a
//! future that completes when the condition holds), and the deadline only turns a hang into a
//! failure that names what was awaited.

use std::future::Future;
use std::time::Duration;

/// How long [`within`] waits: far past what any awaited event takes on a loaded 2-core machine.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// Awaits `f`, failing the test if it has not completed within [`DEADLINE`].
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let (tx, rx) = tokio::sync::oneshot::channel();
/// tx.send(7).unwrap();
/// assert_eq!(rudder_test_support::wait::within("the answer", rx).await, Ok(7));
/// # }
/// ```
///
/// # Panics
/// When the deadline passes first, naming `what`.
pub async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(DEADLINE, f)
        .await
        .unwrap_or_else(|_| panic!("timed out after {DEADLINE:?} waiting for {what}"))
}
