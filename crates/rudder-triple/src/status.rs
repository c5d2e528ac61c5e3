//! gRPC statuses (`grpc-status` / `grpc-message`) as rudder's error kinds, the same kinds a dubbo://
//! call fails with, so cluster modes treat a failure alike whichever protocol the provider speaks.

use rudder_common::error::{RpcError, RpcErrorKind};
use tonic::Code;

/// What Java Dubbo 3.3.6 says (as `UNKNOWN`) for a method its service does not have.
const JAVA_NO_SUCH_METHOD: &str = "\"methodDescriptors\" is null";

/// The error kind of a gRPC status code.
///
/// - `UNAVAILABLE` (no connection, connection lost, provider shutting down) is a network failure, retried
///   by failover; so are `CANCELLED` (a reset stream) and `RESOURCE_EXHAUSTED` is a limit (as dubbo://'s
///   thread-pool-exhausted status);
/// - `OUT_OF_RANGE` (tonic: a message over `payload`) is a serialization failure, not retried;
/// - `DEADLINE_EXCEEDED` is a timeout, and so is tonic's `CANCELLED` "Timeout expired";
/// - `UNIMPLEMENTED` and `NOT_FOUND` mean the provider serves no such service or method at the group and
///   version asked for: `MethodNotFound`, which a Java provider also reports over dubbo://;
/// - Java Dubbo 3.3.6 answers a method its service does not have with HTTP 500 and `UNKNOWN` "Cannot
///   invoke \"java.util.List.iterator()\" because \"methodDescriptors\" is null" (a
///   NullPointerException in `GrpcRequestHandlerMapping`, seen on the wire): that is `MethodNotFound` too;
/// - other codes are `Unknown` unless the message says serialization, since Java uses `INTERNAL` and
///   `UNKNOWN` for anything it did not classify.
///
/// Public for callers that see a gRPC status themselves (a tonic client over
/// `Reference::grpc_channel`, the CLI), so they classify it as the tri:// client does.
///
/// ```
/// use rudder_common::error::RpcErrorKind;
/// use tonic::Code;
///
/// assert_eq!(rudder_triple::error_kind(Code::Unavailable, ""), RpcErrorKind::Network);
/// ```
pub fn error_kind(code: Code, message: &str) -> RpcErrorKind {
    match code {
        Code::Unknown if message.contains(JAVA_NO_SUCH_METHOD) => RpcErrorKind::MethodNotFound,
        // tonic's own enforcement of `grpc-timeout` (`TimeoutExpired`).
        Code::Cancelled if message == "Timeout expired" => RpcErrorKind::Timeout,
        Code::Unavailable | Code::Cancelled | Code::Aborted => RpcErrorKind::Network,
        Code::DeadlineExceeded => RpcErrorKind::Timeout,
        Code::Unimplemented | Code::NotFound => RpcErrorKind::MethodNotFound,
        Code::ResourceExhausted => RpcErrorKind::LimitExceeded,
        // tonic's answer to a message over `payload`, either way: as over dubbo://, a serialization
        // failure of this call only.
        Code::OutOfRange => RpcErrorKind::Serialization,
        Code::PermissionDenied | Code::Unauthenticated => RpcErrorKind::Forbidden,
        _ if message.contains("Serializ") || message.contains("serializ") => {
            RpcErrorKind::Serialization
        }
        _ => RpcErrorKind::Unknown,
    }
}

/// Whether a non-OK status on a protobuf (gRPC) call is the service's own answer, which ran there and
/// is not sent to another provider: everything but what says the call did not run (no connection,
/// `UNAVAILABLE`, `CANCELLED`), ran out of time or room (`DEADLINE_EXCEEDED`, `RESOURCE_EXHAUSTED`),
/// or found no such service or method at the group and version sent (`UNIMPLEMENTED`, `NOT_FOUND`,
/// Java's "methodDescriptors is null"). `ABORTED` is the service's (a conflict it detected).
pub(crate) fn is_answer(code: Code, message: &str) -> bool {
    !matches!(
        error_kind(code, message),
        RpcErrorKind::Network
            | RpcErrorKind::Timeout
            | RpcErrorKind::LimitExceeded
            | RpcErrorKind::MethodNotFound
    ) || code == Code::Aborted
}

/// The [`RpcError`] of a failed call to `method` on `service` (at `address`, asked for with `target`, the
/// group and version sent), keeping the status as its source.
pub(crate) fn status_error(
    status: tonic::Status,
    address: &str,
    service: &str,
    method: &str,
    target: &str,
) -> RpcError {
    let kind = error_kind(status.code(), status.message());
    let message = match kind {
        RpcErrorKind::MethodNotFound => format!(
            "tri://{address} has no such service or method at {target}: {service}.{method} \
             (grpc-status {} {:?}: {})",
            i32::from(status.code()),
            status.code(),
            status.message()
        ),
        _ => format!(
            "tri://{address} {service}.{method}: grpc-status {} {:?}: {}",
            i32::from(status.code()),
            status.code(),
            status.message()
        ),
    };
    RpcError::new(kind, message).with_source(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_map_to_the_kinds_dubbo_uses() {
        let cases = [
            (Code::Unavailable, RpcErrorKind::Network),
            (Code::DeadlineExceeded, RpcErrorKind::Timeout),
            (Code::Unimplemented, RpcErrorKind::MethodNotFound),
            (Code::NotFound, RpcErrorKind::MethodNotFound),
            (Code::ResourceExhausted, RpcErrorKind::LimitExceeded),
            (Code::Unknown, RpcErrorKind::Unknown),
            (Code::Internal, RpcErrorKind::Unknown),
            (Code::Cancelled, RpcErrorKind::Network),
        ];
        for (code, kind) in cases {
            assert_eq!(error_kind(code, "x"), kind, "{code:?}");
        }
        assert_eq!(
            error_kind(Code::Cancelled, "Timeout expired"),
            RpcErrorKind::Timeout
        );
        // Java 3.3.6's answer to `/org.rudder.it.GreetingService/nosuch`.
        let java =
            r#"Cannot invoke "java.util.List.iterator()" because "methodDescriptors" is null"#;
        assert_eq!(
            error_kind(Code::Unknown, java),
            RpcErrorKind::MethodNotFound
        );
        // ... and to an interface it does not export: HTTP 404, grpc-status 12.
        assert_eq!(
            error_kind(Code::Unimplemented, "Invoker for gRPC not found"),
            RpcErrorKind::MethodNotFound
        );
        assert_eq!(
            error_kind(Code::Internal, "Serialization failed"),
            RpcErrorKind::Serialization
        );
    }

    #[test]
    fn unavailable_is_retried_but_not_found_is_not_a_network_error() {
        assert!(error_kind(Code::Unavailable, "").is_retryable());
        let e = status_error(
            tonic::Status::unimplemented("Service not found"),
            "127.0.0.1:1",
            "com.acme.Greeter",
            "nosuch",
            "group g, version 1.0.0",
        );
        assert_eq!(e.kind(), RpcErrorKind::MethodNotFound);
        assert!(e
            .message()
            .contains("no such service or method at group g, version 1.0.0"));
        assert!(
            e.message().contains("com.acme.Greeter.nosuch"),
            "{}",
            e.message()
        );
    }
}
