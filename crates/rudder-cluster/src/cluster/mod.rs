//! The cluster invoker: one call, the providers picked for it, and what to do when one fails.
//!
//! Dubbo calls this the fault-tolerance strategy (`cluster=` on the consumer). rudder has all of
//! Dubbo's, with Dubbo's names, parameters and defaults ([`ClusterMode::from_consumer`]):
//!
//! | mode | what a call does |
//! |---|---|
//! | `failover` (default) | retry on another provider, `retries` times (default 2, so 3 attempts); never after a business exception |
//! | `failfast` | one provider; its error at once (use it for non-idempotent writes) |
//! | `failsafe` | one provider; an error becomes an empty result |
//! | `failback` | one provider; an error becomes an empty result and the call is retried in the background |
//! | `forking` | `forks` providers at once; the first answer wins, the others are cancelled |
//! | `broadcast` | every provider, one after another; any failure fails the call |
//! | `available` | no balancing: the first provider, in list order, not known to be failing |
//! | `mergeable` | one call per provider group (`group=a,b` or `*`), results merged (`merger=`) |
//!
//! Every attempt re-reads the directory, so a retry sees providers that appeared meanwhile. Providers
//! already tried are excluded from the next pick; when every provider has been tried, the pick is made
//! among all of them again, as Dubbo's `reselect` does. With `sticky=true` the provider of the previous
//! successful call is reused while it remains listed.
//!
//! Every call is counted in the provider's statistics ([`rudder_common::status`]) from before the send to
//! the answer, whatever the mode (a layer over the caller, as the attempt span is): `leastactive` and `shortestresponse` read those counters, and the
//! `actives` parameter limits calls in flight per provider and method.
//!
//! Each call is a `rudder.call` tracing span and each attempt a `rudder.attempt` span inside it, with
//! OpenTelemetry's RPC field names (see [`trace`](self#tracing)). An error after several attempts lists
//! them ([`RpcError::attempts`]).
//!
//! # Tracing
//! `rudder.call`: `otel.name` (`<service>/<method>`), `otel.kind="client"`, `rpc.system="dubbo"`,
//! `rpc.service`, `rpc.method`, `rudder.cluster` (the mode), and on close `otel.status_code` (`OK`/`ERROR`)
//! and `error.type` (the error kind). `rudder.attempt`: `server.address`, `server.port`, `rudder.attempt`
//! (1 for the first), and on close `rudder.outcome` (`ok`, an error kind, or `cancelled` for a forking
//! loser), `rudder.exception` (`true` when the answer is an exception thrown by the provider's
//! method), `rudder.elapsed_ms`, `otel.status_code`, `error.type`. Both are INFO spans.
//!
//! The call itself is a [`Caller`]: the rpc layer in production, a scripted fake in tests.

mod attempt;
mod available;
mod broadcast;
mod caller;
mod failback;
mod failover;
mod forking;
mod layers;
mod mergeable;
pub mod merger;
mod mode;
mod outlier_compare;
mod timer;
mod trace;

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;
use tracing::Instrument;

pub use available::RECHECK_MILLIS as AVAILABLE_RECHECK_MILLIS;
pub use caller::Caller;
pub use failback::FailbackStats;
pub use mode::{
    ClusterMode, Groups, MethodModes, UnsupportedClusterMode, BROADCAST_FAIL_PERCENT,
    DEFAULT_FAILBACK_RETRIES, DEFAULT_RETRIES, FAILBACK_TASKS, FORKING_TIMEOUT, FORKS, RETRIES,
    RETRY_PERIOD,
};
pub use timer::{BoxFuture, Timer};

use attempt::Picked;

use crate::balancer::Balancer;
use crate::loadbalance::MethodView;
use crate::provider::Provider;

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
    core: Arc<Core<C>>,
}

