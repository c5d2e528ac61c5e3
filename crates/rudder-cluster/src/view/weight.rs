//! Provider weight with warmup, in Java's exact arithmetic, and the hook to override it.
//!
//! Dubbo ramps a new provider's weight up linearly over its warmup period (default 10 minutes), counted
//! from the `timestamp` it registered with. The ramp is computed in 32-bit floats:
//! `(int) ((float) uptime / ((float) warmup / (float) weight))`. Doing the same in `f64` gives a different
//! integer for some inputs, and so a different traffic split; rudder uses `f32` so it decides exactly as
//! Java does.
//!
//! Dubbo 3.0–3.3 strips `timestamp` from interface-level ZooKeeper URLs, so warmup never applies there
//! (apache/dubbo#10646). rudder keeps the timestamp, so warmup works as documented.

use std::fmt;

use crate::provider::Provider;

/// Dubbo's `calculateWarmupWeight`: the weight `uptime` ms into a `warmup` ms ramp, at least 1.
///
/// ```
/// use rudder_cluster::loadbalance::weight::warmup_weight;
/// assert_eq!(warmup_weight(306_000, 600_000, 100), 51);
/// assert_eq!(warmup_weight(13, 600_000, 100), 1);
/// ```
pub fn warmup_weight(uptime: i32, warmup: i32, weight: i32) -> i32 {
    let ramped = (uptime as f32 / (warmup as f32 / weight as f32)) as i32;
    if ramped < 1 {
        1
    } else {
        ramped.min(weight)
    }
}

/// Dubbo's `getWeight` from pre-parsed numbers: `weight` adjusted by warmup at `now`.
///
/// A provider whose timestamp lies in the future (clock skew) gets 1; uptime 0 or past the warmup gets the
/// full weight; a negative weight counts as 0.
///
/// ```
/// use rudder_cluster::loadbalance::weight::effective_weight;
/// let started = 1_700_000_000_000;
/// assert_eq!(effective_weight(100, started, 600_000, started + 60_000), 10);
/// assert_eq!(effective_weight(100, started, 600_000, started - 5), 1);
/// assert_eq!(effective_weight(100, 0, 600_000, started), 100);
/// ```
pub fn effective_weight(weight: i32, timestamp: i64, warmup: i64, now: i64) -> i32 {
    if weight > 0 && timestamp > 0 {
        let uptime = now.saturating_sub(timestamp);
        if uptime < 0 {
            return 1;
        }
        if uptime > 0 && uptime < warmup {
            // Both fit in i32 here: 0 < uptime < warmup, and warmup came from an int parameter.
            return warmup_weight(uptime as i32, warmup as i32, weight);
        }
    }
    weight.max(0)
}

/// Overrides a provider's weight at pick time, for every strategy that uses weights.
///
/// Use it to weight providers by something the registry does not know, such as CPU cores or free memory
/// reported by a monitoring system. It receives the weight Dubbo's rules produced (warmup included) and
/// returns the weight to use; negative results count as 0. It runs on every pick, so it must be cheap:
/// read a precomputed table, do not do I/O.
///
/// ```
/// use rudder_cluster::loadbalance::weight::WeightSource;
/// use rudder_cluster::provider::Provider;
///
/// /// Halves the weight of every provider on port 20881.
/// #[derive(Debug)]
/// struct Drain;
/// impl WeightSource for Drain {
///     fn weight(&self, provider: &Provider, _method: &str, computed: i32) -> i32 {
///         if provider.url().port() == 20881 { computed / 2 } else { computed }
///     }
/// }
/// ```
pub trait WeightSource: Send + Sync + fmt::Debug {
    /// The weight to use for `provider` when calling `method`, given Dubbo's `computed` weight.
    fn weight(&self, provider: &Provider, method: &str, computed: i32) -> i32;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dubbo_warmup_table() {
        let table = [
            (0, 1),
            (13, 1),
            (6000, 1),
            (12000, 2),
            (60000, 10),
            (300000, 50),
            (300023, 50),
            (305999, 50),
            (306000, 51),
            (540000, 90),
            (588000, 98),
            (594000, 99),
            (600000, 100),
            (1200000, 100),
        ];
        for (uptime, want) in table {
            assert_eq!(warmup_weight(uptime, 600_000, 100), want, "uptime {uptime}");
        }
    }

    #[test]
    fn long_uptime_does_not_overflow() {
        let now = 10_000_000_000_000;
        let ts = now - i64::from(i32::MAX) - 1;
        assert_eq!(effective_weight(100, ts, 600_000, now), 100);
    }

    #[test]
    fn edge_cases() {
        assert_eq!(effective_weight(-5, 1, 600_000, 100), 0);
        assert_eq!(effective_weight(0, 1, 600_000, 100), 0);
        assert_eq!(
            effective_weight(100, 1000, 600_000, 1000),
            100,
            "uptime 0 is full weight"
        );
        assert_eq!(
            effective_weight(100, 1000, 0, 2000),
            100,
            "warmup 0 disables warmup"
        );
        assert_eq!(effective_weight(100, 1000, -1, 2000), 100);
    }
}
