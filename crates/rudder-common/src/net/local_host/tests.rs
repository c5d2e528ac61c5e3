use super::*;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

#[test]
fn the_first_usable_interface_by_index_gives_its_first_ipv4() {
    let interfaces = [
        NetworkInterface::new("eth1", 5).address(ip("10.0.0.5")),
        NetworkInterface::new("lo", 1)
            .loopback(true)
            .address(ip("127.0.0.1")),
        NetworkInterface::new("eth0", 4)
            .address(ip("fe80::1"))
            .address(ip("192.168.1.4"))
            .address(ip("192.168.1.5")),
    ];
    assert_eq!(pick_local_address(&interfaces), Some(ip("192.168.1.4")));
}

#[test]
fn down_loopback_and_sub_interfaces_are_skipped() {
    let interfaces = [
        NetworkInterface::new("eth0", 2)
            .up(false)
            .address(ip("10.0.0.2")),
        NetworkInterface::new("eth0:1", 3).address(ip("10.0.0.3")),
        NetworkInterface::new("lo", 1)
            .loopback(true)
            .address(ip("10.0.0.1")),
        NetworkInterface::new("eth1", 9).address(ip("10.0.0.9")),
    ];
    assert_eq!(pick_local_address(&interfaces), Some(ip("10.0.0.9")));
}

#[test]
fn an_interface_with_ipv4_wins_over_an_earlier_one_without() {
    let interfaces = [
        NetworkInterface::new("tun0", 2).address(ip("2001:db8::2")),
        NetworkInterface::new("eth0", 3).address(ip("10.0.0.3")),
    ];
    assert_eq!(pick_local_address(&interfaces), Some(ip("10.0.0.3")));
}

#[test]
fn without_ipv4_a_global_ipv6_of_the_first_interface_else_nothing() {
    let v6_only = [NetworkInterface::new("eth0", 2)
        .address(ip("fe80::1"))
        .address(ip("fd00::2"))
        .address(ip("fec0::3"))
        .address(ip("2001:db8::4"))];
    assert_eq!(pick_local_address(&v6_only), Some(ip("2001:db8::4")));
    let local_only = [NetworkInterface::new("eth0", 2)
        .address(ip("fe80::1"))
        .address(ip("0.0.0.0"))];
    assert_eq!(pick_local_address(&local_only), None);
    assert_eq!(pick_local_address(&[]), None);
}

#[test]
fn the_configured_address_wins_and_a_loopback_one_is_refused() {
    let local = || "10.0.0.7";
    assert_eq!(
        host_to_register(Some("10.20.153.10"), local).as_deref(),
        Ok("10.20.153.10")
    );
    assert_eq!(host_to_register(Some(""), local).as_deref(), Ok("10.0.0.7"));
    assert_eq!(host_to_register(None, local).as_deref(), Ok("10.0.0.7"));
    let refused = host_to_register(Some("127.0.0.1"), local).unwrap_err();
    assert_eq!(refused.host, "127.0.0.1");
    assert!(
        refused
            .to_string()
            .contains("DUBBO_IP_TO_REGISTRY=\"127.0.0.1\""),
        "{refused}"
    );
}

#[test]
fn invalid_hosts_are_dubbos() {
    for host in [
        "",
        "localhost",
        "LocalHost",
        "0.0.0.0",
        "127.0.0.1",
        "127.1.2.3",
    ] {
        assert!(is_invalid_local_host(host), "{host}");
    }
    for host in ["10.0.0.1", "::1x", "128.0.0.1", "db.local"] {
        assert!(!is_invalid_local_host(host), "{host}");
    }
}

#[cfg(target_os = "linux")]
mod linux_files {
    use super::super::linux::*;
    use super::*;

    const FIB_TRIE: &str = "Main:
  +-- 0.0.0.0/0 3 0 5
     |-- 0.0.0.0
        /0 universe UNICAST
     +-- 127.0.0.0/8 2 0 2
        +-- 127.0.0.0/31 1 0 0
           |-- 127.0.0.0
              /8 host LOCAL
           |-- 127.0.0.1
              /32 host LOCAL
        |-- 127.255.255.255
           /32 link BROADCAST
     +-- 192.0.2.0/24 2 0 2
           |-- 192.0.2.0
              /24 link UNICAST
           |-- 192.0.2.2
              /32 host LOCAL
        |-- 192.0.2.255
           /32 link BROADCAST
Local:
  +-- 0.0.0.0/0 3 0 5
           |-- 192.0.2.2
              /32 host LOCAL
           |-- 10.9.9.9
              /32 host LOCAL
";

    const ROUTE: &str =
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0
eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
";

    #[test]
    fn fib_trie_local_leaves_are_the_local_addresses() {
        let want: Vec<Ipv4Addr> = ["127.0.0.1", "192.0.2.2", "10.9.9.9"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        assert_eq!(parse_local_v4(FIB_TRIE), want);
    }

    #[test]
    fn each_address_belongs_to_the_interface_of_its_connected_route() {
        // Only an x86-style (little-endian) kernel prints these words; a big-endian one prints the
        // bytes the other way round.
        if cfg!(target_endian = "big") {
            return;
        }
        let routes = parse_routes(ROUTE);
        assert_eq!(
            owning_interface(&routes, "192.0.2.2".parse().unwrap()),
            Some("eth0")
        );
        assert_eq!(
            owning_interface(&routes, "10.9.9.9".parse().unwrap()),
            None,
            "the default route has a gateway: not a connected route"
        );
    }

    #[test]
    fn if_inet6_lines_give_name_and_address() {
        let text = "fd000000000000000000000000000002 04 40 00 82     eth0
00000000000000000000000000000001 01 80 10 80       lo
";
        assert_eq!(
            parse_if_inet6(text),
            vec![
                ("eth0".to_owned(), "fd00::2".parse().unwrap()),
                ("lo".to_owned(), "::1".parse().unwrap()),
            ]
        );
    }

    #[test]
    fn this_machine_lists_its_loopback_interface() {
        let interfaces = read_interfaces();
        let lo = interfaces.iter().find(|i| i.loopback);
        assert!(
            lo.is_some_and(|lo| lo.addresses.contains(&ip("127.0.0.1"))),
            "{interfaces:?}"
        );
        let picked = pick_local_address(&interfaces);
        assert!(
            picked.is_none_or(|a| !a.is_loopback()),
            "never loopback: {picked:?}"
        );
    }
}
