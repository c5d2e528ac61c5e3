//! How `rudder bench` prints what a run measured: the text report for people and the JSON object for
//! scripts. Both say the same numbers; the headline's errors and the provider rows' failures are
//! counted so that they agree (see [`attempt_totals`]).

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use anyhow::Result;
use hdrhistogram::Histogram;

use crate::bench_attempts::ProviderRow;

/// What a run measured.
#[derive(Debug)]
pub(crate) struct Report {
    pub(crate) calls: u64,
    pub(crate) errors: u64,
    pub(crate) errors_by_kind: BTreeMap<String, u64>,
    /// Call latencies, µs.
    pub(crate) latency: Histogram<u64>,
    pub(crate) elapsed: Duration,
    pub(crate) cpu: Option<Duration>,
    pub(crate) providers: Vec<ProviderRow>,
    /// Ctrl-C ended the run early.
    pub(crate) interrupted: bool,
}

impl Report {
    pub(crate) fn qps(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    pub(crate) fn ms(&self, quantile: f64) -> f64 {
        quantile_ms(&self.latency, quantile)
    }

    pub(crate) fn error_share(&self) -> f64 {
        self.errors as f64 / (self.calls.max(1)) as f64
    }

    pub(crate) fn cpu_us_per_call(&self) -> Option<f64> {
        self.cpu
            .map(|cpu| cpu.as_secs_f64() * 1e6 / self.calls.max(1) as f64)
    }
}

pub(crate) fn quantile_ms(h: &Histogram<u64>, quantile: f64) -> f64 {
    if h.is_empty() {
        return 0.0;
    }
    h.value_at_quantile(quantile) as f64 / 1000.0
}

/// The text report: headline, latency, errors by kind, attempts, one row per provider.
pub(crate) fn write_text(report: &Report, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "{} calls in {:.2} s: {:.1} calls/s, {} errors ({:.2} %){}",
        report.calls,
        report.elapsed.as_secs_f64(),
        report.qps(),
        report.errors,
        report.error_share() * 100.0,
        report
            .cpu_us_per_call()
            .map(|c| format!(", {c:.1} µs CPU per call"))
            .unwrap_or_default()
    )?;
    writeln!(
        out,
        "latency ms: p50 {:.3}  p90 {:.3}  p99 {:.3}  p99.9 {:.3}  max {:.3}",
        report.ms(0.5),
        report.ms(0.9),
        report.ms(0.99),
        report.ms(0.999),
        report.latency.max() as f64 / 1000.0
    )?;
    if !report.errors_by_kind.is_empty() {
        let kinds: Vec<String> = report
            .errors_by_kind
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        writeln!(out, "errors by kind: {}", kinds.join(", "))?;
    }
    let totals = attempt_totals(report);
    // With failover a failed attempt is retried and the call may still succeed, so the rows' failures
    // and the calls' errors differ by the failed attempts that were retried; this line ties them.
    writeln!(
        out,
        "attempts: {} ({} retries), {} failed: {} with an RPC error, {} with an exception thrown \
         by the provider (an answer: not retried)",
        totals.attempts,
        totals.retries,
        totals.rpc_errors + totals.exceptions,
        totals.rpc_errors,
        totals.exceptions
    )?;
    let ejecting = report.providers.iter().any(|p| p.ejections.is_some());
    write!(
        out,
        "{:<24} {:>9} {:>7} {:>8} {:>9} {:>9}",
        "provider", "attempts", "share", "failed", "p50 ms", "p99 ms"
    )?;
    writeln!(out, "{}", if ejecting { " ejections" } else { "" })?;
    for p in &report.providers {
        write!(
            out,
            "{:<24} {:>9} {:>6.1}% {:>8} {:>9.3} {:>9.3}",
            p.address,
            p.calls,
            100.0 * p.calls as f64 / totals.attempts.max(1) as f64,
            p.errors + p.exceptions,
            quantile_ms(&p.latency, 0.5),
            quantile_ms(&p.latency, 0.99)
        )?;
        match p.ejections {
            Some(n) if ejecting => writeln!(out, " {n:>9}")?,
            _ => writeln!(out)?,
        }
    }
    Ok(())
}

/// The attempts of a run, summed over the provider rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AttemptTotals {
    /// Every attempt.
    pub(crate) attempts: u64,
    /// Attempts beyond one per call.
    pub(crate) retries: u64,
    /// Attempts that failed with an RPC error (refused, reset, timed out...).
    pub(crate) rpc_errors: u64,
    /// Attempts answered with an exception thrown by the provider's method.
    pub(crate) exceptions: u64,
}

/// Sums the rows. Each call ends in one attempt, so `calls - errors` (the calls that succeeded)
/// equals `attempts - rpc_errors - exceptions` (the attempts that did), and without retries the
/// rows' failures are the headline's errors.
pub(crate) fn attempt_totals(report: &Report) -> AttemptTotals {
    let attempts: u64 = report.providers.iter().map(|p| p.calls).sum();
    AttemptTotals {
        attempts,
        retries: attempts.saturating_sub(report.calls),
        rpc_errors: report.providers.iter().map(|p| p.errors).sum(),
        exceptions: report.providers.iter().map(|p| p.exceptions).sum(),
    }
}

/// The JSON object of `--format json`.
pub(crate) fn to_json(report: &Report) -> serde_json::Value {
    let providers: Vec<serde_json::Value> = report
        .providers
        .iter()
        .map(|p| {
            serde_json::json!({
                "address": p.address,
                "calls": p.calls,
                "failed": p.errors + p.exceptions,
                "errors": p.errors,
                "exceptions": p.exceptions,
                "p50_ms": quantile_ms(&p.latency, 0.5),
                "p99_ms": quantile_ms(&p.latency, 0.99),
                "ejections": p.ejections,
            })
        })
        .collect();
    let totals = attempt_totals(report);
    serde_json::json!({
        "calls": report.calls,
        "errors": report.errors,
        "interrupted": report.interrupted,
        "attempts": totals.attempts,
        "retries": totals.retries,
        "failed_attempts": totals.rpc_errors + totals.exceptions,
        "rpc_error_attempts": totals.rpc_errors,
        "exception_attempts": totals.exceptions,
        "errors_by_kind": report.errors_by_kind,
        "qps": report.qps(),
        "duration_s": report.elapsed.as_secs_f64(),
        "latency_ms": {
            "p50": report.ms(0.5),
            "p90": report.ms(0.9),
            "p99": report.ms(0.99),
            "p999": report.ms(0.999),
            "max": report.latency.max() as f64 / 1000.0,
        },
        "cpu_us_per_call": report.cpu_us_per_call(),
        "providers": providers,
    })
}
