//! The middle of rudder's data path: provider snapshots, load balancing and the cluster invoker.
//!
//! ```text
//! registry ──▶ directory ──▶ routers ──▶ cluster ──▶ load balance ──▶ rpc
//!              (snapshot)    (RouterChain) (Balancer) (LoadBalance)
//! ```
//!
//! * [`directory`] turns the registry's provider list into an immutable, atomically swapped snapshot.
//! * [`loadbalance`] holds Dubbo's five policies and the name registry that selects one per method.
//! * [`router`] keeps the providers a call may go to (tag and condition rules), between the two.
//! * [`balancer`] joins them: for each call it reads the current snapshot, resolves the policy and picks.
//! * [`zone_aware`] chooses one registry per call when a reference has several (Dubbo's zone-aware cluster).

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
