//! The registry handle: connect once, subscribe any number of services, close.

use std::sync::Arc;
use std::time::Duration;

use rudder_common::clock::{Clock, SystemClock};
use rudder_common::discovery::{ProviderSink, RuleKey, RuleSink};
use rudder_common::url::DubboUrl;
use tokio::sync::{oneshot, watch};
use zookeeper_client::CreateMode;

use crate::address::RegistryAddress;
use crate::backend::ConfigCenter;
use crate::catalog::Catalog;
use crate::config_center::{RuleInbox, RuleWatch, RULE_GROUP};
use crate::configurator::ConsumerSide;
use crate::consumer::ConsumerSpec;
use crate::error::RegistryError;
use crate::following::{Following, RuleFeed};
use crate::instance::app_watch::ZkInstances;
use crate::instance::metadata::MetadataFetcher;
use crate::instance::source::InstanceSource;
use crate::instance::view::AppWatches;
use crate::migrating::Migration;
use crate::options::RegistryOptions;
use crate::paths::ServicePaths;
use crate::registration::Registration;
use crate::session::{local_host, Sessions};
use crate::split::{SplitFeed, ViewSplit};
use crate::subscriber::{Subscriber, Watches};
use crate::subscription::{Subscription, SubscriptionStatus};
use crate::zk_rules::ZookeeperRules;

/// A connection to a ZooKeeper registry, shared by every subscription made through it.
///
/// Cheap to clone. Needs a tokio runtime.
///
/// ```no_run
/// use std::sync::Arc;
/// use rudder_cluster::directory::Directory;
/// use rudder_registry::{ConsumerSpec, RegistryOptions, ZookeeperRegistry};
///
/// # async fn demo() -> Result<(), rudder_registry::RegistryError> {
/// let registry = ZookeeperRegistry::connect("zookeeper://127.0.0.1:2181", RegistryOptions::default()).await?;
/// let directory = Arc::new(Directory::default());
/// let subscription = registry
///     .subscribe(ConsumerSpec::new("com.acme.Greeter").version("1.0.0"), Arc::clone(&directory))
///     .await?;
/// println!("{} providers", directory.snapshot().providers().len());
/// let mut status = subscription.status();
/// status.changed().await.ok(); // the next change in ZooKeeper
/// subscription.close().await;
/// registry.close().await;
/// # Ok(()) }
/// ```
///
/// The registry doubles as config center (as in Dubbo, spec-2 §1.1): subscriptions follow the
/// configurator rules under `<root>/config/dubbo/` (see [`crate::config_center`]), unless another config
/// center is given ([`ZookeeperRegistry::with_config_center`]) or dynamic configuration is off
/// ([`ZookeeperRegistry::without_dynamic_configuration`]).
#[derive(Debug, Clone)]
pub struct ZookeeperRegistry {
    pub(crate) sessions: Arc<Sessions>,
    /// Where governance rules are read: this registry's own session unless another was given.
    config_center: Arc<dyn ConfigCenter>,
    /// Whether subscriptions follow the config center's configurator rules.
    dynamic_configuration: bool,
    /// Application-level discovery in this session; its application watches are shared by every
    /// subscription.
    instances: Arc<dyn InstanceSource>,
    /// Calls instances' MetadataService (application-level discovery with local metadata).
    metadata: Option<Arc<dyn MetadataFetcher>>,
}

impl ZookeeperRegistry {
    /// Parses `registry_url` (see [`RegistryAddress`]) and opens a session.
    ///
    /// # Errors
    /// [`RegistryError::BadRegistryUrl`]; [`RegistryError::Unreachable`] when no server answers within
    /// [`RegistryOptions::connect_timeout`]; [`RegistryError::AuthFailed`].
    pub async fn connect(
        registry_url: &str,
        options: RegistryOptions,
    ) -> Result<ZookeeperRegistry, RegistryError> {
        let registry = ZookeeperRegistry::open(registry_url, options)?;
        match registry
            .sessions
            .connect_within(options.connect_timeout())
            .await
        {
            Ok(_) => Ok(registry),
            Err(error) => {
                registry.close().await;
                Err(error)
            }
        }
    }

