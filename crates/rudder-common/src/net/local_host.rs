//! The consumer's own address: what it registers under (`/dubbo/<service>/consumers/consumer://<host>/…`),
//! what configurators match against (`addresses: [<host>]`), and what routing rules read as `host`.
//! One value for all three, chosen as Dubbo 3.3's `ReferenceConfig` and `NetUtils.getLocalHost` choose
//! it:
//!
//! 1. the `DUBBO_IP_TO_REGISTRY` environment variable, when set and not empty; a loopback, `localhost`,
//!    or `0.0.0.0` there is refused ([`InvalidHost`]), as Dubbo refuses it;
//! 2. else the first IPv4 address, not loopback, of the first network interface that is up, is not a
//!    loopback and is not a sub-interface (`eth0:1`), in interface index order;
//! 3. else that interface's first global IPv6 address (not link-local, site-local or unique-local);
//! 4. else `127.0.0.1`.
//!
//! Where Dubbo differs: it tries each candidate address with `isReachable` (an ICMP echo or a TCP
//! connection to port 7 of the address itself) and, failing that, resolves the host name through DNS;
//! rudder sends nothing and resolves nothing, it only reads the interface list (Linux: `/sys/class/net`,
//! `/proc/net/fib_trie`, `/proc/net/route`, `/proc/net/if_inet6`; elsewhere the list is empty and the
//! answer is `127.0.0.1` unless `DUBBO_IP_TO_REGISTRY` is set). Dubbo's `dubbo.network.interface.*`
//! system properties have no counterpart; set `DUBBO_IP_TO_REGISTRY` (or the consumer's host) instead.
//!
//! ```
//! use rudder_common::net::{pick_local_address, NetworkInterface};
//! let interfaces = [
//!     NetworkInterface::new("lo", 1).loopback(true).address("127.0.0.1".parse()?),
//!     NetworkInterface::new("docker0", 3).up(false).address("172.17.0.1".parse()?),
//!     NetworkInterface::new("eth0", 4).address("fe80::1".parse()?).address("10.20.153.10".parse()?),
//! ];
//! assert_eq!(pick_local_address(&interfaces), Some("10.20.153.10".parse()?));
//! # Ok::<(), std::net::AddrParseError>(())
//! ```

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

use super::java_host_address;

/// The environment variable naming the address to register (Dubbo's `DUBBO_IP_TO_REGISTRY`).
pub const IP_TO_REGISTRY: &str = "DUBBO_IP_TO_REGISTRY";

/// An address that cannot stand for this consumer (Dubbo: "Specified invalid registry ip").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}={host:?} is not an address other hosts can reach (loopback, localhost or 0.0.0.0); unset it to use this machine's address")]
pub struct InvalidHost {
    /// Where the address came from (`DUBBO_IP_TO_REGISTRY`).
    pub source_name: &'static str,
    /// The address given.
    pub host: String,
}

/// The consumer's address: `DUBBO_IP_TO_REGISTRY` if set, else [`local_host`].
///
/// # Errors
/// [`InvalidHost`] when `DUBBO_IP_TO_REGISTRY` names a loopback address, `localhost` or `0.0.0.0`.
pub fn consumer_host() -> Result<String, InvalidHost> {
    host_to_register(std::env::var(IP_TO_REGISTRY).ok().as_deref(), local_host)
}

/// `ReferenceConfig`'s choice: the configured address when set and not empty (refused when invalid),
/// else `local`.
fn host_to_register(
    configured: Option<&str>,
    local: impl FnOnce() -> &'static str,
) -> Result<String, InvalidHost> {
    match configured {
        Some(host) if !host.is_empty() => {
            if is_invalid_local_host(host) {
                Err(InvalidHost {
                    source_name: IP_TO_REGISTRY,
                    host: host.to_owned(),
                })
            } else {
                Ok(host.to_owned())
            }
        }
        _ => Ok(local().to_owned()),
    }
}

/// Dubbo's `NetUtils.isInvalidLocalHost`: empty, `localhost`, `0.0.0.0` or `127.*`.
///
/// ```
/// use rudder_common::net::is_invalid_local_host;
/// assert!(is_invalid_local_host("127.0.1.1") && is_invalid_local_host("LOCALHOST"));
/// assert!(!is_invalid_local_host("10.0.0.1"));
/// ```
pub fn is_invalid_local_host(host: &str) -> bool {
    host.is_empty()
        || host.eq_ignore_ascii_case("localhost")
        || host == "0.0.0.0"
        || host.starts_with("127.")
}

