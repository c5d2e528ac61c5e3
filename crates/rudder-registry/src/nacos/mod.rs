//! Nacos as a [`Registry`]: [`NacosRegistry`] and its factory for `nacos://` URLs.
//!
//! The second implementation of the registry seam, through nacos-sdk (Nacos 2.x gRPC, naming and
//! config). What it reads and writes is what Dubbo 3.3's `NacosRegistry` and
//! `NacosDynamicConfiguration` do (see the `naming` and `rules` modules); the URL is read in
//! `address`. Empty pushes go through the same protection as ZooKeeper's lists (`empty_push`).
//!
//! Both levels, as on ZooKeeper: interface level (`naming`), application level (`apps`: instances by
//! application, the mapping and the metadata report in Nacos config), the migration step and rule
//! choosing between them (the shared `crate::following`). Service definitions for tools come from
//! the metadata report in Nacos config (`definitions`).

mod address;
mod apps;
mod browse;
mod client;
mod configs;
mod definitions;
mod hosts;
mod http;
mod names;
mod naming;
mod rules;
mod stream;
mod subscriber;
mod wire;

use std::any::Any;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rudder_common::clock::{Clock, SystemClock};
use rudder_common::discovery::{ProviderSink, RuleKey, RuleSink};
use rudder_common::url::DubboUrl;
use tokio::sync::{oneshot, watch};

use crate::backend::{
    ConfigCenter, Registry, RegistryFactory, RegistryFuture, RegistryLocation, ServiceDefinition,
};
use crate::catalog::Catalog;
use crate::config_center::{RuleInbox, RuleWatch, RULE_GROUP};
use crate::configurator::ConsumerSide;
use crate::consumer::ConsumerSpec;
use crate::error::RegistryError;
use crate::following::{Following, RuleFeed};
use crate::instance::metadata::MetadataFetcher;
use crate::instance::source::InstanceSource;
use crate::instance::view::AppWatches;
use crate::migrating::Migration;
use crate::options::RegistryOptions;
use crate::session::local_host;
use crate::split::{SplitFeed, ViewSplit};
use crate::subscription::{Subscription, SubscriptionStatus};

#[cfg(feature = "fuzzing")]
pub use http::check_answer;
#[cfg(feature = "fuzzing")]
pub use names::check_push;

use address::NacosAddress;
use apps::NacosInstances;
use client::Connection;
use names::InstanceNames;
use rules::{nacos_error, NacosRules};
use stream::Pushes;
use subscriber::{inbox_sink, NacosInterface, NacosSubscriber};

/// The Nacos service names one listing asks for at a time.
const PAGE: i32 = 500;
/// The most service names a listing reads (a bound on what a server can make rudder hold).
const MAX_SERVICES: usize = 100_000;

/// Opens [`NacosRegistry`]s for `nacos://` URLs.
///
/// ```
/// let location = rudder_registry::locate("nacos://10.0.0.1:8848?backup=10.0.0.2&namespace=dev")?;
/// assert_eq!(location.address(), "nacos://10.0.0.1:8848,10.0.0.2:8848?namespace=dev");
/// assert_eq!(location.servers(), "10.0.0.1:8848,10.0.0.2:8848");
/// # Ok::<(), rudder_registry::RegistryError>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct NacosFactory;

impl RegistryFactory for NacosFactory {
    fn schemes(&self) -> &'static [&'static str] {
        &["nacos"]
    }

    fn locate(&self, url: &str) -> Result<RegistryLocation, RegistryError> {
        let address = NacosAddress::parse(url)?;
        let mut servers = address.servers.clone();
        servers.sort_unstable();
        let credentials = address.username.as_ref().map_or(0, |user| {
            static KEY: OnceLock<RandomState> = OnceLock::new();
            KEY.get_or_init(RandomState::new)
                .hash_one((user, address.password.as_deref()))
        });
        Ok(RegistryLocation::new(
            format!(
                "nacos|{}|{}|{}|{credentials:016x}",
                servers.join(","),
                address.namespace,
                address.group
            ),
            address.to_string(),
            address.servers.join(","),
        ))
    }

    fn open(
        &self,
        url: &str,
        options: RegistryOptions,
        metadata: Option<Arc<dyn MetadataFetcher>>,
    ) -> Result<Arc<dyn Registry>, RegistryError> {
        let mut registry = NacosRegistry::open(url, options)?;
        registry.metadata = metadata;
        Ok(Arc::new(registry))
    }
}

