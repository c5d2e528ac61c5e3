//! rudder: call Apache Dubbo services from Rust, routed exactly as Dubbo's own consumer routes them.
//!
//! A [`Consumer`] is the process-level runtime (registry sessions, connections, call statistics,
//! strategies); a [`Reference`] is a cheap handle on one remote service built from it. Behind a
//! reference, rudder's data path runs in layers, each a crate of its own:
//!
//! ```text
//! registry ──▶ directory ──▶ cluster ──▶ load balance ──▶ rpc
//! ```
//!
//! * the **registry** (`rudder-registry`, cargo feature `zookeeper`, on by default) watches ZooKeeper
//!   for provider URLs and configurators, and emits provider changes;
//! * the **directory** ([`cluster::directory`]) keeps the usable providers as an immutable snapshot,
//!   each provider URL merged with the reference's consumer settings as Dubbo merges them;
//! * the **cluster** ([`cluster::cluster`]) decides what a failure means (failover retries, failfast...);
//! * **load balancing** ([`cluster::loadbalance`]) picks a provider with Dubbo's algorithms and arithmetic;
//! * **rpc** ([`rpc`]) makes the dubbo:// call; every call is counted in the provider's statistics.
//!
//! With the cargo feature `metrics` (off by default), a consumer keeps Prometheus metrics of its calls,
//! picks, connections and registry subscriptions, and serves them at `GET /metrics` (see `metrics`).
//!
//! A reference is also a [`tower::Service`](tower_service::Service) through [`Reference::service`], so
//! tower's timeout, concurrency-limit and retry layers compose with it.
//!
//! # Examples
//!
//! See [`Consumer`] and [`Reference`]; `rudder demo` runs the whole path against embedded providers.

mod caller;
mod consumer;
mod error;
mod observer;
#[cfg(feature = "metrics")]
pub mod metrics;
mod reference;
#[cfg(feature = "zookeeper")]
mod registry;
mod service;

pub use consumer::{Consumer, ConsumerBuilder};
pub use error::{BuildError, CallError};
pub use reference::{ErasedArgument, Reference, ReferenceBuilder};
#[cfg(feature = "zookeeper")]
pub use registry::load_router_rules;
#[cfg(feature = "zookeeper")]
pub use registry::RegistryTarget;
pub use rudder_common::error::{RpcError, RpcErrorKind};
pub use rudder_common::invocation::Invocation;
pub use rudder_common::url::DubboUrl;
pub use rudder_common::value::JavaException;
pub use rudder_common::Value;
pub use service::MethodService;

/// The directory, balancer, load-balancing policies and cluster invoker.
pub use rudder_cluster as cluster;
/// Shared vocabulary: URLs, invocations, values, statistics, errors, clocks.
pub use rudder_common as common;
/// The dubbo:// client and server.
pub use rudder_rpc as rpc;
