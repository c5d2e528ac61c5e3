//! The error every call can end with, carrying Dubbo's numeric `RpcException` codes.

use std::fmt;

mod tls_failure;
pub use tls_failure::{TlsError, TlsFailure};

/// The kind of a failed call; the discriminant is Dubbo's `RpcException` code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RpcErrorKind {
    /// 0: anything not classified below.
    Unknown = 0,
    /// 1: connection or send failure.
    Network = 1,
    /// 2: no answer within the timeout.
    Timeout = 2,
    /// 3: the provider's method threw (a business exception); never retried.
    Biz = 3,
    /// 4: the call was refused (e.g. the registry pushed `empty://`).
    Forbidden = 4,
    /// 5: a request or response could not be (de)serialized, or the provider could not decode the
    /// request (status `BAD_REQUEST`, "Fail to decode request"); never retried: every provider would
    /// refuse the same bytes, and a response that could not be read came from a call that ran.
    Serialization = 5,
    /// 6: no provider is left after routing.
    NoProvider = 6,
    /// 7: a concurrency limit (`actives`) was hit.
    LimitExceeded = 7,
    /// 9: the registry failed.
    Registry = 9,
    /// 11: the provider has no such method or service.
    MethodNotFound = 11,
    /// The consumer (or its dubbo:// protocol) was shut down before or during the call. Never
    /// retried: no other provider or registry would answer either. Dubbo reports a destroyed invoker
    /// as an unclassified `RpcException`, so its [`code`](RpcErrorKind::code) is 0.
    ShutDown = 100,
    /// A TLS handshake with the provider failed, or the provider and this consumer disagree on
    /// whether to use TLS; [`RpcError::tls_failure`] says which of the [`TlsFailure`]s it was. Dubbo
    /// reports these as network failures, so its [`code`](RpcErrorKind::code) is 1. Retried on
    /// another provider (whose certificate may be fine), never on the same one: its connection slot
    /// backs off as after a failed connect.
    Tls = 101,
}

impl RpcErrorKind {
    /// Dubbo's numeric code.
    pub fn code(self) -> i32 {
        match self {
            RpcErrorKind::ShutDown => 0,
            RpcErrorKind::Tls => 1,
            other => other as i32,
        }
    }

    /// Whether failover may try another provider after this kind of failure: all but a business
    /// exception, a serialization failure and a call on a shut-down consumer. (Dubbo retries everything
    /// but business exceptions, so a request one provider cannot decode is sent to the next ones, which
    /// refuse it too.)
    pub fn is_retryable(self) -> bool {
        !matches!(
            self,
            RpcErrorKind::Biz | RpcErrorKind::Serialization | RpcErrorKind::ShutDown
        )
    }
}

impl fmt::Display for RpcErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            RpcErrorKind::Unknown => "unknown",
            RpcErrorKind::Network => "network",
            RpcErrorKind::Timeout => "timeout",
            RpcErrorKind::Biz => "business",
            RpcErrorKind::Forbidden => "forbidden",
            RpcErrorKind::Serialization => "serialization",
            RpcErrorKind::NoProvider => "no-provider",
            RpcErrorKind::LimitExceeded => "limit-exceeded",
            RpcErrorKind::Registry => "registry",
            RpcErrorKind::MethodNotFound => "method-not-found",
            RpcErrorKind::ShutDown => "shut-down",
            RpcErrorKind::Tls => "tls",
        };
        f.write_str(name)
    }
}

/// A failed call: its kind, a message that says what and where, and the cause if any.
///
/// The message does not repeat the cause's text: printers that follow `source()` (anyhow, tracing
/// subscribers, the CLI) show the cause after it, so each part of a failure is printed once.
///
/// ```
/// use rudder_common::error::{RpcError, RpcErrorKind};
/// let e = RpcError::new(RpcErrorKind::Timeout, "no answer from 10.0.0.1:20880 in 3000 ms");
/// assert_eq!(e.kind().code(), 2);
/// assert!(e.kind().is_retryable());
/// ```
///
/// One pointer wide: the details live in a box, so that the `Result`s of the pick and call paths fit in
/// registers instead of being copied through memory at every level (errors are rare; successes are not).
#[derive(Debug)]
pub struct RpcError(Box<Details>);

