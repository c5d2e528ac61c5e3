//! [`Registry`]: what a consumer asks of a registry, whatever the registry is; [`RegistryFactory`]:
//! how one kind of registry is read from its URL and opened.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rudder_common::discovery::{ProviderSink, RuleKey, RuleSink};
use rudder_common::url::DubboUrl;

use crate::config_center::RuleWatch;
use crate::consumer::ConsumerSpec;
use crate::error::RegistryError;
use crate::instance::metadata::MetadataFetcher;
use crate::options::RegistryOptions;
use crate::split::ViewSplit;
use crate::subscription::Subscription;

/// One service definition a provider application published to the metadata report: Dubbo's
/// `FullServiceDefinition` as JSON (`methods[].name`, `methods[].parameterTypes`, `returnType`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServiceDefinition {
    /// The node it was read from, under the registry root (`metadata/<interface>/1.0.0/provider/app`).
    pub path: String,
    /// The version segment of the path, if any.
    pub version: Option<String>,
    /// The group segment of the path, if any.
    pub group: Option<String>,
    /// The provider application that published it.
    pub application: String,
    /// The node's content as written by the provider (JSON), unread.
    pub text: String,
}

/// The future of a [`Registry`] operation: boxed, so that the trait is object-safe and the layers
/// above hold an `Arc<dyn Registry>`. Only registry events go through it, never a call.
pub type RegistryFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where governance rules are kept (Dubbo's dynamic configuration): rule texts by group and key.
///
/// Every registry has its own ([`Registry::config_center`]), and may read its rules from another's
/// ([`Registry::with_config_center`]), as Dubbo's `dubbo.config-center.address` says: configurators
/// and router rules under the group `dubbo`, migration rules under
/// `DUBBO_SERVICEDISCOVERY_MIGRATION`.
pub trait ConfigCenter: fmt::Debug + Send + Sync + 'static {
    /// The config centre as it may be printed (never credentials).
    fn address(&self) -> String;

    /// Follows `keys` of `group`: `sink` hears each key's current text (or `None`) before this
    /// ends, then every creation, change and deletion, until the [`RuleWatch`] is dropped or closed.
    /// A first read that fails does not end the watch, which keeps trying in the background: the
    /// failure is returned beside it.
    fn follow(
        &self,
        group: &str,
        keys: Vec<RuleKey>,
        sink: Arc<dyn RuleSink>,
    ) -> RegistryFuture<'_, (RuleWatch, Option<RegistryError>)>;

    /// This config centre as [`Any`], so that an implementation can recognise one of its own kind.
    fn as_any(&self) -> &dyn Any;
}

