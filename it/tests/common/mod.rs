//! Set-up shared by the registry integration tests.

#![allow(dead_code)]

use std::sync::Arc;

use rudder_cluster::directory::Directory;
use rudder_it::ZooKeeperContainer;
use rudder_registry::{ConsumerSpec, Subscription, ZookeeperRegistry};
use zookeeper_client::Client;

/// A ZooKeeper in a container, or a panic saying how to get one.
pub(crate) async fn zookeeper() -> ZooKeeperContainer {
    ZooKeeperContainer::start()
        .await
        .unwrap_or_else(|err| panic!("{err}"))
}

/// A plain client for the test to write nodes with, as a provider or an operator would.
pub(crate) async fn writer(zookeeper: &ZooKeeperContainer) -> Client {
    Client::connect(&zookeeper.connect_string())
        .await
        .expect("writer connects")
}

/// Subscribes a fresh directory to `spec`; it holds the first listing when this returns.
pub(crate) async fn subscribe(
    registry: &ZookeeperRegistry,
    spec: ConsumerSpec,
) -> (Arc<Directory>, Subscription) {
    let directory = Arc::new(Directory::default());
    let subscription = registry
        .subscribe(spec, Arc::clone(&directory))
        .await
        .expect("subscribe");
    (directory, subscription)
}