    /// Parses `registry_url` and returns at once; the session is opened in the background on first
    /// use (a subscription, [`ZookeeperRegistry::wait_connected`]), retried with backoff until it is up
    /// or the registry is closed. Many callers asking at once share one connection attempt, and
    /// [`ZookeeperRegistry::close`] ends an attempt in progress at once.
    ///
    /// ```
    /// use rudder_registry::{RegistryOptions, ZookeeperRegistry};
    ///
    /// let registry = ZookeeperRegistry::open("zookeeper://127.0.0.1:2181", RegistryOptions::default())?;
    /// assert!(!registry.is_connected()); // nothing opened yet
    /// # Ok::<(), rudder_registry::RegistryError>(())
    /// ```
    ///
    /// # Errors
    /// [`RegistryError::BadRegistryUrl`].
    pub fn open(
        registry_url: &str,
        options: RegistryOptions,
    ) -> Result<ZookeeperRegistry, RegistryError> {
        let address = RegistryAddress::parse(registry_url)?;
        let sessions = Arc::new(Sessions::new(address, options));
        Ok(ZookeeperRegistry {
            config_center: Arc::new(ZookeeperRules::new(Arc::clone(&sessions))),
            sessions: Arc::clone(&sessions),
            dynamic_configuration: true,
            instances: Arc::new(ZkInstances {
                sessions: Arc::clone(&sessions),
                watches: AppWatches::default(),
            }),
            metadata: None,
        })
    }

    /// Waits at most `wait` for a session (opening one if none is up).
    ///
    /// # Errors
    /// [`RegistryError::Unreachable`] naming the hosts and the last failure once `wait` has passed;
    /// [`RegistryError::AuthFailed`]; [`RegistryError::Closed`].
    pub async fn wait_connected(&self, wait: Duration) -> Result<(), RegistryError> {
        self.sessions.connect_within(wait).await.map(drop)
    }

    /// The error [`ZookeeperRegistry::wait_connected`] would give after waiting `waited` now: the
    /// hosts and the last connection failure (for callers that bound a longer operation themselves).
    pub fn unreachable_error(&self, waited: Duration) -> RegistryError {
        self.sessions.unreachable(waited)
    }

    /// Whether a session is up now.
    pub fn is_connected(&self) -> bool {
        self.sessions.is_up()
    }

    /// Whether [`ZookeeperRegistry::close`] has been called.
    pub fn is_closed(&self) -> bool {
        self.sessions.is_closed()
    }

    /// This registry, reading governance rules from `config_center` instead of from itself.
    ///
    /// `config_center` is a connection to the config center's ZooKeeper; its root (`group`, default
    /// `dubbo`, after any chroot) is the namespace, so rules are under `<root>/config/dubbo/`. Dubbo's
    /// `dubbo.config-center.address=zookeeper://cc:2181` with `namespace=ns` corresponds to
    /// `zookeeper://cc:2181?group=ns`.
    ///
    /// ```no_run
    /// use rudder_registry::{RegistryOptions, ZookeeperRegistry};
    ///
    /// # async fn demo() -> Result<(), rudder_registry::RegistryError> {
    /// let options = RegistryOptions::default();
    /// let config_center = ZookeeperRegistry::connect("zookeeper://10.0.0.5:2181?group=governance", options).await?;
    /// let registry = ZookeeperRegistry::connect("zookeeper://10.0.0.1:2181", options)
    ///     .await?
    ///     .with_config_center(&config_center);
    /// assert_eq!(registry.rule_path(), "/governance/config/dubbo");
    /// # Ok(()) }
    /// ```
    pub fn with_config_center(&self, config_center: &ZookeeperRegistry) -> ZookeeperRegistry {
        ZookeeperRegistry {
            sessions: Arc::clone(&self.sessions),
            config_center: Arc::new(ZookeeperRules::new(Arc::clone(&config_center.sessions))),
            dynamic_configuration: self.dynamic_configuration,
            instances: Arc::clone(&self.instances),
            metadata: self.metadata.clone(),
        }
    }

