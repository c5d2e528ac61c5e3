//! Shared vocabulary of every rudder layer: the Dubbo URL, the invocation, values, errors and time.
//!
//! rudder's data path is registry → directory → cluster → load balance → rpc. Every layer speaks about
//! providers as [`url::DubboUrl`]s, about calls as [`invocation::Invocation`]s, reports failures as
//! [`error::RpcError`]s with Dubbo's codes, and reads time through a [`clock::Clock`] so tests can fix it.

pub mod clock;
pub mod discovery;
pub mod error;
pub mod invocation;
pub mod java_regex;
pub mod java_string;
pub mod net;
pub mod status;
pub mod url;
pub mod value;
#[cfg(feature = "yaml")]
pub mod yaml;

pub use value::Value;
