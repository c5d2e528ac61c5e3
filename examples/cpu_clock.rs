//! On-CPU time of this process's threads, for the CPU-per-call figures of `e2e_load`.
//!
//! Linux only: it sums the first field of `/proc/self/task/<tid>/schedstat` (nanoseconds on a CPU)
//! over every thread whose name does not start with [`PROVIDER_THREAD`], so that an in-process
//! provider's threads are left out and what is counted is the consumer's cost. The counters move
//! in steps of about 200 ns here, which is nothing over the thousands of calls a slice makes. A
//! thread that ends during a measurement takes its time with it; the tool's threads live throughout.

use std::time::Duration;

/// Name prefix of the in-process provider's threads: their CPU time is not the consumer's.
pub const PROVIDER_THREAD: &str = "e2e-provider";

/// CPU time used so far by the consumer's threads, or `None` where `/proc` does not say (not Linux).
pub fn consumer_cpu() -> Option<Duration> {
    let mut total = 0u64;
    for entry in std::fs::read_dir("/proc/self/task").ok()? {
        let dir = entry.ok()?.path();
        let name = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if name.starts_with(PROVIDER_THREAD) {
            continue;
        }
        // A thread gone between the listing and the read counts as nothing.
        let Ok(stat) = std::fs::read_to_string(dir.join("schedstat")) else {
            continue;
        };
        total += stat
            .split_whitespace()
            .next()
            .and_then(|ns| ns.parse::<u64>().ok())
            .unwrap_or(0);
    }
    Some(Duration::from_nanos(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_work_shows_up_as_cpu_time() {
        let Some(before) = consumer_cpu() else {
            return; // not Linux: nothing to read
        };
        // Spin until the counter shows a millisecond, with a deadline for a very busy machine.
        let mut x = 1u64;
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let mut used = Duration::ZERO;
        while used < Duration::from_millis(1) && std::time::Instant::now() < deadline {
            for _ in 0..10_000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
            used = consumer_cpu().unwrap() - before;
        }
        assert!(
            used >= Duration::from_millis(1),
            "{used:?} after 10 s of spinning"
        );
    }
}