    /// Where this registry keeps governance rules itself (its own session's `<root>/config/...`).
    pub(crate) fn own_rules(&self) -> Arc<dyn ConfigCenter> {
        Arc::new(ZookeeperRules::new(Arc::clone(&self.sessions)))
    }

    /// This registry, reading governance rules from `config_center` (any kind).
    pub(crate) fn reading_rules_from(
        &self,
        config_center: Arc<dyn ConfigCenter>,
    ) -> ZookeeperRegistry {
        ZookeeperRegistry {
            config_center,
            ..self.clone()
        }
    }

    /// This registry, asking instances for their MetadataInfo through `fetcher` (application-level
    /// discovery of providers with the default `dubbo.metadata.storage-type=local`). Without one,
    /// only instances with `remote` metadata are found at application level.
    ///
    /// The `rudder` crate's references set one that calls the instance's MetadataService over
    /// dubbo://.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use rudder_registry::{MetadataFetcher, MetadataFuture, MetadataRequest};
    /// use rudder_registry::{RegistryOptions, ZookeeperRegistry};
    ///
    /// #[derive(Debug)]
    /// struct Unavailable;
    /// impl MetadataFetcher for Unavailable {
    ///     fn fetch(&self, request: MetadataRequest) -> MetadataFuture {
    ///         Box::pin(async move { Err(format!("cannot call {}", request.url.address())) })
    ///     }
    /// }
    ///
    /// let registry = ZookeeperRegistry::open("zookeeper://127.0.0.1:2181", RegistryOptions::default())?
    ///     .with_metadata_fetcher(Arc::new(Unavailable));
    /// # Ok::<(), rudder_registry::RegistryError>(())
    /// ```
    pub fn with_metadata_fetcher(&self, fetcher: Arc<dyn MetadataFetcher>) -> ZookeeperRegistry {
        ZookeeperRegistry {
            metadata: Some(fetcher),
            ..self.clone()
        }
    }

    /// This registry, with subscriptions that do not follow the config center's configurator rules
    /// (Dubbo's `dubbo.configuration.enable-configuration-listen=false`); the legacy `/configurators`
    /// category is still applied, and [`ZookeeperRegistry::watch_rules`] still works.
    pub fn without_dynamic_configuration(&self) -> ZookeeperRegistry {
        ZookeeperRegistry {
            dynamic_configuration: false,
            ..self.clone()
        }
    }

    /// The node under which the config center keeps governance rules (`/dubbo/config/dubbo` by default).
    pub fn rule_path(&self) -> String {
        match self.config_center.as_any().downcast_ref::<ZookeeperRules>() {
            Some(rules) => rules.group_path(RULE_GROUP),
            // Rules kept elsewhere: where they are.
            None => self.config_center.address(),
        }
    }

    /// Follows governance rules in the config center: `sink` hears each key's current text (or `None`)
    /// before this returns, then every creation, change and deletion, until the returned [`RuleWatch`]
    /// is dropped or closed. The texts are handed over unread (router rules are parsed by the routers).
    ///
    /// ```no_run
    /// use std::sync::Mutex;
    /// use rudder_common::discovery::{RuleKey, RuleSink};
    /// use rudder_registry::{RegistryOptions, ZookeeperRegistry};
    ///
    /// struct Print;
    /// impl RuleSink for Print {
    ///     fn rule(&self, key: &RuleKey, text: Option<&str>) {
    ///         println!("{key}: {}", text.unwrap_or("<none>"));
    ///     }
    /// }
    ///
    /// # async fn demo() -> Result<(), rudder_registry::RegistryError> {
    /// let registry = ZookeeperRegistry::connect("zookeeper://127.0.0.1:2181", RegistryOptions::default()).await?;
    /// let keys = [
    ///     RuleKey::tag_router("demo-provider"),
    ///     RuleKey::service_condition_router("com.acme.Greeter", Some("1.0.0"), None),
    ///     RuleKey::app_condition_router("shop"),
    /// ];
    /// let watch = registry.watch_rules(keys, Print).await?;
    /// // ... later
    /// watch.close().await;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// The first read failing (a ZooKeeper error naming the node), or [`RegistryError::Closed`].
    pub async fn watch_rules(
        &self,
        keys: impl IntoIterator<Item = RuleKey>,
        sink: impl RuleSink,
    ) -> Result<RuleWatch, RegistryError> {
        self.watch_shared(keys, Arc::new(sink)).await
    }

