//! Dubbo's `AdaptiveMetrics`: what the `adaptive` balancer knows of one provider, per provider and
//! service, fed by the `lb_adaptive` answers Java providers send back.
//!
//! A consumer whose balancer is `adaptive` asks each call's provider to report its load (request
//! attachment `lb_adaptive=mem,load`); a Java provider's `ProfilerServerFilter` answers with the
//! attachment `lb_adaptive=curTime:<its clock, ms>,load:<load average × 100 ÷ processors>`. The
//! consumer adds the call's round-trip time and keeps, per provider, an EWMA of latencies, the last CPU
//! load and its own counts of calls picked, answered and failed. [`AdaptiveMetrics::load`] turns that into
//! the number the balancer compares (lower is better).
//!
//! This is a transcription of Dubbo 3.2+'s `AdaptiveMetrics` (checked against that class by the
//! vectors in `rudder-cluster/tests/vectors/adaptive.txt`), including its quirks: the first load read
//! after a report always applies the "penalty" (`2 × timeout`) latency, because the report sets the two
//! times the penalty test compares to the same value; the latency decays by `>> multiple` with Java's
//! shift (the count taken modulo 64). Time is passed in, never read, so tests choose it.
//!
//! ```
//! # #[allow(unused_imports)] use rudder_common::status::record::*;
//! use rudder_common::status::AdaptiveMetrics;
//!
//! let metrics = AdaptiveMetrics::default();
//! let now = 1_700_000_000_000;
//! assert_eq!(metrics.load(100, 1000, now), 0.0); // nothing known: 0, so it is picked
//! metrics.picked(now);
//! metrics.answered(Some("curTime:1700000000000,load:50.0"), 12, now + 12);
//! assert!(metrics.load(100, 1000, now + 20) > 0.0);
//! ```

use std::sync::{Mutex, PoisonError};

/// The adaptive balancer's statistics of one provider (Dubbo's `AdaptiveMetrics` entry).
#[derive(Debug, Default)]
pub struct AdaptiveMetrics {
    state: Mutex<State>,
}

#[derive(Debug, Clone, Copy)]
struct State {
    current_provider_time: i64,
    provider_cpu_load: f64,
    last_latency: i64,
    current_time: i64,
    /// When the provider was last picked; `None` until the entry is first used, which in Dubbo sets it
    /// to that moment ("allow some time disorder").
    pick_time: Option<i64>,
    beta: f64,
    consumer_req: i64,
    consumer_success: i64,
    error_req: i64,
    ewma: f64,
}

impl Default for State {
    fn default() -> Self {
        State {
            current_provider_time: 0,
            provider_cpu_load: 0.0,
            last_latency: 0,
            current_time: 0,
            pick_time: None,
            beta: 0.5,
            consumer_req: 0,
            consumer_success: 0,
            error_req: 0,
            ewma: 0.0,
        }
    }
}

/// The request attachment that asks a provider for its load, and the answer's key (Dubbo's
/// `ADAPTIVE_LOADBALANCE_ATTACHMENT_KEY`).
pub const ADAPTIVE_ATTACHMENT: &str = "lb_adaptive";

/// What the adaptive balancer asks for (`AdaptiveLoadBalance.attachmentKey`).
pub const ADAPTIVE_REQUEST: &str = "mem,load";

impl State {
    /// The entry's first use at `now` fixes its initial pick time, as Dubbo's constructor does.
    fn touch(&mut self, now: i64) -> &mut State {
        self.pick_time.get_or_insert(now);
        self
    }
}

impl AdaptiveMetrics {
    fn with<R>(&self, now: i64, f: impl FnOnce(&mut State) -> R) -> R {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        f(state.touch(now))
    }

