//! Registry wiring (feature `zookeeper`): one connection per registry, shared by a consumer's
//! references; one subscription per reference and registry.
//!
//! The facade reaches registries only through [`rudder_registry::Registry`] trait objects, opened by
//! the factory of the registry URL's scheme ([`rudder_registry::open`]): nothing here knows which
//! registry it talks to, nor its paths, sessions or server settings.
//!
//! One concern per module, each handed what it needs rather than the consumer:
//!
//! * `target`: a registry URL as a reference reads it (the choice parameters `zone`, `weight`,
//!   `preferred` stripped, its `timeout`, the reference's `check`);
//! * `pool`: the open registries by identity, leased by references and closed when idle;
//! * `attach`: one reference attached to each of its registries, a task per registry following the
//!   subscription (into a directory that prunes through [`Keeper`](crate::prune::Keeper)) and the
//!   router rules;
//! * `rules`: the router rules of one reference, from the config centre to its router chains;
//! * `samples`: the status of live subscriptions, for the metrics (feature `metrics`).

mod attach;
mod pool;
mod rules;
#[cfg(feature = "metrics")]
mod samples;
mod target;

pub(crate) use attach::{attach_all, Attachment};
pub(crate) use pool::Registries;
pub use rules::load_router_rules;
pub(crate) use target::check;
pub use target::RegistryTarget;
