//! Addresses as Dubbo reads them: rule address patterns ([`match_ip_expression`]), Java's rendering
//! of an IP ([`java_host_address`]), and the one address a consumer registers under and routes by
//! ([`consumer_host`]).

mod ip_match;
mod local_host;

pub use ip_match::{
    java_host_address, java_split, match_ip_address, match_ip_expression, match_ip_range,
    IpPatternError,
};
pub use local_host::{
    consumer_host, is_invalid_local_host, local_host, pick_local_address, read_interfaces,
    InvalidHost, NetworkInterface, IP_TO_REGISTRY,
};