#[derive(Debug)]
struct Details {
    kind: RpcErrorKind,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
    /// Empty unless a cluster mode tried several providers; an empty `Vec` does not allocate.
    attempts: Vec<Attempt>,
}

/// One provider a cluster mode tried for a call, and how that try failed.
///
/// ```
/// use rudder_common::error::{Attempt, RpcError, RpcErrorKind};
/// let e = RpcError::new(RpcErrorKind::Network, "all failed").with_attempts(vec![
///     Attempt::new("10.0.0.1:20880", RpcErrorKind::Network, "connection refused"),
///     Attempt::new("10.0.0.2:20880", RpcErrorKind::Timeout, "no answer in 1000 ms"),
/// ]);
/// assert_eq!(e.attempts()[1].provider, "10.0.0.2:20880");
/// assert_eq!(e.attempts()[1].kind, RpcErrorKind::Timeout);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Attempt {
    /// The provider's `host:port`.
    pub provider: String,
    /// How the call to it failed.
    pub kind: RpcErrorKind,
    /// The failure's message.
    pub message: String,
}

impl Attempt {
    /// A failed try of `provider`.
    pub fn new(
        provider: impl Into<String>,
        kind: RpcErrorKind,
        message: impl Into<String>,
    ) -> Attempt {
        Attempt {
            provider: provider.into(),
            kind,
            message: message.into(),
        }
    }
}

impl RpcError {
    /// An error of `kind` with `message`.
    pub fn new(kind: RpcErrorKind, message: impl Into<String>) -> RpcError {
        RpcError(Box::new(Details {
            kind,
            message: message.into(),
            source: None,
            attempts: Vec::new(),
        }))
    }

