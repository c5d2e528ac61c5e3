//! rudder-registry: finds a service's providers in ZooKeeper, exactly where and how a Dubbo consumer does.
//!
//! ```text
//! registry ──▶ directory ──▶ routers ──▶ cluster ──▶ load balance ──▶ rpc
//! ^ here: ZookeeperRegistry, Subscription, config_center
//! ```
//!
//! A Dubbo provider registers `/dubbo/<interface>/providers/<URL.encode(provider URL)>`; operators change
//! providers with `override://` rules under `/dubbo/<interface>/configurators`. This crate follows both for
//! one consumer ([`ConsumerSpec`]): it keeps the providers that match (Dubbo's `UrlUtils.isMatch`),
//! applies the configurator rules, and hands the result to a
//! [`ProviderSink`](rudder_common::discovery::ProviderSink) (a directory, whose snapshot the balancers
//! read, or anything else that wants discovery events); this crate knows nothing of what is above it. It also registers the
//! consumer under `/dubbo/<interface>/consumers` so Java tools list it.
//!
//! The parts:
//!
//! * [`Registry`]: what a consumer asks of any registry (discovery at both levels, consumer
//!   registration, config-centre watches, browsing), as a trait object; [`open`] picks the
//!   implementation by the URL's scheme ([`RegistryFactory`]), [`ZookeeperRegistry`] the first;
//! * [`RegistryAddress`]: the `zookeeper://` URL (backup hosts, group/root, chroot, digest credentials);
//! * the catalog: child names to provider URLs, with no I/O (unit-tested, benchmarked, fuzzed);
//! * [`ZookeeperRegistry`] and [`Subscription`]: the session, watches and recovery;
//! * [`ZookeeperRegistry::services`], [`ZookeeperRegistry::provider_urls`] and
//!   [`ZookeeperRegistry::service_definitions`]: one-shot browsing for tools (`rudder list`);
//! * [`config_center`]: governance rules (Dubbo's dynamic configuration, and raw
//!   router rule texts for the routers) from the config center, by default the registry itself.
//!
//! Behaviour under faults (details in the `subscriber` module docs): a lost connection keeps the last
//! known providers; a reconnect re-lists; an expired session is replaced, the lists re-read and the
//! consumer registered again; an empty list is trusted only when it was read; a consumer node that cannot
//! be written never stops discovery (it is retried in the background); two child names for one provider
//! URL are one provider; credentials never reach a log line or an error message.
//!
//! Waits end (details in the `session` module docs): a session is opened in the background by one
//! connector per registry, shared by everyone waiting for it, and no lock is held across a connect;
//! [`ZookeeperRegistry::connect`] and [`ZookeeperRegistry::wait_connected`] give up after their
//! timeout with [`RegistryError::Unreachable`] naming the hosts and the last failure;
//! [`ZookeeperRegistry::close`] ends a connection attempt at once.
//!
//! On exit: await [`ZookeeperRegistry::close`] before the tokio runtime shuts down. It returns once
//! every task of the registry has ended and ZooKeeper has confirmed the session's end (consumer nodes
//! gone at once). A runtime shut down under running subscriptions drops zookeeper-client's detached
//! session task while a subscription still awaits one of its watches, and the client then panics in a
//! worker thread (`OneshotReceiver::recv` unwraps a cancelled channel); closing first leaves no such
//! task.
//!
//! ```no_run
//! use std::sync::Arc;
//! use rudder_cluster::directory::Directory;
//! use rudder_registry::{ConsumerSpec, RegistryOptions, ZookeeperRegistry};
//!
//! # async fn demo() -> Result<(), rudder_registry::RegistryError> {
//! let registry = ZookeeperRegistry::connect(
//!     "zookeeper://127.0.0.1:2181?backup=127.0.0.1:2182",
//!     RegistryOptions::default(),
//! )
//! .await?;
//! let directory = Arc::new(Directory::default());
//! let _subscription = registry.subscribe(ConsumerSpec::new("com.acme.Greeter"), directory).await?;
//! # Ok(()) }
//! ```

// What a consumer does with the registry's data (Dubbo's `UrlUtils.isMatch`, configurators, rule texts,
// child names to URLs) is internal; the fuzz targets reach it through `fuzzing`'s byte-level entry
// points, the catalog's benchmark is a unit test (`catalog::bench`). Their items say `pub` for the
// crate's other modules.
#[allow(unreachable_pub)]
mod catalog;
#[allow(unreachable_pub)]
mod configurator;
#[allow(unreachable_pub)]
mod junk;
#[allow(unreachable_pub)]
mod matching;
#[allow(unreachable_pub)]
mod rule_parser;

pub mod config_center;

/// Entry points for the fuzz targets (feature `fuzzing`): each takes any bytes and panics only when
/// a promise of the code it drives is broken. Not a stable API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;

mod address;
mod app_level;
mod backend;
mod browse;
mod consumer;
mod empty_push;
mod error;
mod factory;
mod following;
mod instance;
mod migrating;
mod migration;
mod migration_rule;
mod nacos;
mod options;
mod paths;
mod probe;
mod redact;
mod registration;
mod registry;
mod security;
mod session;
mod split;
mod subscriber;
mod subscription;
mod timing;
mod tls_probe;
mod zk_rules;
mod zookeeper;

pub use address::RegistryAddress;
pub use backend::{
    ConfigCenter, Registry, RegistryFactory, RegistryFuture, RegistryLocation, ServiceDefinition,
};
pub use consumer::ConsumerSpec;
pub use error::RegistryError;
pub use error::SecurityError;
pub use error::ZkTlsFailure;
pub use factory::{connect, factory, locate, open};
pub use instance::metadata::{
    MetadataFetcher, MetadataFuture, MetadataInfo, MetadataRequest, ServiceInfo, METADATA_SERVICE,
};
pub use migration::DiscoveryView;
pub use nacos::{NacosFactory, NacosRegistry};
pub use options::RegistryOptions;
pub use registry::ZookeeperRegistry;
pub use split::ViewSplit;
pub use subscription::{DisabledProvider, ReweightedProvider, Subscription, SubscriptionStatus};
pub use zookeeper::ZookeeperFactory;
