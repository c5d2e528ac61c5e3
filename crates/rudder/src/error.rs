//! What a call through a [`Reference`](crate::Reference) can end with.

use rudder_common::error::RpcError;
use rudder_common::value::{JavaException, SerdeError};

/// A failed call: the provider threw, or the call did not complete.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The provider's method threw (Dubbo returns this as a normal answer; it is never retried).
    #[error("provider threw {}: {}", .0.class, .0.message.as_deref().unwrap_or(""))]
    Exception(JavaException),
    /// The call failed on the way: no provider, network, timeout, provider status error...
    #[error(transparent)]
    Rpc(#[from] RpcError),
    /// Arguments or the result could not be converted to or from Rust types.
    #[error("conversion failed: {0}")]
    Conversion(#[from] SerdeError),
}

/// Building a [`Reference`](crate::Reference) failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A provider or registry URL could not be read.
    #[error("bad URL: {0}")]
    Url(#[from] rudder_common::url::UrlError),
    /// The `loadbalance` name is not registered.
    #[error(transparent)]
    LoadBalance(#[from] rudder_cluster::loadbalance::UnknownLoadBalance),
    /// The `cluster` mode is not one rudder implements.
    #[error(transparent)]
    Cluster(#[from] rudder_cluster::cluster::UnsupportedClusterMode),
    /// A setting has a value of the wrong form (named, with what it should be).
    #[error("bad parameter: {0}")]
    BadParameter(String),
    /// The registry could not be reached or subscribed to.
    #[error("registry: {0}")]
    Registry(String),
    /// A registry gave no session and first listing within the build's deadline (its URL's `timeout`,
    /// 10 s by default) and the reference has `check=true`, the default, as in Dubbo
    /// (`check=false` builds without it; see [`ReferenceBuilder::check`](crate::ReferenceBuilder::check)).
    #[cfg(feature = "zookeeper")]
    #[error("registry {registry} not ready within {waited:?} (check=true): {source}")]
    RegistryUnreachable {
        /// The registry, as `zookeeper://host:port/root` (never its password).
        registry: String,
        /// How long the build waited.
        waited: std::time::Duration,
        /// Why: typically [`RegistryError::Unreachable`](rudder_registry::RegistryError::Unreachable)
        /// with the last connection failure, or
        /// [`RegistryError::AuthFailed`](rudder_registry::RegistryError::AuthFailed).
        #[source]
        source: rudder_registry::RegistryError,
    },
    /// Neither providers nor a registry were given.
    #[error("no providers and no registry: give provider URLs or a registry URL")]
    NoSource,
    /// Providers were given in two ways (provider URLs, registries, a directory): say which one.
    #[error("{0} cannot be combined with the provider source already given (provider URLs, registries, or a directory)")]
    ConflictingSources(&'static str),
    /// The consumer was shut down.
    #[error("the consumer is shut down")]
    ShutDown,
}
