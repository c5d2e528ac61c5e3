//! Set-up shared by the registry integration tests.

#![allow(dead_code)]

pub(crate) mod changes;
pub(crate) mod java_greeter;
pub(crate) mod nacos_config;
pub(crate) mod providers;
pub(crate) mod proxy;
pub(crate) mod session;
pub(crate) mod watch_lines;

use std::sync::Arc;
use std::time::Duration;

use rudder_cluster::directory::Directory;
use rudder_common::url::DubboUrl;
use rudder_it::ZooKeeperContainer;
use rudder_registry::{ConsumerSpec, Subscription, SubscriptionStatus, ZookeeperRegistry};
use zookeeper_client::{Acls, Client, CreateMode};

/// The longest any awaited condition may take: a guard, not a pause.
pub(crate) const WAIT: Duration = Duration::from_secs(60);

/// Where the tests' service keeps its providers.
pub(crate) const PROVIDERS: &str = "/dubbo/com.acme.Greeter/providers";
/// Where the tests' service keeps its consumers.
pub(crate) const CONSUMERS: &str = "/dubbo/com.acme.Greeter/consumers";

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

/// A registry client of `zookeeper` with the default options.
pub(crate) async fn registry(zookeeper: &ZooKeeperContainer) -> ZookeeperRegistry {
    ZookeeperRegistry::connect(
        &format!("zookeeper://{}", zookeeper.connect_string()),
        rudder_registry::RegistryOptions::default(),
    )
    .await
    .expect("the registry connects")
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

/// Writes a persistent `dubbo://<address>/com.acme.Greeter` provider node; returns its path.
pub(crate) async fn put_provider(client: &Client, address: &str) -> String {
    let persistent = CreateMode::Persistent.with_acls(Acls::anyone_all());
    client.mkdir(PROVIDERS, &persistent).await.expect("mkdir");
    let path = provider_path(address);
    client
        .create(&path, b"", &persistent)
        .await
        .expect("create provider");
    path
}

/// The node path of the provider `dubbo://<address>/com.acme.Greeter`.
pub(crate) fn provider_path(address: &str) -> String {
    let url = DubboUrl::parse(&format!("dubbo://{address}/com.acme.Greeter")).unwrap();
    format!("{PROVIDERS}/{}", url.to_node_name())
}

/// Waits for `condition` on the subscription's status, or fails the test saying `what` did not happen.
pub(crate) async fn must_reach(
    subscription: &Subscription,
    what: &str,
    condition: impl FnMut(&SubscriptionStatus) -> bool,
) -> SubscriptionStatus {
    match subscription.wait_for(WAIT, condition).await {
        Some(status) => status,
        None => panic!(
            "{what}: never happened; status {:?}",
            *subscription.status().borrow()
        ),
    }
}

/// The provider addresses in the directory, sorted.
pub(crate) fn addresses(directory: &Directory) -> Vec<String> {
    let mut addresses: Vec<String> = directory
        .snapshot()
        .providers()
        .iter()
        .map(|p| p.address().to_owned())
        .collect();
    addresses.sort();
    addresses
}