/// What the invoker and its background failback retries share; the retries hold it weakly, so they
/// end when the invoker is dropped.
struct Core<C> {
    balancer: Arc<Balancer>,
    /// The caller under the invoker's layers (statistics, spans), composed once.
    service: layers::Stack<C>,
    mode: ClusterMode,
    sticky: Mutex<Option<Arc<Provider>>>,
    failing: available::KnownFailing,
    timer: OnceLock<Arc<dyn Timer>>,
    failback: Arc<failback::Queue>,
}

impl<C: Caller + 'static> ClusterInvoker<C> {
    /// An invoker picking through `balancer`, calling through `caller`.
    ///
    /// Without a [`Timer`] ([`ClusterInvoker::with_timer`]) `failback` cannot retry (its retries are
    /// refused and counted) and `forking` is bounded only by each attempt's own timeout.
    pub fn new(balancer: Arc<Balancer>, caller: C, mode: ClusterMode) -> ClusterInvoker<C> {
        ClusterInvoker {
            core: Arc::new(Core {
                balancer,
                service: layers::compose(caller),
                mode,
                sticky: Mutex::new(None),
                failing: available::KnownFailing::default(),
                timer: OnceLock::new(),
                failback: Arc::default(),
            }),
        }
    }

    /// Sleeps and background work through `timer` (failback retries, the forking deadline). The first
    /// timer given stays.
    pub fn with_timer(self, timer: Arc<dyn Timer>) -> ClusterInvoker<C> {
        let _ = self.core.timer.set(timer);
        self
    }

    /// The balancer.
    pub fn balancer(&self) -> &Arc<Balancer> {
        &self.core.balancer
    }

    /// The caller.
    pub fn caller(&self) -> &C {
        self.core.caller()
    }

    /// The fault-tolerance mode.
    pub fn mode(&self) -> &ClusterMode {
        &self.core.mode
    }

    /// What failback's background retries have done so far.
    pub fn failback_stats(&self) -> FailbackStats {
        self.core.failback.stats()
    }

    /// Makes the call according to the mode.
    ///
    /// # Errors
    /// The mode's error ([`ClusterInvoker::invoke_in_mode`]).
    pub async fn invoke(&self, invocation: &Invocation) -> Result<C::Output, RpcError> {
        self.invoke_in_mode(invocation, &self.core.mode).await
    }

    /// Makes the call in `mode` instead of the invoker's own (per-method settings).
    ///
    /// # Errors
    /// [`RpcErrorKind::NoProvider`] when nothing is listed; the last provider's error (failover,
    /// failfast, forking, broadcast), with every attempt in [`RpcError::attempts`]; a
    /// [`RpcErrorKind::Timeout`] when a forking call's deadline passes. `failsafe` and `failback` never
    /// fail.
    pub async fn invoke_in_mode(
        &self,
        invocation: &Invocation,
        mode: &ClusterMode,
    ) -> Result<C::Output, RpcError> {
        let core = &self.core;
        let span = trace::call_span(core, invocation.method_name(), mode.name());
        // No subscriber wants the span (the common case): call without the `Instrumented` layer,
        // whose per-poll enter/exit and larger future measurably cost an end-to-end call (~2 % of
        // QPS at one call in flight, `e2e_load`), though the span itself is free.
        if span.is_disabled() {
            return core.dispatch(invocation, mode).await;
        }
        let result = core
            .dispatch(invocation, mode)
            .instrument(span.clone())
            .await;
        trace::close_call(&span, &result);
        result
    }
}

