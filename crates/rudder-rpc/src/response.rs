//! What a provider answers: a value or a business exception, plus attachments; or a status error.

use std::fmt;

use rudder_common::error::RpcErrorKind;
use rudder_common::value::{JavaException, Value};

/// A provider's answer to one call.
///
/// A business exception (the provider's method threw) is a *normal* answer in Dubbo, not an
/// [`RpcError`](rudder_common::error::RpcError): the provider was reached and did its work, so it
/// is never retried and counts as a success in [`RpcStatus`](rudder_common::status::RpcStatus).
///
/// ```
/// use rudder_rpc::RpcResponse;
/// use rudder_common::value::Value;
///
/// let ok = RpcResponse::from_value(Value::from("Hello"));
/// assert_eq!(ok.value().and_then(Value::as_str), Some("Hello"));
/// assert!(ok.exception().is_none());
/// assert_eq!(ok.into_result().unwrap(), Value::from("Hello"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RpcResponse {
    outcome: Result<Value, JavaException>,
    attachments: Vec<(String, Value)>,
}

impl RpcResponse {
    /// A response carrying `value` (use [`Value::Null`] for a `null` or `void` result).
    pub fn from_value(value: Value) -> RpcResponse {
        RpcResponse {
            outcome: Ok(value),
            attachments: Vec::new(),
        }
    }

    /// A response carrying a business exception.
    pub fn from_exception(exception: JavaException) -> RpcResponse {
        RpcResponse {
            outcome: Err(exception),
            attachments: Vec::new(),
        }
    }

    /// The same response with these attachments.
    pub fn with_attachments(mut self, attachments: Vec<(String, Value)>) -> RpcResponse {
        self.attachments = attachments;
        self
    }

    /// The returned value, unless the method threw.
    pub fn value(&self) -> Option<&Value> {
        self.outcome.as_ref().ok()
    }

    /// The business exception, if the method threw.
    pub fn exception(&self) -> Option<&JavaException> {
        self.outcome.as_ref().err()
    }

    /// The value, or the business exception as the error.
    pub fn into_result(self) -> Result<Value, JavaException> {
        self.outcome
    }

    /// Attachments the provider sent back (Dubbo ≥ 2.0.2 always sends `dubbo`), in wire order.
    pub fn attachments(&self) -> &[(String, Value)] {
        &self.attachments
    }

    /// The attachment `key`, if sent.
    pub fn attachment(&self, key: &str) -> Option<&Value> {
        self.attachments
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }
}

/// The status byte of a dubbo:// response header (Dubbo's `Response` constants).
///
/// ```
/// use rudder_rpc::ResponseStatus;
/// assert_eq!(ResponseStatus::from_byte(80), ResponseStatus::ServerError);
/// assert_eq!(ResponseStatus::from_byte(7), ResponseStatus::Unknown(7));
/// assert_eq!(ResponseStatus::ServerError.code(), 80);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ResponseStatus {
    /// 20: the call was executed; the body holds its result.
    Ok,
    /// 25: the provider could not serialize.
    SerializationError,
    /// 30: a client-side timeout (written by Java consumers into their own futures).
    ClientTimeout,
    /// 31: the provider gave up waiting for its own work.
    ServerTimeout,
    /// 35: the channel was inactive.
    ChannelInactive,
    /// 40: the provider could not decode the request (also: unknown interface called with arguments).
    BadRequest,
    /// 50: the provider could not encode its response (e.g. over its payload limit).
    BadResponse,
    /// 60: no such service.
    ServiceNotFound,
    /// 70: the provider failed to dispatch the call (e.g. "Not found exported service").
    ServiceError,
    /// 80: the provider failed internally.
    ServerError,
    /// 90: the consumer side failed.
    ClientError,
    /// 100: the provider's thread pool is exhausted.
    ThreadpoolExhausted,
    /// Any other byte.
    Unknown(u8),
}

impl ResponseStatus {
    /// The status of a byte; unknown bytes map to [`ResponseStatus::Unknown`].
    pub fn from_byte(byte: u8) -> ResponseStatus {
        match byte {
            20 => ResponseStatus::Ok,
            25 => ResponseStatus::SerializationError,
            30 => ResponseStatus::ClientTimeout,
            31 => ResponseStatus::ServerTimeout,
            35 => ResponseStatus::ChannelInactive,
            40 => ResponseStatus::BadRequest,
            50 => ResponseStatus::BadResponse,
            60 => ResponseStatus::ServiceNotFound,
            70 => ResponseStatus::ServiceError,
            80 => ResponseStatus::ServerError,
            90 => ResponseStatus::ClientError,
            100 => ResponseStatus::ThreadpoolExhausted,
            other => ResponseStatus::Unknown(other),
        }
    }

