//! What building a [`Reference`](crate::Reference) and calling through it can end with.
//!
//! Every call path a user sees ([`Reference::call`](crate::Reference::call),
//! [`Reference::invoke`](crate::Reference::invoke), the tower
//! [`MethodService`](crate::MethodService)) fails with one type, [`CallError`]; its
//! [`kind`](CallError::kind) is Dubbo's error classification whatever the variant.
//!
//! Each error's `Display` says its own part only and gives what caused it as `source()`, so a chain
//! printer says each part once:
//!
//! ```
//! use rudder::{CallError, RpcError, RpcErrorKind};
//! let refused = std::io::Error::other("connection refused");
//! let error = CallError::from(
//!     RpcError::new(RpcErrorKind::Network, "connect to 10.0.0.1:20880 failed").with_source(refused),
//! );
//! let chain: Vec<String> = std::iter::successors(
//!     Some(&error as &(dyn std::error::Error + 'static)),
//!     |e| e.source(),
//! )
//! .map(ToString::to_string)
//! .collect();
//! assert_eq!(chain, ["network: connect to 10.0.0.1:20880 failed", "connection refused"]);
//! ```

use std::error::Error;
use std::fmt;

use rudder_common::error::{Attempt, RpcError, RpcErrorKind};
use rudder_common::value::{JavaException, SerdeError};
use rudder_rpc::ProviderError;

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
#[derive(Debug)]
#[non_exhaustive]
pub enum CallError {
    /// The provider's method threw (Dubbo returns this as a normal answer; it is never retried).
    /// `Display` is `provider threw <class>: <message>`; `source()` is the exception's Java cause,
    /// if any; [`CallError::exception`] gives the [`JavaException`] itself.
    Exception(JavaException),
    /// The call failed on the way: no provider, network, timeout, provider status error, or the
    /// consumer was shut down ([`RpcErrorKind::ShutDown`], never retried). Displays as the
    /// [`RpcError`] and has its `source()`; a provider's status answer is
    /// [`CallError::provider_error`].
    Rpc(RpcError),
    /// Arguments or the result could not be converted to or from Rust types; `source()` says why.
    Conversion(SerdeError),
    /// The call gave a different number of parameter types and arguments (nothing was sent).
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

    /// The status a dubbo:// provider answered instead of a result (`70 SERVICE_ERROR`, `100
    /// SERVER_THREADPOOL_EXHAUSTED_ERROR`, ...), when that is why the call failed: found in the chain
    /// of causes, it holds the provider's whole message ([`ProviderError::message`]).
    ///
    /// ```
    /// use rudder::{CallError, ProviderError, ResponseStatus, RpcError, RpcErrorKind};
    /// let status = ProviderError::new(ResponseStatus::ServiceError, "Not found exported service: x");
    /// let call = RpcError::new(RpcErrorKind::MethodNotFound, "10.0.0.1:20880").with_source(status);
    /// let retried = RpcError::new(RpcErrorKind::MethodNotFound, "failed after 1 attempt")
    ///     .with_source(call);
    /// let error = CallError::from(retried);
    /// assert_eq!(error.provider_error().unwrap().status(), ResponseStatus::ServiceError);
    /// ```
    pub fn provider_error(&self) -> Option<&ProviderError> {
        // Bounded: each cluster layer adds a link, a few at most.
        std::iter::successors(self.rpc().and_then(Error::source), |&error| error.source())
            .take(16)
            .find_map(|error| error.downcast_ref::<ProviderError>())
    }

    /// Whether the consumer was shut down before or during the call.
    pub fn is_shut_down(&self) -> bool {
        self.kind() == RpcErrorKind::ShutDown
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Exception(exception) => write!(f, "provider threw {exception}"),
            CallError::Rpc(error) => fmt::Display::fmt(error, f),
            CallError::Conversion(_) => f.write_str("conversion failed"),
            CallError::ArgumentCount { types, arguments } => {
                write!(f, "{types} parameter types but {arguments} arguments")
            }
        }
    }
}

impl Error for CallError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            // The exception is this error's own text; what the printer follows is its Java cause.
            CallError::Exception(exception) => exception.source(),
            CallError::Rpc(error) => error.source(),
            CallError::Conversion(error) => Some(error),
            CallError::ArgumentCount { .. } => None,
        }
    }
}

impl From<RpcError> for CallError {
    fn from(error: RpcError) -> CallError {
        CallError::Rpc(error)
    }
}

/// The provider's exception, as [`RpcResponse::into_result`](crate::RpcResponse::into_result) gives it:
/// `reference.invoke(call).await?.into_result()?` reads a raw call's value in a function that returns
/// `CallError`.
impl From<JavaException> for CallError {
    fn from(exception: JavaException) -> CallError {
        CallError::Exception(exception)
    }
}

impl From<SerdeError> for CallError {
    fn from(error: SerdeError) -> CallError {
        CallError::Conversion(error)
    }
}

/// Building a [`Reference`](crate::Reference) failed. Setting errors are found when the setting is
/// given (the builder keeps the first one) and returned by
/// [`ReferenceBuilder::build`](crate::ReferenceBuilder::build).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A provider URL could not be read; `source()` says why.
    #[error("bad URL")]
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
    /// given by [`BuildError::registry`]. Displays as the registry's error and has its `source()`.
    /// With `check=true`, a registry where nothing listens (`Refused`), one that is not ZooKeeper
    /// (`NotZookeeper`) or one that refuses the credentials (`AuthFailed`) fails the build as soon as
    /// that is known, without waiting for the deadline.
    #[cfg(feature = "zookeeper")]
    #[error(transparent)]
    Registry(RegistryError),
    /// A registry gave no session and first listing within the build's deadline (its URL's `timeout`,
    /// 10 s by default) and the reference has `check=true`, the default, as in Dubbo
    /// (`check=false` builds without it; see [`ReferenceBuilder::check`](crate::ReferenceBuilder::check)).
    #[cfg(feature = "zookeeper")]
    #[error("registry {registry} not ready within {waited:?} (check=true)")]
    RegistryUnreachable {
        /// The registry, as `zookeeper://host:port/root` (never its password).
        registry: String,
        /// How long the build waited.
        waited: std::time::Duration,
        /// Why, also given as `source()`: typically [`RegistryError::Unreachable`] with the last
        /// connection failure, or [`RegistryError::AuthFailed`].
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

#[cfg(test)]
mod tests;
