//! The wire protocols under one cluster: each provider's calls go out through the endpoint the
//! transport of its URL scheme made (`dubbo://` through rudder-rpc, `tri://` through rudder-triple with
//! the cargo feature `triple`, any other scheme through a transport plugged in with
//! `ConsumerBuilder::transport`).
//! Whatever the protocol, the answer is an [`RpcResponse`](rudder_rpc::RpcResponse) and a failure an [`RpcError`] of the same
//! kinds, so statistics, metrics, spans, cluster modes, routers and balancers see no difference.

use std::sync::Arc;

use rudder_common::error::RpcError;
#[cfg(not(feature = "triple"))]
use rudder_common::error::RpcErrorKind;
#[cfg(any(feature = "zookeeper", feature = "triple"))]
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_rpc::endpoint::{Endpoint, ShutdownFuture, Transport, Transports};
use rudder_rpc::DubboProtocol;

/// How long [`Consumer::shutdown`](crate::Consumer::shutdown) waits for the transports plugged in with
/// [`ConsumerBuilder::transport`](crate::ConsumerBuilder::transport) to close, all together; past it,
/// shutdown goes on without them (and logs a warning naming their schemes). The built-in dubbo:// and
/// tri:// transports are waited for until their connection tasks have ended.
pub const PLUGGED_SHUTDOWN_DEADLINE: std::time::Duration = std::time::Duration::from_secs(5);

/// The URL protocol of Triple providers.
pub(crate) const TRI: &str = "tri";

/// A consumer's transports, one per URL scheme (dubbo:// and tri:// built in, plus any the user
/// plugged in); clones share the connections.
#[derive(Debug, Clone)]
pub(crate) struct Protocols {
    transports: Transports,
    /// What the transports were made from, to make a reference's own set with other TLS settings.
    application: Option<String>,
    plugged: Vec<(String, Arc<dyn Transport>)>,
    /// How long shutdown waits for the plugged transports to close.
    plugged_deadline: std::time::Duration,
    /// The dubbo:// client itself, for its task diagnostics.
    dubbo: DubboProtocol,
    /// The tri:// client itself, for protobuf (gRPC) calls, which are not `Invocation`s.
    #[cfg(feature = "triple")]
    triple: rudder_triple::TripleProtocol,
}

impl Default for Protocols {
    fn default() -> Protocols {
        Protocols::new(None)
    }
}

/// TLS for the built-in transports (`None`: plaintext).
pub(crate) type Tls = Option<rudder_rpc::tls::TlsClient>;

impl Protocols {
    /// Clients with no connections; `application` is sent to tri:// providers.
    pub(crate) fn new(application: Option<&str>) -> Protocols {
        Protocols::with_plugged(application, Vec::new(), None)
    }

    /// A new set of the same transports with `tls` for dubbo:// and tri:// (a reference's own TLS
    /// setting): its connections are its own, closed when the last user drops it.
    pub(crate) fn with_tls(&self, tls: Tls) -> Protocols {
        Protocols::with_plugged(self.application.as_deref(), self.plugged.clone(), tls)
            .with_shutdown_deadline(self.plugged_deadline)
    }

    /// The same transports, whose shutdown waits at most `deadline` for the plugged ones.
    pub(crate) fn with_shutdown_deadline(self, deadline: std::time::Duration) -> Protocols {
        Protocols {
            plugged_deadline: deadline,
            ..self
        }
    }

    /// [`Protocols::new`], plus `plugged` adding (or replacing) the transports of their schemes.
    pub(crate) fn with_plugged(
        application: Option<&str>,
        plugged: Vec<(String, Arc<dyn Transport>)>,
        tls: Tls,
    ) -> Protocols {
        let dubbo = DubboProtocol::with_tls(tls.clone());
        let transports = Transports::new(Arc::new(dubbo.clone()));
        #[cfg(feature = "triple")]
        let triple = rudder_triple::TripleProtocol::with_tls(application.map(str::to_owned), tls);
        #[cfg(feature = "triple")]
        let transports = transports.with(TRI, Arc::new(triple.clone()));
        #[cfg(not(feature = "triple"))]
        let (_, transports) = (tls, transports.with(TRI, Arc::new(NoTriple)));
        let transports = plugged
            .iter()
            .cloned()
            .fold(transports, |t, (scheme, transport)| {
                t.with(&scheme, transport)
            });
        Protocols {
            transports,
            application: application.map(str::to_owned),
            plugged,
            plugged_deadline: PLUGGED_SHUTDOWN_DEADLINE,
            dubbo,
            #[cfg(feature = "triple")]
            triple,
        }
    }

