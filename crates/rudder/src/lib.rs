//! rudder: call Apache Dubbo services from Rust, routed exactly as Dubbo's own consumer routes them.
//!
//! A [`Consumer`] is the process-level runtime (registry sessions, connections, call statistics,
//! strategies); a [`Reference`] is a cheap handle on one remote service built from it. Behind a
//! reference, rudder's data path runs in layers, each a crate of its own:
//!
//! ```text
//! registry ──▶ directory ──▶ routers ──▶ cluster ──▶ load balance ──▶ rpc
//! ```
//!
//! * the **registry** (`rudder-registry`, cargo feature `zookeeper`, on by default) watches ZooKeeper
//!   for provider URLs and configurators, and emits provider changes;
//! * the **directory** keeps the usable providers as an immutable snapshot ([`ProviderSet`]), each
//!   provider URL merged with the reference's consumer settings as Dubbo merges them;
//! * the **routers** apply the tag and condition rules of the config center ([`Reference::explain`]);
//! * the **cluster** ([`ClusterMode`]) decides what a failure means (failover retries, failfast...);
//! * **load balancing** ([`LoadBalanceStrategy`], or your own [`extension::LoadBalance`]) picks a
//!   provider with Dubbo's algorithms and arithmetic;
//! * **rpc** makes the call over the protocol the provider URL names: dubbo:// (`rudder-rpc`) or, with
//!   the cargo feature `triple` (on by default), tri:// (`rudder-triple`, Java interface services);
//!   every call is counted in the provider's statistics. Protobuf (IDL) services are called over
//!   tri:// by tonic-generated clients through [`Reference::grpc_channel`].
//!
//! With the cargo feature `metrics` (off by default), a consumer keeps Prometheus metrics of its calls,
//! picks, connections and registry subscriptions, and serves them at `GET /metrics` (see `metrics`).
//!
//! A reference is also a [`tower::Service`](tower_service::Service) through [`Reference::service`], so
//! tower's timeout, concurrency-limit and retry layers compose with it.
//!
//! Every call path fails with [`CallError`], building a reference with [`BuildError`].
//!
//! # Cargo features
//!
//! * `zookeeper` (default): ZooKeeper discovery ([`ReferenceBuilder::registry`]);
//! * `triple` (default): calls to tri:// (Triple) providers of Java interface services, and of
//!   protobuf services through [`Reference::grpc_channel`];
//! * `metrics`: Prometheus metrics (`Consumer::metrics`).
//!
//! # Examples
//!
//! One consumer per process, one reference per remote service, calls by name or typed with serde:
//!
//! ```no_run
//! use std::time::Duration;
//! use rudder::{Consumer, LoadBalanceStrategy, Value};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let consumer = Consumer::builder().application("orders").build();
//! let greeter = consumer
//!     .reference("com.acme.Greeter")
//!     .registry("zookeeper://127.0.0.1:2181")
//!     .version("1.0.0")
//!     .timeout(Duration::from_secs(3))
//!     .loadbalance(LoadBalanceStrategy::RoundRobin)
//!     .build()
//!     .await?;
//! let answer = greeter.call::<Value, _>("sayHello", &["java.lang.String"], vec![Value::from("rust")]).await?;
//! println!("{answer:?}");
//! consumer.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! More in [`Consumer`] and [`Reference`], and in the guide (`docs/` in the repository: discovery,
//! governance rules, balancing, several registries, Triple and gRPC, metrics, URL parameters);
//! `rudder demo` runs the whole path against embedded providers.

#[cfg(doctest)]
mod guide_doctests;

mod arguments;
mod builder;
mod caller;
mod changes;
mod consumer;
mod diagnostics;
mod error;
#[cfg(feature = "triple")]
mod grpc_caller;
#[cfg(feature = "triple")]
mod grpc_channel;
mod layers;
#[cfg(feature = "zookeeper")]
mod metadata_client;
#[cfg(feature = "metrics")]
pub mod metrics;
mod observer;
mod protocols;
// Providers leave directories only through a registry.
#[cfg(feature = "zookeeper")]
mod prune;
mod reference;
#[cfg(feature = "zookeeper")]
mod registry;
mod service;
mod strategy;
#[cfg(feature = "zookeeper")]
pub mod tools;

