//! The one error type of the registry crate.

use std::time::Duration;

mod zk_tls;

pub use zk_tls::ZkTlsFailure;

/// Why the registry could not do what was asked.
///
/// Every variant names what it was working on (a path, the hosts tried); none carries the registry
/// password. The ZooKeeper client's error, when there is one, is the `source()` and not part of the
/// message, so that a chain printer (anyhow's `{:#}`, a tracing subscriber) says each part once.
///
/// ```
/// use rudder_registry::RegistryError;
/// use std::time::Duration;
/// let e = RegistryError::Unreachable {
///     hosts: "10.0.0.1:2181".into(),
///     waited: Duration::from_secs(3),
///     source: Some(zookeeper_client::Error::ConnectionLoss),
/// };
/// assert_eq!(e.to_string(), "ZooKeeper at 10.0.0.1:2181 unreachable after 3s");
/// assert!(std::error::Error::source(&e).is_some());
/// ```
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
    /// No ZooKeeper server gave a session within the configured wait.
    #[error("ZooKeeper at {hosts} unreachable after {waited:?}{}", unanswered(.source))]
    Unreachable {
        /// The hosts tried (`host:port,host:port`).
        hosts: String,
        /// How long rudder waited.
        waited: Duration,
        /// The last failure the client reported, also given by `source()`; `None` when no server
        /// answered at all within the wait.
        source: Option<zookeeper_client::Error>,
    },
    /// Every server refused the connection: nothing listens at the address.
    #[error("ZooKeeper at {hosts}: connection refused (is ZooKeeper running there?)")]
    Refused {
        /// The hosts tried.
        hosts: String,
    },
    /// Every server that accepted the connection answered as something other than ZooKeeper (the rest
    /// refused it).
    #[error("{hosts} is not ZooKeeper: asked `srvr`, it answered {answer:?} (is this ZooKeeper's client port?)")]
    NotZookeeper {
        /// The hosts tried.
        hosts: String,
        /// The first line of the answer, at most 60 characters, control characters as `.`.
        answer: String,
    },
    /// ZooKeeper rejected the credentials.
    #[error("ZooKeeper at {hosts} rejected the credentials")]
    AuthFailed {
        /// The hosts tried.
        hosts: String,
    },
    /// The TLS material the registry URL names (`tls.ca`, `tls.cert`, `tls.key`) cannot be used.
    #[error("ZooKeeper TLS setting {what} is unusable")]
    Security {
        /// The URL parameter naming the file.
        what: &'static str,
        /// Why: the file cannot be read, or holds nothing usable (its content is never quoted).
        source: SecurityError,
    },
    /// Every server's TLS handshake failed for a reason TLS names (a pre-flight handshake with the
    /// URL's TLS files, made when a secure session does not come at once).
    #[error("TLS with ZooKeeper at {hosts}: {failure}")]
    Tls {
        /// The hosts tried.
        hosts: String,
        /// Why (the first server's reason).
        failure: ZkTlsFailure,
    },
    /// A ZooKeeper operation failed; the client's error is the `source()`.
    #[error("ZooKeeper {operation} {path} failed")]
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
    /// No Nacos server gave a connection within the configured wait.
    #[error("Nacos at {servers} unreachable after {waited:?}")]
    NacosUnreachable {
        /// The servers tried (`host:port,host:port`).
        servers: String,
        /// How long rudder waited.
        waited: Duration,
        /// The Nacos client's last error, if it gave one (also `source()`).
        #[source]
        source: Option<std::sync::Arc<nacos_sdk::api::error::Error>>,
    },
    /// A Nacos operation failed; the Nacos client's error is the `source()`.
    #[error("Nacos {operation} {target} failed")]
    Nacos {
        /// `subscribe`, `get config`, `register`, ...
        operation: &'static str,
        /// The service name or `data id (group)`.
        target: String,
        /// The client's error.
        source: std::sync::Arc<nacos_sdk::api::error::Error>,
    },
}

impl RegistryError {
    /// Whether retrying the same operation later may succeed (connection trouble, not bad input).
    pub fn is_retryable(&self) -> bool {
        match self {
            RegistryError::Unreachable { .. }
            | RegistryError::Refused { .. }
            | RegistryError::NacosUnreachable { .. }
            | RegistryError::Nacos { .. } => true,
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

    /// The message and each cause, `a: b`: for the status fields that keep an error as text
    /// ([`SubscriptionStatus::registration_error`](crate::SubscriptionStatus::registration_error)).
    pub(crate) fn chain_text(&self) -> String {
        let mut text = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(error) = cause {
            text.push_str(": ");
            text.push_str(&error.to_string());
            cause = error.source();
        }
        text
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

/// What the message of [`RegistryError::Unreachable`] says when there is no failure to show as
/// its source: that no server answered at all.
fn unanswered(source: &Option<zookeeper_client::Error>) -> &'static str {
    match source {
        Some(_) => "",
        None => " (no server answered)",
    }
}

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<RegistryError>();
};

/// Why the TLS material named by the registry URL cannot be used (never quoting the file's content).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SecurityError {
    /// The file cannot be read.
    #[error("cannot read the file")]
    File(#[source] std::sync::Arc<std::io::Error>),
    /// The file is larger than any PEM bundle should be (1 MiB).
    #[error("the file is larger than 1 MiB")]
    TooLarge,
    /// The file holds no certificate or key of a kind rustls takes.
    #[error("no usable PEM certificate or key")]
    Unusable(#[source] zookeeper_client::Error),
    /// The file holds no certificate or key rustls takes (found by rudder's own reading of it).
    #[error("no usable PEM certificate or key")]
    NothingUsable,
}

#[cfg(test)]
mod tests;
