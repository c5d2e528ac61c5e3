//! Dubbo's `NetUtils.matchIpExpression` and `matchIpRange`: does an address pattern of a rule match a
//! host?
//!
//! Patterns are CIDR blocks (`10.0.0.0/8`, the port ignored), `*` or `*.*.*.*`, or an IP pattern with
//! an optional port: `10.20.3.3`, `10.20.3.*:20880`, `10.20.3.1-5`, `[234e:0:4567:0:0:0:3d:*]:20880`.
//! Segments may be `*` or an inclusive range `a-b` (decimal for IPv4, hex for IPv6); an IPv6 pattern
//! with `*` or `-` must spell all eight groups.
//!
//! Two differences from Java, both deliberate:
//!
//! * no name is ever resolved through DNS: where Java would resolve a host or pattern that is not an
//!   IP literal (and throw `UnknownHostException` when it cannot), rudder answers
//!   [`IpPatternError::Unresolvable`] and the caller does what Java's caller does with that exception;
//! * the host's address family decides whether the pattern is read as IPv4 or IPv6. Java reads every
//!   loopback host (`127.0.0.1`) as IPv6 (`isValidV4Address` is false for loopback), so no IPv4
//!   pattern ever matches a provider on loopback there; here it does.
//!
//! ```
//! use rudder_common::net::{match_ip_expression, IpPatternError};
//! assert_eq!(match_ip_expression("30.5.120.*:20880", "30.5.120.17", 20880), Ok(true));
//! assert_eq!(match_ip_expression("30.5.120.17:*", "30.5.120.17", 20880), Ok(false)); // port is 20880
//! assert_eq!(match_ip_expression("192.168.1.192/26", "192.168.1.199", 1), Ok(true));
//! assert!(matches!(match_ip_expression("10.0.*", "10.0.0.1", 1), Err(IpPatternError::Malformed(_))));
//! assert!(matches!(match_ip_expression("10.0.0.1", "db.local", 1), Err(IpPatternError::Unresolvable(_))));
//! ```

use std::fmt;
use std::net::IpAddr;

/// Why a pattern could not be tested against a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IpPatternError {
    /// The pattern does not fit the host's address family, or has a bad range, number or CIDR
    /// prefix: where Java throws `IllegalArgumentException` (or `NumberFormatException`).
    Malformed(String),
    /// The host, or a pattern without `*` or `-`, is not an IP literal: Java would ask DNS (and throw
    /// `UnknownHostException` when that fails); rudder never resolves names.
    Unresolvable(String),
}

impl fmt::Display for IpPatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IpPatternError::Malformed(why) => write!(f, "malformed IP pattern: {why}"),
            IpPatternError::Unresolvable(name) => {
                write!(f, "{name:?} is not an IP address (names are not resolved)")
            }
        }
    }
}

impl std::error::Error for IpPatternError {}

/// `NetUtils.matchIpExpression(pattern, host, port)`: a CIDR block when the pattern holds `/` (the port
/// is not compared), else [`match_ip_range`].
///
/// # Errors
/// [`IpPatternError`], where Java throws.
pub fn match_ip_expression(pattern: &str, host: &str, port: u16) -> Result<bool, IpPatternError> {
    if pattern.contains('/') {
        return match_cidr(pattern, host);
    }
    match_ip_range(pattern, host, port)
}

/// `NetUtils.matchIpExpression(pattern, address)`, the two-argument form rule conditions use: Java
/// splits a port off only when `address` *ends* with `:` (`10.0.0.1:20880:`); a plain `ip:port` is
/// taken whole as the host, which cannot be resolved.
///
/// ```
/// use rudder_common::net::{match_ip_address, IpPatternError};
/// assert_eq!(match_ip_address("10.0.0.0/8", "10.1.2.3"), Ok(true));
/// assert_eq!(match_ip_address("10.0.0.1:20880", "10.0.0.1"), Ok(false)); // port 0 is compared
/// assert!(matches!(match_ip_address("10.0.0.*", "10.0.0.1:20880"), Err(IpPatternError::Unresolvable(_))));
/// ```
///
/// # Errors
/// [`IpPatternError`], where Java throws.
pub fn match_ip_address(pattern: &str, address: &str) -> Result<bool, IpPatternError> {
    let (host, port) = if address.ends_with(':') {
        let mut parts = address.split(':');
        let host = parts.next().unwrap_or("");
        // `StringUtils.parseInteger`: anything but digits is 0 (Java indexes past the end when there is
        // no second part; rudder takes port 0).
        let port = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        (host, port)
    } else {
        (address, 0)
    };
    match_ip_expression(pattern, host, port)
}

