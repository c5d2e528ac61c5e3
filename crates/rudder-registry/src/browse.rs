//! Browsing a registry the way Dubbo's telnet `ls` and dubbo-admin's service pages do: which services it
//! lists, every provider URL of one service (any version, group or protocol, before any rule), and the
//! service definitions providers published to the metadata report (with a ZooKeeper registry, Dubbo 3
//! keeps it in the registry itself by default: `<root>/metadata/<interface>[/<version>][/<group>]/provider/<application>`).
//!
//! These are one-shot reads for tools such as `rudder list`; nothing is watched, and a consumer uses
//! [`ZookeeperRegistry::subscribe`] instead.
//!
//! ```no_run
//! use rudder_registry::{RegistryOptions, ZookeeperRegistry};
//!
//! # async fn demo() -> Result<(), rudder_registry::RegistryError> {
//! let registry = ZookeeperRegistry::connect("zookeeper://127.0.0.1:2181", RegistryOptions::default()).await?;
//! for service in registry.services().await? {
//!     let providers = registry.provider_urls(&service).await?;
//!     println!("{service}: {} providers", providers.len());
//! }
//! # Ok(()) }
//! ```

use rudder_common::url::{java_url_decode, java_url_encode, DubboUrl};

use crate::backend::ServiceDefinition;
use crate::error::RegistryError;
use crate::registry::ZookeeperRegistry;

/// Children of the registry root that are Dubbo's own bookkeeping, not services.
const NOT_SERVICES: [&str; 3] = ["config", "mapping", "metadata"];

/// How deep under `<root>/metadata/<interface>` a `provider` node may sit: `[version]/[group]/provider`.
const METADATA_DEPTH: usize = 3;

impl ZookeeperRegistry {
    /// The services listed under the registry root (`/dubbo` by default), decoded and sorted; Dubbo's
    /// `config`, `mapping` and `metadata` nodes left out. A service may have no provider now.
    ///
    /// # Errors
    /// A ZooKeeper error naming the root; [`RegistryError::Closed`]. A missing root is an empty list.
    pub async fn services(&self) -> Result<Vec<String>, RegistryError> {
        let client = self.sessions.renew(None).await?;
        let root = self.sessions.address().root().to_owned();
        let children = match client.list_children(&root).await {
            Ok(children) => children,
            Err(zookeeper_client::Error::NoNode) => return Ok(Vec::new()),
            Err(e) => return Err(RegistryError::zookeeper("list", &root, e)),
        };
        let mut services: Vec<String> = children
            .iter()
            .filter(|name| !NOT_SERVICES.contains(&name.as_str()))
            .filter_map(|name| java_url_decode(name).ok())
            .collect();
        services.sort_unstable();
        services.dedup();
        Ok(services)
    }

    /// The services the interface-application mapping names (`<root>/mapping/<interface>`, written by
    /// Dubbo 3 providers for application-level discovery), decoded and sorted: services a provider may
    /// offer only at application level (`register-mode=instance`), absent from [`Self::services`].
    ///
    /// # Errors
    /// A ZooKeeper error naming the path; [`RegistryError::Closed`]. No mapping node is an empty list.
    pub async fn mapped_services(&self) -> Result<Vec<String>, RegistryError> {
        let client = self.sessions.renew(None).await?;
        let path = format!("{}/mapping", self.sessions.address().root());
        let children = match client.list_children(&path).await {
            Ok(children) => children,
            Err(zookeeper_client::Error::NoNode) => return Ok(Vec::new()),
            Err(e) => return Err(RegistryError::zookeeper("list", &path, e)),
        };
        let mut services: Vec<String> = children
            .iter()
            .filter_map(|name| java_url_decode(name).ok())
            .collect();
        services.sort_unstable();
        services.dedup();
        Ok(services)
    }

