//! Application-level discovery on Nacos, where Dubbo 3.3 keeps it:
//!
//! | what | where (Dubbo 3.3) |
//! |---|---|
//! | an application's instances | the Nacos service named after the application, in the registry's group (`NacosServiceDiscovery`: `registerInstance(app, group, instance)`; ip and port the instance's, metadata `dubbo.metadata.revision`, `dubbo.endpoints`, ...) |
//! | interface → applications | config `dataId=<interface>`, `group=mapping`, in the registry's namespace (`NacosMetadataReport.registerServiceAppMapping`: the registry is the metadata report, `registryAsMetadataCenter`) |
//! | MetadataInfo of a revision, `storage-type=remote` | config `dataId=<application>`, `group=<revision>`, same namespace (`publishAppMetadata`) |
//!
//! Note the namespace: the metadata report gets the registry URL's address and parameters, so it
//! reads and writes the registry's namespace (`public` unless `namespace=` is given), not the config
//! centre's `dubbo` default.
//!
//! One follower per application and registry ([`AppWatches`]), however many references: it
//! subscribes to the application's service, and on every push replaces the instances, fetches the
//! revisions not known yet (MetadataService call, or the config above) and publishes the view.
//! Instances that are not `enabled` and `healthy` are left out (Dubbo's first read,
//! `selectInstances(app, group, true)`, drops them; nacos-sdk's pushes carry them).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use nacos_sdk::api::naming::ServiceInstance;
use rudder_common::discovery::{RuleKey, RuleSink};
use tokio::sync::oneshot;

use crate::config_center::RuleWatch;
use crate::error::RegistryError;
use crate::instance::json::Instance;
use crate::instance::metadata::MetadataFetcher;
use crate::instance::source::{InstanceSource, SourceFuture};
use crate::instance::view::{AppWatch, AppWatches, RemoteMetadata, Revisions, MAX_INSTANCES};
use crate::nacos::client::Connection;
use crate::nacos::configs;
use crate::nacos::rules::{follow_in, nacos_error};
use crate::nacos::stream::Pushes;
use crate::timing::sleep_opt;

/// The config group of the interface→application mapping (Dubbo's `DEFAULT_MAPPING_GROUP`).
pub(crate) const MAPPING_GROUP: &str = "mapping";

/// Application-level discovery read from one Nacos registry.
#[derive(Debug)]
pub(crate) struct NacosInstances {
    pub(crate) connection: Arc<Connection>,
    pub(crate) watches: AppWatches,
}

impl InstanceSource for NacosInstances {
    fn watch(&self, app: &str, fetcher: Option<Arc<dyn MetadataFetcher>>) -> Option<Arc<AppWatch>> {
        let connection = &self.connection;
        self.watches.watch(app, |view, stop| {
            let follower = Follower {
                connection: Arc::clone(connection),
                pushes: Arc::new(Pushes::default()),
                revisions: Revisions::new(app, fetcher, view),
            };
            connection.spawn(follower.run(stop)).is_some()
        })
    }

    fn follow_mapping(
        &self,
        interface: &str,
        sink: Arc<dyn RuleSink>,
    ) -> SourceFuture<'_, (RuleWatch, Option<RegistryError>)> {
        let key = RuleKey::new(interface.to_owned());
        Box::pin(async move {
            let tenant = &self.connection.address.namespace;
            follow_in(&self.connection, tenant, MAPPING_GROUP, vec![key], sink).await
        })
    }

    fn read_mapping<'a>(&'a self, interface: &'a str) -> SourceFuture<'a, Option<String>> {
        Box::pin(async move { self.config(interface, MAPPING_GROUP).await.ok().flatten() })
    }

    fn connect_timeout(&self) -> Duration {
        self.connection.options.connect_timeout()
    }
}

impl NacosInstances {
    /// A config of the registry's namespace (the metadata report's), from the first server.
    async fn config(&self, data_id: &str, group: &str) -> Result<Option<String>, RegistryError> {
        configs::read(&self.connection, data_id, group).await
    }
}

/// The most mapping configs a listing reads (a bound on what a server can make rudder hold).
const MAX_MAPPED: usize = 100_000;

/// The interfaces the mapping names: the data ids of group `mapping` in the registry's namespace
/// (Nacos's config search, paged and bounded), sorted.
pub(crate) async fn mapped_interfaces(
    connection: &Connection,
) -> Result<Vec<String>, RegistryError> {
    let listed = configs::list_group(connection, MAPPING_GROUP, MAX_MAPPED).await?;
    let mut interfaces: Vec<String> = listed.into_iter().map(|c| c.data_id).collect();
    interfaces.sort_unstable();
    interfaces.dedup();
    Ok(interfaces)
}

/// The metadata report in Nacos config: `dataId=<app>`, `group=<revision>`.
struct NacosMetadata {
    connection: Arc<Connection>,
}

impl RemoteMetadata for NacosMetadata {
    fn read<'a>(
        &'a self,
        app: &'a str,
        revision: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + Send + 'a>> {
        Box::pin(async move {
            match configs::read(&self.connection, app, revision).await {
                Ok(Some(text)) => Ok(text.into_bytes()),
                Ok(None) => Err(format!(
                    "no config {app} ({revision}) in the metadata report"
                )),
                Err(error) => Err(error.chain_text()),
            }
        })
    }
}

/// One application's follower task.
struct Follower {
    connection: Arc<Connection>,
    pushes: Arc<Pushes>,
    revisions: Revisions,
}