/// A connection to a Nacos registry, shared by every subscription made through it. Cheap to clone;
/// needs a tokio runtime. Reached through the [`Registry`] trait ([`crate::open`] with a `nacos://`
/// URL).
///
/// ```no_run
/// use std::sync::Arc;
/// use rudder_cluster::directory::Directory;
/// use rudder_registry::{ConsumerSpec, RegistryOptions};
///
/// # async fn demo() -> Result<(), rudder_registry::RegistryError> {
/// let registry = rudder_registry::connect("nacos://127.0.0.1:8848?namespace=dev", RegistryOptions::default(), None).await?;
/// let directory = Arc::new(Directory::default());
/// let subscription = registry.subscribe(ConsumerSpec::new("com.acme.Greeter"), directory, None).await?;
/// subscription.close().await;
/// registry.close().await;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct NacosRegistry {
    connection: Arc<Connection>,
    config_center: Arc<dyn ConfigCenter>,
    /// Application-level discovery; its application watches are shared by every subscription.
    instances: Arc<dyn InstanceSource>,
    /// Calls instances' MetadataService (application-level discovery with local metadata).
    metadata: Option<Arc<dyn MetadataFetcher>>,
}

impl NacosRegistry {
    /// Reads `url` and returns at once; the connection is opened on first use.
    ///
    /// # Errors
    /// [`RegistryError::BadRegistryUrl`].
    pub fn open(url: &str, options: RegistryOptions) -> Result<NacosRegistry, RegistryError> {
        let connection = Arc::new(Connection::new(NacosAddress::parse(url)?, options));
        Ok(NacosRegistry {
            config_center: Arc::new(NacosRules {
                connection: Arc::clone(&connection),
            }),
            instances: Arc::new(NacosInstances {
                connection: Arc::clone(&connection),
                watches: AppWatches::default(),
            }),
            connection,
            metadata: None,
        })
    }

    /// Whether `enable-empty-protection=true` was given: an empty push then keeps the last providers.
    pub fn empty_protection(&self) -> bool {
        self.connection.address.empty_protection
    }

    async fn rule_feed(&self, spec: &ConsumerSpec) -> RuleFeed {
        let clean = |v: &Option<String>| v.as_deref().map(str::trim).map(str::to_owned);
        let service = RuleKey::service_configurators(
            spec.interface.trim(),
            clean(&spec.version).as_deref(),
            clean(&spec.group).as_deref(),
        );
        let application = RuleKey::app_configurators(&spec.application);
        let inbox = Arc::new(RuleInbox::default());
        let (watch, error) = self
            .config_center
            .follow(
                RULE_GROUP,
                vec![application.clone(), service.clone()],
                inbox_sink(&inbox),
            )
            .await;
        if let Some(error) = error {
            tracing::warn!(
                error = &error as &dyn std::error::Error,
                "config center not readable yet; following it in the background"
            );
        }
        RuleFeed {
            inbox,
            watch,
            application,
            service,
        }
    }

