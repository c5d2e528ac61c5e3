//! The middle of rudder's data path: provider snapshots, routing, load balancing and the cluster
//! invoker.
//!
//! ```text
//! registry ──▶ directory ──▶ routers ──▶ cluster ──▶ load balance ──▶ rpc
//!              (snapshot)    (RouterChain) (Balancer) (LoadBalance)
//! ```
//!
//! A registry (rudder-registry, or anything that emits provider changes) fills a [`directory`]; the
//! facade (`rudder`) runs each call through the routers, a cluster mode and a pick, and hands the chosen
//! provider to the rpc layer (rudder-rpc, rudder-triple). Nothing here opens a socket.
//!
//! * [`directory`] turns the registry's provider list into an immutable, atomically swapped snapshot.
//! * [`router`] keeps the providers a call may go to (tag and condition rules), between the two.
//! * [`loadbalance`] holds the eight built-in policies (Dubbo's `random`, `roundrobin`, `leastactive`,
//!   `shortestresponse`, `consistenthash` and `adaptive`; rudder's `p2c` and `peakewma`) and the name
//!   registry that selects one per method.
//! * [`balancer`] joins them: for each call it reads the current snapshot, resolves the policy and picks.
//! * [`cluster`] decides what a failure means ([`cluster::ClusterMode`]: failover, failfast, forking...).
//! * [`zone_aware`] chooses one registry per call when a reference has several (Dubbo's zone-aware cluster).
//!
//! ```
//! use std::sync::Arc;
//! use rudder_cluster::{balancer::Balancer, directory::Directory};
//! use rudder_common::{clock::ManualClock, invocation::Invocation, url::DubboUrl};
//!
//! let directory = Arc::new(Directory::default());
//! directory.replace(vec![
//!     DubboUrl::parse("dubbo://10.0.0.1:20880/S?loadbalance=roundrobin&weight=2")?,
//!     DubboUrl::parse("dubbo://10.0.0.2:20880/S?weight=1")?,
//! ]);
//! let balancer = Balancer::builder(directory).clock(Arc::new(ManualClock::new(0))).seed(7).build();
//! let call = Invocation::new("sayHello", vec![], vec![]);
//! let picks: Vec<String> =
//!     (0..3).map(|_| balancer.select(&call, &[]).unwrap().address().to_owned()).collect();
//! assert_eq!(picks, ["10.0.0.1:20880", "10.0.0.2:20880", "10.0.0.1:20880"]);
//! # Ok::<(), rudder_common::url::UrlError>(())
//! ```

pub mod balancer;
pub mod cluster;
pub mod directory;
pub mod loadbalance;
pub mod provider;
pub mod rng;
pub mod router;
// The per-method view and the pick context, below both `router` and `loadbalance` (public there).
mod view;
pub mod zone_aware;