/// One registry connection, shared by every subscription made through it: what a consumer asks of a
/// registry, whatever the registry is.
///
/// A consumer needs five things of a registry, and this trait names them so that the layers above
/// (the `rudder` facade, the CLI) never learn which registry they talk to:
///
/// * **discovery** of one service's providers, interface-level (Dubbo 2's
///   `providers:{interface}:{version}:{group}`) and application-level (instances of the applications
///   that provide the interface, their metadata by revision), with the migration rule choosing between
///   the two views: [`Registry::subscribe`];
/// * **consumer registration**, as Dubbo's consumer registers itself (part of a subscription, see
///   [`ConsumerSpec::register`]);
/// * **config-centre watches** of governance rules: configurators and the migration rule followed by
///   every subscription, router rules handed over raw ([`Registry::watch_rules`]), from the registry
///   itself or from another config centre ([`Registry::with_config_center`]);
/// * **browsing** for tools (`rudder list`): [`Registry::services`], [`Registry::provider_urls`],
///   [`Registry::service_definitions`];
/// * the **lifecycle**: a connection opened in the background, waited for with a bound, closed.
///
/// Every list a registry hands over is a full or delta [`ProviderUpdate`](rudder_common::discovery::ProviderUpdate)
/// to a [`ProviderSink`], so a registry that pushes whole lists (Nacos) and one that is read child by
/// child (ZooKeeper) look the same from above. Nothing here names a path, a session or a server
/// setting: those belong to each implementation and its URL. An implementation is chosen by the
/// registry URL's scheme (see [`RegistryFactory`](crate::RegistryFactory)).
///
/// ```no_run
/// use std::sync::Arc;
/// use rudder_cluster::directory::Directory;
/// use rudder_registry::{ConsumerSpec, RegistryOptions};
///
/// # async fn demo() -> Result<(), rudder_registry::RegistryError> {
/// // Whatever the scheme names: the caller holds an `Arc<dyn Registry>`.
/// let registry = rudder_registry::connect("zookeeper://127.0.0.1:2181", RegistryOptions::default(), None).await?;
/// let directory = Arc::new(Directory::default());
/// let subscription = registry
///     .subscribe(ConsumerSpec::new("com.acme.Greeter"), directory, None)
///     .await?;
/// subscription.close().await;
/// registry.close().await;
/// # Ok(()) }
/// ```
///
/// Implementations are cheap to share (`Arc<dyn Registry>`), need a tokio runtime, and never put a
/// password in what they print or return.
pub trait Registry: fmt::Debug + Send + Sync + 'static {
    /// The registry as it may be printed: scheme, servers and namespace, never credentials
    /// (`zookeeper://10.0.0.1:2181/dubbo`).
    fn address(&self) -> String;

    /// The servers alone, `host:port,host:port` in the URL's order: a metric label.
    fn servers(&self) -> String;

    /// Whether a connection is up now.
    fn is_connected(&self) -> bool;

    /// Whether [`Registry::close`] has been called.
    fn is_closed(&self) -> bool;

    /// Waits at most `wait` for a connection (opening one if none is up).
    ///
    /// # Errors
    /// [`RegistryError::Unreachable`] naming the servers and the last failure once `wait` has passed;
    /// [`RegistryError::AuthFailed`]; [`RegistryError::Closed`].
    fn wait_connected(&self, wait: Duration) -> RegistryFuture<'_, Result<(), RegistryError>>;

    /// The error [`Registry::wait_connected`] would give after waiting `waited` now, for callers that
    /// bound a longer operation themselves.
    fn unreachable_error(&self, waited: Duration) -> RegistryError;

    /// Lists the providers of `spec` into `sink`, registers the consumer (unless
    /// [`ConsumerSpec::register`] is off) and keeps following both until the [`Subscription`] is
    /// dropped or closed. Returns after the first listing, so `sink` has had the first full list.
    ///
    /// The subscription follows the interface level, the application level or both, as the
    /// consumer's settings and the migration rule in the config centre say, and applies the
    /// configurators before a provider reaches `sink`. While a migration `proportion` shares the calls
    /// between the views, the interface-level providers go to `split` too (see [`ViewSplit`]).
    ///
    /// # Errors
    /// [`RegistryError::BadConsumer`] for a spec that cannot be written as a URL; the registry's
    /// error when the first listing fails; [`RegistryError::Closed`].
    fn subscribe(
        &self,
        spec: ConsumerSpec,
        sink: Arc<dyn ProviderSink>,
        split: Option<ViewSplit>,
    ) -> RegistryFuture<'_, Result<Subscription, RegistryError>>;

    /// Follows governance rules in the config centre: `sink` hears each key's current text (or
    /// `None`) before this returns, then every change, until the [`RuleWatch`] is dropped or closed.
    /// The texts are handed over unread (router rules are parsed by the routers).
    ///
    /// # Errors
    /// The first read failing, or [`RegistryError::Closed`].
    fn watch_rules(
        &self,
        keys: Vec<RuleKey>,
        sink: Arc<dyn RuleSink>,
    ) -> RegistryFuture<'_, Result<RuleWatch, RegistryError>>;

    /// Where this registry keeps governance rules itself (what another registry reads when it is
    /// given this one as its config centre).
    fn config_center(&self) -> Arc<dyn ConfigCenter>;

    /// This registry, reading governance rules (configurators, router and migration rules) from
    /// `config_center` instead of from itself.
    fn with_config_center(&self, config_center: Arc<dyn ConfigCenter>) -> Arc<dyn Registry>;

    /// The services the registry lists, sorted; a service may have no provider now.
    ///
    /// # Errors
    /// The registry's error; [`RegistryError::Closed`].
    fn services(&self) -> RegistryFuture<'_, Result<Vec<String>, RegistryError>>;

    /// The services the interface-application mapping names: those Dubbo 3 providers offer at
    /// application level, perhaps only there. None by default (a registry without such a mapping).
    ///
    /// # Errors
    /// The registry's error; [`RegistryError::Closed`].
    fn mapped_services(&self) -> RegistryFuture<'_, Result<Vec<String>, RegistryError>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    /// Every provider URL registered for `interface`, whatever its version, group or protocol, as
    /// registered (no consumer parameters, no configurators).
    ///
    /// # Errors
    /// The registry's error; [`RegistryError::Closed`].
    fn provider_urls<'a>(
        &'a self,
        interface: &'a str,
    ) -> RegistryFuture<'a, Result<Vec<DubboUrl>, RegistryError>>;

    /// The service definitions of `interface` that providers published to the metadata report.
    ///
    /// # Errors
    /// The registry's error; [`RegistryError::Closed`].
    fn service_definitions<'a>(
        &'a self,
        interface: &'a str,
    ) -> RegistryFuture<'a, Result<Vec<ServiceDefinition>, RegistryError>>;

    /// Registers `url` as a provider of its interface, the way a Dubbo provider does, for as long
    /// as the connection lasts (providers run by rudder itself: `rudder demo --registry`, tests).
    ///
    /// # Errors
    /// The registry's error; [`RegistryError::Closed`].
    fn register_provider<'a>(
        &'a self,
        url: &'a DubboUrl,
    ) -> RegistryFuture<'a, Result<(), RegistryError>>;

    /// Closes the connection: every subscription and rule watch stops (this waits for their tasks
    /// to end) and the consumer registrations go. Await it before the tokio runtime shuts down.
    fn close(&self) -> RegistryFuture<'_, ()>;

    /// This registry as [`Any`] (a caller that knows the implementation may reach its own API).
    fn as_any(&self) -> &dyn Any;
}