    async fn subscribe_shared(
        &self,
        spec: ConsumerSpec,
        sink: Arc<dyn ProviderSink>,
        split: Option<ViewSplit>,
    ) -> Result<Subscription, RegistryError> {
        spec.validate()?;
        let clients = self
            .connection
            .clients_within(self.connection.options.connect_timeout())
            .await?;
        let host = match &spec.host {
            Some(host) => host.clone(),
            None => local_host()?,
        };
        let side = ConsumerSide {
            host: host.clone(),
            application: spec.application.clone(),
        };
        let (migration, app_level) = Migration::begin(
            Arc::clone(&self.config_center),
            Arc::clone(&self.instances),
            self.metadata.clone(),
            &spec,
            &side,
        )
        .await?;
        let follow_interface = migration.follow_interface;
        // Before the first listing, so the first list handed over already has the rules applied.
        let rules = self.rule_feed(&spec).await;
        let (status, status_rx) = watch::channel(SubscriptionStatus {
            connected: true,
            sessions: 1,
            ..SubscriptionStatus::default()
        });
        let mut subscriber = NacosSubscriber {
            connection: Arc::clone(&self.connection),
            clients: clients.clone(),
            service: naming::service_name(
                "providers",
                spec.interface.trim(),
                spec.version.as_deref(),
                spec.group.as_deref(),
            ),
            pushes: Arc::new(Pushes::default()),
            subscribed: false,
            f: Following::new(
                Catalog::new(&spec, side),
                sink,
                status,
                Some(rules),
                migration,
                app_level,
                split.map(SplitFeed::new),
            ),
            consumer: None,
            names: InstanceNames::default(),
        };
        subscriber.f.take_rules();
        subscriber.f.take_instances();
        if follow_interface {
            let mut interface = NacosInterface {
                connection: &subscriber.connection,
                service: &subscriber.service,
                pushes: &subscriber.pushes,
                subscribed: &mut subscriber.subscribed,
                names: &mut subscriber.names,
            };
            if let Err(error) = interface.subscribe(&mut subscriber.f).await {
                use crate::following::InterfaceLevel;
                interface.stop().await;
                subscriber.f.close().await;
                return Err(error);
            }
        }
        subscriber.f.feed();
        if spec.register {
            self.register_consumer(&spec, &host, &mut subscriber).await;
        }
        let (stop_tx, stop_rx) = oneshot::channel();
        let task = self
            .connection
            .spawn(subscriber.run(stop_rx))
            .ok_or(RegistryError::Closed)?;
        Ok(Subscription::new(status_rx, stop_tx, task))
    }

    /// Dubbo registers a consumer in Nacos only with `register-consumer-url=true` on the registry URL
    /// (`NacosRegistry.doRegister`): so does rudder.
    async fn register_consumer(
        &self,
        spec: &ConsumerSpec,
        host: &str,
        subscriber: &mut NacosSubscriber,
    ) {
        if !self.connection.address.register_consumer {
            return;
        }
        let outcome = async {
            let url = spec.registration_url(host, SystemClock.now_millis(), std::process::id())?;
            let service = naming::service_name(
                "consumers",
                spec.interface.trim(),
                spec.version.as_deref(),
                spec.group.as_deref(),
            );
            let instance = naming::url_instance(&url, "consumers");
            subscriber
                .clients
                .naming
                .register_instance(
                    service.clone(),
                    Some(self.connection.address.group.clone()),
                    instance.clone(),
                )
                .await
                .map_err(|e| nacos_error("register", service.clone(), e))?;
            Ok::<_, RegistryError>((service, instance))
        }
        .await;
        match outcome {
            Ok(consumer) => {
                subscriber.consumer = Some(consumer);
                subscriber.f.status.send_modify(|s| s.registered = true);
            }
            Err(error) => {
                let text = error.chain_text();
                subscriber
                    .f
                    .status
                    .send_modify(|s| s.registration_error = Some(text));
            }
        }
    }

    async fn watch_shared(
        &self,
        keys: Vec<RuleKey>,
        sink: Arc<dyn RuleSink>,
    ) -> Result<RuleWatch, RegistryError> {
        match self.config_center.follow(RULE_GROUP, keys, sink).await {
            (watch, None) => Ok(watch),
            (watch, Some(error)) => {
                watch.close().await;
                Err(error)
            }
        }
    }
}

impl Registry for NacosRegistry {
    fn address(&self) -> String {
        self.connection.address.to_string()
    }

    fn servers(&self) -> String {
        self.connection.address.servers.join(",")
    }

    fn is_connected(&self) -> bool {
        self.connection.is_connected()
    }

    fn is_closed(&self) -> bool {
        self.connection.is_closed()
    }

