//! The layers beneath the facade, for rudder's own CLI, tests, benches and fuzz targets (feature
//! `internals`): not part of the API, no stability promise.
//!
//! The call-path bench (`cargo bench -p rudder --features internals --bench call_path`) measures
//! what a call costs rudder itself (reference, cluster mode, router chain, balancer, statistics,
//! spans) over a transport that answers at once, so that no socket or codec hides it.

/// The URL protocol of providers that answer every call with `null` at once, without any I/O: give
/// a [`Reference`](crate::Reference) providers such as `rudder-noop://10.0.0.1:20880/com.acme.S`.
///
/// ```
/// use rudder::{internals::NO_OP_PROTOCOL, Reference, Value};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let greeter = Reference::builder("com.acme.Greeter")
///     .provider(&format!("{NO_OP_PROTOCOL}://10.0.0.1:20880/com.acme.Greeter"))
///     .build()
///     .await?;
/// assert_eq!(greeter.invoke("sayHello", &[], vec![]).await?, Value::Null);
/// # Ok(())
/// # }
/// ```
pub const NO_OP_PROTOCOL: &str = "rudder-noop";

#[cfg(feature = "zookeeper")]
pub use crate::registry::{load_router_rules, RegistryTarget};
pub use rudder_cluster as cluster;
pub use rudder_common as common;
pub use rudder_rpc as rpc;
