//! Harness for rudder integration tests (ZooKeeper in testcontainers, real Dubbo peers).
//!
//! ZooKeeper runs in Docker through testcontainers, with host networking and a loopback port
//! chosen per container, so tests never touch anything but 127.0.0.1. The image is built
//! locally (no registry needed) by `scripts/it-setup.sh`, which also starts a Docker engine.
//!
//! ```no_run
//! # async fn demo() -> Result<(), rudder_it::HarnessError> {
//! let zookeeper = rudder_it::ZooKeeperContainer::start().await?;
//! let client = zookeeper_client::Client::connect(&zookeeper.connect_string()).await.unwrap();
//! # Ok(()) }
//! ```

mod cli;
pub mod doc_examples;
mod error;
mod loopback;
mod peers;
mod rnacos;
mod zookeeper_container;
mod zookeeper_image;
mod zookeeper_secure;

pub use cli::{run_rudder, CliOutput};
pub use error::HarnessError;
pub use peers::{Peer, PeerConfig, PeerKind};
pub use rnacos::{RaftMembership, RaftMetrics, Rnacos, RNACOS_BIN_ENV, SKIP_NACOS_ENV};
pub use zookeeper_container::ZooKeeperContainer;
pub use zookeeper_image::{ZooKeeperImage, DEFAULT_ZOOKEEPER_IMAGE, ZOOKEEPER_IMAGE_ENV};
pub use zookeeper_secure::{SecureZooKeeper, ServerExtras, TestPki};
