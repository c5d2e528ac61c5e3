//! Where application-level discovery reads from: one [`InstanceSource`] per registry.
//!
//! The feed of a subscription ([`super::feed::InstanceFeed`]) and the migration rule's mapping
//! lookups ask it, whatever the registry: ZooKeeper's (`app_watch::ZkInstances`: `/services/<app>`,
//! `/dubbo/mapping/<interface>`) or Nacos's (`nacos::apps`: the Nacos service named after the
//! application, the config `dataId=<interface>, group=mapping`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rudder_common::discovery::RuleSink;

use super::metadata::MetadataFetcher;
use super::view::AppWatch;
use crate::config_center::RuleWatch;
use crate::error::RegistryError;

/// The future of an [`InstanceSource`] operation (not `crate::RegistryFuture`: this module sits
/// below the registry seam).
pub(crate) type SourceFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One registry's instances, mapping and metadata, for application-level discovery.
pub(crate) trait InstanceSource: std::fmt::Debug + Send + Sync + 'static {
    /// The shared follower of `app`'s instances (started on first use); `None` once the registry
    /// is closed.
    fn watch(&self, app: &str, fetcher: Option<Arc<dyn MetadataFetcher>>) -> Option<Arc<AppWatch>>;

    /// Follows the interface→application mapping of `interface`: `sink` hears its text (the
    /// application names separated by `,`) under the key `interface`, then every change.
    fn follow_mapping(
        &self,
        interface: &str,
        sink: Arc<dyn RuleSink>,
    ) -> SourceFuture<'_, (RuleWatch, Option<RegistryError>)>;

    /// The mapping of `interface` read once (`None` when there is none or it cannot be read).
    fn read_mapping<'a>(&'a self, interface: &'a str) -> SourceFuture<'a, Option<String>>;

    /// How long a first listing may be waited for.
    fn connect_timeout(&self) -> Duration;
}
