//! The transport settings every client reads from a provider URL: dubbo:// (rudder-rpc), tri://
//! (rudder-triple) and the CLI's gRPC channel. Declared once, so one URL means the same whichever
//! protocol it names.
//!
//! Each is read as Dubbo's `getPositiveParameter` does ([`IntRange::positive`]): absent, empty, zero,
//! negative or not a number gives the default; a number outside the range is clamped into it. Both
//! cases but the first are warned about once per (parameter, value).
//!
//! | parameter | default | range | why the bounds |
//! |---|---|---|---|
//! | `timeout` (also `<method>.timeout`, the `timeout` attachment), ms | 1000 | 1 ..= 3,600,000 | longer than an hour is a batch job, not an RPC |
//! | `connect.timeout`, ms | 3000 | 1 ..= 60,000 | Linux gives up on SYN retries after ~2 minutes; a minute is plenty |
//! | `heartbeat`, ms | 60,000 | 100 ..= 3,600,000 | under 100 ms heartbeats cost more than the traffic they guard |
//! | `payload`, bytes | 8 MiB | 256 ..= 64 MiB | a message is buffered whole before it is decoded: this bounds what a peer can make a connection hold |
//! | `connections` per provider address | 1 | 1 ..= 64 | more than 64 to one address is a mistake, not a need |
//!
//! ```
//! use rudder_common::url::{transport, DubboUrl};
//!
//! let url = DubboUrl::parse("tri://10.0.0.1:50051/S?timeout=0&payload=1")?;
//! assert_eq!(transport::TIMEOUT.positive_method_value(&url, "sayHello"), 1000); // 0: Dubbo's default
//! assert_eq!(transport::PAYLOAD.positive_value(&url), 256); // clamped up to the smallest sane limit
//! # Ok::<(), rudder_common::url::UrlError>(())
//! ```

use std::time::Duration;

use super::ranges::IntRange;
use super::DubboUrl;
use crate::invocation::Invocation;

/// Per-call deadline, ms.
pub const TIMEOUT: IntRange = IntRange {
    key: "timeout",
    default: 1000,
    min: 1,
    max: 3_600_000,
};

/// TCP connect deadline, ms (a call still ends at its own deadline).
pub const CONNECT_TIMEOUT: IntRange = IntRange {
    key: "connect.timeout",
    default: 3000,
    min: 1,
    max: 60_000,
};

/// Idle time before a heartbeat (dubbo://) or between keepalive pings (tri://), ms.
pub const HEARTBEAT: IntRange = IntRange {
    key: "heartbeat",
    default: 60_000,
    min: 100,
    max: 3_600_000,
};

/// Largest message sent or accepted, bytes: Dubbo's 8 MiB by default, at most 64 MiB.
pub const PAYLOAD: IntRange = IntRange {
    key: "payload",
    default: 8 << 20,
    min: 256,
    max: 64 << 20,
};

/// Connections per provider address.
pub const CONNECTIONS: IntRange = IntRange {
    key: "connections",
    default: 1,
    min: 1,
    max: 64,
};

/// A call's deadline: the invocation's `timeout` attachment ([`attached_timeout`]), else
/// `<method>.timeout`, else `timeout`, else 1000 ms (`RpcUtils.getTimeout`), each read as
/// [`IntRange::positive`] does.
///
/// ```
/// use std::time::Duration;
/// use rudder_common::{invocation::Invocation, url::{transport, DubboUrl}};
///
/// let url = DubboUrl::parse("tri://10.0.0.1:50051/S?timeout=3000&add.timeout=0")?;
/// let mut call = Invocation::new("sub", vec![], vec![]);
/// assert_eq!(transport::call_timeout(&url, &call), Duration::from_millis(3000));
/// call.set_attachment("timeout", "-1"); // skipped (warned), the URL decides
/// assert_eq!(transport::call_timeout(&url, &call), Duration::from_millis(3000));
/// let add = Invocation::new("add", vec![], vec![]);
/// assert_eq!(transport::call_timeout(&url, &add), Duration::from_millis(1000)); // 0: the default
/// # Ok::<(), rudder_common::url::UrlError>(())
/// ```
pub fn call_timeout(url: &DubboUrl, invocation: &Invocation) -> Duration {
    attached_timeout(invocation)
        .unwrap_or_else(|| millis(TIMEOUT.positive_method_value(url, invocation.method_name())))
}

/// The deadline the caller set on this one call, the invocation's `timeout` attachment, if it is a
/// positive number of milliseconds (clamped into [`TIMEOUT`]'s range); any other value is warned about
/// once and skipped, so the URL decides.
pub fn attached_timeout(invocation: &Invocation) -> Option<Duration> {
    let attachment = invocation.attachment("timeout")?;
    let usable = attachment.trim().parse::<i64>().is_ok_and(|v| v > 0);
    // One reading either way: it clamps a usable value, and warns about an unusable one.
    let ms = TIMEOUT.positive(Some(attachment), "timeout (attachment)");
    usable.then(|| millis(ms))
}

/// Milliseconds of a value read within one of these ranges (all positive).
fn millis(ms: i64) -> Duration {
    Duration::from_millis(u64::try_from(ms).unwrap_or(1))
}