    /// Every provider URL registered for `interface`, whatever its version, group or protocol, in
    /// node-name order, as registered (no consumer parameters, no configurators); child names that do
    /// not read as a URL are skipped. An interface nobody registered has none.
    ///
    /// # Errors
    /// A ZooKeeper error naming the path; [`RegistryError::Closed`].
    pub async fn provider_urls(&self, interface: &str) -> Result<Vec<DubboUrl>, RegistryError> {
        let client = self.sessions.renew(None).await?;
        let path = format!(
            "{}/{}/providers",
            self.sessions.address().root(),
            java_url_encode(interface)
        );
        let mut children = match client.list_children(&path).await {
            Ok(children) => children,
            Err(zookeeper_client::Error::NoNode) => return Ok(Vec::new()),
            Err(e) => return Err(RegistryError::zookeeper("list", &path, e)),
        };
        children.sort_unstable();
        Ok(children
            .iter()
            .filter_map(|name| DubboUrl::from_node_name(name).ok())
            .filter(|url| url.protocol() != "empty" && !url.host().is_empty())
            .collect())
    }

    /// The service definitions of `interface` in the metadata report kept in this registry, one per
    /// version, group and provider application that published one; none when no provider did (Dubbo
    /// providers publish them unless `metadata-type=remote` is off and no report is configured).
    ///
    /// # Errors
    /// A ZooKeeper error naming the path; [`RegistryError::Closed`].
    pub async fn service_definitions(
        &self,
        interface: &str,
    ) -> Result<Vec<ServiceDefinition>, RegistryError> {
        let client = self.sessions.renew(None).await?;
        let root = self.sessions.address().root().to_owned();
        let base = format!("metadata/{interface}");
        // Breadth-first over at most METADATA_DEPTH levels: `[version]/[group]/provider/<app>`.
        let mut level: Vec<Vec<String>> = vec![Vec::new()];
        let mut found = Vec::new();
        for _ in 0..METADATA_DEPTH {
            let mut next = Vec::new();
            for segments in &level {
                let dir = join(&root, &base, segments);
                let children = match client.list_children(&dir).await {
                    Ok(children) => children,
                    Err(zookeeper_client::Error::NoNode) => continue,
                    Err(e) => return Err(RegistryError::zookeeper("list", &dir, e)),
                };
                for child in children {
                    if child == "provider" {
                        let provider_dir = format!("{dir}/provider");
                        let applications = match client.list_children(&provider_dir).await {
                            Ok(apps) => apps,
                            Err(zookeeper_client::Error::NoNode) => continue,
                            Err(e) => {
                                return Err(RegistryError::zookeeper("list", &provider_dir, e))
                            }
                        };
                        for application in applications {
                            let node = format!("{provider_dir}/{application}");
                            let text = match client.get_data(&node).await {
                                Ok((data, _)) => String::from_utf8_lossy(&data).into_owned(),
                                Err(zookeeper_client::Error::NoNode) => continue,
                                Err(e) => return Err(RegistryError::zookeeper("read", &node, e)),
                            };
                            let (version, group) = match segments.as_slice() {
                                [] => (None, None),
                                [version] => (Some(version.clone()), None),
                                [version, group, ..] => {
                                    (Some(version.clone()), Some(group.clone()))
                                }
                            };
                            found.push(ServiceDefinition {
                                path: node
                                    .strip_prefix(&format!("{root}/"))
                                    .unwrap_or(&node)
                                    .to_owned(),
                                version,
                                group,
                                application,
                                text,
                            });
                        }
                    } else if segments.len() + 1 < METADATA_DEPTH {
                        let mut deeper = segments.clone();
                        deeper.push(child);
                        next.push(deeper);
                    }
                }
            }
            level = next;
        }
        Ok(found)
    }
}

fn join(root: &str, base: &str, segments: &[String]) -> String {
    let mut path = format!("{root}/{base}");
    for segment in segments {
        path.push('/');
        path.push_str(segment);
    }
    path
}
