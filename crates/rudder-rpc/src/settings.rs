//! The URL parameters the dubbo:// client reads, with Dubbo's defaults and rudder's valid ranges
//! (the table is in the crate docs).
//!
//! An absent parameter takes its default silently. A value that is not a positive whole number
//! takes the default, as Java's `getPositiveParameter` does; a number outside the range is clamped
//! to it. Either way one warning is logged per (parameter, value) pair, not one per call: the
//! settings are read on every call, and a provider URL with a bad value would otherwise flood the
//! log. `actives` ≤ 0 means "no limit", as in Dubbo, and is not warned about.

use std::time::Duration;

use rudder_common::url::ranges::IntRange;
use rudder_common::url::transport::{CONNECTIONS, CONNECT_TIMEOUT, HEARTBEAT, PAYLOAD};
use rudder_common::url::DubboUrl;

use crate::codec::{ServiceTarget, DEFAULT_PAYLOAD_LIMIT, NO_VERSION};
use crate::connection::ConnectionConfig;

/// Connection settings from a provider URL.
pub(crate) fn connection_config(url: &DubboUrl) -> ConnectionConfig {
    let ms = |range: IntRange| {
        // The range is positive, so the conversion cannot fail.
        Duration::from_millis(u64::try_from(range.positive_value(url)).unwrap_or(1))
    };
    ConnectionConfig {
        // At most 64 MiB, so the conversion cannot fail.
        payload_limit: usize::try_from(PAYLOAD.positive_value(url))
            .unwrap_or(DEFAULT_PAYLOAD_LIMIT),
        heartbeat: ms(HEARTBEAT),
        connect_timeout: ms(CONNECT_TIMEOUT),
        provider_tls: crate::tls::provider_announces_tls(url),
    }
}

/// The per-call deadline: the invocation's `timeout` attachment, else `<method>.timeout`, else
/// `timeout`, else 1000 ms (`RpcUtils.getTimeout`). A bad attachment falls through to the URL.
pub(crate) use rudder_common::url::transport::call_timeout;

/// How many connections to keep to the provider's address.
pub(crate) fn connections(url: &DubboUrl) -> usize {
    // At most 64.
    usize::try_from(CONNECTIONS.positive_value(url)).unwrap_or(1)
}

/// The `actives` limit of a method (0 = none): the cluster's reading, `rudder_common::status::max_active`.
pub(crate) fn max_active(url: &DubboUrl, method: &str) -> i32 {
    rudder_common::status::max_active(url, method)
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
    use rudder_common::invocation::Invocation;
    use rudder_common::url::ranges::warn_once;
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
        call.set_attachment("timeout", "0");
        assert_eq!(
            call_timeout(&u, &call),
            Duration::from_millis(500),
            "a bad attachment falls through"
        );
    }

    #[test]
    fn connection_settings_and_defaults() {
        let c = connection_config(&url("dubbo://h:1/s?payload=1024&heartbeat=150"));
        assert_eq!(c.payload_limit, 1024);
        assert_eq!(c.heartbeat, Duration::from_millis(150));
        let d = connection_config(&url("dubbo://h:1/s?payload=x"));
        assert_eq!(d.payload_limit, 8 << 20);
        assert_eq!(d.heartbeat, Duration::from_secs(60));
        assert_eq!(d.connect_timeout, Duration::from_secs(3));
        assert_eq!(connections(&url("dubbo://h:1/s?connections=3")), 3);
        assert_eq!(connections(&url("dubbo://h:1/s?connections=0")), 1);
    }

    #[test]
    fn values_outside_the_ranges_are_clamped() {
        let c = connection_config(&url(
            "dubbo://h:1/s?payload=999999999999&heartbeat=5&connect.timeout=600000",
        ));
        assert_eq!(c.payload_limit, 64 << 20);
        assert_eq!(c.heartbeat, Duration::from_millis(100));
        assert_eq!(c.connect_timeout, Duration::from_secs(60));
        assert_eq!(
            connection_config(&url("dubbo://h:1/s?payload=10")).payload_limit,
            256
        );
        assert_eq!(connections(&url("dubbo://h:1/s?connections=1000")), 64);
        let u = url("dubbo://h:1/s?timeout=99999999999&m.actives=99999999999&n.actives=-1");
        assert_eq!(
            call_timeout(&u, &Invocation::new("m", vec![], vec![])),
            Duration::from_secs(3600)
        );
        assert_eq!(max_active(&u, "m"), i32::MAX);
        assert_eq!(
            max_active(&u, "n"),
            0,
            "negative actives is no limit, as in Dubbo"
        );
        assert_eq!(max_active(&u, "other"), 0);
    }

    #[test]
    fn a_bad_value_is_warned_about_once() {
        // Through the parameter readers: the same bad URL read on every call warns once.
        let u = url("dubbo://h:1/s?heartbeat=soon");
        for _ in 0..3 {
            assert_eq!(connection_config(&u).heartbeat, Duration::from_secs(60));
        }
        assert!(!warn_once(
            "heartbeat",
            "soon",
            format_args!("already warned")
        ));
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
