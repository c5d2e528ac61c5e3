//! rudder: call Apache Dubbo services from Rust, routed exactly as Dubbo's own consumer routes them.
//!
//! A [`Reference`] is a handle on one remote service. Behind it, rudder's data path runs in layers, each a
//! crate of its own:
//!
//! ```text
//! registry ──▶ directory ──▶ cluster ──▶ load balance ──▶ rpc
//! ```
//!
//! * the **registry** (`rudder-registry`) watches ZooKeeper for provider URLs and configurators;
//! * the **directory** ([`cluster::directory`]) keeps the usable providers as an immutable snapshot;
//! * the **cluster** ([`cluster::cluster`]) decides what a failure means (failover retries, failfast...);
//! * **load balancing** ([`cluster::loadbalance`]) picks a provider with Dubbo's algorithms and arithmetic;
//! * **rpc** ([`rpc`]) makes the dubbo:// call and counts it in the provider's statistics.
//!
//! # Examples
//!
//! See [`Reference`]; `rudder demo` runs the whole path against embedded providers.

mod caller;
mod error;
mod reference;
mod registry;

pub use error::{BuildError, CallError};
pub use reference::{ErasedArgument, Reference, ReferenceBuilder};
pub use rudder_common::error::{RpcError, RpcErrorKind};
pub use rudder_common::invocation::Invocation;
pub use rudder_common::url::DubboUrl;
pub use rudder_common::value::JavaException;
pub use rudder_common::Value;

/// The directory, balancer, load-balancing policies and cluster invoker.
pub use rudder_cluster as cluster;
/// Shared vocabulary: URLs, invocations, errors, clocks.
pub use rudder_common as common;
/// The Hessian 2.0 codec.
pub use rudder_hessian as hessian;
/// The dubbo:// client and server, and call statistics.
pub use rudder_rpc as rpc;
