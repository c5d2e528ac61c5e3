//! Empty-push protection on ZooKeeper (Nacos's is in `nacos_discovery`): a providers node emptied
//! clears the directory by default, as Dubbo 3.3 does, and keeps the last providers with
//! `enable-empty-protection=true` on the registry URL, said in the subscription's status.

use std::sync::Arc;

use rudder_cluster::directory::Directory;
use rudder_registry::{ConsumerSpec, Registry, RegistryOptions};

use crate::common;

/// One provider listed, then its node deleted; waits for `settled`, then gives the providers left
/// in the directory and the status.
async fn emptied(
    query: &str,
    settled: impl FnMut(&rudder_registry::SubscriptionStatus) -> bool,
) -> (usize, rudder_registry::SubscriptionStatus) {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    let path = common::put_provider(&zk, "127.0.0.1:20880").await;
    let url = format!("zookeeper://{}{query}", zookeeper.connect_string());
    let registry: Arc<dyn Registry> =
        rudder_registry::connect(&url, RegistryOptions::default(), None)
            .await
            .unwrap();
    let directory = Arc::new(Directory::default());
    let subscription = registry
        .subscribe(
            ConsumerSpec::new("com.acme.Greeter"),
            Arc::clone(&directory) as _,
            None,
        )
        .await
        .unwrap();
    assert_eq!(common::addresses(&directory), ["127.0.0.1:20880"]);
    zk.delete(&path, None).await.unwrap();
    let status = common::must_reach(&subscription, "the empty list is read", settled).await;
    let left = common::addresses(&directory).len();
    subscription.close().await;
    registry.close().await;
    (left, status)
}

#[tokio::test]
async fn an_emptied_providers_node_clears_by_default_and_is_kept_with_protection() {
    let (left, status) = emptied("", |s| s.providers == 0).await;
    assert_eq!(left, 0, "Dubbo's default clears");
    assert!(!status.empty_protected);

    let (left, status) = emptied("?enable-empty-protection=true", |s| {
        s.empty_pushes_kept == 1
    })
    .await;
    assert_eq!(left, 1, "the last provider is kept");
    assert!(status.empty_protected);
    assert_eq!(status.empty_pushes_kept, 1);
}
