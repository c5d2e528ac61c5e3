//! Dubbo 3.3's `NetUtilsTest` and `CIDRUtilsTest` vectors (method names in the test names), then the
//! cases rudder's two former copies tested.

use super::*;

fn yes(pattern: &str, host: &str, port: u16) {
    assert_eq!(
        match_ip_expression(pattern, host, port),
        Ok(true),
        "{pattern} ~ {host}:{port}"
    );
}

fn no(pattern: &str, host: &str, port: u16) {
    assert_eq!(
        match_ip_expression(pattern, host, port),
        Ok(false),
        "{pattern} !~ {host}:{port}"
    );
}

fn malformed(pattern: &str, host: &str, port: u16) -> String {
    match match_ip_expression(pattern, host, port) {
        Err(IpPatternError::Malformed(why)) => why,
        other => panic!("{pattern} ~ {host}: {other:?}, want Malformed"),
    }
}

fn unresolvable(pattern: &str, host: &str, port: u16) {
    assert!(
        matches!(
            match_ip_expression(pattern, host, port),
            Err(IpPatternError::Unresolvable(_))
        ),
        "{pattern} ~ {host}"
    );
}

#[test]
fn net_utils_test_match_ip_range_match_when_ipv4() {
    yes("*.*.*.*", "192.168.1.63", 90);
    yes("192.168.1.*", "192.168.1.63", 90);
    yes("192.168.1.63", "192.168.1.63", 90);
    yes("192.168.1.1-65", "192.168.1.63", 90);
    no("192.168.1.1-61", "192.168.1.63", 90);
    no("192.168.1.62", "192.168.1.63", 90);
}

#[test]
fn net_utils_test_match_ip_range_match_when_ipv6() {
    yes("*.*.*.*", "192.168.1.63", 90);
    yes("234e:0:4567:0:0:0:3d:*", "234e:0:4567::3d:ff", 90);
    yes("234e:0:4567:0:0:0:3d:ee", "234e:0:4567::3d:ee", 90);
    yes("234e:0:4567::3d:ee", "234e:0:4567::3d:ee", 90);
    yes("234e:0:4567:0:0:0:3d:0-ff", "234e:0:4567::3d:ee", 90);
    yes("234e:0:4567:0:0:0:3d:0-ee", "234e:0:4567::3d:ee", 90);
    no("234e:0:4567:0:0:0:3d:ff", "234e:0:4567::3d:ee", 90);
    no("234e:0:4567:0:0:0:3d:0-ea", "234e:0:4567::3d:ee", 90);
}

#[test]
fn net_utils_test_match_ip_range_match_when_ipv6_exception() {
    assert!(malformed("234e:0:4567::3d:*", "234e:0:4567::3d:ff", 90).contains("all eight groups"));
    assert!(malformed("234e:0:4567:3d", "234e:0:4567::3d:ff", 90).contains("not an IPv6 pattern"));
    assert!(malformed("192.168.1.1-65-3", "192.168.1.63", 90).contains("bad range"));
}

#[test]
fn net_utils_test_match_ip_range_match_when_ip_wrong_exception() {
    unresolvable("192.168.1.63", "192.168.1.ff", 90);
}

#[test]
fn net_utils_test_match_ip_match() {
    yes("192.168.1.*", "192.168.1.63", 90);
    yes("192.168.1.192/26", "192.168.1.199", 90);
}

#[test]
fn net_utils_test_match_ipv6_with_ip_port() {
    yes("[234e:0:4567::3d:ee]", "234e:0:4567::3d:ee", 8090);
    yes("[234e:0:4567:0:0:0:3d:ee]", "234e:0:4567::3d:ee", 8090);
    yes("[234e:0:4567:0:0:0:3d:ee]:8090", "234e:0:4567::3d:ee", 8090);
    yes(
        "[234e:0:4567:0:0:0:3d:0-ee]:8090",
        "234e:0:4567::3d:ee",
        8090,
    );
    yes(
        "[234e:0:4567:0:0:0:3d:ee-ff]:8090",
        "234e:0:4567::3d:ee",
        8090,
    );
    yes("[234e:0:4567:0:0:0:3d:*]:90", "234e:0:4567::3d:ff", 90);
    no("[234e:0:4567:0:0:0:3d:ee]:7289", "234e:0:4567::3d:ee", 8090);
    no(
        "[234e:0:4567:0:0:0:3d:ee-ff]:8090",
        "234e:0:4567::3d:ee",
        9090,
    );
}