impl Follower {
    async fn run(mut self, mut stop: oneshot::Receiver<()>) {
        let connection = Arc::clone(&self.connection);
        let app = self.revisions.app.clone();
        let group = connection.address.group.clone();
        tokio::select! {
            _ = &mut stop => {
                connection.stream.unsubscribe(&app, &group, &self.pushes).await;
                return;
            }
            () = connection.closed() => return,
            () = self.subscribe() => {}
        };
        loop {
            if let Some(list) = self.pushes.take() {
                self.take(&list.instances());
            }
            let metadata = NacosMetadata {
                connection: Arc::clone(&connection),
            };
            let pass = async {
                let next = self.revisions.resolve_metadata(&metadata).await;
                self.revisions.publish();
                next
            };
            // A MetadataService that does not answer must not hold a shutdown up.
            let retry = tokio::select! {
                _ = &mut stop => break,
                () = connection.closed() => break,
                next = pass => next,
            };
            tokio::select! {
                _ = &mut stop => break,
                () = connection.closed() => break,
                () = self.pushes.arrived() => {}
                () = sleep_opt(retry) => {}
            }
        }
        connection
            .stream
            .unsubscribe(&app, &group, &self.pushes)
            .await;
    }

    /// Subscribes to the application's service and lists it once, retrying with the registry's
    /// backoff until both succeed (the caller ends this on stop or close).
    async fn subscribe(&self) {
        let app = self.revisions.app.clone();
        let group = self.connection.address.group.clone();
        let mut failures: u32 = 0;
        loop {
            let attempt = async {
                let wait = self.connection.options.connect_timeout();
                self.connection.clients_within(wait).await?;
                let first = self
                    .connection
                    .stream
                    .subscribe(&app, &group, &self.pushes)
                    .await
                    .map_err(|e| {
                        nacos_error(
                            "subscribe",
                            app.clone(),
                            nacos_sdk::api::error::Error::ErrResult(e),
                        )
                    })?;
                self.pushes.offer_first(first);
                Ok::<_, RegistryError>(())
            };
            match attempt.await {
                Ok(()) => return,
                Err(error) => {
                    tracing::warn!(%app, error = &error as &dyn std::error::Error, "instance listing failed; retrying");
                    tokio::time::sleep(self.connection.options.retry_delay(failures)).await;
                    failures = failures.saturating_add(1);
                }
            }
        }
    }

    /// Takes a pushed list as the application's instances, by `ip:port`.
    fn take(&mut self, instances: &[ServiceInstance]) {
        let app = self.revisions.app.clone();
        let mut names = Vec::with_capacity(instances.len().min(MAX_INSTANCES));
        for pushed in instances.iter().filter(|i| i.enabled && i.healthy) {
            if names.len() == MAX_INSTANCES {
                tracing::warn!(%app, listed = instances.len(), kept = MAX_INSTANCES, "too many instances; the rest are left out");
                break;
            }
            let name = format!("{}:{}", pushed.ip, pushed.port);
            let metadata = pushed.metadata.iter().map(|(k, v)| (k.clone(), v.clone()));
            match Instance::from_parts(&app, &pushed.ip, i64::from(pushed.port), metadata) {
                Ok(instance) => {
                    self.revisions.insert(&name, instance);
                    names.push(name);
                }
                Err(error) => {
                    if self.revisions.malformed.first_sighting(&name) {
                        tracing::warn!(%app, instance = %name, %error, "skipping an unreadable instance");
                    }
                }
            }
        }
        names.sort_unstable();
        self.revisions
            .nodes
            .retain(|name, _| names.binary_search(name).is_ok());
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::instance::view::AppView;
    use crate::nacos::address::NacosAddress;
    use crate::options::RegistryOptions;

    fn pushed(ip: &str, port: i32, revision: &str, enabled: bool) -> ServiceInstance {
        let metadata: HashMap<String, String> = [
            ("dubbo.metadata.revision", revision),
            ("dubbo.endpoints", r#"[{"port":20880,"protocol":"dubbo"}]"#),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        ServiceInstance {
            ip: ip.to_owned(),
            port,
            enabled,
            healthy: true,
            metadata,
            ..ServiceInstance::default()
        }
    }

    #[test]
    fn a_push_replaces_the_instances_leaving_out_disabled_and_bad_ones() {
        let address = NacosAddress::parse("nacos://127.0.0.1:8848").unwrap();
        let (view, _) = tokio::sync::watch::channel(Arc::new(AppView::default()));
        let mut follower = Follower {
            connection: Arc::new(Connection::new(address, RegistryOptions::default())),
            pushes: Arc::new(Pushes::default()),
            revisions: Revisions::new("app", None, view),
        };
        follower.take(&[
            pushed("10.0.0.1", 20880, "r1", true),
            pushed("10.0.0.2", 20880, "r1", false),
            pushed("10.0.0.3/x?weight=9", 20880, "r1", true),
            pushed("10.0.0.4", 70000, "r1", true),
        ]);
        let names: Vec<&String> = follower.revisions.nodes.keys().collect();
        assert_eq!(names, ["10.0.0.1:20880"]);
        assert_eq!(follower.revisions.malformed.count(), 2);
        follower.take(&[pushed("10.0.0.5", 20880, "r2", true)]);
        let kept = &follower.revisions.nodes["10.0.0.5:20880"];
        assert_eq!(kept.revision(), Some("r2"));
        assert_eq!(follower.revisions.nodes.len(), 1);
    }
}
