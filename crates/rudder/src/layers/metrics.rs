//! The metrics as a tower layer over a provider's endpoint: every call through the wrapped service
//! is timed and counted for the provider it belongs to, whatever transport made the endpoint
//! (dubbo://, tri://, or one plugged in with `ConsumerBuilder::transport`).
//!
//! The call path does not reach up into the metrics: the facade composes this layer when it makes a
//! provider's service ([`super::ProviderService`]), and the layer knows the metrics only as a
//! [`CallObserver`].

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};

use rudder_cluster::provider::Provider;
use rudder_common::invocation::Invocation;
use rudder_rpc::endpoint::{Endpoint, ResponseFuture};
use tower_layer::Layer;
use tower_service::Service;

use crate::observer::{CallObserver, CallToken};

/// Wraps a provider's endpoint so that `observer` hears of each call from its start to its end (or
/// cancellation).
#[derive(Debug, Clone)]
pub(crate) struct MetricsLayer {
    /// `None` when the consumer keeps no metrics: the layer then passes calls through.
    observer: Option<Arc<dyn CallObserver>>,
    /// Weak: the provider keeps its service, which must not keep the provider alive.
    provider: Weak<Provider>,
}

impl MetricsLayer {
    /// Calls through the layered service are reported to `observer` (if any) as calls to
    /// `provider`.
    pub(crate) fn new(
        observer: Option<Arc<dyn CallObserver>>,
        provider: &Arc<Provider>,
    ) -> MetricsLayer {
        MetricsLayer {
            observer,
            provider: Arc::downgrade(provider),
        }
    }
}

impl<S> Layer<S> for MetricsLayer {
    type Service = Metered<S>;

    fn layer(&self, inner: S) -> Metered<S> {
        Metered {
            inner,
            layer: self.clone(),
        }
    }
}

/// A provider's service, observed by the metrics.
#[derive(Debug, Clone)]
pub(crate) struct Metered<S> {
    inner: S,
    layer: MetricsLayer,
}

impl<S> Metered<S> {
    /// Starts observing a call of `method`: ends when the returned guard is dropped. `None` without
    /// metrics (one branch) or once the provider is gone (nothing left to count it for).
    #[inline]
    fn observe(&self, method: &str) -> Option<Observing> {
        let observer = self.layer.observer.as_ref()?;
        let provider = self.layer.provider.upgrade()?;
        Some(Observing {
            token: Some(observer.call_started(&provider, method)),
            observer: Arc::clone(observer),
        })
    }
}

impl Metered<Endpoint> {
    /// [`Service::call`] through a shared reference: an [`Endpoint`] is always ready and calls
    /// through `&self`, so the cluster's tasks share one service per provider.
    #[inline]
    pub(crate) fn call_shared(&self, invocation: Invocation) -> MeteredFuture<ResponseFuture> {
        MeteredFuture {
            observing: self.observe(invocation.method_name()),
            inner: self.inner.call(invocation),
        }
    }
}

impl<S> Service<Invocation> for Metered<S>
where
    S: Service<Invocation>,
    S::Future: Unpin,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = MeteredFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, invocation: Invocation) -> MeteredFuture<S::Future> {
        MeteredFuture {
            observing: self.observe(invocation.method_name()),
            inner: self.inner.call(invocation),
        }
    }
}

/// The answer of a metered call: the inner service's future, and the guard that ends the
/// observation when the call ends or its future is dropped (a forking loser, a cancelled caller).
/// No allocation of its own: the guard holds the observer's `Arc` and the token.
#[derive(Debug)]
pub(crate) struct MeteredFuture<F> {
    inner: F,
    observing: Option<Observing>,
}

impl<F: Future + Unpin> Future for MeteredFuture<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let output = std::task::ready!(Pin::new(&mut self.inner).poll(cx));
        // The call ended now, whenever the caller drops the future.
        self.observing = None;
        Poll::Ready(output)
    }
}

/// Ends a call for its observer when dropped.
#[derive(Debug)]
struct Observing {
    observer: Arc<dyn CallObserver>,
    token: Option<CallToken>,
}

impl Drop for Observing {
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            self.observer.call_ended(token);
        }
    }
}