/// This machine's address as [`pick_local_address`] chooses it from [`read_interfaces`], else
/// `127.0.0.1`. Read once per process, as Dubbo caches it.
pub fn local_host() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| match pick_local_address(&read_interfaces()) {
        Some(address) => java_host_address(address),
        None => Ipv4Addr::LOCALHOST.to_string(),
    })
}

/// A network interface as address selection sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkInterface {
    /// Its name (`eth0`; a sub-interface is `eth0:1`).
    pub name: String,
    /// Its index: interfaces are tried in index order.
    pub index: u32,
    /// Whether it is up.
    pub up: bool,
    /// Whether it is a loopback interface.
    pub loopback: bool,
    /// Its addresses, in the order they were read.
    pub addresses: Vec<IpAddr>,
}

impl NetworkInterface {
    /// An interface that is up, not loopback, with no address yet.
    pub fn new(name: &str, index: u32) -> NetworkInterface {
        NetworkInterface {
            name: name.to_owned(),
            index,
            up: true,
            loopback: false,
            addresses: Vec::new(),
        }
    }

    /// Sets whether it is up.
    pub fn up(mut self, up: bool) -> NetworkInterface {
        self.up = up;
        self
    }

    /// Sets whether it is a loopback interface.
    pub fn loopback(mut self, loopback: bool) -> NetworkInterface {
        self.loopback = loopback;
        self
    }

    /// Adds an address.
    pub fn address(mut self, address: IpAddr) -> NetworkInterface {
        self.addresses.push(address);
        self
    }

    /// `NetUtils.ignoreNetworkInterface`: down, loopback, or virtual (Java's "virtual" is a
    /// sub-interface, named `<parent>:<n>`).
    fn ignored(&self) -> bool {
        !self.up || self.loopback || self.name.contains(':')
    }

    fn first_v4(&self) -> Option<IpAddr> {
        self.addresses.iter().copied().find(|a| is_valid_v4(*a))
    }
}

/// `NetUtils.isValidV4Address`: IPv4, not loopback, not `0.0.0.0`.
fn is_valid_v4(address: IpAddr) -> bool {
    matches!(address, IpAddr::V4(v4) if !v4.is_loopback() && !v4.is_unspecified())
}

/// `getLocalAddress0V6`'s filter: a global IPv6 address (not loopback, unspecified, link-local
/// `fe80::/10`, site-local `fec0::/10` or unique-local `fd00::/8`).
fn is_global_v6(address: IpAddr) -> bool {
    let IpAddr::V6(v6) = address else {
        return false;
    };
    let first = v6.segments()[0];
    !(v6.is_loopback()
        || v6.is_unspecified()
        || first & 0xffc0 == 0xfe80
        || first & 0xffc0 == 0xfec0
        || first & 0xff00 == 0xfd00)
}

/// The address `NetUtils.getLocalHost` would pick among `interfaces`, without trying any address
/// on the network (see the [module docs](self)); `None` means `127.0.0.1`.
pub fn pick_local_address(interfaces: &[NetworkInterface]) -> Option<IpAddr> {
    let mut valid: Vec<&NetworkInterface> = interfaces.iter().filter(|i| !i.ignored()).collect();
    valid.sort_by_key(|i| i.index);
    let chosen = valid
        .iter()
        .find(|i| i.first_v4().is_some())
        .or_else(|| valid.first())?;
    chosen
        .first_v4()
        .or_else(|| chosen.addresses.iter().copied().find(|a| is_global_v6(*a)))
}

