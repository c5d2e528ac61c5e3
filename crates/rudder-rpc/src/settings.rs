//! The URL parameters the dubbo:// client reads, with Dubbo's defaults (the table is in the crate
//! docs). A value that is not a positive number falls back to the default, as Java's
//! `getPositiveParameter` does.

use std::time::Duration;

use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;

use crate::codec::{ServiceTarget, DEFAULT_PAYLOAD_LIMIT, NO_VERSION};
use crate::connection::ConnectionConfig;

const DEFAULT_TIMEOUT_MS: u64 = 1000;
const DEFAULT_HEARTBEAT_MS: u64 = 60_000;
const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 3000;
/// More connections than this to one address is a configuration mistake, not a need.
const MAX_CONNECTIONS: usize = 64;

fn positive(value: Option<&str>) -> Option<u64> {
    value
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&v| v > 0)
}

/// Connection settings from a provider URL.
pub(crate) fn connection_config(url: &DubboUrl) -> ConnectionConfig {
    let payload = positive(url.parameter("payload"))
        .and_then(|p| usize::try_from(p).ok())
        .unwrap_or(DEFAULT_PAYLOAD_LIMIT);
    ConnectionConfig {
        payload_limit: payload,
        heartbeat: Duration::from_millis(
            positive(url.parameter("heartbeat")).unwrap_or(DEFAULT_HEARTBEAT_MS),
        ),
        connect_timeout: Duration::from_millis(
            positive(url.parameter("connect.timeout")).unwrap_or(DEFAULT_CONNECT_TIMEOUT_MS),
        ),
    }
}

/// The per-call deadline: the invocation's `timeout` attachment, else `<method>.timeout`, else
/// `timeout`, else 1000 ms (`RpcUtils.getTimeout`).
pub(crate) fn call_timeout(url: &DubboUrl, invocation: &Invocation) -> Duration {
    let ms = positive(invocation.attachment("timeout"))
        .or_else(|| positive(url.method_parameter(invocation.method_name(), "timeout")))
        .unwrap_or(DEFAULT_TIMEOUT_MS);
    Duration::from_millis(ms)
}

/// How many connections to keep to the provider's address.
pub(crate) fn connections(url: &DubboUrl) -> usize {
    positive(url.parameter("connections"))
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(1)
        .min(MAX_CONNECTIONS)
}

/// The `actives` limit of a method (0 = none).
pub(crate) fn max_active(url: &DubboUrl, method: &str) -> i32 {
    positive(url.method_parameter(method, "actives"))
        .and_then(|n| i32::try_from(n).ok())
        .unwrap_or(0)
}

/// Which exported service the provider should dispatch to.
pub(crate) fn target(url: &DubboUrl) -> ServiceTarget<'_> {
    let interface = url.service_interface();
    ServiceTarget {
        path: if url.path().is_empty() {
            interface
        } else {
            url.path()
        },
        interface,
        version: url
            .parameter("version")
            .filter(|v| !v.is_empty())
            .unwrap_or(NO_VERSION),
        group: url.parameter("group").filter(|g| !g.is_empty()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rudder_common::value::Value;

    fn url(s: &str) -> DubboUrl {
        DubboUrl::parse(s).unwrap()
    }

    #[test]
    fn timeout_precedence() {
        let u = url("dubbo://127.0.0.1:20880/com.acme.Greeter?timeout=3000&sayHello.timeout=500");
        let mut call = Invocation::new("sayHello", vec![], vec![Value::Null]);
        assert_eq!(call_timeout(&u, &call), Duration::from_millis(500));
        call.set_attachment("timeout", "42");
        assert_eq!(call_timeout(&u, &call), Duration::from_millis(42));
        let other = Invocation::new("other", vec![], vec![]);
        assert_eq!(call_timeout(&u, &other), Duration::from_millis(3000));
        let bare = url("dubbo://127.0.0.1:20880/com.acme.Greeter?timeout=-5");
        assert_eq!(call_timeout(&bare, &other), Duration::from_millis(1000));
    }

    #[test]
    fn connection_settings_and_defaults() {
        let c = connection_config(&url("dubbo://h:1/s?payload=1024&heartbeat=50"));
        assert_eq!(c.payload_limit, 1024);
        assert_eq!(c.heartbeat, Duration::from_millis(50));
        let d = connection_config(&url("dubbo://h:1/s?payload=x"));
        assert_eq!(d.payload_limit, 8 << 20);
        assert_eq!(d.heartbeat, Duration::from_secs(60));
        assert_eq!(d.connect_timeout, Duration::from_secs(3));
        assert_eq!(connections(&url("dubbo://h:1/s?connections=3")), 3);
        assert_eq!(connections(&url("dubbo://h:1/s?connections=0")), 1);
    }

    #[test]
    fn target_falls_back_to_the_interface_and_no_version() {
        let sofa = url("dubbo://127.0.0.1:20992?interface=com.acme.Greeter&group=");
        let t = target(&sofa);
        assert_eq!(
            (t.path, t.interface, t.version, t.group),
            ("com.acme.Greeter", "com.acme.Greeter", "0.0.0", None)
        );
        let full = url("dubbo://h:1/p?interface=i&version=1.0&group=g");
        let t = target(&full);
        assert_eq!(
            (t.path, t.interface, t.version, t.group),
            ("p", "i", "1.0", Some("g"))
        );
    }
}
