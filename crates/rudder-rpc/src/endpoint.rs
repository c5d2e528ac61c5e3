//! The seam between the cluster and the wire: the call to one provider is an [`Endpoint`], a
//! `tower::Service<Invocation>`, made by the [`Transport`] of the provider URL's scheme.
//!
//! ```text
//! cluster (picks a provider) ──▶ Endpoint of that provider ──▶ socket
//!                                  made once per provider by Transports::endpoint(url):
//!                                  dubbo:// → DubboProtocol, tri:// → rudder-triple, yours → your Transport
//! ```
//!
//! A transport owns the connections of the endpoints it made: [`Transport::retain_addresses`] closes
//! those of providers that left, [`Transport::shutdown`] closes all. [`Transports`] holds one
//! transport per scheme and routes each URL to its own; a scheme nobody registered goes to the
//! default transport (dubbo://, which says what it makes of the URL).
//!
//! Why a boxed future and a shared handle: the cluster keeps the endpoint of each provider and calls
//! it from many tasks at once, so an endpoint is a cheap clone (one reference count) and its future
//! is `'static` (a forking call races several; a cancelled one is dropped anywhere). The box is one
//! allocation per call, which the endpoint repays by resolving the provider's address once instead
//! of per call.
//!
//! Plug in a transport of your own, e.g. an in-memory one for tests:
//!
//! ```
//! use rudder_common::{invocation::Invocation, url::DubboUrl, Value};
//! use rudder_rpc::endpoint::{Endpoint, Transport, Transports};
//! use rudder_rpc::{DubboProtocol, RpcResponse};
//! use std::sync::Arc;
//!
//! /// Answers every call with its method's name, without I/O.
//! #[derive(Debug)]
//! struct Echo;
//!
//! impl Transport for Echo {
//!     fn endpoint(&self, _url: &DubboUrl) -> Endpoint {
//!         Endpoint::from_fn(|call: Invocation| async move {
//!             Ok(RpcResponse::from_value(Value::from(call.method_name())))
//!         })
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let transports = Transports::new(Arc::new(DubboProtocol::new())).with("mem", Arc::new(Echo));
//! let endpoint = transports.endpoint(&DubboUrl::parse("mem://10.0.0.1:1/com.acme.Greeter")?);
//! let answer = endpoint.call(Invocation::new("sayHello", vec![], vec![])).await?;
//! assert_eq!(answer.value(), Some(&Value::from("sayHello")));
//! # Ok(())
//! # }
//! ```

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rudder_common::error::RpcError;
use rudder_common::invocation::Invocation;
use rudder_common::status::availability::Availability;
use rudder_common::url::DubboUrl;

use crate::protocol::DubboProtocol;
use crate::response::RpcResponse;

/// The answer of one call to an [`Endpoint`].
pub type ResponseFuture =
    Pin<Box<dyn Future<Output = Result<RpcResponse, RpcError>> + Send + 'static>>;

/// What [`Transport::shutdown`] returns: done once every connection of the transport is closed.
pub type ShutdownFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// The call to one provider: a `tower::Service<Invocation>` that is always ready (back-pressure is
/// the cluster's `actives`), cheap to clone (clones share the provider's connections).
#[derive(Clone)]
pub struct Endpoint {
    inner: Arc<dyn Call>,
    /// Whether the provider's connection is up, as the transport tracks it.
    availability: Option<Availability>,
}

/// What an endpoint does with a call; implemented for the built-in transports and the adapters.
trait Call: Send + Sync {
    fn call(self: Arc<Self>, invocation: Invocation) -> ResponseFuture;
}

impl Endpoint {
    /// An endpoint that calls `service`. Each call clones `service` (keep it a cheap handle) and
    /// waits for its `poll_ready` before calling it, as `tower::ServiceExt::oneshot` does.
    pub fn new<S>(service: S) -> Endpoint
    where
        S: tower_service::Service<Invocation, Response = RpcResponse, Error = RpcError>
            + Clone
            + Send
            + Sync
            + 'static,
        S::Future: Send + 'static,
    {
        Endpoint {
            inner: Arc::new(ServiceCall(service)),
            availability: None,
        }
    }

    /// An endpoint that answers each call with `call(invocation)`.
    pub fn from_fn<F, Fut>(call: F) -> Endpoint
    where
        F: Fn(Invocation) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<RpcResponse, RpcError>> + Send + 'static,
    {
        Endpoint {
            inner: Arc::new(FnCall(call)),
            availability: None,
        }
    }

