//! The span layer: each attempt is a `rudder.attempt` span inside the call's `rudder.call`, with
//! OpenTelemetry's RPC field names (the fields: [`crate::cluster`]'s "Tracing").
//!
//! Field values are computed only when a subscriber wants the span; an attempt whose span nobody wants
//! skips tracing's `Instrumented` layer too (its per-poll enter/exit and larger future cost an
//! end-to-end call measurably), though the span itself is free.

use std::time::Instant;

use rudder_common::error::RpcError;
use tower_layer::Layer;
use tracing::field::Empty;
use tracing::{Instrument, Span};

use super::{Attempt, AttemptService};
use crate::provider::Provider;

/// Makes each attempt a `rudder.attempt` span, closed with its outcome.
#[derive(Debug, Clone, Copy, Default)]
pub(in crate::cluster) struct TraceLayer;

impl<S> Layer<S> for TraceLayer {
    type Service = Traced<S>;

    fn layer(&self, inner: S) -> Traced<S> {
        Traced { inner }
    }
}

/// A service whose attempts are spans ([`TraceLayer`]).
#[derive(Debug)]
pub(in crate::cluster) struct Traced<S> {
    inner: S,
}

impl<S> Traced<S> {
    /// The service under the layer.
    pub(in crate::cluster) fn inner(&self) -> &S {
        &self.inner
    }
}

impl<S: AttemptService> AttemptService for Traced<S> {
    type Output = S::Output;

    async fn call<'a>(&'a self, attempt: &'a Attempt<'a>) -> Result<S::Output, RpcError> {
        let span = attempt_span(attempt.provider, attempt.number);
        if span.is_disabled() {
            return self.inner.call(attempt).await;
        }
        // Records the outcome when the attempt ends, also when its future is dropped (a forking loser).
        let mut closer = AttemptCloser::new(&span);
        let result = self.inner.call(attempt).instrument(span.clone()).await;
        if let Ok(output) = &result {
            if self.inner.is_exception(output) {
                closer.exception();
            }
        }
        closer.close(result.as_ref().err());
        result
    }

    #[inline]
    fn is_exception(&self, output: &S::Output) -> bool {
        self.inner.is_exception(output)
    }

    #[inline]
    fn call_ended(&self) {
        self.inner.call_ended();
    }
}

/// The span of one attempt on one provider.
fn attempt_span(provider: &Provider, attempt: u32) -> Span {
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
struct AttemptCloser<'a> {
    span: &'a Span,
    started: Option<Instant>,
}

impl<'a> AttemptCloser<'a> {
    fn new(span: &'a Span) -> AttemptCloser<'a> {
        let started = (!span.is_disabled()).then(Instant::now);
        AttemptCloser { span, started }
    }

    /// The attempt was answered with an exception thrown by the provider's method: still outcome
    /// `ok` (an answer, as Dubbo counts it), with `rudder.exception = true` beside it, so a reader
    /// counting failures (`rudder bench`'s rows) sees what the caller sees.
    fn exception(&self) {
        if self.started.is_some() {
            self.span.record("rudder.exception", true);
        }
    }

    /// The attempt ended, with `error` if it failed.
    fn close(&mut self, error: Option<&RpcError>) {
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
