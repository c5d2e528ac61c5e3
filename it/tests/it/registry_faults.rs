//! The ZooKeeper registry when ZooKeeper misbehaves: unreachable at start, down for 30 seconds, and a
//! session expired by a frozen server.
//!
//! Network partitions (ZooKeeper serving others meanwhile), sessions expired by the server and consumer
//! nodes refused by an ACL are in `registry_partitions.rs`.
//!
//! Needs Docker and the local image: run `scripts/it-setup.sh` first. The 30-second outage is part of
//! what is being tested (picks must keep working throughout), not a synchronisation sleep.

use crate::common;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{must_reach, put_provider, CONSUMERS};
use rudder_cluster::balancer::Balancer;
use rudder_cluster::directory::Directory;
use rudder_common::invocation::Invocation;
use rudder_it::ZooKeeperContainer;
use rudder_registry::{
    ConsumerSpec, RegistryError, RegistryOptions, Subscription, ZookeeperRegistry,
};

const OUTAGE: Duration = Duration::from_secs(30);

async fn subscribe(
    zookeeper: &ZooKeeperContainer,
    options: RegistryOptions,
) -> (ZookeeperRegistry, Arc<Directory>, Subscription) {
    let url = format!("zookeeper://{}", zookeeper.connect_string());
    let registry = ZookeeperRegistry::connect(&url, options)
        .await
        .expect("registry connects");
    let (directory, subscription) =
        common::subscribe(&registry, ConsumerSpec::new("com.acme.Greeter")).await;
    (registry, directory, subscription)
}

fn pick(balancer: &Balancer) -> String {
    let call = Invocation::new("sayHello", vec![], vec![]);
    match balancer.select(&call, &[]) {
        Ok(provider) => provider.address().to_owned(),
        Err(error) => panic!("pick failed while ZooKeeper was away: {error}"),
    }
}

#[tokio::test]
async fn unreachable_zookeeper_fails_clearly_within_the_wait() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let options = RegistryOptions::default().with_connect_timeout(Duration::from_secs(2));
    let started = Instant::now();
    let result =
        ZookeeperRegistry::connect(&format!("zookeeper://127.0.0.1:{port}"), options).await;
    let waited = started.elapsed();
    // Nothing listens there: said at once (registry_verdicts.rs has the other verdicts).
    match result {
        Err(error @ RegistryError::Refused { .. }) => {
            assert!(
                error.to_string().contains(&format!("127.0.0.1:{port}")),
                "{error}"
            );
            assert!(error.is_retryable());
        }
        other => panic!("expected Refused, got {other:?}"),
    }
    assert!(waited < Duration::from_secs(10), "waited {waited:?}");
}

#[tokio::test]
async fn thirty_seconds_without_zookeeper_keep_picks_working_and_resync_after() {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    put_provider(&zk, "127.0.0.1:20880").await;
    put_provider(&zk, "127.0.0.1:20881").await;
    drop(zk);
    let options = RegistryOptions::default()
        .with_connect_timeout(Duration::from_secs(3))
        .with_session_timeout(Duration::from_secs(10))
        .with_retry(Duration::from_millis(100), Duration::from_secs(1));
    let (registry, directory, subscription) = subscribe(&zookeeper, options).await;
    let balancer = Balancer::builder(Arc::clone(&directory)).build();
    assert_eq!(directory.snapshot().providers().len(), 2);

    zookeeper.stop().await.expect("stop ZooKeeper");
    must_reach(&subscription, "disconnect noticed", |s| !s.connected).await;
    let down_since = Instant::now();
    let mut picked = 0u64;
    let mut ticks = tokio::time::interval(Duration::from_millis(10));
    while down_since.elapsed() < OUTAGE {
        ticks.tick().await;
        pick(&balancer);
        picked += 1;
    }
    assert_eq!(
        directory.snapshot().providers().len(),
        2,
        "providers lost during the outage"
    );
    assert!(picked > 1_000, "only {picked} picks in {OUTAGE:?}");

    zookeeper.start_again().await.expect("restart ZooKeeper");
    let zk = common::writer(&zookeeper).await;
    put_provider(&zk, "127.0.0.1:20882").await;
    must_reach(&subscription, "re-synced after restart", |s| {
        s.connected && s.registered && s.providers == 3
    })
    .await;
    let consumers = zk.list_children(CONSUMERS).await.expect("consumers listed");
    assert_eq!(consumers.len(), 1, "consumer node back: {consumers:?}");
    pick(&balancer);
    registry.close().await;
}

#[tokio::test]
async fn an_expired_session_is_replaced_and_the_consumer_registered_again() {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    put_provider(&zk, "127.0.0.1:20880").await;
    let options = RegistryOptions::default()
        .with_connect_timeout(Duration::from_secs(2))
        .with_session_timeout(Duration::from_secs(2))
        .with_retry(Duration::from_millis(100), Duration::from_secs(1));
    let (registry, directory, subscription) = subscribe(&zookeeper, options).await;
    let balancer = Balancer::builder(Arc::clone(&directory)).build();
    let consumers = zk.list_children(CONSUMERS).await.expect("consumers listed");
    assert_eq!(consumers.len(), 1);
    let node = format!("{CONSUMERS}/{}", consumers[0]);
    let (_, first) = zk.get_data(&node).await.expect("consumer node");
    drop(zk);
    assert_eq!(registry.sessions_established(), 1);

    zookeeper.pause().await.expect("pause ZooKeeper");
    must_reach(&subscription, "session loss noticed", |s| !s.registered).await;
    assert_eq!(pick(&balancer), "127.0.0.1:20880");
    zookeeper.unpause().await.expect("unpause ZooKeeper");

    must_reach(&subscription, "new session registered", |s| {
        s.sessions >= 2 && s.registered && s.connected
    })
    .await;
    assert!(registry.sessions_established() >= 2);
    let zk = common::writer(&zookeeper).await;
    let (_, again) = zk.get_data(&node).await.expect("consumer node re-created");
    assert_ne!(
        again.ephemeral_owner, first.ephemeral_owner,
        "the consumer node belongs to the new session"
    );

    // Watches were re-armed in the new session.
    put_provider(&zk, "127.0.0.1:20881").await;
    must_reach(&subscription, "provider after renewal", |s| {
        s.providers == 2
    })
    .await;
    registry.close().await;
}