    /// The same endpoint, reporting `availability`: the transport marks it down while the
    /// provider's connection is down, and the cluster leaves the provider out of picks meanwhile
    /// (`cluster.availablecheck`, as Dubbo's `invoker.isAvailable()`).
    ///
    /// ```
    /// # use rudder_rpc::{endpoint::Endpoint, RpcResponse};
    /// use rudder_common::status::availability::Availability;
    /// let connection = Availability::default();
    /// let endpoint = Endpoint::from_fn(|_| async { Ok(RpcResponse::from_value(rudder_common::Value::Null)) })
    ///     .with_availability(connection.clone());
    /// assert!(endpoint.availability().is_some_and(|a| a.is_available()));
    /// ```
    pub fn with_availability(self, availability: Availability) -> Endpoint {
        Endpoint {
            availability: Some(availability),
            ..self
        }
    }

    /// Whether the provider's connection is up, when the transport tracks it.
    pub fn availability(&self) -> Option<&Availability> {
        self.availability.as_ref()
    }

    /// Calls the provider.
    ///
    /// # Errors
    /// The transport's [`RpcError`] (network, timeout, a provider status...); a business exception
    /// thrown by the provider is an `Ok` answer carrying it.
    pub fn call(&self, invocation: Invocation) -> ResponseFuture {
        Arc::clone(&self.inner).call(invocation)
    }
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint").finish_non_exhaustive()
    }
}

impl tower_service::Service<Invocation> for Endpoint {
    type Response = RpcResponse;
    type Error = RpcError;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), RpcError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, invocation: Invocation) -> ResponseFuture {
        Endpoint::call(self, invocation)
    }
}

struct ServiceCall<S>(S);

impl<S> Call for ServiceCall<S>
where
    S: tower_service::Service<Invocation, Response = RpcResponse, Error = RpcError>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send + 'static,
{
    fn call(self: Arc<Self>, invocation: Invocation) -> ResponseFuture {
        let mut service = self.0.clone();
        Box::pin(async move {
            std::future::poll_fn(|cx| service.poll_ready(cx)).await?;
            service.call(invocation).await
        })
    }
}

struct FnCall<F>(F);

impl<F, Fut> Call for FnCall<F>
where
    F: Fn(Invocation) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<RpcResponse, RpcError>> + Send + 'static,
{
    fn call(self: Arc<Self>, invocation: Invocation) -> ResponseFuture {
        Box::pin((self.0)(invocation))
    }
}

/// Makes the [`Endpoint`]s of the providers of one URL scheme, and owns their connections.
pub trait Transport: Send + Sync + fmt::Debug + 'static {
    /// The endpoint of the provider at `url`. Called once per provider (the cluster keeps it), so
    /// whatever can be resolved from the URL alone is best resolved here.
    fn endpoint(&self, url: &DubboUrl) -> Endpoint;

    /// Closes the connections of every address (`host:port`) `keep` refuses: providers that left.
    /// Calls in flight on them may finish. Default: nothing to close.
    fn retain_addresses(&self, keep: &dyn Fn(&str) -> bool) {
        let _ = keep;
    }

    /// Sockets open now. Default: none.
    fn open_connections(&self) -> usize {
        0
    }

    /// Closes everything and refuses later calls; done once every connection is closed. Default:
    /// nothing to close.
    fn shutdown(&self) -> ShutdownFuture {
        Box::pin(std::future::ready(()))
    }
}

/// One transport per URL scheme: what a consumer calls providers with.
///
/// Clones share the transports (and so their connections).
#[derive(Clone)]
pub struct Transports {
    default: Arc<dyn Transport>,
    by_scheme: Arc<[SchemeTransport]>,
}

/// A URL scheme and its transport.
type SchemeTransport = (Box<str>, Arc<dyn Transport>);

impl Transports {
    /// `default` serves every scheme no [`Transports::with`] names (dubbo:// as a rule).
    pub fn new(default: Arc<dyn Transport>) -> Transports {
        Transports {
            default,
            by_scheme: Arc::new([]),
        }
    }

    /// `transport` serves the providers whose URL scheme is `scheme` (replacing an earlier one).
    pub fn with(self, scheme: &str, transport: Arc<dyn Transport>) -> Transports {
        let mut by_scheme: Vec<_> = self
            .by_scheme
            .iter()
            .filter(|(s, _)| &**s != scheme)
            .cloned()
            .collect();
        by_scheme.push((scheme.into(), transport));
        Transports {
            default: self.default,
            by_scheme: by_scheme.into(),
        }
    }

    /// The transport of `scheme`.
    pub fn transport(&self, scheme: &str) -> &Arc<dyn Transport> {
        self.by_scheme
            .iter()
            .find(|(s, _)| &**s == scheme)
            .map_or(&self.default, |(_, t)| t)
    }