/// `CIDRUtils(pattern).isInRange(host)`.
fn match_cidr(pattern: &str, host: &str) -> Result<bool, IpPatternError> {
    let (network, prefix) = pattern
        .split_once('/')
        .ok_or_else(|| IpPatternError::Malformed(format!("bad CIDR block {pattern:?}")))?;
    let network: IpAddr = network
        .parse()
        .map_err(|_| IpPatternError::Unresolvable(network.to_owned()))?;
    let prefix: u32 = prefix
        .parse()
        .map_err(|_| IpPatternError::Malformed(format!("bad CIDR prefix length in {pattern:?}")))?;
    let host: IpAddr = host
        .parse()
        .map_err(|_| IpPatternError::Unresolvable(host.to_owned()))?;
    let (network, host, width) = match (network, host) {
        (IpAddr::V4(n), IpAddr::V4(h)) => (u128::from(u32::from(n)), u128::from(u32::from(h)), 32),
        (IpAddr::V6(n), IpAddr::V6(h)) => (u128::from(n), u128::from(h), 128),
        _ => return Ok(false),
    };
    if prefix > width {
        // Java quietly reads `/40` on IPv4 as `/32`; a prefix longer than the address is a typo.
        return Err(IpPatternError::Malformed(format!(
            "CIDR prefix longer than the address in {pattern:?}"
        )));
    }
    if prefix == 0 {
        return Ok(true);
    }
    let shift = width - prefix;
    Ok(network >> shift == host >> shift)
}

/// `NetUtils.matchIpRange(pattern, host, port)`.
///
/// # Errors
/// [`IpPatternError`], where Java throws.
pub fn match_ip_range(pattern: &str, host: &str, port: u16) -> Result<bool, IpPatternError> {
    let pattern = pattern.trim();
    if pattern == "*.*.*.*" || pattern == "*" {
        return Ok(true);
    }
    let address: IpAddr = host
        .parse()
        .map_err(|_| IpPatternError::Unresolvable(host.to_owned()))?;
    let is_v4 = address.is_ipv4();
    let (pattern, pattern_port) = pattern_host_and_port(pattern, is_v4);
    if pattern_port.is_some_and(|p| p != port.to_string()) {
        return Ok(false);
    }
    let separator = if is_v4 { '.' } else { ':' };
    let mask = java_split(pattern, separator);
    let has_expression = pattern.contains(['*', '-']);
    if is_v4 {
        if mask.len() != 4 {
            return Err(IpPatternError::Malformed(format!(
                "the host is IPv4, but the pattern is not an IPv4 pattern: {pattern}"
            )));
        }
    } else if mask.len() != 8 && has_expression {
        return Err(IpPatternError::Malformed(format!(
            "an IPv6 pattern with '*' or '-' must spell all eight groups: {pattern}"
        )));
    } else if mask.len() != 8 && !pattern.contains("::") {
        return Err(IpPatternError::Malformed(format!(
            "the host is IPv6, but the pattern is not an IPv6 pattern: {pattern}"
        )));
    }
    let host = java_host_address(address);
    if pattern == host {
        return Ok(true);
    }
    if !has_expression {
        let literal: IpAddr = pattern
            .parse()
            .map_err(|_| IpPatternError::Unresolvable(pattern.to_owned()))?;
        return Ok(java_host_address(literal) == host);
    }
    let segments = java_split(&host, separator);
    let radix = if is_v4 { 10 } else { 16 };
    let number = |s: &str| {
        i64::from_str_radix(s, radix).map_err(|_| {
            IpPatternError::Malformed(format!("bad number {s:?} in IP pattern {pattern}"))
        })
    };
    for (m, segment) in mask.iter().zip(&segments) {
        if *m == "*" || m == segment {
            continue;
        }
        if m.contains('-') {
            // Dubbo's `StringUtils.split(s, '-')` drops empty parts.
            let bounds: Vec<&str> = m.split('-').filter(|s| !s.is_empty()).collect();
            let [low, high] = bounds[..] else {
                return Err(IpPatternError::Malformed(format!(
                    "bad range {m:?} in IP pattern {pattern}"
                )));
            };
            let (low, high, value) = (number(low)?, number(high)?, number(segment)?);
            if value < low || value > high {
                return Ok(false);
            }
        } else if *segment == "0" && matches!(*m, "0" | "00" | "000" | "0000") {
            continue;
        } else {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `getPatternHostAndPort`: `[v6]:port`, `[v6]`, `ipv4:port` (at the first `:`), else the pattern.
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

/// Java's `String.split` on one character: trailing empty parts are dropped, except that a string
/// without the separator (`""` too) is its own single part.
///
/// ```
/// use rudder_common::net::java_split;
/// assert_eq!(java_split("10.0.0.", '.'), ["10", "0", "0"]);
/// assert_eq!(java_split(".a", '.'), ["", "a"]);
/// assert_eq!(java_split("", '.'), [""]);
/// assert!(java_split("..", '.').is_empty());
/// ```
pub fn java_split(s: &str, separator: char) -> Vec<&str> {
    if !s.contains(separator) {
        return vec![s];
    }
    let mut parts: Vec<&str> = s.split(separator).collect();
    while parts.last() == Some(&"") {
        parts.pop();
    }
    parts
}

/// Java's `InetAddress.getHostAddress()`: dotted IPv4, or all eight IPv6 groups in lower-case hex
/// without leading zeros and without `::` compression.
///
/// ```
/// use rudder_common::net::java_host_address;
/// assert_eq!(java_host_address("234e:0:4567::3d:ee".parse().unwrap()), "234e:0:4567:0:0:0:3d:ee");
/// assert_eq!(java_host_address("10.0.0.1".parse().unwrap()), "10.0.0.1");
/// ```
pub fn java_host_address(address: IpAddr) -> String {
    match address {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            let groups: Vec<String> = v6.segments().iter().map(|g| format!("{g:x}")).collect();
            groups.join(":")
        }
    }
}

#[cfg(test)]
mod tests;
