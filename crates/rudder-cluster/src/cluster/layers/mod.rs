//! What wraps every attempt, whichever [`Caller`] makes it: the statistics and the `rudder.attempt`
//! span, as tower layers composed once per invoker over its caller.
//!
//! ```text
//! cluster mode ─ pick ─▶ Attempt ─▶ TraceLayer ∘ StatsLayer ∘ caller ─▶ (facade: MetricsLayer ∘ Endpoint)
//!                              ◀─ outlier, adaptive, availability, sticky feedback (the invoker)
//! ```
//!
//! The layers wrap an [`AttemptService`], not a `tower::Service`: an attempt borrows the picked
//! provider's per-method counters from the view it was picked in (no lookup per call), so its request
//! is borrowed, and a [`Caller`]'s future has no name on stable Rust that `Service::Future` could
//! give without boxing it (one allocation per call). The layers are `tower_layer::Layer`s, composed
//! with `Layer::layer` as any tower stack.
//!
//! The layers keep no state per provider (what they read comes with the attempt), so one stack per
//! invoker serves every provider.

mod stats;
mod trace;

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rudder_common::error::RpcError;
use rudder_common::invocation::Invocation;
use rudder_common::status::MethodStatus;
use tower_layer::Layer;

pub(super) use stats::{Counted, StatsLayer};
pub(super) use trace::{TraceLayer, Traced};

use super::caller::Caller;
use crate::provider::Provider;

/// One attempt of a call: the invocation and what was picked for it, read from the view it was
/// picked in.
#[derive(Debug)]
pub(super) struct Attempt<'a> {
    pub(super) invocation: &'a Invocation,
    pub(super) provider: &'a Arc<Provider>,
    /// The provider's counters for the invocation's method (the picked view's).
    pub(super) counters: &'a MethodStatus,
    /// The `actives` limit of the provider and method (0: none).
    pub(super) max_active: i32,
    /// 1 for the first attempt of a call.
    pub(super) number: u32,
    /// Set when the statistics refused the attempt (over `actives`): nothing was sent, so nothing
    /// is fed back to the balancer either.
    refused: AtomicBool,
}

impl<'a> Attempt<'a> {
    pub(super) fn new(
        invocation: &'a Invocation,
        provider: &'a Arc<Provider>,
        counters: &'a MethodStatus,
        max_active: i32,
        number: u32,
    ) -> Attempt<'a> {
        Attempt {
            invocation,
            provider,
            counters,
            max_active,
            number,
            refused: AtomicBool::new(false),
        }
    }

    /// Whether the statistics refused the attempt before it was sent.
    #[inline]
    pub(super) fn was_refused(&self) -> bool {
        self.refused.load(Ordering::Relaxed)
    }

    #[inline]
    fn refuse(&self) {
        self.refused.store(true, Ordering::Relaxed);
    }
}

/// Makes one attempt; what the layers wrap.
pub(super) trait AttemptService: Send + Sync {
    /// What a successful attempt returns.
    type Output: Send + 'static;

    /// Makes `attempt`.
    fn call<'a>(
        &'a self,
        attempt: &'a Attempt<'a>,
    ) -> impl Future<Output = Result<Self::Output, RpcError>> + Send + 'a;

    /// Whether `output` carries a business exception ([`Caller::is_exception`]).
    fn is_exception(&self, output: &Self::Output) -> bool;

    /// An attempt has been counted as ended ([`Caller::call_ended`]).
    fn call_ended(&self);
}

/// The caller as the innermost attempt service.
#[derive(Debug)]
pub(super) struct Calls<C>(pub(super) C);

impl<C: Caller> AttemptService for Calls<C> {
    type Output = C::Output;

    #[inline]
    fn call<'a>(
        &'a self,
        attempt: &'a Attempt<'a>,
    ) -> impl Future<Output = Result<C::Output, RpcError>> + Send + 'a {
        self.0.call(attempt.provider, attempt.invocation)
    }

    #[inline]
    fn is_exception(&self, output: &C::Output) -> bool {
        self.0.is_exception(output)
    }

    #[inline]
    fn call_ended(&self) {
        self.0.call_ended();
    }
}

/// The invoker's stack: the span outside (it times the whole attempt, the statistics' refusal
/// too), the statistics inside, the caller under both.
pub(super) type Stack<C> = Traced<Counted<Calls<C>>>;

/// Composes the invoker's stack over `caller`.
pub(super) fn compose<C: Caller>(caller: C) -> Stack<C> {
    TraceLayer.layer(StatsLayer.layer(Calls(caller)))
}

impl<C> Stack<C> {
    /// The caller under the layers.
    pub(super) fn caller(&self) -> &C {
        &self.inner().inner().0
    }
}
