//! Shared vocabulary of every rudder layer: the Dubbo URL, the invocation, values, call statistics,
//! errors and time.
//!
//! rudder's data path is registry → directory → routers → cluster → load balance → rpc, one crate per
//! layer; this crate sits beneath all of them. Every layer speaks about providers as
//! [`url::DubboUrl`]s, about calls as [`invocation::Invocation`]s carrying [`Value`]s, reports failures
//! as [`error::RpcError`]s with Dubbo's codes, and reads time through a [`clock::Clock`] so tests can fix
//! it.
//!
//! * [`url`]: parsing (Java's `URLEncoder` codec), Dubbo 3.3's parameter lookups, the consumer merge, and
//!   every integer parameter's range ([`url::ranges::IntRange`]; the transport settings in
//!   [`url::transport`]);
//! * [`value`]: the value model shared by the codecs, serde conversion and [`value::JavaException`];
//! * [`status`]: the per-provider call statistics (Dubbo's `RpcStatus`) that balancers read and the rpc
//!   layer writes;
//! * [`discovery`]: the provider changes a registry emits to whatever listens ([`discovery::ProviderSink`]).
//!
//! ```
//! use std::time::Duration;
//! use rudder_common::url::{transport, DubboUrl};
//! use rudder_common::{invocation::Invocation, Value};
//!
//! let provider = DubboUrl::parse("dubbo://10.0.0.1:20880/com.acme.Greeter?version=1.0.0&timeout=3000")?;
//! assert_eq!(provider.parameter("version"), Some("1.0.0"));
//! let call = Invocation::new("sayHello", vec!["java.lang.String".into()], vec![Value::from("rust")]);
//! assert_eq!(transport::call_timeout(&provider, &call), Duration::from_secs(3));
//! # Ok::<(), rudder_common::url::UrlError>(())
//! ```

pub mod clock;
pub mod discovery;
pub mod error;
pub mod invocation;
pub mod java_regex;
pub mod java_string;
pub mod net;
pub mod redact;
pub mod status;
#[cfg(feature = "tls")]
pub mod tls_classify;
pub mod url;
pub mod value;
#[cfg(feature = "yaml")]
pub mod yaml;

pub use value::Value;
