//! The context of one pick: its time, the providers it may not choose, and the weight hook.

use std::cell::Cell;
use std::fmt;
use std::sync::Arc;

use rudder_common::clock::Clock;

use super::weight::WeightSource;
use crate::provider::Provider;

/// The per-pick context: time, exclusions and the optional weight hook.
///
/// The time is either fixed ([`Pick::at`], for simulations and tests) or read from a clock on first
/// use ([`Pick::reading`], what a balancer does). Reading the system clock costs about 35 ns here, more
/// than a whole `random` pick, and most picks do not need it: `random`, `leastactive` and
/// `consistenthash` ask for the time only while some provider may still be warming up.
///
/// ```
/// use rudder_cluster::loadbalance::Pick;
/// use rudder_common::clock::ManualClock;
///
/// let pick = Pick::at(1_700_000_000_000);
/// assert_eq!(pick.now(), 1_700_000_000_000);
///
/// let clock = ManualClock::new(42);
/// let pick = Pick::reading(&clock);
/// clock.advance(1);
/// assert_eq!(pick.now(), 43); // read on first use, then kept for the rest of the pick
/// clock.advance(1);
/// assert_eq!(pick.now(), 43);
/// ```
#[derive(Clone, Default)]
pub struct Pick<'a> {
    time: Time<'a>,
    /// Providers not to pick (already tried by failover), by identity.
    pub excluded: &'a [Arc<Provider>],
    /// Overrides computed weights, if set.
    pub weight_source: Option<&'a dyn WeightSource>,
    /// The policy asked the chosen provider to report its load with the answer.
    load_report: Cell<bool>,
}

#[derive(Clone)]
enum Time<'a> {
    At(i64),
    Clock {
        clock: &'a dyn Clock,
        read: Cell<Option<i64>>,
    },
}

impl Default for Time<'_> {
    fn default() -> Self {
        Time::At(0)
    }
}

impl<'a> Pick<'a> {
    /// A pick at `now` (epoch milliseconds), with nothing excluded and no weight hook.
    pub fn at(now: i64) -> Pick<'a> {
        Pick {
            time: Time::At(now),
            ..Pick::default()
        }
    }

    /// A pick that reads `clock` the first time something needs the time, and only then.
    pub fn reading(clock: &'a dyn Clock) -> Pick<'a> {
        Pick {
            time: Time::Clock {
                clock,
                read: Cell::new(None),
            },
            ..Pick::default()
        }
    }

    /// The same pick, not choosing any of `excluded`.
    pub fn excluding(self, excluded: &'a [Arc<Provider>]) -> Pick<'a> {
        Pick { excluded, ..self }
    }

    /// The same pick, with weights overridden by `source`.
    pub fn weighted_by(self, source: Option<&'a dyn WeightSource>) -> Pick<'a> {
        Pick {
            weight_source: source,
            ..self
        }
    }

    /// Now, in epoch milliseconds; a clock is read at most once per pick.
    #[inline]
    pub fn now(&self) -> i64 {
        match &self.time {
            Time::At(now) => *now,
            Time::Clock { clock, read } => match read.get() {
                Some(now) => now,
                None => {
                    let now = clock.now_millis();
                    read.set(Some(now));
                    now
                }
            },
        }
    }

    /// Asks that the call carry Dubbo's `lb_adaptive=mem,load` request attachment, so a Java provider
    /// reports its load in the answer (what `adaptive` does); the cluster feeds the report into the
    /// provider's [`AdaptiveMetrics`](rudder_common::status::AdaptiveMetrics).
    ///
    /// ```
    /// use rudder_cluster::loadbalance::Pick;
    /// let pick = Pick::at(0);
    /// assert!(!pick.load_report_asked());
    /// pick.ask_load_report();
    /// assert!(pick.load_report_asked());
    /// ```
    pub fn ask_load_report(&self) {
        self.load_report.set(true);
    }

    /// Whether the policy asked for a load report ([`Pick::ask_load_report`]).
    pub fn load_report_asked(&self) -> bool {
        self.load_report.get()
    }

    /// Whether the time was given rather than read from a clock.
    pub(crate) fn is_fixed(&self) -> bool {
        matches!(self.time, Time::At(_))
    }
}

impl fmt::Debug for Pick<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("Pick");
        match &self.time {
            Time::At(now) => debug.field("now", now),
            Time::Clock { read, .. } => debug.field("read", &read.get()),
        };
        debug
            .field("excluded", &self.excluded.len())
            .field("weight_source", &self.weight_source)
            .finish()
    }
}