#[test]
fn net_utils_test_match_ipv4_with_ip_port() {
    // Java: NumberFormatException.
    malformed("192.168.1.192/26:90", "192.168.1.199", 90);
    yes("*.*.*.*:90", "192.168.1.63", 90);
    yes("192.168.1.*:90", "192.168.1.63", 90);
    yes("192.168.1.63:90", "192.168.1.63", 90);
    yes("192.168.1.63-65:90", "192.168.1.63", 90);
    yes("192.168.1.1-63:90", "192.168.1.63", 90);
    no("*.*.*.*:80", "192.168.1.63", 90);
    no("192.168.1.*:80", "192.168.1.63", 90);
    no("192.168.1.63:80", "192.168.1.63", 90);
    no("192.168.1.63-65:80", "192.168.1.63", 90);
    no("192.168.1.1-63:80", "192.168.1.63", 90);
    no("192.168.1.1-61:90", "192.168.1.62", 90);
    no("192.168.1.62:90", "192.168.1.63", 90);
}

#[test]
fn cidr_utils_test_ipv4() {
    yes("192.168.1.0/26", "192.168.1.63", 0);
    no("192.168.1.0/26", "192.168.1.65", 0);
    yes("192.168.1.192/26", "192.168.1.199", 0);
    no("192.168.1.192/26", "192.168.1.190", 0);
}

#[test]
fn cidr_utils_test_ipv6() {
    yes("234e:0:4567::3d/64", "234e:0:4567::3e", 0);
    yes("234e:0:4567::3d/64", "234e:0:4567::ffff:3e", 0);
    no("234e:0:4567::3d/64", "234e:1:4567::3d", 0);
    no("234e:0:4567::3d/64", "234e:0:4567:1::3d", 0);
    let block = "3FFE:FFFF:0:CC00::/54";
    yes(block, "3FFE:FFFF:0:CC00::dd", 0);
    yes(block, "3FFE:FFFF:0:CC00:0000:eeee:0909:dd", 0);
    yes(block, "3FFE:FFFF:0:CC0F:0000:eeee:0909:dd", 0);
    no(block, "3EFE:FFFE:0:C107::dd", 0);
    no(block, "1FFE:FFFE:0:CC00::dd", 0);
}

#[test]
fn cidr_blocks_ignore_the_port_and_refuse_bad_prefixes() {
    yes("10.0.0.0/8", "10.200.3.4", 9);
    no("10.0.0.0/8", "11.0.0.1", 9);
    yes("0.0.0.0/0", "11.0.0.1", 9);
    yes("fe80::/16", "fe80::1", 9);
    no("10.0.0.0/8", "fe80::1", 9);
    malformed("10.0.0.0/40", "10.0.0.1", 9);
    malformed("10.0.0.0/x", "10.0.0.1", 9);
    unresolvable("net.local/8", "10.0.0.1", 9);
    unresolvable("10.0.0.0/8", "db.local", 9);
}

#[test]
fn ipv4_segments_follow_dubbo() {
    yes("10.00.0.*", "10.0.0.1", 1); // 0 and 00 are the same segment
    malformed("10.0.0", "10.0.0.1", 1);
    malformed("10.0.0.", "10.0.0.1", 1); // Java's split drops the trailing empty part
    malformed("10.0.*", "10.0.0.1", 1);
    malformed("10.0.0.x-y", "10.0.0.1", 1);
    // The port of a pattern is compared as written: `*` is not a port.
    no("30.5.120.17:*", "30.5.120.17", 20880);
    yes("234e:0:4567:0:0:0:3d:*", "234e:0:4567::3d:ff", 1);
    no("234e:0:4567:0:0:0:3d:1-a", "234e:0:4567::3d:b", 1);
    yes("fe80::1", "fe80:0::1", 1);
}

#[test]
fn names_are_never_resolved() {
    unresolvable("10.0.0.1", "a.b.c.d", 1);
    unresolvable("a.b.c.d", "10.0.0.1", 1); // no `*` or `-`: Java resolves the pattern
    yes("*", "a.b.c.d", 1); // `*` matches before the host is looked at, as in Java
}

#[test]
fn the_two_argument_form_splits_a_port_only_before_a_trailing_colon() {
    assert_eq!(match_ip_address("10.0.0.1:20880", "10.0.0.1"), Ok(false));
    assert_eq!(
        match_ip_address("10.0.0.1:20880", "10.0.0.1:20880:"),
        Ok(true)
    );
    assert_eq!(match_ip_address("10.0.0.1:0", "10.0.0.1:x:"), Ok(true));
    assert!(matches!(
        match_ip_address("10.0.0.*", "10.0.0.1:20880"),
        Err(IpPatternError::Unresolvable(_))
    ));
}
