//! What building a [`Reference`](crate::Reference) and calling through it can end with.
//!
//! Every call path a user sees ([`Reference::invoke`](crate::Reference::invoke) and its typed and
//! generic forms, [`Reference::invoke_raw`](crate::Reference::invoke_raw), the tower
//! [`MethodService`](crate::MethodService)) fails with one type, [`CallError`]; its
//! [`kind`](CallError::kind) is Dubbo's error classification whatever the variant.

use rudder_common::error::{Attempt, RpcError, RpcErrorKind};
use rudder_common::value::{JavaException, SerdeError};

#[cfg(feature = "zookeeper")]
pub use rudder_registry::RegistryError;

/// A failed call: the provider threw, or the call did not complete.
///
/// ```
/// use rudder::{CallError, RpcError, RpcErrorKind};
/// let error = CallError::from(RpcError::new(RpcErrorKind::Timeout, "no answer in 1000 ms"));
/// assert_eq!(error.kind(), RpcErrorKind::Timeout);
/// assert!(error.rpc().is_some());
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The provider's method threw (Dubbo returns this as a normal answer; it is never retried).
    /// `source()` is the [`JavaException`], whose own `source()` is its Java cause.
    #[error("provider threw {}: {}", .0.class, .0.message.as_deref().unwrap_or(""))]
    Exception(#[source] JavaException),
    /// The call failed on the way: no provider, network, timeout, provider status error, or the
    /// consumer was shut down ([`RpcErrorKind::ShutDown`], never retried).
    #[error(transparent)]
    Rpc(#[from] RpcError),
    /// Arguments or the result could not be converted to or from Rust types.
    #[error("conversion failed: {0}")]
    Conversion(#[from] SerdeError),
    /// The call gave a different number of parameter types and arguments (nothing was sent).
    #[error("{types} parameter types but {arguments} arguments")]
    ArgumentCount {
        /// Parameter types given.
        types: usize,
        /// Arguments given.
        arguments: usize,
    },
}

impl CallError {
    /// The failure's kind, as Dubbo classifies it: `Biz` for a provider's exception, `Serialization`
    /// for a conversion or argument-count error, else the [`RpcError`]'s kind.
    pub fn kind(&self) -> RpcErrorKind {
        match self {
            CallError::Exception(_) => RpcErrorKind::Biz,
            CallError::Rpc(error) => error.kind(),
            CallError::Conversion(_) | CallError::ArgumentCount { .. } => {
                RpcErrorKind::Serialization
            }
        }
    }

    /// The transport-level error, when the call did not complete ([`CallError::Rpc`]).
    pub fn rpc(&self) -> Option<&RpcError> {
        match self {
            CallError::Rpc(error) => Some(error),
            _ => None,
        }
    }

    /// The providers a cluster mode tried before giving up, in the order tried (empty unless the
    /// call failed on the way after several attempts).
    pub fn attempts(&self) -> &[Attempt] {
        self.rpc().map_or(&[], RpcError::attempts)
    }

    /// The provider's exception, when its method threw ([`CallError::Exception`]).
    pub fn exception(&self) -> Option<&JavaException> {
        match self {
            CallError::Exception(exception) => Some(exception),
            _ => None,
        }
    }

    /// Whether the consumer was shut down before or during the call.
    pub fn is_shut_down(&self) -> bool {
        self.kind() == RpcErrorKind::ShutDown
    }
}

/// Building a [`Reference`](crate::Reference) failed. Setting errors are found when the setting is
/// given (the builder keeps the first one) and returned by
/// [`ReferenceBuilder::build`](crate::ReferenceBuilder::build).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A provider URL could not be read.
    #[error("bad URL: {0}")]
    Url(#[from] rudder_common::url::UrlError),
    /// The `loadbalance` name is neither a built-in nor registered on the consumer.
    #[error(transparent)]
    LoadBalance(#[from] rudder_cluster::loadbalance::UnknownLoadBalance),
    /// The `cluster` mode is not one rudder implements.
    #[error(transparent)]
    Cluster(#[from] rudder_cluster::cluster::UnsupportedClusterMode),
    /// A setting has a value of the wrong form (named, with what it should be).
    #[error("bad parameter: {0}")]
    BadParameter(String),
    /// A registry URL is wrong, or the registry could not be reached, authenticated to or subscribed
    /// to: match on the [`RegistryError`] (`BadRegistryUrl`, `Unreachable`, `AuthFailed`, ...), also
    /// given by [`BuildError::registry`] and as `source()`.
    #[cfg(feature = "zookeeper")]
    #[error("registry: {0}")]
    Registry(#[source] RegistryError),
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
        /// Why: typically [`RegistryError::Unreachable`]
        /// with the last connection failure, or
        /// [`RegistryError::AuthFailed`].
        #[source]
        source: RegistryError,
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
    /// `build` was polled outside a tokio runtime; references run their timers and connections
    /// on the runtime they are built on.
    #[error("ReferenceBuilder::build must run inside a tokio runtime")]
    NoRuntime,
}

impl BuildError {
    /// The registry's error, when the registry failed ([`BuildError::Registry`],
    /// [`BuildError::RegistryUnreachable`]).
    #[cfg(feature = "zookeeper")]
    pub fn registry(&self) -> Option<&RegistryError> {
        match self {
            BuildError::Registry(error) => Some(error),
            BuildError::RegistryUnreachable { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(feature = "zookeeper")]
impl From<RegistryError> for BuildError {
    fn from(error: RegistryError) -> BuildError {
        BuildError::Registry(error)
    }
}