    /// [`ZookeeperRegistry::watch_rules`] with a sink already shared (the [`Registry`](crate::Registry)
    /// trait's form).
    pub(crate) async fn watch_shared(
        &self,
        keys: impl IntoIterator<Item = RuleKey>,
        sink: Arc<dyn RuleSink>,
    ) -> Result<RuleWatch, RegistryError> {
        let keys: Vec<RuleKey> = keys.into_iter().collect();
        match self.config_center.follow(RULE_GROUP, keys, sink).await {
            (watch, None) => Ok(watch),
            (watch, Some(error)) => {
                watch.close().await;
                Err(error)
            }
        }
    }

    /// Starts following the configurator rules of `spec`, unless dynamic configuration is off.
    async fn rule_feed(&self, spec: &ConsumerSpec) -> Option<RuleFeed> {
        if !self.dynamic_configuration {
            return None;
        }
        let clean = |v: &Option<String>| v.as_deref().map(str::trim).map(str::to_owned);
        let (version, group) = (clean(&spec.version), clean(&spec.group));
        let service = RuleKey::service_configurators(
            spec.interface.trim(),
            version.as_deref(),
            group.as_deref(),
        );
        let application = RuleKey::app_configurators(&spec.application);
        // Said once, for the operator whose rule is not applied: Dubbo's keys keep the empty version
        // and group (`com.acme.Greeter::.configurators`), so a node named without them is not read.
        tracing::debug!(
            service = %service,
            application = %application,
            group = RULE_GROUP,
            "following configurator rules at these config-center keys only"
        );
        let inbox = Arc::new(RuleInbox::default());
        let (watch, error) = self
            .config_center
            .follow(
                RULE_GROUP,
                vec![application.clone(), service.clone()],
                Arc::clone(&inbox) as Arc<dyn RuleSink>,
            )
            .await;
        if let Some(error) = error {
            tracing::warn!(
                error = &error as &dyn std::error::Error,
                "config center not readable yet; following it in the background"
            );
        }
        Some(RuleFeed {
            inbox,
            watch,
            application,
            service,
        })
    }

    /// The registry address (password redacted in `Debug`).
    pub fn address(&self) -> &RegistryAddress {
        self.sessions.address()
    }

    /// ZooKeeper sessions opened so far (1 after connect; one more after each expiry).
    pub fn sessions_established(&self) -> u64 {
        self.sessions.established()
    }

    /// Lists the providers of `spec` into `sink` (a directory, usually), registers the consumer and keeps
    /// following them.
    ///
    /// Returns after the first listing and the first registration attempt, so `sink` has already had
    /// the first full list. A registration that fails does not fail the subscription: it is retried in
    /// the background ([`SubscriptionStatus::registered`], [`SubscriptionStatus::registration_error`]). Provider order is node-name
    /// order (see the `catalog` module); configurators are applied before providers enter the directory.
    ///
    /// # Errors
    /// [`RegistryError::BadConsumer`] for a spec that cannot be written as a URL; a ZooKeeper error when
    /// the first listing fails; [`RegistryError::Closed`].
    pub async fn subscribe(
        &self,
        spec: ConsumerSpec,
        sink: impl ProviderSink,
    ) -> Result<Subscription, RegistryError> {
        self.subscribe_split(spec, sink, None).await
    }

    /// As [`ZookeeperRegistry::subscribe`], and while a migration rule's `proportion` below 100
    /// shares the calls of an `APPLICATION_FIRST` reference between the views, the interface-level
    /// providers go to `split`'s sink too and its share says how many calls stay with `sink`'s
    /// (see [`ViewSplit`]). Without a split the proportion is reported, not applied.
    ///
    /// # Errors
    /// As [`ZookeeperRegistry::subscribe`].
    pub async fn subscribe_split(
        &self,
        spec: ConsumerSpec,
        sink: impl ProviderSink,
        split: Option<ViewSplit>,
    ) -> Result<Subscription, RegistryError> {
        self.subscribe_shared(spec, Arc::new(sink), split).await
    }

