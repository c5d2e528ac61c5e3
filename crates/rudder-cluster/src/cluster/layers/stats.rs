//! The statistics layer: every attempt is counted in the provider's statistics
//! ([`rudder_common::status`]) from before the send to the answer, whatever the cluster mode. The
//! counters `leastactive` and `shortestresponse` read, kept by every call (Dubbo keeps them only
//! when the `actives` filter is configured); over the `actives` limit an attempt is refused before
//! anything under the layer runs.

use std::time::Instant;

use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::status::record::{RecordCall, RecordException};
use tower_layer::Layer;

use super::{Attempt, AttemptService};

/// Counts attempts in the picked provider's statistics, and refuses those over `actives`.
#[derive(Debug, Clone, Copy, Default)]
pub(in crate::cluster) struct StatsLayer;

impl<S> Layer<S> for StatsLayer {
    type Service = Counted<S>;

    fn layer(&self, inner: S) -> Counted<S> {
        Counted { inner }
    }
}

/// A service whose attempts are counted ([`StatsLayer`]).
#[derive(Debug)]
pub(in crate::cluster) struct Counted<S> {
    inner: S,
}

impl<S> Counted<S> {
    /// The service under the layer.
    pub(in crate::cluster) fn inner(&self) -> &S {
        &self.inner
    }
}

impl<S: AttemptService> AttemptService for Counted<S> {
    type Output = S::Output;

    async fn call<'a>(&'a self, attempt: &'a Attempt<'a>) -> Result<S::Output, RpcError> {
        let status = attempt.provider.status();
        // Declared before `active`, so dropped after it: waiters learn of the free slot only once it
        // is free, also when this future is dropped mid-call.
        let _ended = CallEnded(&self.inner);
        // The guard borrows the picked view's counters: no lookup, no reference count.
        let Some(active) = status.begin_borrowed(attempt.counters, attempt.max_active) else {
            attempt.refuse();
            return Err(RpcError::new(
                RpcErrorKind::LimitExceeded,
                format!(
                    "{} on {} already has {} calls in flight (actives)",
                    attempt.invocation.method_name(),
                    attempt.provider.address(),
                    attempt.max_active
                ),
            ));
        };
        let started = Instant::now();
        let result = self.inner.call(attempt).await;
        let elapsed = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        // A business exception is an answer (`Ok` here), so it counts as a success, as in Dubbo;
        // `peakewma` also reads the exceptions, counted first so a pick never sees the call without.
        if let Ok(output) = &result {
            if self.inner.is_exception(output) {
                attempt.counters.record_exception();
            }
        }
        active.finish(elapsed, result.is_ok());
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

/// Tells the service under the layer that an attempt has ended, when dropped.
struct CallEnded<'a, S: AttemptService>(&'a S);

impl<S: AttemptService> Drop for CallEnded<'_, S> {
    fn drop(&mut self) {
        self.0.call_ended();
    }
}
