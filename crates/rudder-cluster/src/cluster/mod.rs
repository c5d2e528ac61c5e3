//! The cluster invoker: one call, a provider picked for it, and what to do when that provider fails.
//!
//! Dubbo calls this the fault-tolerance strategy (`cluster=` on the consumer). rudder has the ones a
//! consumer needs most, with Dubbo's names and defaults:
//!
//! | mode | on failure |
//! |---|---|
//! | `failover` (default) | retry on another provider, `retries` times (default 2, so 3 attempts); never after a business exception |
//! | `failfast` | report the error at once (use it for non-idempotent writes) |
//! | `failsafe` | swallow the error and return an empty result |
//! | `available` | no balancing: the first provider, in list order, not yet known to be failing |
//!
//! Every attempt re-reads the directory, so a retry sees providers that appeared meanwhile. Providers
//! already tried are excluded from the next pick; when every provider has been tried, the pick is made
//! among all of them again, as Dubbo's `reselect` does. With `sticky=true` the provider of the previous
//! successful call is reused while it remains listed.
//!
//! Every call is counted in the provider's statistics ([`rudder_common::status`]) from before the send to
//! the answer, whatever the mode: `leastactive` and `shortestresponse` read those counters, and the
//! `actives` parameter limits calls in flight per provider and method.
//!
//! The call itself is a [`Caller`]: the rpc layer in production, a scripted fake in tests.

mod mode;

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;
use rudder_common::status::MethodStatus;

pub use mode::{ClusterMode, UnsupportedClusterMode, DEFAULT_RETRIES, RETRIES};

use crate::balancer::Balancer;
use crate::loadbalance::MethodView;
use crate::provider::Provider;

/// Makes one call to one provider.
pub trait Caller: Send + Sync {
    /// What a successful call returns.
    type Output: Send;

    /// The empty result `failsafe` returns instead of an error (Dubbo: a `null` value).
    fn empty(&self) -> Self::Output;

    /// Calls `provider`.
    fn call(
        &self,
        provider: &Arc<Provider>,
        invocation: &Invocation,
    ) -> impl Future<Output = Result<Self::Output, RpcError>> + Send;

    /// Called after each call has been counted as ended in the provider's statistics: a call slot
    /// under `actives` is free again. Back-pressure (a tower `poll_ready`) wakes its waiters here.
    fn call_ended(&self) {}
}

/// Picks providers through a [`Balancer`] and calls them through a [`Caller`], with a [`ClusterMode`].
///
/// ```
/// use std::sync::Arc;
/// use rudder_cluster::{balancer::Balancer, cluster::{Caller, ClusterInvoker, ClusterMode}, directory::Directory};
/// use rudder_cluster::provider::Provider;
/// use rudder_common::{error::{RpcError, RpcErrorKind}, invocation::Invocation, url::DubboUrl};
///
/// /// Fails on 10.0.0.1, answers with the address elsewhere.
/// struct Flaky;
/// impl Caller for Flaky {
///     type Output = String;
///     fn empty(&self) -> String {
///         String::new()
///     }
///     async fn call(&self, p: &Arc<Provider>, _: &Invocation) -> Result<String, RpcError> {
///         if p.address().starts_with("10.0.0.1:") {
///             Err(RpcError::new(RpcErrorKind::Network, "connection refused"))
///         } else {
///             Ok(p.address().to_owned())
///         }
///     }
/// }
///
/// let directory = Arc::new(Directory::default());
/// directory.replace([
///     DubboUrl::parse("dubbo://10.0.0.1:20880/S?loadbalance=roundrobin").unwrap(),
///     DubboUrl::parse("dubbo://10.0.0.2:20880/S").unwrap(),
/// ]);
/// let invoker = ClusterInvoker::new(Arc::new(Balancer::builder(directory).build()), Flaky, ClusterMode::default());
/// let call = Invocation::new("sayHello", vec![], vec![]);
/// let answer = futures_lite_block_on(invoker.invoke(&call));
/// assert_eq!(answer.unwrap(), "10.0.0.2:20880");
/// # fn futures_lite_block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     let waker = std::task::Waker::noop();
/// #     let mut cx = std::task::Context::from_waker(&waker);
/// #     let mut f = std::pin::pin!(f);
/// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
/// # }
/// ```
pub struct ClusterInvoker<C> {
    balancer: Arc<Balancer>,
    caller: C,
    mode: ClusterMode,
    sticky: Mutex<Option<Arc<Provider>>>,
}

