//! Dubbo's `NetUtils.matchIpExpression`: does an address pattern from a tag rule match a provider?
//!
//! Patterns are CIDR blocks (`10.0.0.0/8`, the port ignored), `*`, or an IP pattern with an optional
//! port: `10.20.3.3`, `10.20.3.*:20880`, `10.20.3.1-5`, `[234e:0:4567::3d:*]:20880`. Segments may be `*`
//! or an inclusive range `a-b` (decimal for IPv4, hex for IPv6).
//!
//! Unlike Java, no name is ever resolved through DNS: a provider host or a pattern that is not an IP
//! literal matches only by exact string equality.
//!
//! ```
//! use rudder_cluster::router::net::match_ip_expression;
//! assert_eq!(match_ip_expression("30.5.120.17:*", "30.5.120.17", 20880), Ok(false)); // port must be 20880
//! assert_eq!(match_ip_expression("30.5.120.*:20880", "30.5.120.17", 20880), Ok(true));
//! assert_eq!(match_ip_expression("192.168.1.0/24", "192.168.1.63", 1), Ok(true));
//! assert!(match_ip_expression("10.0.*", "10.0.0.1", 1).is_err()); // Dubbo rejects it too
//! ```

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether `pattern` matches `host:port`, or why the pattern is malformed (Dubbo throws; the caller logs
/// and treats it as no match).
///
/// # Errors
/// A pattern whose shape does not fit the host's address family, or a bad range or CIDR block.
pub fn match_ip_expression(pattern: &str, host: &str, port: u16) -> Result<bool, String> {
    if pattern.contains('/') {
        return match_cidr(pattern, host);
    }
    match_ip_range(pattern.trim(), host, port)
}

fn match_cidr(pattern: &str, host: &str) -> Result<bool, String> {
    let (net, bits) = pattern
        .split_once('/')
        .ok_or_else(|| format!("bad CIDR block {pattern:?}"))?;
    let bits: u32 = bits
        .trim()
        .parse()
        .map_err(|_| format!("bad CIDR prefix length in {pattern:?}"))?;
    let net: IpAddr = net
        .trim()
        .parse()
        .map_err(|_| format!("bad CIDR network in {pattern:?}"))?;
    let Ok(addr) = host.parse::<IpAddr>() else {
        return Ok(false);
    };
    let (net, addr, width) = match (net, addr) {
        (IpAddr::V4(n), IpAddr::V4(a)) => (u32::from(n) as u128, u32::from(a) as u128, 32),
        (IpAddr::V6(n), IpAddr::V6(a)) => (u128::from(n), u128::from(a), 128),
        _ => return Ok(false),
    };
    if bits > width {
        return Err(format!(
            "CIDR prefix longer than the address in {pattern:?}"
        ));
    }
    if bits == 0 {
        return Ok(true);
    }
    let shift = width - bits;
    Ok(net >> shift == addr >> shift)
}

/// Java's `String.split` on a character: trailing empty parts are dropped.
pub(crate) fn java_split(s: &str, sep: char) -> Vec<&str> {
    let mut parts: Vec<&str> = s.split(sep).collect();
    while parts.len() > 1 && parts.last() == Some(&"") {
        parts.pop();
    }
    if parts == [""] {
        parts.clear();
    }
    parts
}

fn match_ip_range(pattern: &str, host: &str, port: u16) -> Result<bool, String> {
    if pattern == "*" || pattern == "*.*.*.*" {
        return Ok(true);
    }
    let parsed = host.parse::<IpAddr>().ok();
    let is_v4 = !matches!(parsed, Some(IpAddr::V6(_)));
    let (pattern, pattern_port) = split_port(pattern, is_v4);
    if let Some(p) = pattern_port {
        if p != port.to_string() {
            return Ok(false);
        }
    }
    let sep = if is_v4 { '.' } else { ':' };
    let mask = java_split(pattern, sep);
    let has_expression = pattern.contains('*') || pattern.contains('-');
    if is_v4 {
        if mask.len() != 4 {
            return Err(format!(
                "the host is IPv4, but the pattern is not an IPv4 pattern: {pattern}"
            ));
        }
    } else if mask.len() != 8 && (has_expression || !pattern.contains("::")) {
        return Err(format!(
            "the host is IPv6, but the pattern is not a full IPv6 pattern: {pattern}"
        ));
    }
    let Some(addr) = parsed else {
        // A host name: Dubbo would resolve it; rudder compares text only.
        return Ok(pattern == host);
    };
    let host_text = java_host_address(addr);
    if pattern == host_text {
        return Ok(true);
    }
    if !has_expression {
        return Ok(pattern.parse::<IpAddr>().is_ok_and(|p| p == addr));
    }
    let segments = java_split(&host_text, sep);
    for (i, m) in mask.iter().enumerate() {
        let segment = segments.get(i).copied().unwrap_or("");
        if *m == "*" || *m == segment {
            continue;
        }
        if m.contains('-') {
            let bounds: Vec<&str> = m.split('-').filter(|s| !s.is_empty()).collect();
            let [low, high] = bounds[..] else {
                return Err(format!("bad range {m:?} in IP pattern {pattern}"));
            };
            let number = |s: &str| {
                let radix = if is_v4 { 10 } else { 16 };
                i64::from_str_radix(s, radix)
                    .map_err(|_| format!("bad number {s:?} in IP pattern {pattern}"))
            };
            let (low, high, value) = (number(low)?, number(high)?, number(segment)?);
            if value < low || value > high {
                return Ok(false);
            }
        } else if segment == "0" && matches!(*m, "0" | "00" | "000" | "0000") {
            continue;
        } else {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Splits `ipv4:port` at the first `:` and `[v6]:port` at `]:`.
fn split_port(pattern: &str, is_v4: bool) -> (&str, Option<&str>) {
    if is_v4 {
        match pattern.find(':') {
            Some(i) if i > 0 => (&pattern[..i], Some(&pattern[i + 1..])),
            _ => (pattern, None),
        }
    } else if let (Some(rest), Some(i)) = (pattern.strip_prefix('['), pattern.find("]:")) {
        (&rest[..i - 1], Some(&pattern[i + 2..]))
    } else {
        (pattern.trim_start_matches('[').trim_end_matches(']'), None)
    }
}

/// `InetAddress.getHostAddress()`: dotted IPv4, or all eight IPv6 groups in lower-case hex, uncompressed.
fn java_host_address(addr: IpAddr) -> String {
    match addr {
        IpAddr::V4(v4) => Ipv4Addr::to_string(&v4),
        IpAddr::V6(v6) => Ipv6Addr::segments(&v6)
            .iter()
            .map(|s| format!("{s:x}"))
            .collect::<Vec<_>>()
            .join(":"),
    }
}

#[cfg(test)]
mod tests {
    use super::match_ip_expression as m;

    #[test]
    fn ipv4_patterns_follow_dubbo() {
        assert_eq!(m("*", "10.0.0.1", 1), Ok(true));
        assert_eq!(m("*.*.*.*", "10.0.0.1", 1), Ok(true));
        assert_eq!(m("10.0.0.1", "10.0.0.1", 1), Ok(true));
        assert_eq!(m("10.0.0.1:1", "10.0.0.1", 1), Ok(true));
        assert_eq!(m("10.0.0.1:2", "10.0.0.1", 1), Ok(false));
        assert_eq!(m("10.0.0.*", "10.0.0.77", 1), Ok(true));
        assert_eq!(m("10.0.1-3.*", "10.0.2.77", 1), Ok(true));
        assert_eq!(m("10.0.1-3.*", "10.0.4.77", 1), Ok(false));
        assert_eq!(
            m("10.00.0.*", "10.0.0.1", 1),
            Ok(true),
            "0 and 00 are the same segment"
        );
        assert_eq!(m("10.0.0.2", "10.0.0.1", 1), Ok(false));
        assert!(m("10.0.0", "10.0.0.1", 1).is_err());
        assert!(m("10.0.0.1-2-3", "10.0.0.1", 1).is_err());
        // The port of a wildcard pattern is compared as written: `*` is not a port.
        assert_eq!(m("30.5.120.17:*", "30.5.120.17", 20880), Ok(false));
    }

    #[test]
    fn cidr_ignores_the_port() {
        assert_eq!(m("10.0.0.0/8", "10.200.3.4", 9), Ok(true));
        assert_eq!(m("10.0.0.0/8", "11.0.0.1", 9), Ok(false));
        assert_eq!(m("0.0.0.0/0", "11.0.0.1", 9), Ok(true));
        assert_eq!(m("fe80::/16", "fe80::1", 9), Ok(true));
        assert!(m("10.0.0.0/40", "10.0.0.1", 9).is_err());
    }

    #[test]
    fn ipv6_patterns_use_full_groups() {
        assert_eq!(
            m("234e:0:4567:0:0:0:3d:*", "234e:0:4567::3d:ff", 1),
            Ok(true)
        );
        assert_eq!(
            m("[234e:0:4567:0:0:0:3d:4]:1", "234e:0:4567::3d:4", 1),
            Ok(true)
        );
        assert_eq!(m("234e:0:4567::3d:4", "234e:0:4567::3d:4", 1), Ok(true));
        assert_eq!(
            m("234e:0:4567:0:0:0:3d:1-a", "234e:0:4567::3d:b", 1),
            Ok(false)
        );
        assert!(m("234e:0:4567:3d:*", "234e:0:4567::3d:4", 1).is_err());
    }

    #[test]
    fn host_names_are_never_resolved() {
        assert_eq!(m("a.b.c.d", "a.b.c.d", 1), Ok(true));
        assert_eq!(m("10.0.0.1", "a.b.c.d", 1), Ok(false));
        assert!(
            m("dubbo.apache.org", "dubbo.apache.org", 1).is_err(),
            "not four parts"
        );
    }
}
