//! The layers beneath the facade, for rudder's own CLI, tests, benches and fuzz targets (feature
//! `internals`): not part of the API, no stability promise.

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