/// This machine's interfaces and their addresses, read without any system call beyond reading files
/// (Linux); empty elsewhere or when the files cannot be read.
pub fn read_interfaces() -> Vec<NetworkInterface> {
    #[cfg(target_os = "linux")]
    {
        linux::read()
    }
    #[cfg(not(target_os = "linux"))]
    {
        Vec::new()
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::fs;

    use super::*;

    const IFF_UP: u32 = 0x1;
    const IFF_LOOPBACK: u32 = 0x8;

    pub(super) fn read() -> Vec<NetworkInterface> {
        let mut interfaces = read_sys_class_net();
        let routes = fs::read_to_string("/proc/net/route").unwrap_or_default();
        let routes = parse_routes(&routes);
        let trie = fs::read_to_string("/proc/net/fib_trie").unwrap_or_default();
        for address in parse_local_v4(&trie) {
            // Loopback addresses have no connected route (only a local one): they are the loopback's.
            let slot = if address.is_loopback() {
                interfaces.iter().position(|i| i.loopback)
            } else {
                let owner = owning_interface(&routes, address);
                owner.and_then(|name| interfaces.iter().position(|i| i.name == name))
            };
            let slot = match slot {
                Some(slot) => slot,
                None => {
                    // A local address without a connected route (a /32 on some interface): kept, last.
                    if let Some(slot) = interfaces.iter().position(|i| i.name.is_empty()) {
                        slot
                    } else {
                        interfaces.push(NetworkInterface::new("", u32::MAX));
                        interfaces.len() - 1
                    }
                }
            };
            interfaces[slot].addresses.push(IpAddr::V4(address));
        }
        let inet6 = fs::read_to_string("/proc/net/if_inet6").unwrap_or_default();
        for (name, address) in parse_if_inet6(&inet6) {
            if let Some(interface) = interfaces.iter_mut().find(|i| i.name == name) {
                interface.addresses.push(IpAddr::V6(address));
            }
        }
        interfaces
    }

    fn read_sys_class_net() -> Vec<NetworkInterface> {
        let Ok(entries) = fs::read_dir("/sys/class/net") else {
            return Vec::new();
        };
        let mut interfaces = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let read = |file: &str| fs::read_to_string(entry.path().join(file)).unwrap_or_default();
            let flags =
                u32::from_str_radix(read("flags").trim().trim_start_matches("0x"), 16).unwrap_or(0);
            let index = read("ifindex").trim().parse().unwrap_or(u32::MAX - 1);
            interfaces.push(
                NetworkInterface::new(&name, index)
                    .up(flags & IFF_UP != 0)
                    .loopback(flags & IFF_LOOPBACK != 0),
            );
        }
        interfaces
    }

    /// A directly connected route of `/proc/net/route`: interface, destination, mask.
    pub(super) struct Route {
        interface: String,
        destination: u32,
        mask: u32,
    }

    /// The routes without a gateway (the subnets each interface is on). The kernel prints each
    /// address as the native-endian word of its network-order bytes.
    pub(super) fn parse_routes(text: &str) -> Vec<Route> {
        let word = |s: &str| {
            u32::from_str_radix(s, 16)
                .ok()
                .map(|w| u32::from_be_bytes(w.to_ne_bytes()))
        };
        text.lines()
            .skip(1)
            .filter_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let (interface, destination, gateway, mask) = (
                    fields.first()?,
                    fields.get(1)?,
                    fields.get(2)?,
                    fields.get(7)?,
                );
                (word(gateway)? == 0).then_some(Route {
                    interface: (*interface).to_owned(),
                    destination: word(destination)?,
                    mask: word(mask)?,
                })
            })
            .collect()
    }

    /// The interface of the most specific connected route containing `address`.
    pub(super) fn owning_interface(routes: &[Route], address: Ipv4Addr) -> Option<&str> {
        let address = u32::from(address);
        routes
            .iter()
            .filter(|r| address & r.mask == r.destination & r.mask)
            .max_by_key(|r| r.mask.count_ones())
            .map(|r| r.interface.as_str())
    }

    /// The local IPv4 addresses of `/proc/net/fib_trie`: the leaves marked `/32 host LOCAL`, each
    /// once, in the order listed.
    pub(super) fn parse_local_v4(text: &str) -> Vec<Ipv4Addr> {
        let mut leaf: Option<Ipv4Addr> = None;
        let mut found = Vec::new();
        for line in text.lines() {
            let line = line.trim();
            if let Some(address) = line.strip_prefix("|-- ") {
                leaf = address.trim().parse().ok();
            } else if line.starts_with("/32 host LOCAL") {
                if let Some(address) = leaf.filter(|a| !found.contains(a)) {
                    found.push(address);
                }
            } else if line.starts_with("+--") || !line.starts_with('/') {
                leaf = None;
            }
        }
        found
    }

    /// `/proc/net/if_inet6`: `<32 hex digits> <index> <prefix> <scope> <flags> <name>` per address.
    pub(super) fn parse_if_inet6(text: &str) -> Vec<(String, Ipv6Addr)> {
        text.lines()
            .filter_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let (hex, name) = (fields.first()?, fields.get(5)?);
                let bits = u128::from_str_radix(hex, 16).ok()?;
                (hex.len() == 32).then(|| ((*name).to_owned(), Ipv6Addr::from(bits)))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
