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

    /// The dubbo:// client (the application-level discovery's MetadataService calls go through it,
    /// sharing its connections).
    #[cfg(feature = "zookeeper")]
    pub(crate) fn dubbo(&self) -> &DubboProtocol {
        &self.dubbo
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
