//! `failback`: a failed call returns the empty result at once and is retried in the background.
//!
//! Like Dubbo: up to `retries` retries (default 3), `retry.period` apart (Dubbo: fixed 5 s), the first
//! one period after the failure; a retry's answer is dropped, and a business exception (an answer) is
//! never retried. At most `failbacktasks` failed calls (default 100) wait at once: a failure beyond that
//! is not queued (refused, as Dubbo's timer refuses it) and counted in [`FailbackStats::refused`].
//!
//! Unlike Dubbo, each retry picks from the directory's *current* providers (excluding the one that just
//! failed, unless it is the only one): Dubbo keeps the list captured at the first failure, so it retries
//! providers that have left and never sees new ones. Retries wait on the invoker's [`Timer`]
//! concurrently rather than on one timer thread, so a slow retry delays no other. Dropping the invoker
//! ends every pending retry at once.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Poll, Waker};
use std::time::Duration;

use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;

use super::timer::Closed;
use super::{BoxFuture, Caller, Core, Timer};
use crate::provider::Provider;

/// Failback's parameters for one call.
#[derive(Debug, Clone, Copy)]
pub(super) struct Settings {
    pub(super) retries: u32,
    pub(super) tasks: u32,
    pub(super) period_millis: u64,
}

/// Counts of failback's background work, for monitoring and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FailbackStats {
    /// Failed calls waiting for (or in) a retry now.
    pub pending: u32,
    /// Failed calls not queued: `failbacktasks` were already waiting, or no timer was given.
    pub refused: u64,
    /// Retries made.
    pub retries: u64,
    /// Calls a retry completed.
    pub recovered: u64,
    /// Calls given up after `retries` failed retries.
    pub given_up: u64,
}

/// The invoker's queue of failed calls awaiting retry: a count against `failbacktasks`, and the signal
/// that ends them.
#[derive(Debug, Default)]
pub(super) struct Queue {
    pending: AtomicU32,
    refused: AtomicU64,
    retries: AtomicU64,
    recovered: AtomicU64,
    given_up: AtomicU64,
    closed: Closed,
}

impl Queue {
    pub(super) fn stats(&self) -> FailbackStats {
        FailbackStats {
            pending: self.pending.load(Ordering::Acquire),
            refused: self.refused.load(Ordering::Relaxed),
            retries: self.retries.load(Ordering::Relaxed),
            recovered: self.recovered.load(Ordering::Relaxed),
            given_up: self.given_up.load(Ordering::Relaxed),
        }
    }

    pub(super) fn close(&self) {
        self.closed.close();
    }

    /// Takes a place in the queue if fewer than `tasks` are taken.
    fn enter(self: &Arc<Self>, tasks: u32) -> Option<Place> {
        self.pending
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < tasks).then_some(n + 1)
            })
            .ok()
            .map(|_| Place {
                queue: Arc::clone(self),
                waker: None,
            })
    }
}

/// A failed call's place in the queue, given back when its retries end however they end (and the
/// task's waker taken off the closed signal).
struct Place {
    queue: Arc<Queue>,
    waker: Option<Waker>,
}

impl Drop for Place {
    fn drop(&mut self) {
        if let Some(waker) = &self.waker {
            self.queue.closed.unregister(waker);
        }
        self.queue.pending.fetch_sub(1, Ordering::AcqRel);
    }
}

impl<C: Caller + 'static> Core<C> {
    pub(super) async fn failback(
        self: &Arc<Self>,
        invocation: &Invocation,
        settings: Settings,
    ) -> Result<C::Output, RpcError> {
        let (error, provider) = match self.pick(invocation, &[]) {
            Err(error) => (error, None),
            Ok(picked) => match self.call(&picked, invocation, 1).await {
                Ok(out) => return Ok(out),
                Err(error) if !error.kind().is_retryable() => return Err(error),
                Err(error) => (error, Some(picked.provider)),
            },
        };
        tracing::warn!(
            error = &error as &dyn std::error::Error,
            method = invocation.method_name(),
            "failback: returning an empty result; the call will be retried in the background"
        );
        if settings.retries > 0 {
            self.schedule(invocation, provider, settings);
        }
        Ok(self.caller().empty())
    }

    fn schedule(
        self: &Arc<Self>,
        invocation: &Invocation,
        failed: Option<Arc<Provider>>,
        settings: Settings,
    ) {
        let queue = &self.failback;
        let (Some(timer), Some(place)) = (self.timer.get(), queue.enter(settings.tasks)) else {
            queue.refused.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                method = invocation.method_name(),
                failbacktasks = settings.tasks,
                has_timer = self.timer.get().is_some(),
                "failback: retry queue full (or no timer); this call will not be retried"
            );
            return;
        };
        // The first wait starts now, not when the task is first polled.
        let first = timer.sleep(Duration::from_millis(settings.period_millis));
        let task = retry(
            Arc::downgrade(self),
            Arc::clone(timer),
            first,
            place,
            invocation.clone(),
            failed,
            settings,
        );
        let span = tracing::info_span!(
            "rudder.failback",
            rpc.method = invocation.method_name(),
            retries = settings.retries
        );
        timer.spawn(Box::pin(tracing::Instrument::instrument(task, span)));
    }
}

/// Retries `invocation` until it succeeds, `settings.retries` retries fail, or the invoker is dropped.
async fn retry<C: Caller + 'static>(
    core: Weak<Core<C>>,
    timer: Arc<dyn Timer>,
    first: BoxFuture<()>,
    mut place: Place,
    invocation: Invocation,
    mut last: Option<Arc<Provider>>,
    settings: Settings,
) {
    place.waker = Some(std::future::poll_fn(|cx| Poll::Ready(cx.waker().clone())).await);
    let queue = Arc::clone(&place.queue);
    let period = Duration::from_millis(settings.period_millis);
    let mut first = Some(first);
    for retry in 1..=settings.retries {
        let wait = first.take().unwrap_or_else(|| timer.sleep(period));
        if !queue.closed.sleep(wait).await {
            return;
        }
        let Some(core) = core.upgrade() else {
            return;
        };
        queue.retries.fetch_add(1, Ordering::Relaxed);
        let excluded: Vec<Arc<Provider>> = last.iter().cloned().collect();
        let picked = match core.pick(&invocation, &excluded) {
            Err(e) if e.kind() == RpcErrorKind::NoProvider && !excluded.is_empty() => {
                core.pick(&invocation, &[])
            }
            other => other,
        };
        let error = match picked {
            Err(error) => error,
            // Attempt numbers go on from the first call's.
            Ok(picked) => match core.call(&picked, &invocation, retry + 1).await {
                Ok(_) => {
                    queue.recovered.fetch_add(1, Ordering::Relaxed);
                    tracing::info!(retry, "failback: retry succeeded");
                    return;
                }
                Err(error) if !error.kind().is_retryable() => {
                    tracing::warn!(
                        error = &error as &dyn std::error::Error,
                        retry,
                        "failback: business error on retry; giving up"
                    );
                    return;
                }
                Err(error) => {
                    last = Some(picked.provider);
                    error
                }
            },
        };
        tracing::warn!(
            error = &error as &dyn std::error::Error,
            retry,
            "failback: retry failed"
        );
    }
    queue.given_up.fetch_add(1, Ordering::Relaxed);
    tracing::warn!(
        retries = settings.retries,
        "failback: giving up after all retries"
    );
}