    /// The endpoint of the provider at `url`, by the transport of its scheme.
    pub(crate) fn endpoint(&self, url: &DubboUrl) -> Endpoint {
        self.transports.endpoint(url)
    }

    /// Calls `invocation` on the provider at `url` over the protocol the URL names (a one-off call:
    /// the MetadataService; references keep each provider's endpoint instead).
    #[cfg(feature = "zookeeper")]
    pub(crate) async fn invoke(
        &self,
        url: &DubboUrl,
        invocation: &Invocation,
    ) -> Result<rudder_rpc::RpcResponse, RpcError> {
        self.endpoint(url).call(invocation.clone()).await
    }

    /// Sends a buffered gRPC request (a protobuf service's call) to the tri:// provider at `url`.
    #[cfg(feature = "triple")]
    pub(crate) async fn grpc_unary(
        &self,
        url: &DubboUrl,
        invocation: &Invocation,
        request: &rudder_triple::GrpcRequest,
    ) -> Result<rudder_triple::GrpcReply, RpcError> {
        tri_only(url)?;
        self.triple.grpc_unary(url, invocation, request).await
    }

    /// Sends a streaming gRPC request to the tri:// provider at `url`.
    #[cfg(feature = "triple")]
    pub(crate) async fn grpc_stream(
        &self,
        url: &DubboUrl,
        invocation: &Invocation,
        head: http::request::Parts,
        body: tonic::body::Body,
    ) -> Result<rudder_triple::GrpcReply, RpcError> {
        tri_only(url)?;
        self.triple.grpc_stream(url, invocation, head, body).await
    }

    /// Closes the connections of every address `keep` rejects (providers that left every directory).
    pub(crate) fn retain_addresses(&self, keep: impl Fn(&str) -> bool) {
        self.transports.retain_addresses(&keep);
    }

    /// Open connections over every transport.
    pub(crate) fn open_connections(&self) -> usize {
        self.transports.open_connections()
    }

    /// dubbo:// connection tasks alive (tri:// connections run on tonic's tasks, which end with them).
    pub(crate) fn live_tasks(&self) -> usize {
        self.dubbo.live_tasks()
    }

    /// Returns once no dubbo:// connection or task is left.
    pub(crate) async fn wait_until_idle(&self) {
        self.dubbo.wait_until_idle().await;
    }

    /// Closes everything and refuses later calls: the built-in transports until their connection
    /// tasks have ended, the plugged-in ones for at most [`PLUGGED_SHUTDOWN_DEADLINE`] (their close
    /// is the user's code, and one that never finishes must not hang the consumer's shutdown).
    pub(crate) async fn shutdown(&self) {
        self.dubbo.shutdown().await;
        #[cfg(feature = "triple")]
        self.triple.shutdown();
        let mut closing: Vec<(&str, ShutdownFuture)> = self
            .plugged
            .iter()
            .map(|(scheme, transport)| (scheme.as_str(), transport.shutdown()))
            .collect();
        let all_closed = async {
            while let Some((_, done)) = closing.last_mut() {
                done.await;
                closing.pop();
            }
        };
        if tokio::time::timeout(self.plugged_deadline, all_closed)
            .await
            .is_err()
        {
            let schemes: Vec<&str> = closing.iter().map(|(scheme, _)| *scheme).collect();
            tracing::warn!(
                schemes = ?schemes,
                deadline_ms = u64::try_from(self.plugged_deadline.as_millis()).unwrap_or(u64::MAX),
                "plugged-in transports did not finish closing by the deadline; shutdown goes on without them"
            );
        }
    }
}

/// tri:// when rudder was built without the cargo feature `triple`: every call refused, saying why.
#[cfg(not(feature = "triple"))]
#[derive(Debug)]
struct NoTriple;

#[cfg(not(feature = "triple"))]
impl Transport for NoTriple {
    fn endpoint(&self, url: &DubboUrl) -> Endpoint {
        let message = format!(
            "{} is a tri:// provider and rudder was built without the cargo feature `triple`",
            url.address()
        );
        Endpoint::from_fn(move |_| {
            let error = RpcError::new(RpcErrorKind::Forbidden, message.clone());
            async move { Err(error) }
        })
    }
}

/// gRPC calls go to tri:// providers only; any other is refused before anything is sent.
#[cfg(feature = "triple")]
fn tri_only(url: &DubboUrl) -> Result<(), RpcError> {
    if url.protocol() == TRI {
        return Ok(());
    }
    Err(RpcError::new(
        rudder_common::error::RpcErrorKind::Forbidden,
        format!(
            "{} is a {}:// provider; protobuf (gRPC) calls go to tri:// providers only (set protocol=tri on the reference)",
            url.address(),
            url.protocol()
        ),
    ))
}