    /// The byte on the wire.
    pub fn code(self) -> u8 {
        match self {
            ResponseStatus::Ok => 20,
            ResponseStatus::SerializationError => 25,
            ResponseStatus::ClientTimeout => 30,
            ResponseStatus::ServerTimeout => 31,
            ResponseStatus::ChannelInactive => 35,
            ResponseStatus::BadRequest => 40,
            ResponseStatus::BadResponse => 50,
            ResponseStatus::ServiceNotFound => 60,
            ResponseStatus::ServiceError => 70,
            ResponseStatus::ServerError => 80,
            ResponseStatus::ClientError => 90,
            ResponseStatus::ThreadpoolExhausted => 100,
            ResponseStatus::Unknown(b) => b,
        }
    }

    /// The [`RpcErrorKind`] a non-OK status becomes, given the provider's message.
    ///
    /// | status | kind |
    /// |---|---|
    /// | 30, 31 | `Timeout` |
    /// | 35 | `Network` |
    /// | 25, 40, 50 | `Serialization` |
    /// | 60; 70 or 40 whose message says the service is not found | `MethodNotFound` |
    /// | 100 | `LimitExceeded` |
    /// | 70, 80, 90, unknown | `Unknown` |
    ///
    /// (Java consumers report every non-timeout status as a network error and retry it; rudder keeps
    /// the distinctions, and failover does not retry `Serialization`: a request the provider could not
    /// decode, `40 BAD_REQUEST` "Fail to decode request", fails the same on every provider.)
    pub fn error_kind(self, message: &str) -> RpcErrorKind {
        let not_found =
            message.contains("Not found exported service") || message.contains("Service not found");
        match self {
            ResponseStatus::ClientTimeout | ResponseStatus::ServerTimeout => RpcErrorKind::Timeout,
            ResponseStatus::ChannelInactive => RpcErrorKind::Network,
            ResponseStatus::ServiceNotFound => RpcErrorKind::MethodNotFound,
            ResponseStatus::ServiceError | ResponseStatus::BadRequest if not_found => {
                RpcErrorKind::MethodNotFound
            }
            ResponseStatus::SerializationError
            | ResponseStatus::BadRequest
            | ResponseStatus::BadResponse => RpcErrorKind::Serialization,
            ResponseStatus::ThreadpoolExhausted => RpcErrorKind::LimitExceeded,
            _ => RpcErrorKind::Unknown,
        }
    }
}

impl fmt::Display for ResponseStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            ResponseStatus::Ok => "OK",
            ResponseStatus::SerializationError => "SERIALIZATION_ERROR",
            ResponseStatus::ClientTimeout => "CLIENT_TIMEOUT",
            ResponseStatus::ServerTimeout => "SERVER_TIMEOUT",
            ResponseStatus::ChannelInactive => "CHANNEL_INACTIVE",
            ResponseStatus::BadRequest => "BAD_REQUEST",
            ResponseStatus::BadResponse => "BAD_RESPONSE",
            ResponseStatus::ServiceNotFound => "SERVICE_NOT_FOUND",
            ResponseStatus::ServiceError => "SERVICE_ERROR",
            ResponseStatus::ServerError => "SERVER_ERROR",
            ResponseStatus::ClientError => "CLIENT_ERROR",
            ResponseStatus::ThreadpoolExhausted => "SERVER_THREADPOOL_EXHAUSTED_ERROR",
            ResponseStatus::Unknown(_) => "UNKNOWN",
        };
        write!(f, "{} {name}", self.code())
    }
}

/// A non-OK status answer, attached as the `source()` of the [`RpcError`](rudder_common::error::RpcError)
/// it becomes (whose message names the provider only, so that a chain printer says each once); the
/// facade's `CallError::provider_error` finds it in the chain.
///
/// A Java provider's message is often a whole stack trace (Dubbo sends `StringUtils.toString(e)`).
/// `Display` shows its first meaningful line ([`ProviderError::headline`]), the alternate form
/// (`{:#}`) and [`ProviderError::message`] all of it.
///
/// ```
/// use rudder_rpc::{ProviderError, ResponseStatus};
/// let e = ProviderError::new(ResponseStatus::ServiceError, "Not found exported service: x");
/// assert_eq!(e.status(), ResponseStatus::ServiceError);
/// assert_eq!(e.to_string(), "provider answered 70 SERVICE_ERROR: Not found exported service: x");
///
/// let trace = "org.apache.dubbo.remoting.RemotingException: java.lang.NoSuchMethodException: \
///              Not found method \"nosuch\" in class peer.Greeter.\n\tat peer.Greeter.invoke(Greeter.java:1)";
/// let e = ProviderError::new(ResponseStatus::ServiceError, trace);
/// assert_eq!(e.headline(), "Not found method \"nosuch\" in class peer.Greeter.");
/// assert_eq!(format!("{e:#}"), format!("provider answered 70 SERVICE_ERROR: {trace}"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ProviderError {
    status: ResponseStatus,
    message: String,
}