impl<C: Caller> ClusterInvoker<C> {
    /// An invoker picking through `balancer`, calling through `caller`.
    pub fn new(balancer: Arc<Balancer>, caller: C, mode: ClusterMode) -> ClusterInvoker<C> {
        ClusterInvoker {
            balancer,
            caller,
            mode,
            sticky: Mutex::new(None),
        }
    }

    /// The balancer.
    pub fn balancer(&self) -> &Arc<Balancer> {
        &self.balancer
    }

    /// The caller.
    pub fn caller(&self) -> &C {
        &self.caller
    }

    /// The fault-tolerance mode.
    pub fn mode(&self) -> ClusterMode {
        self.mode
    }

    /// Makes the call according to the mode.
    ///
    /// # Errors
    /// The last provider's error (failover, failfast), [`RpcErrorKind::NoProvider`] when nothing is
    /// listed. `failsafe` never fails.
    pub async fn invoke(&self, invocation: &Invocation) -> Result<C::Output, RpcError> {
        self.invoke_in_mode(invocation, self.mode).await
    }

    /// Makes the call in `mode` instead of the invoker's own (per-method settings).
    ///
    /// # Errors
    /// As [`ClusterInvoker::invoke`].
    pub async fn invoke_in_mode(
        &self,
        invocation: &Invocation,
        mode: ClusterMode,
    ) -> Result<C::Output, RpcError> {
        match mode {
            ClusterMode::Failover { retries } => self.failover(invocation, retries).await,
            ClusterMode::Failfast => {
                let attempt = self.pick(invocation, &[])?;
                self.call(&attempt, invocation).await
            }
            ClusterMode::Failsafe => {
                let attempt = match self.pick(invocation, &[]) {
                    Ok(a) => a,
                    Err(error) => {
                        tracing::warn!(%error, "failsafe: ignoring failed pick");
                        return Ok(self.caller.empty());
                    }
                };
                match self.call(&attempt, invocation).await {
                    Ok(out) => Ok(out),
                    Err(error) => {
                        let provider = attempt.provider.address();
                        tracing::warn!(%error, provider, "failsafe: ignoring failed call");
                        Ok(self.caller.empty())
                    }
                }
            }
            ClusterMode::Available => {
                let attempt = self.first_listed(invocation)?;
                self.call(&attempt, invocation).await
            }
        }
    }

    async fn failover(&self, invocation: &Invocation, retries: u32) -> Result<C::Output, RpcError> {
        let attempts = retries as usize + 1;
        // No allocation unless an attempt fails.
        let mut tried: Vec<Arc<Provider>> = Vec::new();
        let mut last_error = None;
        for _ in 0..attempts {
            let attempt = match self.pick(invocation, &tried) {
                Ok(a) => a,
                // Every provider tried already: pick among all again (Dubbo's reselect fallback).
                Err(e) if e.kind() == RpcErrorKind::NoProvider && !tried.is_empty() => {
                    self.pick(invocation, &[])?
                }
                Err(e) => return Err(e),
            };
            match self.call(&attempt, invocation).await {
                Ok(out) => return Ok(out),
                Err(error) if !error.kind().is_retryable() => return Err(error),
                Err(error) => {
                    let provider = attempt.provider.address();
                    tracing::debug!(%error, provider, "failover: trying another provider");
                    tried.push(attempt.provider);
                    last_error = Some(error);
                }
            }
        }
        let last = last_error.expect("at least one attempt failed");
        let addresses: Vec<&str> = tried.iter().map(|p| p.address()).collect();
        Err(RpcError::new(
            last.kind(),
            format!(
                "failed to invoke method {} after {attempts} attempts on providers [{}]; last error: {}",
                invocation.method_name(),
                addresses.join(", "),
                last.message()
            ),
        )
        .with_source(last))
    }