/// Reads the URLs of one kind of registry and opens connections to it: how a [`Registry`]
/// implementation is chosen by the registry URL's scheme.
///
/// Each implementation has a [`RegistryFactory`] that reads its own URLs ([`RegistryFactory::locate`]:
/// what identifies one registry, how it may be printed, every parameter checked) and opens a
/// connection ([`RegistryFactory::open`]). [`factory`](crate::factory()) maps a scheme to its factory: `zookeeper://`
/// (and a bare `host:port`, as Dubbo reads it) to ZooKeeper. A scheme rudder does not speak is
/// refused with one line naming it; `nacos://` goes to [`NacosFactory`](crate::NacosFactory).
///
/// A new registry is one more factory in this crate's table of factories: nothing above this crate
/// changes.
///
/// ```
/// let location = rudder_registry::locate("zookeeper://10.0.0.2:2181?backup=10.0.0.1:2181")?;
/// assert_eq!(location.address(), "zookeeper://10.0.0.2:2181,10.0.0.1:2181/dubbo");
/// assert_eq!(location.servers(), "10.0.0.2:2181,10.0.0.1:2181");
/// // Two URLs naming the same servers in another order are one registry.
/// assert_eq!(
///     location.identity(),
///     rudder_registry::locate("zookeeper://10.0.0.1:2181?backup=10.0.0.2:2181")?.identity(),
/// );
/// let nacos = rudder_registry::locate("nacos://10.0.0.1:8848").unwrap();
/// assert_eq!(nacos.address(), "nacos://10.0.0.1:8848");
/// # Ok::<(), rudder_registry::RegistryError>(())
/// ```
pub trait RegistryFactory: fmt::Debug + Send + Sync {
    /// The URL schemes this factory serves, lower case (`zookeeper`).
    fn schemes(&self) -> &'static [&'static str];

    /// Reads `url` without opening anything: every parameter is checked, so that a bad URL is
    /// refused before any connection is made.
    ///
    /// # Errors
    /// [`RegistryError::BadRegistryUrl`], never echoing the URL (it may hold a password).
    fn locate(&self, url: &str) -> Result<RegistryLocation, RegistryError>;

    /// A registry for `url`, returned at once: the connection is opened in the background on first
    /// use and retried until it is up or the registry is closed. `options` are the caller's timeouts,
    /// which the URL's own parameters override where the implementation reads any; `metadata` asks
    /// instances for their metadata at application level (without one, only instances whose metadata
    /// is in a metadata report are found).
    ///
    /// # Errors
    /// [`RegistryError::BadRegistryUrl`].
    fn open(
        &self,
        url: &str,
        options: RegistryOptions,
        metadata: Option<Arc<dyn MetadataFetcher>>,
    ) -> Result<Arc<dyn Registry>, RegistryError>;
}

/// What a registry URL names, read without opening anything ([`RegistryFactory::locate`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryLocation {
    identity: String,
    address: String,
    servers: String,
}

impl RegistryLocation {
    /// A location: `identity` tells two registries apart (URLs with one identity share one
    /// connection; it may hold credentials and is never printed), `address` and `servers` are as
    /// [`Registry::address`] and [`Registry::servers`] print them.
    pub fn new(identity: String, address: String, servers: String) -> RegistryLocation {
        RegistryLocation {
            identity,
            address,
            servers,
        }
    }

    /// What identifies the registry: equal for URLs that name the same servers, namespace and
    /// credentials, whatever the order of servers or the other parameters. Kept in memory only.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// The registry as it may be printed (no credentials).
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The servers alone, `host:port,host:port`.
    pub fn servers(&self) -> &str {
        &self.servers
    }
}