impl ProviderError {
    /// A status answer with the provider's message.
    pub fn new(status: ResponseStatus, message: impl Into<String>) -> ProviderError {
        ProviderError {
            status,
            message: message.into(),
        }
    }
    /// The status byte.
    pub fn status(&self) -> ResponseStatus {
        self.status
    }
    /// The provider's error message, whole (stack trace included).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The message's first meaningful line: the root cause of a stack trace (its last
    /// `Caused by:` line), else the first non-blank line, without the exception class names Java
    /// prefixes to it (`RemotingException: NoSuchMethodException: ...`).
    pub fn headline(&self) -> &str {
        headline(&self.message)
    }
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = if f.alternate() {
            &self.message
        } else {
            self.headline()
        };
        write!(f, "provider answered {}: {text}", self.status)
    }
}

fn headline(message: &str) -> &str {
    // A stack trace's last `Caused by:` is the root cause, which says what went wrong; the lines
    // above it are the layers that passed it on.
    let root_cause = message
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Caused by: "))
        .next_back();
    let first = message.lines().map(str::trim).find(|l| !l.is_empty());
    let Some(mut line) = root_cause.or(first) else {
        return message;
    };
    while let Some((class, rest)) = line.split_once(": ") {
        if !is_throwable_class(class) || rest.trim().is_empty() {
            break;
        }
        line = rest.trim_start();
    }
    line
}

/// Whether `name` reads as a Java `Throwable` class name: dotted identifiers, the last ending in
/// `Exception`, `Error` or `Throwable`.
fn is_throwable_class(name: &str) -> bool {
    let identifier = |part: &str| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    };
    let simple = name.rsplit('.').next().unwrap_or(name);
    name.split('.').all(identifier)
        && ["Exception", "Error", "Throwable"]
            .iter()
            .any(|suffix| simple.ends_with(suffix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headlines_drop_class_prefixes_and_stack_frames() {
        for (message, expected) in [
            ("oops", "oops"),
            ("\n  first\nsecond", "first"),
            (
                "java.lang.IllegalStateException: boom\n\tat a.B.c(B.java:1)",
                "boom",
            ),
            ("Exception: x: y", "x: y"),
            ("Fail to decode: bad", "Fail to decode: bad"),
            (
                "java.lang.OutOfMemoryError: ",
                "java.lang.OutOfMemoryError:",
            ),
            ("", ""),
            (
                "a.B.XException: outer\n\tat x\nCaused by: a.CException: middle\n\tat y\n\
                 Caused by: java.io.IOException: disk full\n\t... 3 more",
                "disk full",
            ),
        ] {
            assert_eq!(headline(message), expected, "{message:?}");
        }
    }

    /// The 52-line message a Dubbo 3.3.6 provider (it/java-provider) answers, status 70, for a
    /// call of a method its service does not have.
    #[test]
    fn a_real_service_error_reads_as_its_root_cause() {
        let captured = include_str!("testdata/service-error-nosuch.txt");
        assert!(captured.lines().count() > 50);
        let e = ProviderError::new(ResponseStatus::ServiceError, captured);
        assert_eq!(
            e.headline(),
            r#"Not found method "nosuch" in class org.rudder.it.GreetingServiceImpl."#
        );
        assert_eq!(
            e.to_string(),
            r#"provider answered 70 SERVICE_ERROR: Not found method "nosuch" in class org.rudder.it.GreetingServiceImpl."#
        );
        assert_eq!(e.message(), captured);
        assert!(format!("{e:#}").ends_with(captured));
    }

    /// The status answer is the `source()` of the call's error, whose message only says where: a
    /// chain printer shows the address, then the status, each once.
    #[test]
    fn a_status_answer_prints_once_under_its_call_error() {
        use rudder_common::error::{RpcError, RpcErrorKind};
        let status = ProviderError::new(
            ResponseStatus::ServiceError,
            "Not found exported service: x",
        );
        let call =
            RpcError::new(RpcErrorKind::MethodNotFound, "10.0.0.1:20880").with_source(status);
        let outer =
            RpcError::new(RpcErrorKind::MethodNotFound, "failed after 1 attempt").with_source(call);
        rudder_test_support::assert_each_once(
            outer,
            &[
                "failed after 1 attempt",
                "10.0.0.1:20880",
                "provider answered 70 SERVICE_ERROR",
                "Not found exported service: x",
            ],
        );
    }

    #[test]
    fn bad_request_is_a_serialization_failure_that_is_not_retried() {
        let kind = ResponseStatus::BadRequest.error_kind("Fail to decode request due to: ...");
        assert_eq!(kind, RpcErrorKind::Serialization);
        assert!(
            !kind.is_retryable(),
            "another provider refuses the same bytes"
        );
        let missing = ResponseStatus::BadRequest.error_kind("Not found exported service: x");
        assert_eq!(missing, RpcErrorKind::MethodNotFound);
        assert!(missing.is_retryable(), "another provider may export it");
        assert!(ResponseStatus::ServerTimeout.error_kind("").is_retryable());
    }
}