    /// Picks the provider for one attempt, with what the call needs of it, in one look at the snapshot.
    fn pick(&self, invocation: &Invocation, tried: &[Arc<Provider>]) -> Result<Attempt, RpcError> {
        let directory = self.balancer.directory();
        directory.with_current(|snapshot| {
            self.balancer
                .with_routed_view(snapshot, invocation, |view| {
                    let sticky = view
                        .sticky()
                        .then(|| self.sticky_index(view, tried))
                        .flatten();
                    let index = match sticky {
                        Some(index) => index,
                        None => self.balancer.select_index_in(view, invocation, tried)?,
                    };
                    Ok(Attempt::new(view, index))
                })
        })
    }

    /// The first listed provider (`available` mode: no balancing).
    fn first_listed(&self, invocation: &Invocation) -> Result<Attempt, RpcError> {
        let directory = self.balancer.directory();
        directory.with_current(|snapshot| {
            self.balancer
                .with_routed_view(snapshot, invocation, |view| {
                    if view.is_empty() {
                        let message =
                            format!("no provider available for {}", invocation.method_name());
                        return Err(RpcError::new(RpcErrorKind::NoProvider, message));
                    }
                    Ok(Attempt::new(view, 0))
                })
        })
    }

    /// Where in `view` the provider of the last successful call is, if it is listed and not yet tried.
    fn sticky_index(&self, view: &MethodView, tried: &[Arc<Provider>]) -> Option<usize> {
        let current = self
            .sticky
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()?;
        if tried.iter().any(|t| t.identity() == current.identity()) {
            return None;
        }
        view.providers()
            .iter()
            .position(|p| p.identity() == current.identity())
    }

    /// Makes one call, counted in the provider's statistics from before the send to the answer: the
    /// counters `leastactive` and `shortestresponse` read, kept by every call (Dubbo keeps them only
    /// when the `actives` filter is configured).
    async fn call(
        &self,
        attempt: &Attempt,
        invocation: &Invocation,
    ) -> Result<C::Output, RpcError> {
        let status = attempt.provider.status();
        // Declared before `active`, so dropped after it: waiters learn of the free slot only once it is
        // free, also when this future is dropped mid-call.
        let _ended = CallEnded(&self.caller);
        let Some(active) = status.begin_with(attempt.method_status.clone(), attempt.max_active)
        else {
            return Err(RpcError::new(
                RpcErrorKind::LimitExceeded,
                format!(
                    "{} on {} already has {} calls in flight (actives)",
                    invocation.method_name(),
                    attempt.provider.address(),
                    attempt.max_active
                ),
            ));
        };
        let started = Instant::now();
        let result = self.caller.call(&attempt.provider, invocation).await;
        let elapsed = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        // A business exception is an answer (`Ok` here), so it counts as a success, as in Dubbo.
        active.finish(elapsed, result.is_ok());
        // Remember the provider only where stickiness is on: the lock stays off the common path.
        if result.is_ok() && attempt.sticky {
            *self.sticky.lock().unwrap_or_else(PoisonError::into_inner) =
                Some(Arc::clone(&attempt.provider));
        }
        result
    }
}

/// Tells the caller a call has ended when dropped.
struct CallEnded<'a, C: Caller>(&'a C);

impl<C: Caller> Drop for CallEnded<'_, C> {
    fn drop(&mut self) {
        self.0.call_ended();
    }
}

/// One attempt's provider and what the call needs of it, read from the view it was picked in.
struct Attempt {
    provider: Arc<Provider>,
    method_status: MethodStatus,
    max_active: i32,
    sticky: bool,
}

impl Attempt {
    fn new(view: &MethodView, index: usize) -> Attempt {
        Attempt {
            provider: Arc::clone(&view.providers()[index]),
            method_status: view.method_status(index).clone(),
            max_active: view.max_active(index),
            sticky: view.sticky(),
        }
    }
}

impl<C> fmt::Debug for ClusterInvoker<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterInvoker")
            .field("mode", &self.mode)
            .field("balancer", &self.balancer)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
