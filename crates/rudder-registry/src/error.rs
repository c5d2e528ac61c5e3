//! The one error type of the registry crate.

use std::time::Duration;

/// Why the registry could not do what was asked.
///
/// Every variant names what it was working on (a path, the hosts tried); none carries the registry
/// password.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The registry URL could not be read or uses a scheme rudder does not speak.
    #[error("bad registry URL: {reason}")]
    BadRegistryUrl {
        /// What is wrong with it.
        reason: String,
    },
    /// A field of the consumer description cannot be written into a Dubbo URL.
    #[error("bad consumer description: {reason}")]
    BadConsumer {
        /// What is wrong with it.
        reason: String,
    },
    /// No ZooKeeper server answered within the configured wait.
    #[error("ZooKeeper at {hosts} unreachable after {waited:?}: {reason}")]
    Unreachable {
        /// The hosts tried (`host:port,host:port`).
        hosts: String,
        /// How long rudder waited.
        waited: Duration,
        /// The last failure seen.
        reason: String,
    },
    /// ZooKeeper rejected the credentials.
    #[error("ZooKeeper at {hosts} rejected the credentials")]
    AuthFailed {
        /// The hosts tried.
        hosts: String,
    },
    /// A ZooKeeper operation failed.
    #[error("ZooKeeper {operation} {path} failed: {source}")]
    ZooKeeper {
        /// `create`, `list`, `delete`, ...
        operation: &'static str,
        /// The node path.
        path: String,
        /// The client's error.
        source: zookeeper_client::Error,
    },
    /// The registry has been closed.
    #[error("the registry is closed")]
    Closed,
}

impl RegistryError {
    /// Whether retrying the same operation later may succeed (connection trouble, not bad input).
    pub fn is_retryable(&self) -> bool {
        match self {
            RegistryError::Unreachable { .. } => true,
            RegistryError::ZooKeeper { source, .. } => matches!(
                source,
                zookeeper_client::Error::ConnectionLoss
                    | zookeeper_client::Error::SessionExpired
                    | zookeeper_client::Error::Timeout
                    | zookeeper_client::Error::ClientClosed
                    | zookeeper_client::Error::SessionMoved
            ),
            _ => false,
        }
    }

    pub(crate) fn zookeeper(
        operation: &'static str,
        path: &str,
        source: zookeeper_client::Error,
    ) -> RegistryError {
        RegistryError::ZooKeeper {
            operation,
            path: path.to_owned(),
            source,
        }
    }
}

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<RegistryError>();
};
