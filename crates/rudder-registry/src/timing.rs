//! Waiting helpers shared by the background tasks.

/// Sleeps for `delay`, or forever when there is none: one arm of a `select!` that is only sometimes
/// armed (a retry that may or may not be due).
pub(crate) async fn sleep_opt(delay: Option<std::time::Duration>) {
    match delay {
        Some(delay) => tokio::time::sleep(delay).await,
        None => std::future::pending().await,
    }
}
