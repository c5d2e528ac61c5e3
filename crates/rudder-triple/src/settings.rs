//! The URL parameters the tri:// client reads. Defaults and ranges are dubbo://'s (rudder-rpc's
//! crate docs), so one provider URL means the same whichever protocol it names.

use std::time::Duration;

use rudder_common::invocation::Invocation;
use rudder_common::url::ranges::IntRange;
use rudder_common::url::DubboUrl;

/// Per-call deadline, ms.
const TIMEOUT: IntRange = IntRange {
    key: "timeout",
    default: 1000,
    min: 1,
    max: 3_600_000,
};
/// TCP connect deadline, ms (a call still ends at its own deadline).
const CONNECT_TIMEOUT: IntRange = IntRange {
    key: "connect.timeout",
    default: 3000,
    min: 1,
    max: 60_000,
};
/// Interval of HTTP/2 keepalive pings, ms: the heartbeat.
const HEARTBEAT: IntRange = IntRange {
    key: "heartbeat",
    default: 60_000,
    min: 100,
    max: 3_600_000,
};
/// Largest message sent or accepted, bytes (8 MiB, as dubbo://; at most 64 MiB).
const PAYLOAD: IntRange = IntRange {
    key: "payload",
    default: 8 << 20,
    min: 256,
    max: 64 << 20,
};

/// HTTP/2 connections per provider address (each multiplexes any number of calls).
const CONNECTIONS: IntRange = IntRange {
    key: "connections",
    default: 1,
    min: 1,
    max: 64,
};

fn millis(v: i64) -> Duration {
    Duration::from_millis(u64::try_from(v).unwrap_or(1))
}

/// The per-call deadline: the invocation's `timeout` attachment, else `<method>.timeout`, else
/// `timeout`, else 1000 ms.
pub(crate) fn call_timeout(url: &DubboUrl, invocation: &Invocation) -> Duration {
    let attached = TIMEOUT.read(invocation.attachment("timeout"), "timeout (attachment)");
    millis(attached.unwrap_or_else(|| TIMEOUT.method_value(url, invocation.method_name())))
}

/// The deadline the caller set on this one call (the invocation's `timeout` attachment), if any.
pub(crate) fn attached_timeout(invocation: &Invocation) -> Option<Duration> {
    TIMEOUT
        .read(invocation.attachment("timeout"), "timeout (attachment)")
        .map(millis)
}

/// The connect deadline.
pub(crate) fn connect_timeout(url: &DubboUrl) -> Duration {
    millis(CONNECT_TIMEOUT.value(url))
}

/// The keepalive ping interval.
pub(crate) fn heartbeat(url: &DubboUrl) -> Duration {
    millis(HEARTBEAT.value(url))
}

/// How many connections to keep to the provider's address.
pub(crate) fn connections(url: &DubboUrl) -> usize {
    usize::try_from(CONNECTIONS.value(url)).unwrap_or(1)
}

/// The message size limit, both directions.
pub(crate) fn payload(url: &DubboUrl) -> usize {
    usize::try_from(PAYLOAD.value(url)).unwrap_or(8 << 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_attachment_wins_then_the_method_then_the_service() {
        let url =
            DubboUrl::parse("tri://127.0.0.1:1/S?timeout=2000&add.timeout=300&payload=1").unwrap();
        let mut call = Invocation::new("add", vec![], vec![]);
        assert_eq!(call_timeout(&url, &call), Duration::from_millis(300));
        call.set_attachment("timeout", "50");
        assert_eq!(call_timeout(&url, &call), Duration::from_millis(50));
        let other = Invocation::new("sub", vec![], vec![]);
        assert_eq!(call_timeout(&url, &other), Duration::from_millis(2000));
        assert_eq!(payload(&url), 256, "clamped to the smallest sane limit");
    }
}