    fn wait_connected(&self, wait: Duration) -> RegistryFuture<'_, Result<(), RegistryError>> {
        Box::pin(async move { self.connection.clients_within(wait).await.map(drop) })
    }

    fn unreachable_error(&self, waited: Duration) -> RegistryError {
        self.connection.unreachable(waited)
    }

    fn subscribe(
        &self,
        spec: ConsumerSpec,
        sink: Arc<dyn ProviderSink>,
        split: Option<ViewSplit>,
    ) -> RegistryFuture<'_, Result<Subscription, RegistryError>> {
        Box::pin(self.subscribe_shared(spec, sink, split))
    }

    fn watch_rules(
        &self,
        keys: Vec<RuleKey>,
        sink: Arc<dyn RuleSink>,
    ) -> RegistryFuture<'_, Result<RuleWatch, RegistryError>> {
        Box::pin(self.watch_shared(keys, sink))
    }

    fn config_center(&self) -> Arc<dyn ConfigCenter> {
        Arc::new(NacosRules {
            connection: Arc::clone(&self.connection),
        })
    }

    fn with_config_center(&self, config_center: Arc<dyn ConfigCenter>) -> Arc<dyn Registry> {
        Arc::new(NacosRegistry {
            connection: Arc::clone(&self.connection),
            config_center,
            instances: Arc::clone(&self.instances),
            metadata: self.metadata.clone(),
        })
    }

    fn services(&self) -> RegistryFuture<'_, Result<Vec<String>, RegistryError>> {
        Box::pin(NacosRegistry::services(self))
    }

    fn mapped_services(&self) -> RegistryFuture<'_, Result<Vec<String>, RegistryError>> {
        Box::pin(async move {
            self.connection
                .clients_within(self.connection.options.connect_timeout())
                .await?;
            apps::mapped_interfaces(&self.connection).await
        })
    }

    fn provider_urls<'a>(
        &'a self,
        interface: &'a str,
    ) -> RegistryFuture<'a, Result<Vec<DubboUrl>, RegistryError>> {
        Box::pin(NacosRegistry::provider_urls(self, interface))
    }

    fn service_definitions<'a>(
        &'a self,
        interface: &'a str,
    ) -> RegistryFuture<'a, Result<Vec<ServiceDefinition>, RegistryError>> {
        Box::pin(async move {
            self.connection
                .clients_within(self.connection.options.connect_timeout())
                .await?;
            definitions::service_definitions(&self.connection, interface).await
        })
    }

    fn register_provider<'a>(
        &'a self,
        url: &'a DubboUrl,
    ) -> RegistryFuture<'a, Result<(), RegistryError>> {
        Box::pin(NacosRegistry::register_provider(self, url))
    }

    fn close(&self) -> RegistryFuture<'_, ()> {
        Box::pin(self.connection.close())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_cluster_is_one_identity_and_credentials_stay_hidden() {
        let a = NacosFactory
            .locate("nacos://u:s3cret@10.0.0.1:8848?backup=10.0.0.2:8848&timeout=3000")
            .unwrap();
        let b = NacosFactory
            .locate("nacos://10.0.0.2:8848,10.0.0.1:8848?username=u&password=s3cret")
            .unwrap();
        assert_eq!(a.identity(), b.identity());
        assert!(!format!("{a:?}").contains("s3cret"));
        let other_namespace = NacosFactory
            .locate("nacos://10.0.0.1:8848?backup=10.0.0.2:8848&namespace=dev")
            .unwrap();
        assert_ne!(a.identity(), other_namespace.identity());
    }

    #[test]
    fn opening_connects_nothing_and_keeps_its_parameters() {
        let registry = NacosFactory
            .open(
                "nacos://127.0.0.1:8848?enable-empty-protection=true",
                RegistryOptions::default(),
                None,
            )
            .unwrap();
        assert!(!registry.is_connected());
        let nacos = registry.as_any().downcast_ref::<NacosRegistry>().unwrap();
        assert!(nacos.empty_protection());
        assert_eq!(
            registry.config_center().address(),
            "nacos://127.0.0.1:8848?namespace=public"
        );
    }
}
