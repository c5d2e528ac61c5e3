//! For tools that read a registry themselves, beside the references a consumer builds (rudder's CLI
//! does: `rudder list`, `providers --explain`, `simulate --registry`): registry URLs read as references
//! read them, the router rules in force, and a MetadataService client for application-level
//! discovery. A service calling providers needs none of it.

pub use crate::registry::{load_router_rules, RegistryTarget};
pub use rudder_cluster::router::RouterChain;
pub use rudder_cluster::zone_aware::RegistryChoice;
pub use rudder_registry::MetadataFetcher;

/// A MetadataService client (over the protocol each instance names for it, its own connections) for a
/// [`ZookeeperRegistry`](rudder_registry::ZookeeperRegistry) a tool opens itself: what a
/// [`Consumer`](crate::Consumer)'s references use to find instances whose metadata is `local`.
///
/// ```
/// use rudder_registry::{RegistryOptions, ZookeeperRegistry};
///
/// let registry = ZookeeperRegistry::open("zookeeper://127.0.0.1:2181", RegistryOptions::default())?
///     .with_metadata_fetcher(rudder::tools::metadata_fetcher());
/// # Ok::<(), rudder_registry::RegistryError>(())
/// ```
pub fn metadata_fetcher() -> std::sync::Arc<dyn rudder_registry::MetadataFetcher> {
    metadata_fetcher_with_tls(None)
}

/// [`metadata_fetcher`], calling MetadataServices over TLS when `tls` is given (as a consumer with
/// [`ConsumerBuilder::tls`](crate::ConsumerBuilder::tls) does).
///
/// ```
/// let fetcher = rudder::tools::metadata_fetcher_with_tls(None);
/// # drop(fetcher);
/// ```
pub fn metadata_fetcher_with_tls(
    tls: Option<crate::TlsClient>,
) -> std::sync::Arc<dyn rudder_registry::MetadataFetcher> {
    std::sync::Arc::new(crate::metadata_client::MetadataClient::new(
        crate::protocols::Protocols::with_plugged(None, Vec::new(), tls),
    ))
}
