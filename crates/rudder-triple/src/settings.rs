//! The URL parameters the tri:// client reads: the transport settings of
//! [`rudder_common::url::transport`], shared with dubbo://, so one provider URL means the same
//! whichever protocol it names.

use std::time::Duration;

use rudder_common::url::transport::{CONNECTIONS, CONNECT_TIMEOUT, HEARTBEAT, PAYLOAD};
use rudder_common::url::DubboUrl;

fn millis(v: i64) -> Duration {
    Duration::from_millis(u64::try_from(v).unwrap_or(1))
}

/// The per-call deadline, as dubbo:// reads it.
pub(crate) use rudder_common::url::transport::call_timeout;

/// The deadline the caller set on this one call (the invocation's `timeout` attachment), if usable.
pub(crate) use rudder_common::url::transport::attached_timeout;

/// The connect deadline.
pub(crate) fn connect_timeout(url: &DubboUrl) -> Duration {
    millis(CONNECT_TIMEOUT.positive_value(url))
}

/// The keepalive ping interval.
pub(crate) fn heartbeat(url: &DubboUrl) -> Duration {
    millis(HEARTBEAT.positive_value(url))
}

/// How many connections to keep to the provider's address.
pub(crate) fn connections(url: &DubboUrl) -> usize {
    usize::try_from(CONNECTIONS.positive_value(url)).unwrap_or(1)
}

/// The message size limit, both directions.
pub(crate) fn payload(url: &DubboUrl) -> usize {
    usize::try_from(PAYLOAD.positive_value(url)).unwrap_or(8 << 20)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rudder_common::invocation::Invocation;

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

    #[test]
    fn zero_or_a_bad_value_is_the_default_as_on_dubbo() {
        // Dubbo's getPositiveParameter: `timeout=0` is "not set" (1000 ms), not a 1 ms deadline, and
        // `payload=0` is 8 MiB, not a 256-byte limit that would fail every call.
        let url =
            DubboUrl::parse("tri://127.0.0.1:1/S?timeout=0&payload=0&heartbeat=-1&connections=x")
                .unwrap();
        let mut call = Invocation::new("add", vec![], vec![]);
        assert_eq!(call_timeout(&url, &call), Duration::from_millis(1000));
        assert_eq!(
            (payload(&url), heartbeat(&url), connections(&url)),
            (8 << 20, Duration::from_secs(60), 1)
        );
        call.set_attachment("timeout", "0");
        assert_eq!(
            attached_timeout(&call),
            None,
            "a zero attachment is skipped"
        );
        assert_eq!(call_timeout(&url, &call), Duration::from_millis(1000));
    }
}