    /// Dubbo's `getLoad(key, weight, timeout)` at `now`: 0 when the provider was not picked for two
    /// timeouts (so it is picked again), else `cpu load × (√ewma + 1) × (in flight + 1) ÷ (success
    /// ratio × weight + 1)`. Decays the latency as a side effect, as Dubbo's does. `timeout` below 1 is
    /// taken as 1 (Dubbo divides by it and would throw).
    pub fn load(&self, weight: i32, timeout: i32, now: i64) -> f64 {
        let timeout = timeout.max(1);
        self.with(now, |m| {
            let pick_time = m.pick_time.unwrap_or(now);
            // Java: `now - pickTime > timeout * 2`, the product in 32 bits.
            if now.wrapping_sub(pick_time) > i64::from(timeout.wrapping_mul(2)) {
                return 0.0;
            }
            if m.current_time > 0 {
                let multiple = now.wrapping_sub(m.current_time) / i64::from(timeout) + 1;
                if multiple > 0 {
                    if m.current_provider_time == m.current_time {
                        m.last_latency = i64::from(timeout) * 2;
                    } else {
                        // Java's `long >> n` shifts by `n & 63`.
                        m.last_latency >>= (multiple & 63) as u32;
                    }
                    m.ewma = m.beta * m.ewma + (1.0 - m.beta) * m.last_latency as f64;
                    m.current_time = now;
                }
            }
            let inflight = m.consumer_req - m.consumer_success - m.error_req;
            m.provider_cpu_load * (m.ewma.sqrt() + 1.0) * (inflight + 1) as f64
                / ((m.consumer_success as f64 / (m.consumer_req + 1) as f64) * f64::from(weight)
                    + 1.0)
        })
    }

    /// The balancer picked this provider at `now` (`addConsumerReq` and `setPickTime`).
    pub(crate) fn write_picked(&self, now: i64) {
        self.with(now, |m| {
            m.consumer_req += 1;
            m.pick_time = Some(now);
        });
    }

    /// Counts a call picked for this provider, without moving its pick time (Dubbo's `addConsumerReq`).
    pub(crate) fn write_count_request(&self, now: i64) {
        self.with(now, |m| m.consumer_req += 1);
    }

    /// Sets the time the provider was last picked (Dubbo's `setPickTime`, without counting a call).
    pub(crate) fn write_set_pick_time(&self, millis: i64) {
        self.with(millis, |m| m.pick_time = Some(millis));
    }

    /// A call picked by the balancer was answered at `now`, `rt_millis` after its pick, with the
    /// provider's `lb_adaptive` attachment if it sent one (`addConsumerSuccess`, then what
    /// `AdaptiveLoadBalanceFilter.onResponse` does with the attachment).
    pub(crate) fn write_answered(&self, attachment: Option<&str>, rt_millis: i64, now: i64) {
        self.with(now, |m| {
            m.consumer_success += 1;
            let Some(report) = attachment.filter(|a| !a.is_empty()).and_then(Report::parse) else {
                return;
            };
            m.apply(&report, rt_millis);
        });
    }

    /// A call picked by the balancer failed with an RPC error (`addErrorReq`).
    pub(crate) fn write_failed(&self, now: i64) {
        self.with(now, |m| m.error_req += 1);
    }

    /// Calls picked, answered and failed, as counted for this balancer.
    pub fn counts(&self) -> (i64, i64, i64) {
        let m = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        (m.consumer_req, m.consumer_success, m.error_req)
    }

    /// The last CPU load the provider reported and the latency EWMA.
    pub fn provider_load_and_ewma(&self) -> (f64, f64) {
        let m = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        (m.provider_cpu_load, m.ewma)
    }
}

/// The `curTime` and `load` parts of an `lb_adaptive` answer, as the Java filter splits it: parts
/// separated by commas (with any spaces around them), each `key:value` with exactly one colon (Java's
/// `split(":")`, which drops trailing empty strings); the last of a repeated key wins.
#[derive(Debug, Default, PartialEq)]
struct Report<'a> {
    cur_time: Option<&'a str>,
    load: Option<&'a str>,
}

