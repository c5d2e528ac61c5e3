//! Dubbo's `NetUtils.matchIpExpression(pattern, address)`: CIDR blocks and IP patterns
//! (`10.0.0.*`, `10.0.0.1-99`, `10.0.0.1:20880`), as v3.0 `match.address.cird` uses them.
//!
//! Host names are not resolved (rudder does no DNS lookups for rules): a pattern or address that is
//! not an IP literal is treated as Java treats a name it cannot resolve.

use std::net::IpAddr;

/// The outcome of one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IpMatch {
    /// The address is in the pattern.
    Yes,
    /// It is not, or the pattern is malformed for this kind of address (Java throws; nothing matches).
    No,
    /// Java would throw `UnknownHostException` (an address such as `host:port`, or a name); the caller
    /// goes on with its other conditions.
    Unresolvable,
}

/// `matchIpExpression(pattern, address)`.
pub(crate) fn match_ip_expression(pattern: &str, address: &str) -> IpMatch {
    let (host, port) = match address.strip_suffix(':') {
        // Dubbo splits off a port only when the address *ends* with ':' (spec-2 §6 #21).
        Some(stripped) => (stripped.split(':').next().unwrap_or(""), 0u32),
        None => (address, 0u32),
    };
    if pattern.contains('/') {
        return match (cidr_contains(pattern, host), host.parse::<IpAddr>()) {
            (_, Err(_)) => IpMatch::Unresolvable,
            (Some(true), _) => IpMatch::Yes,
            (Some(false), _) => IpMatch::No,
            (None, _) => IpMatch::Unresolvable,
        };
    }
    match_ip_range(pattern, host, port)
}

fn cidr_contains(cidr: &str, host: &str) -> Option<bool> {
    let (net, bits) = cidr.trim().split_once('/')?;
    let bits: u32 = bits.parse().ok()?;
    let net: IpAddr = net.parse().ok()?;
    let host: IpAddr = host.parse().ok()?;
    match (net, host) {
        (IpAddr::V4(n), IpAddr::V4(h)) if bits <= 32 => {
            let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
            Some(u32::from(n) & mask == u32::from(h) & mask)
        }
        (IpAddr::V6(n), IpAddr::V6(h)) if bits <= 128 => {
            let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
            Some(u128::from(n) & mask == u128::from(h) & mask)
        }
        _ => Some(false),
    }
}

/// `NetUtils.matchIpRange(pattern, host, port)`.
fn match_ip_range(pattern: &str, host: &str, port: u32) -> IpMatch {
    let pattern = pattern.trim();
    if pattern == "*.*.*.*" || pattern == "*" {
        return IpMatch::Yes;
    }
    let Ok(ip) = host.parse::<IpAddr>() else {
        return IpMatch::Unresolvable;
    };
    let is_v4 = ip.is_ipv4();
    let (pattern, pattern_port) = pattern_host_and_port(pattern, is_v4);
    if pattern_port.is_some_and(|p| p != port.to_string()) {
        return IpMatch::No;
    }
    let split = if is_v4 { '.' } else { ':' };
    let mask: Vec<&str> = pattern.split(split).collect();
    let has_expression = pattern.contains(['*', '-']);
    let well_formed = if is_v4 {
        mask.len() == 4
    } else {
        mask.len() == 8 || (!has_expression && pattern.contains("::"))
    };
    if !well_formed {
        return IpMatch::No;
    }
    let host = java_host_address(ip);
    if pattern == host {
        return IpMatch::Yes;
    }
    if !has_expression {
        return match pattern.parse::<IpAddr>() {
            Ok(p) if java_host_address(p) == host => IpMatch::Yes,
            Ok(_) => IpMatch::No,
            Err(_) => IpMatch::Unresolvable,
        };
    }
    let parts: Vec<&str> = host.split(split).collect();
    for (mask, part) in mask.iter().zip(&parts) {
        if *mask == "*" || mask == part {
            continue;
        }
        if mask.contains('-') {
            let bounds: Vec<&str> = mask.split('-').filter(|s| !s.is_empty()).collect();
            let radix = if is_v4 { 10 } else { 16 };
            let number = |s: &str| i64::from_str_radix(s, radix).ok();
            let (Some(min), Some(max), Some(value)) = (
                bounds.first().and_then(|s| number(s)),
                bounds.get(1).and_then(|s| number(s)),
                number(part),
            ) else {
                return IpMatch::No;
            };
            if bounds.len() != 2 || value < min || value > max {
                return IpMatch::No;
            }
        } else if *part == "0" && matches!(*mask, "0" | "00" | "000" | "0000") {
            continue;
        } else {
            return IpMatch::No;
        }
    }
    IpMatch::Yes
}

fn pattern_host_and_port(pattern: &str, is_v4: bool) -> (&str, Option<&str>) {
    if let Some(rest) = pattern.strip_prefix('[') {
        if let Some(end) = rest.find("]:") {
            return (&rest[..end], Some(&rest[end + 2..]));
        }
        if let Some(inner) = rest.strip_suffix(']') {
            return (inner, None);
        }
    }
    if is_v4 {
        if let Some((host, port)) = pattern.split_once(':') {
            return (host, Some(port));
        }
    }
    (pattern, None)
}

/// Java's `InetAddress.getHostAddress`: dotted IPv4, or eight lowercase hex groups without leading
/// zeros and without `::` compression for IPv6.
fn java_host_address(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => v6
            .segments()
            .iter()
            .map(|s| format!("{s:x}"))
            .collect::<Vec<_>>()
            .join(":"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidr_and_patterns() {
        assert_eq!(match_ip_expression("10.0.0.0/8", "10.1.2.3"), IpMatch::Yes);
        assert_eq!(match_ip_expression("10.0.0.0/8", "11.1.2.3"), IpMatch::No);
        assert_eq!(match_ip_expression("10.0.0.*", "10.0.0.3"), IpMatch::Yes);
        assert_eq!(match_ip_expression("10.0.0.1-5", "10.0.0.3"), IpMatch::Yes);
        assert_eq!(match_ip_expression("10.0.0.1-5", "10.0.0.6"), IpMatch::No);
        assert_eq!(match_ip_expression("10.0.00.*", "10.0.0.1"), IpMatch::Yes);
        assert_eq!(match_ip_expression("*", "anything"), IpMatch::Yes);
        assert_eq!(
            match_ip_expression("fe80:0:0:0:0:0:0:1-f", "fe80::3"),
            IpMatch::Yes
        );
        assert_eq!(match_ip_expression("fe80::1", "fe80:0::1"), IpMatch::Yes);
    }

    #[test]
    fn a_pattern_with_a_port_never_matches_a_bare_address() {
        // The two-argument form tests port 0, so `ip:port` patterns fail on a bare IP...
        assert_eq!(
            match_ip_expression("10.0.0.1:20880", "10.0.0.1"),
            IpMatch::No
        );
        // ...and a `host:port` address cannot be resolved (Dubbo's quirk, spec-2 §6 #21).
        assert_eq!(
            match_ip_expression("10.0.0.*", "10.0.0.1:20880"),
            IpMatch::Unresolvable
        );
    }

    #[test]
    fn malformed_patterns_match_nothing() {
        assert_eq!(match_ip_expression("10.0.*", "10.0.0.1"), IpMatch::No);
        assert_eq!(match_ip_expression("10.0.0.x-y", "10.0.0.1"), IpMatch::No);
    }
}