    /// The endpoint of the provider at `url`, made by the transport of its scheme.
    pub fn endpoint(&self, url: &DubboUrl) -> Endpoint {
        self.transport(url.protocol()).endpoint(url)
    }

    fn all(&self) -> impl Iterator<Item = &Arc<dyn Transport>> {
        std::iter::once(&self.default).chain(self.by_scheme.iter().map(|(_, t)| t))
    }

    /// [`Transport::retain_addresses`] on every transport.
    pub fn retain_addresses(&self, keep: &dyn Fn(&str) -> bool) {
        for transport in self.all() {
            transport.retain_addresses(keep);
        }
    }

    /// Sockets open now, over every transport.
    pub fn open_connections(&self) -> usize {
        self.all().map(|t| t.open_connections()).sum()
    }

    /// [`Transport::shutdown`] on every transport; done when all are.
    pub async fn shutdown(&self) {
        let closing: Vec<_> = self.all().map(|t| t.shutdown()).collect();
        for done in closing {
            done.await;
        }
    }
}

impl fmt::Debug for Transports {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let schemes: Vec<&str> = self.by_scheme.iter().map(|(s, _)| &**s).collect();
        f.debug_struct("Transports")
            .field("default", &self.default)
            .field("schemes", &schemes)
            .finish()
    }
}

/// The endpoint of one dubbo:// provider.
struct DubboEndpoint {
    protocol: DubboProtocol,
    url: DubboUrl,
}

impl Call for DubboEndpoint {
    fn call(self: Arc<Self>, invocation: Invocation) -> ResponseFuture {
        Box::pin(async move { self.protocol.invoke(&self.url, &invocation).await })
    }
}

impl Transport for DubboProtocol {
    fn endpoint(&self, url: &DubboUrl) -> Endpoint {
        Endpoint {
            inner: Arc::new(DubboEndpoint {
                protocol: self.clone(),
                url: url.clone(),
            }),
            availability: Some(self.availability(url)),
        }
    }

    fn retain_addresses(&self, keep: &dyn Fn(&str) -> bool) {
        DubboProtocol::retain_addresses(self, keep);
    }

    fn open_connections(&self) -> usize {
        DubboProtocol::open_connections(self)
    }

    fn shutdown(&self) -> ShutdownFuture {
        let protocol = self.clone();
        Box::pin(async move { DubboProtocol::shutdown(&protocol).await })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rudder_common::Value;

    #[derive(Debug)]
    struct Named(&'static str);

    impl Transport for Named {
        fn endpoint(&self, _: &DubboUrl) -> Endpoint {
            let name = self.0;
            Endpoint::from_fn(
                move |_| async move { Ok(RpcResponse::from_value(Value::from(name))) },
            )
        }
    }

    async fn answer(transports: &Transports, url: &str) -> Value {
        let url = DubboUrl::parse(url).unwrap();
        let call = Invocation::new("m", vec![], vec![]);
        let response = transports.endpoint(&url).call(call).await.unwrap();
        response.value().cloned().unwrap()
    }

    #[tokio::test]
    async fn each_scheme_goes_to_its_transport_and_the_rest_to_the_default() {
        let transports = Transports::new(Arc::new(Named("default")))
            .with("a", Arc::new(Named("first a")))
            .with("b", Arc::new(Named("b")))
            .with("a", Arc::new(Named("a")));
        assert_eq!(answer(&transports, "a://h:1/S").await, Value::from("a"));
        assert_eq!(answer(&transports, "b://h:1/S").await, Value::from("b"));
        assert_eq!(
            answer(&transports, "dubbo://h:1/S").await,
            Value::from("default")
        );
    }

    /// A tower service whose readiness is checked before each call.
    #[derive(Clone)]
    struct CountingService(Arc<std::sync::atomic::AtomicUsize>);

    impl tower_service::Service<Invocation> for CountingService {
        type Response = RpcResponse;
        type Error = RpcError;
        type Future = std::future::Ready<Result<RpcResponse, RpcError>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), RpcError>> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, call: Invocation) -> Self::Future {
            let name = call.method_name().to_owned();
            std::future::ready(Ok(RpcResponse::from_value(Value::from(name))))
        }
    }

    #[tokio::test]
    async fn a_tower_service_is_polled_ready_before_each_call() {
        let readied = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let endpoint = Endpoint::new(CountingService(Arc::clone(&readied)));
        for method in ["a", "b"] {
            let answer = endpoint.call(Invocation::new(method, vec![], vec![])).await;
            assert_eq!(answer.unwrap().value(), Some(&Value::from(method)));
        }
        assert_eq!(readied.load(std::sync::atomic::Ordering::SeqCst), 2);
    }
}
