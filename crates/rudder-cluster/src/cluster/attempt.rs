//! One attempt on a picked provider: the call through the invoker's layers (statistics and span:
//! [`super::layers`]), then what the answer feeds back to balancing (outlier ejection, the `adaptive`
//! load report, known-failing providers for `available`, the sticky provider).

use std::sync::{Arc, PoisonError};
use std::time::Instant;

use rudder_common::error::RpcError;
use rudder_common::invocation::Invocation;
use rudder_common::status::record::{RecordAdaptive, RecordOutcome};
use rudder_common::status::{MethodStatus, ADAPTIVE_ATTACHMENT, ADAPTIVE_REQUEST};

use super::caller::Caller;
use super::layers::{Attempt, AttemptService};
use super::{outlier_compare, Core};
use crate::loadbalance::MethodView;
use crate::provider::Provider;

impl<C: Caller + 'static> Core<C> {
    /// Makes attempt number `attempt` (1 for the first) of a call on `picked`.
    pub(super) async fn call(
        &self,
        picked: &Picked,
        invocation: &Invocation,
        attempt: u32,
    ) -> Result<C::Output, RpcError> {
        // `adaptive` asks the provider for a load report (Dubbo's request attachment), and times the
        // answer itself (the statistics layer's timing stays inside the layer).
        let asking;
        let (invocation, started) = match picked.load_report {
            true => {
                let mut with_request = invocation.clone();
                with_request.set_attachment(ADAPTIVE_ATTACHMENT, ADAPTIVE_REQUEST);
                asking = with_request;
                (&asking, Some(Instant::now()))
            }
            false => (invocation, None),
        };
        let attempt = Attempt::new(
            invocation,
            &picked.provider,
            &picked.method_status,
            picked.max_active,
            attempt,
        );
        let result = self.service.call(&attempt).await;
        // A refusal is an error: an answered call never reads the flag.
        if result.is_err() && attempt.was_refused() {
            // Nothing was sent: nothing to learn of the provider.
            return result;
        }
        // What the outcome tells balancing. The common case (no outlier ejection, no `adaptive`)
        // pays two branches here, not a call.
        if picked.outlier.is_some() || started.is_some() {
            self.feed_back(picked, invocation, &result, started);
        }
        self.failing.observe(
            &picked.provider,
            result.as_ref().err(),
            &**self.balancer.clock(),
        );
        // Remember the provider only where stickiness is on: the lock stays off the common path.
        if result.is_ok() && picked.sticky {
            *self.sticky.lock().unwrap_or_else(PoisonError::into_inner) =
                Some(Arc::clone(&picked.provider));
        }
        result
    }

    /// What an attempt's outcome tells outlier ejection and the `adaptive` balancer, when either is on.
    fn feed_back(
        &self,
        picked: &Picked,
        invocation: &Invocation,
        result: &Result<C::Output, RpcError>,
        started: Option<Instant>,
    ) {
        if let Some(outlier) = &picked.outlier {
            // Outlier ejection counts a business exception as a failure unless its class is declared
            // a business result.
            let failure = match result {
                Err(_) => true,
                Ok(output) => self
                    .caller()
                    .exception(output)
                    .is_some_and(|e| !is_ignored(&e, picked.outlier_ignored.as_deref())),
            };
            let now = self.balancer.clock().now_millis();
            let others_healthy = || self.another_is_healthy(picked, invocation, now);
            let ejected = picked.method_status.outlier().record_unless(
                !failure,
                outlier.consecutive_errors,
                outlier.base_ejection_ms,
                now,
                &others_healthy,
            );
            if ejected {
                tracing::warn!(
                    provider = picked.provider.address(),
                    method = invocation.method_name(),
                    until = picked.method_status.outlier().ejected_until(),
                    "outlier ejected after {} consecutive errors",
                    outlier.consecutive_errors
                );
            }
            if let Some(relative) = &outlier.relative {
                // One load per call; the comparison itself once per interval and method.
                if picked
                    .method_status
                    .outlier()
                    .interval_due(relative.interval_ms, now)
                {
                    outlier_compare::compare(
                        &self.balancer,
                        invocation.method_name(),
                        outlier,
                        now,
                    );
                }
            }
        }
        if let Some(started) = started {
            let elapsed = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
            let now = self.balancer.clock().now_millis();
            let adaptive = picked.provider.status().adaptive();
            match result {
                Ok(output) => {
                    let report = self.caller().answer_attachment(output, ADAPTIVE_ATTACHMENT);
                    adaptive.answered(report, elapsed, now);
                }
                Err(_) => adaptive.failed(now),
            }
        }
    }

    /// Whether a provider of the method other than `picked`'s is healthy at `now`: called, its last
    /// call of the method not a failure, not ejected. Read only when an ejection is due.
    fn another_is_healthy(&self, picked: &Picked, invocation: &Invocation, now: i64) -> bool {
        self.balancer.directory().with_current(|snapshot| {
            snapshot.with_view(invocation.method_name(), |view| {
                view.providers().iter().enumerate().any(|(i, p)| {
                    let status = view.method_status(i);
                    p.identity() != picked.provider.identity()
                        && status.total() > 0
                        && status.outlier().consecutive_errors() == 0
                        && !status.outlier().is_ejected(now)
                })
            })
        })
    }
}

/// Whether `exception` (`class` or `class: message`) is of a class in `ignored`.
fn is_ignored(exception: &str, ignored: Option<&[Box<str>]>) -> bool {
    let class = exception
        .split_once(": ")
        .map_or(exception, |(class, _)| class);
    ignored.is_some_and(|classes| classes.iter().any(|c| **c == *class.trim()))
}

/// One attempt's provider and what the call needs of it, read from the view it was picked in.
pub(super) struct Picked {
    pub(super) provider: Arc<Provider>,
    pub(super) method_status: MethodStatus,
    pub(super) max_active: i32,
    pub(super) sticky: bool,
    /// The policy asked for the provider's load report (`adaptive`).
    pub(super) load_report: bool,
    /// Outlier ejection settings, when on.
    pub(super) outlier: Option<crate::loadbalance::outlier::OutlierSettings>,
    /// Exception classes that are business results for ejection, when some are named.
    pub(super) outlier_ignored: Option<Arc<[Box<str>]>>,
}

impl Picked {
    pub(super) fn new(view: &MethodView, index: usize) -> Picked {
        Picked {
            provider: Arc::clone(&view.providers()[index]),
            method_status: view.method_status(index).clone(),
            max_active: view.max_active(index),
            sticky: view.sticky(),
            load_report: false,
            outlier: view.outlier().copied(),
            outlier_ignored: view.outlier_ignored().cloned(),
        }
    }
}
