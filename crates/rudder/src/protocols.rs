//! The wire protocols under one cluster: each call goes out over the protocol its provider URL names
//! (`dubbo://` through rudder-rpc, `tri://` through rudder-triple with the cargo feature `triple`).
//! Whatever the protocol, the answer is an [`RpcResponse`] and a failure an [`RpcError`] of the same
//! kinds, so statistics, metrics, spans, cluster modes, routers and balancers see no difference.

use rudder_common::error::RpcError;
#[cfg(not(feature = "triple"))]
use rudder_common::error::RpcErrorKind;
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_rpc::{DubboProtocol, RpcResponse};

/// The URL protocol of Triple providers.
pub(crate) const TRI: &str = "tri";

/// A consumer's clients, one per protocol; clones share the connections.
#[derive(Debug, Clone)]
pub(crate) struct Protocols {
    dubbo: DubboProtocol,
    #[cfg(feature = "triple")]
    triple: rudder_triple::TripleProtocol,
}

impl Default for Protocols {
    fn default() -> Protocols {
        Protocols::new(None)
    }
}

impl Protocols {
    /// Clients with no connections; `application` is sent to tri:// providers.
    pub(crate) fn new(application: Option<&str>) -> Protocols {
        #[cfg(not(feature = "triple"))]
        let _ = application;
        Protocols {
            dubbo: DubboProtocol::new(),
            #[cfg(feature = "triple")]
            triple: rudder_triple::TripleProtocol::new(application.map(str::to_owned)),
        }
    }

    /// Calls `invocation` on the provider at `url` over the protocol the URL names.
    pub(crate) async fn invoke(
        &self,
        url: &DubboUrl,
        invocation: &Invocation,
    ) -> Result<RpcResponse, RpcError> {
        match url.protocol() {
            #[cfg(feature = "triple")]
            // Boxed: tonic's call future is several KiB, and inline it would make every call's future
            // (dubbo:// ones too) that large, copied at each await level; the box costs tri:// calls one
            // allocation instead.
            TRI => Box::pin(self.triple.invoke(url, invocation)).await,
            #[cfg(not(feature = "triple"))]
            TRI => Err(RpcError::new(
                RpcErrorKind::Forbidden,
                format!(
                    "{} is a tri:// provider and rudder was built without the cargo feature `triple`",
                    url.address()
                ),
            )),
            // dubbo://, and anything else a directory was given by hand: the dubbo:// client says
            // what it makes of it.
            _ => self.dubbo.invoke(url, invocation).await,
        }
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
        #[cfg(feature = "triple")]
        self.triple.retain_addresses(&keep);
        self.dubbo.retain_addresses(keep);
    }

    /// Open connections over every protocol.
    pub(crate) fn open_connections(&self) -> usize {
        #[cfg(feature = "triple")]
        let triple = self.triple.open_connections();
        #[cfg(not(feature = "triple"))]
        let triple = 0;
        self.dubbo.open_connections() + triple
    }

    /// dubbo:// connection tasks alive (tri:// connections run on tonic's tasks, which end with them).
    pub(crate) fn live_tasks(&self) -> usize {
        self.dubbo.live_tasks()
    }

    /// Returns once no dubbo:// connection or task is left.
    pub(crate) async fn wait_until_idle(&self) {
        self.dubbo.wait_until_idle().await;
    }

    /// Closes everything and refuses later calls.
    pub(crate) async fn shutdown(&self) {
        #[cfg(feature = "triple")]
        self.triple.shutdown();
        self.dubbo.shutdown().await;
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
