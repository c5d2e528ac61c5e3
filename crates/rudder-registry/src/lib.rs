//! rudder-registry: finds a service's providers in ZooKeeper, the way a Dubbo consumer does.
pub mod catalog;
pub mod configurator;
pub mod matching;

mod address;
mod consumer;
mod error;

pub use address::RegistryAddress;
pub use consumer::ConsumerSpec;
pub use error::RegistryError;