pub use arguments::Arguments;
pub use builder::ReferenceBuilder;
pub use changes::{Changes, RulesInForce};
pub use consumer::{Consumer, ConsumerBuilder};
pub use diagnostics::Diagnostics;
#[cfg(feature = "zookeeper")]
pub use error::RegistryError;
pub use error::{BuildError, CallError};
#[cfg(feature = "triple")]
pub use grpc_channel::GrpcChannel;
#[cfg(feature = "zookeeper")]
pub use metadata_client::MetadataServiceCalls;
pub use reference::Reference;
pub use rudder_cluster::cluster::ClusterMode;
pub use rudder_cluster::directory::ProviderSet;
pub use rudder_cluster::provider::Provider;
pub use rudder_common::error::{Attempt, RpcError, RpcErrorKind};
pub use rudder_common::error::{TlsError, TlsFailure};
pub use rudder_common::invocation::Invocation;
pub use rudder_common::url::DubboUrl;
pub use rudder_common::value::{JavaException, Value};
#[cfg(feature = "zookeeper")]
pub use rudder_registry::{DiscoveryView, RegistryOptions, SubscriptionStatus};
pub use rudder_rpc::tls::{TlsClient, TlsConfig, TlsConfigError};
pub use rudder_rpc::{ProviderError, ResponseStatus, RpcResponse};
pub use service::{MethodCall, MethodService};
pub use strategy::LoadBalanceStrategy;

/// Converting Rust types to and from [`Value`]s with serde, as
/// [`Reference::call`](crate::Reference::call) does, and the typed Java values to put in your
/// structs: `BigDecimal`, `BigInteger`, `Date` and the `java.time` types, each with its ISO-8601 or
/// digit text.
pub mod value {
    pub use rudder_common::value::{
        from_value, to_java_object, to_object_value, to_value, JavaClass, SerdeError,
    };
    pub use rudder_common::value::{
        BigDecimal, BigInteger, Date, Duration, Instant, JavaTime, LocalDate, LocalDateTime,
        LocalTime, OffsetDateTime, OffsetTime, ParseError, Period, ZoneOffset, ZonedDateTime,
    };
}

/// The call to one provider, and how to plug in a transport of your own
/// ([`ConsumerBuilder::transport`](crate::ConsumerBuilder::transport)): a provider's [`Endpoint`](crate::transport::Endpoint) is
/// a `tower::Service<Invocation>` made by the [`Transport`](crate::transport::Transport) of its URL scheme.
pub mod transport {
    pub use crate::protocols::PLUGGED_SHUTDOWN_DEADLINE;
    pub use rudder_rpc::endpoint::{Endpoint, ResponseFuture, ShutdownFuture, Transport};
}

/// Routing rules set on a reference in code ([`Reference::set_rule`](crate::Reference::set_rule)).
pub mod rules {
    pub use rudder_cluster::router::{RuleError, RuleKey};
}

/// A routing decision explained: what [`Reference::explain`](crate::Reference::explain) returns.
pub mod explain {
    pub use rudder_cluster::loadbalance::outlier::Ejection;
    pub use rudder_cluster::router::{Explanation, ProviderFate, RuleRef, RuleSlot, StepReport};
}

/// Extension points: your own load-balance strategy ([`LoadBalance`](crate::extension::LoadBalance), registered with
/// [`ConsumerBuilder::loadbalance_policy`](crate::ConsumerBuilder::loadbalance_policy)), provider
/// weights from your own source ([`WeightSource`](crate::extension::WeightSource),
/// [`ReferenceBuilder::weight_source`](crate::ReferenceBuilder::weight_source)), and the clock rudder
/// reads ([`Clock`](crate::extension::Clock), [`ConsumerBuilder::clock`](crate::ConsumerBuilder::clock)).
///
/// A strategy sees one method's providers as a [`MethodView`](crate::extension::MethodView) (weights, statistics, per-strategy
/// state under a [`StateKey`](crate::extension::StateKey)) and the pick's context as a [`Pick`](crate::extension::Pick).
///
/// ```
/// use std::sync::Arc;
/// use rudder::extension::{LoadBalance, MethodView, Pick, PickRng};
/// use rudder::{Consumer, Invocation};
///
/// /// Always the last provider allowed (a retry excludes the ones already tried).
/// #[derive(Debug)]
/// struct Last;
///
/// impl LoadBalance for Last {
///     fn pick(&self, view: &MethodView, _: &Invocation, pick: &Pick<'_>, _: &mut dyn PickRng) -> Option<usize> {
///         (0..view.len()).rev().find(|&i| pick.allows(view, i))
///     }
/// }
///
/// let consumer = Consumer::builder().loadbalance_policy("last", Arc::new(Last)).build();
/// let greeter = consumer.reference("com.acme.Greeter").loadbalance("last");
/// # drop(greeter);
/// ```
pub mod extension {
    pub use rudder_cluster::loadbalance::weight::WeightSource;
    pub use rudder_cluster::loadbalance::{LoadBalance, MethodView, Pick, PickRng, StateKey};
    pub use rudder_common::clock::{Clock, ManualClock, SystemClock};
    pub use rudder_common::status::{MethodStatus, ProviderStatus, RpcStatus, StatusRegistry};
}
