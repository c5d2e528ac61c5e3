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

/// A MetadataService client (over the protocol each instance names for it, its own connections) for a
/// [`ZookeeperRegistry`](rudder_registry::ZookeeperRegistry) a tool opens itself: what a
/// [`Consumer`](crate::Consumer)'s references use to find instances whose metadata is `local`.
///
/// ```
/// use rudder_registry::{RegistryOptions, ZookeeperRegistry};
///
/// let registry = ZookeeperRegistry::open("zookeeper://127.0.0.1:2181", RegistryOptions::default())?
///     .with_metadata_fetcher(rudder::internals::metadata_fetcher());
/// # Ok::<(), rudder_registry::RegistryError>(())
/// ```
#[cfg(feature = "zookeeper")]
pub fn metadata_fetcher() -> std::sync::Arc<dyn rudder_registry::MetadataFetcher> {
    std::sync::Arc::new(crate::metadata_client::MetadataClient::new(
        crate::protocols::Protocols::new(None),
    ))
}
pub use rudder_cluster as cluster;
pub use rudder_common as common;
pub use rudder_rpc as rpc;
#[cfg(feature = "triple")]
pub use rudder_triple as triple;