    /// [`ZookeeperRegistry::subscribe_split`] with a sink already shared (the
    /// [`Registry`](crate::Registry) trait's form: no second `Arc` around it).
    pub(crate) async fn subscribe_shared(
        &self,
        spec: ConsumerSpec,
        sink: Arc<dyn ProviderSink>,
        split: Option<ViewSplit>,
    ) -> Result<Subscription, RegistryError> {
        spec.validate()?;
        let client = self.sessions.renew(None).await?;
        let host = match &spec.host {
            Some(host) => host.clone(),
            None => local_host()?,
        };
        let registration = if spec.register {
            let url = spec.registration_url(&host, SystemClock.now_millis(), std::process::id())?;
            Some(Registration::new(url.to_node_name()))
        } else {
            None
        };
        let side = ConsumerSide {
            host,
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
        // Before the first listing, so the first list handed over already has the rules applied.
        let rules = self.rule_feed(&spec).await;
        let (status_tx, status_rx) = watch::channel(SubscriptionStatus::default());
        let mut subscriber = Subscriber {
            sessions: Arc::clone(&self.sessions),
            paths: ServicePaths::new(self.sessions.address().root(), spec.interface.trim()),
            registration,
            f: Following::new(
                Catalog::new(&spec, side),
                sink,
                status_tx,
                rules,
                migration,
                app_level,
                split.map(SplitFeed::new),
            ),
        };
        subscriber.attach();
        subscriber.f.take_rules();
        subscriber.f.take_instances();
        let mut watches = Watches::all_dirty();
        subscriber.refresh(&client, &mut watches).await?;
        subscriber.register_if_due(&client).await;
        let (stop_tx, stop_rx) = oneshot::channel();
        let task = self
            .sessions
            .spawn(subscriber.run(client, watches, stop_rx))
            .ok_or(RegistryError::Closed)?;
        Ok(Subscription::new(status_rx, stop_tx, task))
    }

    /// Registers `url` as a provider of its interface, the way a Dubbo provider does: an ephemeral node
    /// `<root>/<URL.encode(interface)>/providers/<URL.encode(url)>` in this registry's session, parents
    /// created persistent. It goes away with the session (or [`ZookeeperRegistry::close`]).
    ///
    /// Meant for providers run by rudder itself (`rudder demo --registry`, tests): unlike the consumer
    /// node of a [`Subscription`], it is not re-created after a session expiry.
    ///
    /// # Errors
    /// A ZooKeeper error naming the path, or [`RegistryError::Closed`].
    pub async fn register_provider(&self, url: &DubboUrl) -> Result<(), RegistryError> {
        let client = self.sessions.renew(None).await?;
        let paths = ServicePaths::new(self.sessions.address().root(), url.service_interface());
        let persistent = self.sessions.create_options(CreateMode::Persistent);
        client
            .mkdir(&paths.providers, &persistent)
            .await
            .map_err(|e| RegistryError::zookeeper("create", &paths.providers, e))?;
        let path = format!("{}/{}", paths.providers, url.to_node_name());
        let ephemeral = self.sessions.create_options(CreateMode::Ephemeral);
        match client.create(&path, b"", &ephemeral).await {
            Ok(_) | Err(zookeeper_client::Error::NodeExists) => Ok(()),
            // The node name holds the URL's credentials, if any: name the node by the URL's Display.
            Err(e) => Err(RegistryError::zookeeper(
                "create",
                &format!("{}/<{url}>", paths.providers),
                e,
            )),
        }
    }

    /// Closes the session: every subscription and rule watch stops (this waits for their tasks to
    /// end), and ZooKeeper removes the consumer nodes. A connection attempt in progress ends at once.
    ///
    /// Await it (or `rudder::Consumer::shutdown`) before the tokio runtime shuts down: see the crate
    /// docs on exit.
    pub async fn close(&self) {
        self.sessions.close().await;
    }
}
