//! [`MethodService`]: a reference as a [`tower_service::Service`], with `actives` back-pressure.
//!
//! Dubbo's `actives` limits calls in flight per provider and method (`<dubbo:method actives="10">`); a
//! call over the limit on every provider fails with `LimitExceeded`. Through tower, the same limit is
//! back-pressure instead: [`MethodService::poll_ready`](tower_service::Service::poll_ready) is pending
//! while every provider of the method is at its limit, and ready again as soon as a call ends, so tower's
//! `ConcurrencyLimit`, `Timeout`, `Retry` and `Buffer` layers compose with rudder's own cluster.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use rudder_common::error::{RpcError, RpcErrorKind};

use crate::error::CallError;
use rudder_common::invocation::Invocation;
use rudder_common::Value;
use rudder_rpc::RpcResponse;

use crate::reference::Reference;

/// The calls of one method of a [`Reference`], as a `tower::Service<MethodCall>`: the method and its
/// Java parameter types are given once, when the service is made ([`Reference::service`]); each
/// request carries only the arguments (and attachments, if any).
///
/// Readiness is about that method: ready when at least one provider listed for it has a free call slot
/// under its `actives` limit (or has no limit, or when there is no provider at all: the call then fails
/// at once with `NoProvider` instead of waiting). Errors are [`CallError`]s, as on every other call
/// path: [`CallError::ArgumentCount`] when a request's arguments do not match the parameter types
/// (nothing sent), else [`CallError::Rpc`] (a provider's exception is in the [`RpcResponse`]); after a
/// shutdown `poll_ready` fails with [`RpcErrorKind::ShutDown`].
///
/// ```
/// use rudder::{Invocation, MethodCall, Reference, Value};
/// use tower_service::Service;
/// # use rudder_rpc::server::DubboServer;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = DubboServer::bind(0, |_call: Invocation| async { Ok(Value::Int(42)) }).await?;
/// let calc = Reference::builder("com.acme.Calc")
///     .provider(&format!("dubbo://{}/com.acme.Calc?answer.actives=4", server.local_addr()))
///     .build()
///     .await?;
/// let mut service = calc.service("answer", &[]);
/// std::future::poll_fn(|cx| service.poll_ready(cx)).await?;
/// let response = service.call(MethodCall::new(vec![])).await?;
/// assert_eq!(response.value(), Some(&Value::Int(42)));
/// # server.shutdown().await;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct MethodService {
    reference: Reference,
    method: Arc<str>,
    /// The method's Java parameter types, shared by every call.
    parameter_types: Arc<[String]>,
    /// Whether calls go through Dubbo's generic `$invoke` ([`MethodService::generic`]).
    generic: bool,
    /// Calls this service (all its clones) has let through `poll_ready` and not yet seen end.
    launched: Arc<AtomicUsize>,
    /// Whether this instance holds one of `launched` for its next `call`.
    reserved: bool,
}

/// A clone shares the reservations but holds none of its own, as tower expects.
impl Clone for MethodService {
    fn clone(&self) -> MethodService {
        MethodService {
            reference: self.reference.clone(),
            method: Arc::clone(&self.method),
            parameter_types: Arc::clone(&self.parameter_types),
            generic: self.generic,
            launched: Arc::clone(&self.launched),
            reserved: false,
        }
    }
}

/// One request to a [`MethodService`]: the arguments of the call, in the order of the method's
/// parameters, and the attachments to send with it.
///
/// ```
/// use rudder::{Arguments, MethodCall, Value};
/// let plain = MethodCall::from(vec![Value::from("rust")]);
/// let tagged = MethodCall::new(("rust",).into_values()?).attachment("dubbo.tag", "gray");
/// assert_eq!(plain.arguments(), tagged.arguments());
/// # Ok::<(), rudder::value::SerdeError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MethodCall {
    arguments: Vec<Value>,
    attachments: Vec<(String, String)>,
}

impl MethodCall {
    /// A call with these arguments and no attachments.
    pub fn new(arguments: Vec<Value>) -> MethodCall {
        MethodCall {
            arguments,
            attachments: Vec::new(),
        }
    }

    /// Adds an attachment (Dubbo's implicit parameter, such as `dubbo.tag`).
    #[must_use]
    pub fn attachment(mut self, key: &str, value: &str) -> MethodCall {
        self.attachments.push((key.to_owned(), value.to_owned()));
        self
    }

    /// The call's arguments.
    pub fn arguments(&self) -> &[Value] {
        &self.arguments
    }
}

impl From<Vec<Value>> for MethodCall {
    fn from(arguments: Vec<Value>) -> MethodCall {
        MethodCall::new(arguments)
    }
}

impl Drop for MethodService {
    fn drop(&mut self) {
        if self.reserved {
            self.launched.fetch_sub(1, Ordering::AcqRel);
            self.reference.invoker().caller().waiters.wake_all();
        }
    }
}

