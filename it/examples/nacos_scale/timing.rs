//! When a directory applied a list, and where a list's time went (the module text of `main.rs`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use rudder_cluster::directory::Directory;
use rudder_common::discovery::{ProviderSink, ProviderUpdate, UpdateOutcome};
use tokio::sync::watch;

use crate::relay::{largest_burst, Burst, Relay};
use crate::WAIT;

/// A list rnacos sends is one run of bytes; nothing else it sends in a change's second is as large.
pub(crate) const BURST_GAP: Duration = Duration::from_millis(50);

/// A directory that notes how many providers it lists after each update, and when.
pub(crate) struct Timed {
    directory: Directory,
    applied: watch::Sender<(usize, Instant)>,
}

impl Timed {
    pub(crate) fn new() -> Arc<Timed> {
        Arc::new(Timed {
            directory: Directory::default(),
            applied: watch::channel((0, Instant::now())).0,
        })
    }

    /// When the directory came to list `providers` (at once if it lists them now).
    pub(crate) async fn reached(&self, providers: usize) -> Instant {
        let mut applied = self.applied.subscribe();
        let reached = tokio::time::timeout(WAIT, applied.wait_for(|(n, _)| *n == providers))
            .await
            .unwrap_or_else(|_| panic!("never {providers} providers"))
            .expect("sink alive");
        reached.1
    }
}

/// When the last of `directories` came to list `providers`.
pub(crate) async fn all_reached(directories: &[Arc<Timed>], providers: usize) -> Instant {
    let mut last = None;
    for directory in directories {
        let at = directory.reached(providers).await;
        last = Some(last.map_or(at, |l: Instant| l.max(at)));
    }
    last.expect("a directory")
}

impl ProviderSink for Timed {
    fn update(&self, update: ProviderUpdate) -> UpdateOutcome {
        let outcome = self.directory.update(update);
        let listed = self.directory.snapshot().providers().len();
        self.applied.send_replace((listed, Instant::now()));
        outcome
    }
}

/// The CPU time this process's threads have used so far (each thread's `schedstat`, in ns): over
/// a change, what rudder spent on it whatever else the machine runs (the relay's copying and the
/// writer's one request included, the server not: it is another process).
pub(crate) fn cpu_used() -> Duration {
    let mut ns = 0u64;
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for task in tasks.flatten() {
            let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
            ns += stat
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    Duration::from_nanos(ns)
}

/// One list's time, split.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Split {
    server: Duration,
    transfer: Duration,
    rudder: Duration,
    bytes: usize,
    /// This process's CPU time over the whole change (see [`cpu_used`]).
    pub(crate) cpu: Duration,
}

impl Split {
    /// `from` (request sent or change written) → `burst` → `applied`.
    pub(crate) fn new(from: Instant, burst: &Burst, applied: Instant) -> Split {
        Split {
            server: burst.first.saturating_duration_since(from),
            transfer: burst.last.saturating_duration_since(burst.first),
            rudder: applied.saturating_duration_since(burst.last),
            bytes: burst.bytes,
            cpu: Duration::ZERO,
        }
    }

    /// The split of a change written at `from` and applied at `applied`.
    pub(crate) fn of_change(relay: &Relay, from: Instant, applied: Instant) -> Split {
        let chunks = relay.between(from, applied);
        let burst = largest_burst(&chunks, BURST_GAP).expect("the push reached rudder");
        Split::new(from, &burst, applied)
    }
}

/// `lists | bytes | server | transfer | rudder | CPU |`, each time the median (min–max) of `splits`.
pub(crate) fn split_cells(splits: &[Split]) -> String {
    let part = |f: fn(&Split) -> Duration| spread(splits.iter().map(f).collect());
    let mut bytes: Vec<usize> = splits.iter().map(|s| s.bytes).collect();
    bytes.sort_unstable();
    format!(
        "{} | {} | {} | {} | {} | {} |",
        splits.len(),
        bytes[bytes.len() / 2],
        part(|s| s.server),
        part(|s| s.transfer),
        part(|s| s.rudder),
        part(|s| s.cpu)
    )
}

/// `median ms (min–max)`.
pub(crate) fn spread(mut times: Vec<Duration>) -> String {
    times.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let fmt = |d: Duration| {
        if ms(d) < 10.0 {
            format!("{:.1}", ms(d))
        } else {
            format!("{:.0}", ms(d))
        }
    };
    format!(
        "{} ms ({}–{})",
        fmt(times[times.len() / 2]),
        fmt(times[0]),
        fmt(times[times.len() - 1])
    )
}
