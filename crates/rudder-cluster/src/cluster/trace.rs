//! The `rudder.call` and `rudder.attempt` spans, with OpenTelemetry's RPC field names so that
//! tracing-opentelemetry exports them as client spans.
//!
//! Field values are computed only when a subscriber wants the span (tracing's macros skip them for a
//! disabled span), so a call without tracing pays one callsite check per span.

use std::time::Instant;

use rudder_common::error::RpcError;
use tracing::field::Empty;
use tracing::Span;

use super::{Caller, Core};
use crate::provider::Provider;

/// The span of one call through the cluster.
///
/// The service name is borrowed from the thread's cached snapshot (no `String`, no atomic
/// read-modify-write), and only read at all when a subscriber wants the span.
pub(super) fn call_span<C: Caller + 'static>(core: &Core<C>, method: &str, mode: &str) -> Span {
    // No subscriber wants INFO spans (one load): skip the snapshot lookup too, not only the fields.
    if !tracing::level_enabled!(tracing::Level::INFO) {
        return Span::none();
    }
    core.balancer.directory().with_current(|snapshot| {
        let service = snapshot
            .providers()
            .first()
            .map_or("", |p| p.url().service_interface());
        tracing::info_span!(
            "rudder.call",
            otel.name = %format_args!("{service}/{method}"),
            otel.kind = "client",
            otel.status_code = Empty,
            rpc.system = "dubbo",
            rpc.service = service,
            rpc.method = method,
            rudder.cluster = mode,
            error.type = Empty,
        )
    })
}

/// Records how the call ended.
pub(super) fn close_call<T>(span: &Span, result: &Result<T, RpcError>) {
    if span.is_disabled() {
        return;
    }
    match result {
        Ok(_) => {
            span.record("otel.status_code", "OK");
        }
        Err(error) => {
            span.record("otel.status_code", "ERROR");
            span.record("error.type", tracing::field::display(error.kind()));
        }
    }
}

/// The span of one attempt on one provider.
pub(super) fn attempt_span(provider: &Provider, attempt: u32) -> Span {
    tracing::info_span!(
        "rudder.attempt",
        otel.kind = "client",
        otel.status_code = Empty,
        rpc.system = "dubbo",
        server.address = provider.url().host(),
        server.port = provider.url().port(),
        rudder.attempt = attempt,
        rudder.outcome = Empty,
        rudder.exception = Empty,
        rudder.elapsed_ms = Empty,
        error.type = Empty,
    )
}

/// Records an attempt's outcome and elapsed time when it ends, or `cancelled` if its future is dropped
/// before it does.
pub(super) struct AttemptCloser<'a> {
    span: &'a Span,
    started: Option<Instant>,
}

impl<'a> AttemptCloser<'a> {
    pub(super) fn new(span: &'a Span) -> AttemptCloser<'a> {
        let started = (!span.is_disabled()).then(Instant::now);
        AttemptCloser { span, started }
    }

    /// The attempt was answered with an exception thrown by the provider's method: still outcome
    /// `ok` (an answer, as Dubbo counts it), with `rudder.exception = true` beside it, so a reader
    /// counting failures (`rudder bench`'s rows) sees what the caller sees.
    pub(super) fn exception(&self) {
        if self.started.is_some() {
            self.span.record("rudder.exception", true);
        }
    }

    /// The attempt ended, with `error` if it failed.
    pub(super) fn close(&mut self, error: Option<&RpcError>) {
        let Some(started) = self.started.take() else {
            return;
        };
        let span = self.span;
        span.record("rudder.elapsed_ms", elapsed_ms(started));
        match error {
            None => {
                span.record("rudder.outcome", "ok");
                span.record("otel.status_code", "OK");
            }
            Some(error) => {
                let kind = error.kind().to_string();
                span.record("rudder.outcome", kind.as_str());
                span.record("otel.status_code", "ERROR");
                span.record("error.type", kind.as_str());
            }
        }
    }
}

impl Drop for AttemptCloser<'_> {
    fn drop(&mut self) {
        if let Some(started) = self.started.take() {
            self.span.record("rudder.elapsed_ms", elapsed_ms(started));
            self.span.record("rudder.outcome", "cancelled");
        }
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}