    /// The same error with a cause attached, given by `source()` (keep its text out of the message).
    pub fn with_source(
        mut self,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> RpcError {
        self.0.source = Some(Box::new(source));
        self
    }

    /// The same error with the providers tried for the call and how each failed, in the order tried.
    pub fn with_attempts(mut self, attempts: Vec<Attempt>) -> RpcError {
        self.0.attempts = attempts;
        self
    }

    /// The providers a cluster mode tried before giving up (failover, forking, broadcast, mergeable), in
    /// the order tried; empty for an error of a single call.
    pub fn attempts(&self) -> &[Attempt] {
        &self.0.attempts
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> RpcErrorKind {
        self.0.kind
    }

    /// Which TLS failure this is, when the error or one of its causes is a [`TlsError`] (the errors of
    /// kind [`RpcErrorKind::Tls`] carry one).
    ///
    /// ```
    /// use rudder_common::error::{RpcError, RpcErrorKind, TlsError, TlsFailure};
    /// let e = RpcError::new(RpcErrorKind::Tls, "TLS to 10.0.0.1:20880 failed")
    ///     .with_source(TlsError::new(TlsFailure::NameMismatch));
    /// assert_eq!(e.tls_failure(), Some(TlsFailure::NameMismatch));
    /// ```
    pub fn tls_failure(&self) -> Option<TlsFailure> {
        let mut cause = std::error::Error::source(self);
        while let Some(link) = cause {
            if let Some(tls) = link.downcast_ref::<TlsError>() {
                return Some(tls.failure());
            }
            cause = link.source();
        }
        None
    }

    /// The message, without the kind.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The message, then each cause, `a: b: c` (an inner `RpcError` by its message): for where
    /// the error must become text, as an [`Attempt`] record or a refusal repeated to later callers.
    ///
    /// ```
    /// use rudder_common::error::{RpcError, RpcErrorKind};
    /// let refused = std::io::Error::other("connection refused");
    /// let call = RpcError::new(RpcErrorKind::Network, "connect to a:1 failed").with_source(refused);
    /// let retried = RpcError::new(RpcErrorKind::Network, "failed after 1 attempt").with_source(call);
    /// assert_eq!(
    ///     retried.message_with_causes(),
    ///     "failed after 1 attempt: connect to a:1 failed: connection refused"
    /// );
    /// ```
    pub fn message_with_causes(&self) -> String {
        self.message_with_causes_until(|_| false)
    }

    /// [`RpcError::message_with_causes`], ending before the first cause `stop` accepts: a cause
    /// whose text the link before it already says (a gRPC status its caller has read into its own
    /// message, for one).
    ///
    /// ```
    /// use rudder_common::error::{RpcError, RpcErrorKind};
    /// let echo = std::io::Error::other("not found: x");
    /// let call = RpcError::new(RpcErrorKind::MethodNotFound, "not found: x").with_source(echo);
    /// let outer = RpcError::new(RpcErrorKind::MethodNotFound, "failed after 1 attempt").with_source(call);
    /// let text = outer.message_with_causes_until(|e| e.is::<std::io::Error>());
    /// assert_eq!(text, "failed after 1 attempt: not found: x");
    /// ```
    pub fn message_with_causes_until(
        &self,
        stop: impl Fn(&(dyn std::error::Error + 'static)) -> bool,
    ) -> String {
        let mut text = self.0.message.clone();
        let mut cause = std::error::Error::source(self);
        while let Some(link) = cause {
            if stop(link) {
                break;
            }
            text.push_str(": ");
            match link.downcast_ref::<RpcError>() {
                Some(rpc) => text.push_str(rpc.message()),
                None => text.push_str(&link.to_string()),
            }
            cause = link.source();
        }
        text
    }
}

/// An error of another library and its causes as one line, `a: b: c`, each part once: a cause whose
/// text the line already holds is left out (hyper's and tonic's errors often repeat their cause in
/// their own message). For a log field or an error message built from a foreign error; an
/// [`RpcError`] says its own with [`RpcError::message_with_causes`].
///
/// ```
/// use rudder_common::error::causes_text;
/// let refused = std::io::Error::other("connection refused");
/// assert_eq!(
///     causes_text(&OuterError(refused)),
///     "tcp connect error: connection refused"
/// );
///
/// /// An error that prints its cause in its own message too.
/// #[derive(Debug)]
/// struct OuterError(std::io::Error);
/// impl std::fmt::Display for OuterError {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         write!(f, "tcp connect error: {}", self.0)
///     }
/// }
/// impl std::error::Error for OuterError {
///     fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
///         Some(&self.0)
///     }
/// }
/// ```
pub fn causes_text(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(link) = cause {
        let next = link.to_string();
        if !next.is_empty() && !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        cause = link.source();
    }
    text
}

impl fmt::Display for RpcError {
    /// `kind: message`, in both forms: the cause is not repeated here but given by `source()`, so a
    /// chain printer (`anyhow`'s `{:#}`, a `tracing` subscriber, a loop over `source()`) shows each
    /// part of the failure once.
    ///
    /// ```
    /// use rudder_common::error::{RpcError, RpcErrorKind};
    /// let io = std::io::Error::other("connection reset");
    /// let e = RpcError::new(RpcErrorKind::Network, "10.0.0.1:20880 failed").with_source(io);
    /// assert_eq!(e.to_string(), "network: 10.0.0.1:20880 failed");
    /// assert_eq!(format!("{e:#}"), "network: 10.0.0.1:20880 failed");
    /// let cause = std::error::Error::source(&e).unwrap();
    /// assert_eq!(cause.to_string(), "connection reset");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.0.kind, self.0.message)
    }
}

impl std::error::Error for RpcError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0
            .source
            .as_deref()
            .map(|source| source as &(dyn std::error::Error + 'static))
    }
}

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<RpcError>();
    assert!(std::mem::size_of::<RpcError>() == std::mem::size_of::<usize>());
};

#[cfg(test)]
mod tests;

#[cfg(test)]
mod kind_tests {
    use super::RpcErrorKind;

    #[test]
    fn business_and_serialization_failures_are_not_retried() {
        assert!(!RpcErrorKind::Biz.is_retryable());
        assert!(!RpcErrorKind::Serialization.is_retryable());
        assert!(!RpcErrorKind::ShutDown.is_retryable());
        assert!(
            RpcErrorKind::Tls.is_retryable(),
            "another provider may pass"
        );
        assert_eq!(
            RpcErrorKind::Tls.code(),
            1,
            "Dubbo calls it a network failure"
        );
        for kind in [
            RpcErrorKind::Unknown,
            RpcErrorKind::Network,
            RpcErrorKind::Timeout,
            RpcErrorKind::NoProvider,
            RpcErrorKind::MethodNotFound,
            RpcErrorKind::LimitExceeded,
        ] {
            assert!(kind.is_retryable(), "{kind}");
        }
    }
}