impl<'a> Report<'a> {
    /// `None` when Java's split finds no part at all (the filter then reports nothing).
    fn parse(attachment: &'a str) -> Option<Report<'a>> {
        // Java splits on `\s*[,]+\s*`: the parts are the pieces between commas, with the spaces next
        // to a comma dropped; empty pieces are never `key:value`, so only "all empty" matters.
        let pieces = attachment.split(',').count();
        let part = |i: usize, piece: &'a str| {
            let piece = if i > 0 {
                piece.trim_start_matches(java_whitespace)
            } else {
                piece
            };
            if i + 1 < pieces {
                piece.trim_end_matches(java_whitespace)
            } else {
                piece
            }
        };
        if pieces > 1
            && attachment
                .split(',')
                .enumerate()
                .all(|(i, p)| part(i, p).is_empty())
        {
            return None;
        }
        let mut report = Report::default();
        for (i, piece) in attachment.split(',').enumerate() {
            let mut groups = part(i, piece).split(':');
            let (key, value) = (groups.next(), groups.next());
            // Java's `split(":")` drops trailing empty strings before the length check.
            if groups.any(|g| !g.is_empty()) {
                continue;
            }
            match (key, value) {
                (Some("curTime"), Some(v)) if !v.is_empty() => report.cur_time = Some(v),
                (Some("load"), Some(v)) if !v.is_empty() => report.load = Some(v),
                _ => {}
            }
        }
        Some(report)
    }
}

/// `\s` in a Java regex: space, tab, newline, vertical tab, form feed, carriage return.
fn java_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r')
}

/// Dubbo's `StringUtils.isNumeric(s, allowDot)` for ASCII digits (Java also accepts other Unicode
/// digits, which its `parseDouble` then rejects).
fn is_numeric(s: &str, allow_dot: bool) -> bool {
    let mut dot = false;
    !s.is_empty()
        && s.bytes().all(|b| match b {
            b'.' if allow_dot && !dot => {
                dot = true;
                true
            }
            b'0'..=b'9' => true,
            _ => false,
        })
}

impl State {
    /// `setProviderMetrics`: a report older than the last one is dropped; a value Java's parsers throw
    /// on stops the update where Java's exception would.
    fn apply(&mut self, report: &Report<'_>, rt_millis: i64) {
        let service_time = match report.cur_time.filter(|v| is_numeric(v, false)) {
            Some(v) => match v.parse::<i64>() {
                Ok(t) => t,
                Err(_) => return, // Long.parseLong overflows: nothing was changed yet
            },
            None => 0,
        };
        if self.current_provider_time > service_time {
            return;
        }
        self.current_provider_time = service_time;
        self.current_time = service_time;
        self.provider_cpu_load = match report.load.filter(|v| is_numeric(v, true)) {
            Some(v) => match v.parse::<f64>() {
                Ok(load) => load,
                Err(_) => return, // "." passes isNumeric; Double.parseDouble throws
            },
            None => 0.0,
        };
        self.last_latency = rt_millis;
        self.beta = 0.5;
        self.ewma = self.beta * self.ewma + (1.0 - self.beta) * self.last_latency as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::{is_numeric, Report};

    #[test]
    fn reports_split_as_java_splits_them() {
        let r = Report::parse("curTime:12,load:3.5").unwrap();
        assert_eq!((r.cur_time, r.load), (Some("12"), Some("3.5")));
        let r = Report::parse("curTime:1 ,, load:2:,load:x:y").unwrap();
        assert_eq!((r.cur_time, r.load), (Some("1"), Some("2")));
        // No comma next to it: the space stays part of the key.
        assert_eq!(Report::parse(" curTime:1").unwrap().cur_time, None);
        assert_eq!(Report::parse(" , ,"), None);
        assert_eq!(Report::parse("load:").unwrap().load, None);
    }

    #[test]
    fn numeric_as_dubbo_checks() {
        assert!(is_numeric("12.5", true) && !is_numeric("12.5", false));
        assert!(!is_numeric("1..2", true) && !is_numeric("-1", true) && !is_numeric("", true));
        assert!(is_numeric(".", true));
    }
}
