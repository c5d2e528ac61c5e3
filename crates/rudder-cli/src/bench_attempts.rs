//! Attempts per provider for `rudder bench`, from the `rudder.attempt` spans the cluster opens around
//! each attempt. A module of its own below both `bench` and `logging`: the logger installs the layer
//! for every command, `bench` switches the recording on and reads the rows.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use hdrhistogram::Histogram;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

static RECORDING: AtomicBool = AtomicBool::new(false);
static ROWS: Mutex<BTreeMap<String, ProviderRow>> = Mutex::new(BTreeMap::new());

/// Whether `rudder bench` wants the attempt spans now (the layer's filter).
pub(crate) fn wanted(metadata: &Metadata<'_>) -> bool {
    RECORDING.load(Relaxed) && metadata.name() == "rudder.attempt"
}

pub(crate) fn start() {
    ROWS.lock().unwrap_or_else(PoisonError::into_inner).clear();
    RECORDING.store(true, Relaxed);
}

pub(crate) fn finish() -> Vec<ProviderRow> {
    RECORDING.store(false, Relaxed);
    let rows = std::mem::take(&mut *ROWS.lock().unwrap_or_else(PoisonError::into_inner));
    rows.into_values().collect()
}

/// The layer `main` installs, filtered by [`wanted`].
#[derive(Debug)]
pub(crate) struct AttemptLayer;

struct Attempt {
    host: String,
    port: u64,
    /// Ended with an RPC error (not `ok`, not `cancelled`).
    failed: bool,
    /// Answered with an exception thrown by the provider's method.
    exception: bool,
    started: Instant,
}

impl Visit for Attempt {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "server.address" => self.host = value.to_owned(),
            "rudder.outcome" => self.failed = failed(value),
            _ => {}
        }
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        if field.name() == "rudder.exception" {
            self.exception = value;
        }
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == "server.port" {
            self.port = value;
        }
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.record_u64(field, value.max(0) as u64);
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "rudder.outcome" {
            self.failed = failed(format!("{value:?}").trim_matches('"'));
        }
    }
}

/// Whether an attempt's outcome is an RPC error: not an answer, and not an attempt given up by its
/// caller (a forking loser, a call in flight at Ctrl-C), which failed nothing.
fn failed(outcome: &str) -> bool {
    outcome != "ok" && outcome != "cancelled"
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for AttemptLayer {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut attempt = Attempt {
            host: String::new(),
            port: 0,
            failed: false,
            exception: false,
            started: Instant::now(),
        };
        attrs.record(&mut attempt);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(attempt);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if let Some(attempt) = span.extensions_mut().get_mut::<Attempt>() {
                values.record(attempt);
            }
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(attempt) = span.extensions_mut().remove::<Attempt>() else {
            return;
        };
        let micros = attempt
            .started
            .elapsed()
            .as_micros()
            .clamp(1, 3_600_000_000) as u64;
        let address = format!("{}:{}", attempt.host, attempt.port);
        let mut rows = ROWS.lock().unwrap_or_else(PoisonError::into_inner);
        let row = rows.entry(address.clone()).or_insert_with(|| ProviderRow {
            address,
            calls: 0,
            errors: 0,
            exceptions: 0,
            ejections: None,
            latency: histogram(),
        });
        row.calls += 1;
        row.errors += u64::from(attempt.failed);
        row.exceptions += u64::from(attempt.exception);
        row.latency.saturating_record(micros);
    }
}

/// One provider's attempts during the measured calls.
#[derive(Debug)]
pub(crate) struct ProviderRow {
    pub(crate) address: String,
    /// Attempts.
    pub(crate) calls: u64,
    /// Attempts that failed with an RPC error.
    pub(crate) errors: u64,
    /// Attempts answered with an exception thrown by the provider's method.
    pub(crate) exceptions: u64,
    /// Times outlier ejection took the provider out for the method, warmup included; `None` when
    /// ejection is off (`outlier.*` unset).
    pub(crate) ejections: Option<u32>,
    pub(crate) latency: Histogram<u64>,
}

/// An empty latency histogram: 1 µs to 1 h, 3 significant digits.
pub(crate) fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds")
}
