//! The `rudder.call` span, with OpenTelemetry's RPC field names so that tracing-opentelemetry exports
//! it as a client span (the `rudder.attempt` spans inside it are a layer: `layers::trace`).
//!
//! Field values are computed only when a subscriber wants the span (tracing's macros skip them for a
//! disabled span), so a call without tracing pays one callsite check per span.

use rudder_common::error::RpcError;
use tracing::field::Empty;
use tracing::Span;

use super::{Caller, Core};

/// The span of one call through the cluster.
///
/// The service name is borrowed from the thread's cached snapshot (no `String`, no atomic
/// read-modify-write), and only read at all when a subscriber wants the span.
#[inline]
pub(super) fn call_span<C: Caller + 'static>(core: &Core<C>, method: &str, mode: &str) -> Span {
    // No subscriber wants INFO spans (one load): skip the snapshot lookup too, not only the fields.
    if !tracing::level_enabled!(tracing::Level::INFO) {
        return Span::none();
    }
    enabled_call_span(core, method, mode)
}

/// [`call_span`] when a subscriber may want it.
fn enabled_call_span<C: Caller + 'static>(core: &Core<C>, method: &str, mode: &str) -> Span {
    core.balancer.directory().with_current(|snapshot| {
        let service = snapshot
            .providers()
            .first()
            .map_or("", |p| p.url().service_interface());
        tracing::info_span!(
            "rudder.call",
            otel.name = %format_args!("{service}/{method}"),
            otel.kind = "client",
            otel.status_code = Empty,
            rpc.system = "dubbo",
            rpc.service = service,
            rpc.method = method,
            rudder.cluster = mode,
            error.type = Empty,
        )
    })
}

/// Records how the call ended.
pub(super) fn close_call<T>(span: &Span, result: &Result<T, RpcError>) {
    if span.is_disabled() {
        return;
    }
    match result {
        Ok(_) => {
            span.record("otel.status_code", "OK");
        }
        Err(error) => {
            span.record("otel.status_code", "ERROR");
            span.record("error.type", tracing::field::display(error.kind()));
        }
    }
}
