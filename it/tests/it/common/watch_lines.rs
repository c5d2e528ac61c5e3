//! Reading `rudder providers --watch` as it runs.

use std::time::{Duration, Instant};

use tokio::io::{BufReader, Lines};
use tokio::process::ChildStdout;

/// Reads `--watch`'s lines until one holds `text` (within 90 s), keeping what it saw in `seen` for
/// the failure message.
pub(crate) async fn next_line_with(
    lines: &mut Lines<BufReader<ChildStdout>>,
    text: &str,
    seen: &mut String,
) {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = tokio::time::timeout(left, lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("no line with {text:?} in time; saw:\n{seen}"))
            .unwrap()
            .unwrap_or_else(|| panic!("--watch ended; saw:\n{seen}"));
        seen.push_str(&line);
        seen.push('\n');
        if line.contains(text) {
            return;
        }
    }
}