impl Reference {
    /// This reference's calls of `method`, whose Java parameter types are `parameter_types`, as a
    /// tower service (see [`MethodService`]).
    pub fn service(&self, method: &str, parameter_types: &[&str]) -> MethodService {
        MethodService {
            reference: self.clone(),
            method: method.into(),
            parameter_types: parameter_types.iter().map(|t| (*t).to_owned()).collect(),
            generic: false,
            launched: Arc::new(AtomicUsize::new(0)),
            reserved: false,
        }
    }
}

impl MethodService {
    /// The same method called through Dubbo's generic `$invoke`: POJOs travel as maps, and the
    /// provider needs no matching Java classes on the consumer side.
    #[must_use]
    pub fn generic(mut self) -> MethodService {
        self.generic = true;
        self
    }

    /// The most calls of the method all providers together accept at once (`None`: no limit, as soon
    /// as one provider has none).
    fn total_limit(&self) -> Option<usize> {
        let mut total = 0usize;
        for directory in self.reference.each_directory() {
            let snapshot = directory.snapshot();
            let view = snapshot.view(&self.method);
            for i in 0..view.len() {
                match usize::try_from(view.max_active(i)) {
                    Ok(limit) if limit > 0 => total = total.saturating_add(limit),
                    _ => return None,
                }
            }
        }
        Some(total)
    }

    /// Takes one of the `total_limit` slots for this instance's next call, if one is free.
    fn reserve(&mut self) -> bool {
        if self.reserved {
            return true;
        }
        let Some(limit) = self.total_limit() else {
            return true;
        };
        let taken = self
            .launched
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < limit).then_some(n + 1)
            })
            .is_ok();
        self.reserved = taken;
        taken
    }

    /// Whether some provider of the method can take one more call now (in any registry: the call may
    /// go to either), or none is listed (the call then fails at once).
    fn has_capacity(&self) -> bool {
        let mut listed = false;
        for directory in self.reference.each_directory() {
            let snapshot = directory.snapshot();
            let view = snapshot.view(&self.method);
            listed |= !view.is_empty();
            if (0..view.len()).any(|i| {
                let limit = view.max_active(i);
                limit <= 0 || view.method_status(i).active() < limit
            }) {
                return true;
            }
        }
        !listed
    }
}

impl tower_service::Service<MethodCall> for MethodService {
    type Response = RpcResponse;
    type Error = CallError;
    type Future = Pin<Box<dyn Future<Output = Result<RpcResponse, CallError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), CallError>> {
        if self.reference.is_shut_down() {
            return Poll::Ready(Err(RpcError::new(
                RpcErrorKind::ShutDown,
                "the consumer is shut down",
            )
            .into()));
        }
        // Calls made through this service are counted against the providers' total `actives`
        // when readiness is granted (tower's contract: ready means the next `call` is accepted), so
        // concurrent callers never launch more than the providers take; calls made around it are
        // seen in the providers' counters.
        if self.has_capacity() && self.reserve() {
            return Poll::Ready(Ok(()));
        }
        // Registered before looking again, so a call that ends in between still wakes this task.
        self.reference
            .invoker()
            .caller()
            .waiters
            .register(cx.waker());
        if self.has_capacity() && self.reserve() {
            Poll::Ready(Ok(()))
        } else {
            Poll::Pending
        }
    }

    fn call(&mut self, request: MethodCall) -> Self::Future {
        let reference = self.reference.clone();
        let invocation = self.invocation(request);
        // The reservation moves into the call and is given back when it ends (or is dropped).
        let reservation = std::mem::take(&mut self.reserved).then(|| Reservation {
            launched: Arc::clone(&self.launched),
            reference: reference.clone(),
        });
        Box::pin(async move {
            let _reservation = reservation;
            reference.invoke(invocation?).await
        })
    }
}

impl MethodService {
    /// The invocation of one request, or why it cannot be sent.
    fn invocation(&self, request: MethodCall) -> Result<Invocation, CallError> {
        let MethodCall {
            arguments,
            attachments,
        } = request;
        if arguments.len() != self.parameter_types.len() {
            return Err(CallError::ArgumentCount {
                types: self.parameter_types.len(),
                arguments: arguments.len(),
            });
        }
        let mut invocation =
            Invocation::new(&*self.method, self.parameter_types.to_vec(), arguments);
        for (key, value) in &attachments {
            invocation.set_attachment(key, value);
        }
        Ok(if self.generic {
            invocation.into_generic()
        } else {
            invocation
        })
    }
}

/// One launched call's slot, given back when the call ends.
struct Reservation {
    launched: Arc<AtomicUsize>,
    reference: Reference,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.launched.fetch_sub(1, Ordering::AcqRel);
        // The provider's own slot was freed (and waiters woken) a moment ago; wake them again now
        // that this service's count has caught up.
        self.reference.invoker().caller().waiters.wake_all();
    }
}