impl<C: Caller + 'static> Core<C> {
    /// The caller under the layers.
    fn caller(&self) -> &C {
        self.service.caller()
    }

    async fn dispatch(
        self: &Arc<Self>,
        invocation: &Invocation,
        mode: &ClusterMode,
    ) -> Result<C::Output, RpcError> {
        match mode {
            ClusterMode::Failover { retries } => self.failover(invocation, *retries, &[]).await,
            ClusterMode::Failfast => {
                let picked = self.pick(invocation, &[])?;
                self.call(&picked, invocation, 1).await
            }
            ClusterMode::Failsafe => {
                let picked = match self.pick(invocation, &[]) {
                    Ok(a) => a,
                    Err(error) => {
                        tracing::warn!(
                            error = &error as &dyn std::error::Error,
                            "failsafe: ignoring failed pick"
                        );
                        return Ok(self.caller().empty());
                    }
                };
                match self.call(&picked, invocation, 1).await {
                    Ok(out) => Ok(out),
                    Err(error) => {
                        let provider = picked.provider.address();
                        tracing::warn!(
                            error = &error as &dyn std::error::Error,
                            provider,
                            "failsafe: ignoring failed call"
                        );
                        Ok(self.caller().empty())
                    }
                }
            }
            // The modes below are boxed: inline, the largest of their futures would set the size of
            // every call's future, failover ones too, and be copied at each await level above.
            ClusterMode::Available => Box::pin(self.available(invocation)).await,
            ClusterMode::Failback {
                retries,
                tasks,
                period_millis,
            } => {
                let settings = failback::Settings {
                    retries: *retries,
                    tasks: *tasks,
                    period_millis: *period_millis,
                };
                Box::pin(self.failback(invocation, settings)).await
            }
            ClusterMode::Forking {
                forks,
                timeout_millis,
            } => Box::pin(self.forking(invocation, *forks, *timeout_millis)).await,
            ClusterMode::Broadcast { fail_percent } => {
                Box::pin(self.broadcast(invocation, *fail_percent)).await
            }
            ClusterMode::Mergeable {
                merger,
                groups,
                retries,
            } => Box::pin(self.mergeable(invocation, merger.as_deref(), groups, *retries)).await,
        }
    }

    /// Picks the provider for one attempt, with what the call needs of it, in one look at the snapshot.
    fn pick(&self, invocation: &Invocation, tried: &[Arc<Provider>]) -> Result<Picked, RpcError> {
        let directory = self.balancer.directory();
        directory.with_current(|snapshot| {
            self.balancer
                .with_routed_view(snapshot, invocation, |view| {
                    let sticky = view
                        .sticky()
                        .then(|| self.sticky_index(view, tried))
                        .flatten();
                    let (index, load_report) = match sticky {
                        Some(index) => (index, false),
                        None => self.balancer.select_reporting(view, invocation, tried)?,
                    };
                    let mut picked = Picked::new(view, index);
                    picked.load_report = load_report;
                    Ok(picked)
                })
        })
    }

    /// Every listed provider for the method, in list order, with what a call needs of each.
    fn pick_all(&self, invocation: &Invocation) -> Result<Vec<Picked>, RpcError> {
        let directory = self.balancer.directory();
        directory.with_current(|snapshot| {
            self.balancer
                .with_routed_view(snapshot, invocation, |view| {
                    if view.is_empty() {
                        return Err(no_provider(invocation));
                    }
                    Ok((0..view.len()).map(|i| Picked::new(view, i)).collect())
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
        // Dubbo keeps a sticky provider only while it is available (with `cluster.availablecheck`).
        if self.balancer.checks_availability() && !current.is_available() {
            return None;
        }
        view.providers()
            .iter()
            .position(|p| p.identity() == current.identity())
    }
}

/// The error for a method with no provider listed.
fn no_provider(invocation: &Invocation) -> RpcError {
    let message = format!("no provider available for {}", invocation.method_name());
    RpcError::new(RpcErrorKind::NoProvider, message)
}

impl<C> Drop for ClusterInvoker<C> {
    fn drop(&mut self) {
        // Pending failback retries wake up and end now instead of at their next period.
        self.core.failback.close();
    }
}

impl<C> fmt::Debug for ClusterInvoker<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterInvoker")
            .field("mode", &self.core.mode)
            .field("balancer", &self.core.balancer)
            .finish_non_exhaustive()
    }
}
