//! The ZooKeeper registry against a real ZooKeeper: discovery, filtering, configurators, malformed nodes,
//! consumer registration and a 10,000-provider service.
//!
//! Needs Docker and the local image: run `scripts/it-setup.sh` first.

use crate::common;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rudder_cluster::balancer::Balancer;
use rudder_cluster::directory::Directory;
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_it::ZooKeeperContainer;
use rudder_registry::{ConsumerSpec, RegistryOptions, Subscription, ZookeeperRegistry};
use zookeeper_client::{Acls, Client, CreateMode};

/// Upper bound for anything the tests wait on; generous for a loaded 2-core machine.
const WAIT: Duration = Duration::from_secs(30);

fn options() -> RegistryOptions {
    RegistryOptions::default()
        .with_connect_timeout(Duration::from_secs(5))
        .with_retry(Duration::from_millis(100), Duration::from_secs(1))
}

async fn registry(zookeeper: &ZooKeeperContainer) -> ZookeeperRegistry {
    let url = format!("zookeeper://{}", zookeeper.connect_string());
    ZookeeperRegistry::connect(&url, options())
        .await
        .expect("registry connects")
}

/// Creates `/dubbo/<interface>/<category>/<encoded url>` (persistent) and returns its path.
async fn put(client: &Client, category: &str, url: &str) -> String {
    let url = DubboUrl::parse(url).expect("test URL parses");
    put_raw(
        client,
        url.service_interface(),
        category,
        &url.to_node_name(),
    )
    .await
}

async fn put_raw(client: &Client, interface: &str, category: &str, node: &str) -> String {
    let persistent = CreateMode::Persistent.with_acls(Acls::anyone_all());
    let parent = format!("/dubbo/{interface}/{category}");
    client.mkdir(&parent, &persistent).await.expect("mkdir");
    let path = format!("{parent}/{node}");
    client
        .create(&path, b"", &persistent)
        .await
        .expect("create node");
    path
}

async fn wait_providers(subscription: &Subscription, n: usize) {
    let seen = subscription.wait_for(WAIT, |s| s.providers == n).await;
    assert!(
        seen.is_some(),
        "directory never reached {n} providers: {:?}",
        *subscription.status().borrow()
    );
}

fn addresses(directory: &Directory) -> Vec<String> {
    directory
        .snapshot()
        .providers()
        .iter()
        .map(|p| p.address().to_owned())
        .collect()
}

#[tokio::test]
async fn providers_appear_and_disappear() {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    let a = put(
        &zk,
        "providers",
        "dubbo://127.0.0.1:20880/com.acme.Greeter?weight=100",
    )
    .await;
    let registry = registry(&zookeeper).await;
    let (directory, subscription) =
        common::subscribe(&registry, ConsumerSpec::new("com.acme.Greeter")).await;
    assert_eq!(addresses(&directory), ["127.0.0.1:20880"]);

    // rudder speaks dubbo:// and tri:// only, so a rest:// provider is not offered to the balancer.
    put(&zk, "providers", "rest://127.0.0.1:50051/com.acme.Greeter").await;
    put(&zk, "providers", "dubbo://127.0.0.1:20881/com.acme.Greeter").await;
    wait_providers(&subscription, 2).await;
    assert_eq!(
        addresses(&directory),
        ["127.0.0.1:20880", "127.0.0.1:20881"]
    );

    zk.delete(&a, None).await.expect("delete provider");
    wait_providers(&subscription, 1).await;
    assert_eq!(addresses(&directory), ["127.0.0.1:20881"]);

    // The consumer is registered where Java tools look, and removed on close.
    let consumers = zk
        .list_children("/dubbo/com.acme.Greeter/consumers")
        .await
        .expect("consumers listed");
    assert_eq!(consumers.len(), 1, "{consumers:?}");
    let consumer = DubboUrl::from_node_name(&consumers[0]).expect("consumer node parses");
    assert_eq!(consumer.protocol(), "consumer");
    assert_eq!(consumer.parameter("category"), Some("consumers"));
    assert_eq!(consumer.parameter("side"), Some("consumer"));
    // An empty list read over a live connection means no provider.
    let b = format!(
        "/dubbo/com.acme.Greeter/providers/{}",
        DubboUrl::parse("dubbo://127.0.0.1:20881/com.acme.Greeter")
            .unwrap()
            .to_node_name()
    );
    zk.delete(&b, None).await.expect("delete last provider");
    wait_providers(&subscription, 0).await;
    assert!(directory.snapshot().providers().is_empty());

    subscription.close().await;
    let consumers = zk
        .list_children("/dubbo/com.acme.Greeter/consumers")
        .await
        .expect("consumers listed");
    assert!(consumers.is_empty(), "{consumers:?}");
    registry.close().await;
}

#[tokio::test]
async fn version_and_group_filter_providers() {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    for url in [
        "dubbo://127.0.0.1:1/com.acme.Shop?version=1.0.0&group=blue",
        "dubbo://127.0.0.1:2/com.acme.Shop?version=1.0.0&group=green",
        "dubbo://127.0.0.1:3/com.acme.Shop?version=2.0.0&group=blue",
        "dubbo://127.0.0.1:4/com.acme.Shop?version=1.0.0",
        "rest://127.0.0.1:5/com.acme.Shop?version=1.0.0&group=blue",
        "dubbo://127.0.0.1:6/com.acme.Shop?version=1.0.0&group=blue&enabled=false",
    ] {
        put(&zk, "providers", url).await;
    }
    let registry = registry(&zookeeper).await;
    let cases: [(ConsumerSpec, &[&str]); 4] = [
        (
            ConsumerSpec::new("com.acme.Shop")
                .version("1.0.0")
                .group("blue"),
            &["127.0.0.1:1"],
        ),
        (
            ConsumerSpec::new("com.acme.Shop")
                .version("1.0.0")
                .group("blue,green"),
            &["127.0.0.1:1", "127.0.0.1:2"],
        ),
        (
            ConsumerSpec::new("com.acme.Shop")
                .version("*")
                .group("blue"),
            &["127.0.0.1:1", "127.0.0.1:3"],
        ),
        (
            ConsumerSpec::new("com.acme.Shop").version("1.0.0"),
            &["127.0.0.1:4"],
        ),
    ];
    for (spec, expected) in cases {
        let (directory, subscription) = common::subscribe(&registry, spec.clone()).await;
        let mut got = addresses(&directory);
        got.sort();
        assert_eq!(got, expected, "{spec:?}");
        subscription.close().await;
    }
    registry.close().await;
}

fn picks(balancer: &Balancer, n: usize) -> (usize, usize) {
    let call = Invocation::new("sayHello", vec![], vec![]);
    let mut first = 0;
    for _ in 0..n {
        let chosen = balancer.select(&call, &[]).expect("a provider is picked");
        if chosen.address() == "127.0.0.1:20880" {
            first += 1;
        }
    }
    (first, n - first)
}

#[tokio::test]
async fn a_configurator_weight_change_shows_in_the_next_picks() {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    put(
        &zk,
        "providers",
        "dubbo://127.0.0.1:20880/com.acme.Greeter?loadbalance=roundrobin",
    )
    .await;
    put(
        &zk,
        "providers",
        "dubbo://127.0.0.1:20881/com.acme.Greeter?loadbalance=roundrobin",
    )
    .await;
    let registry = registry(&zookeeper).await;
    let (directory, subscription) =
        common::subscribe(&registry, ConsumerSpec::new("com.acme.Greeter")).await;
    let balancer = Balancer::builder(Arc::clone(&directory)).seed(1).build();
    assert_eq!(picks(&balancer, 400), (200, 200));

    let before = subscription.status().borrow().generation;
    let rule = put(
        &zk,
        "configurators",
        "override://127.0.0.1:20880/com.acme.Greeter?category=configurators&dynamic=false&weight=300",
    )
    .await;
    subscription
        .wait_for(WAIT, |s| s.generation > before)
        .await
        .expect("the rule reaches the directory");
    assert_eq!(subscription.status().borrow().configurators, 1);
    let (heavy, light) = picks(&balancer, 400);
    assert!(
        (295..=305).contains(&heavy),
        "{heavy}/{light} after weight=300"
    );

    // Removing the rule restores the registered weights.
    let before = subscription.status().borrow().generation;
    zk.delete(&rule, None).await.expect("delete rule");
    subscription
        .wait_for(WAIT, |s| s.generation > before)
        .await
        .expect("the removal reaches the directory");
    let (a, b) = picks(&balancer, 400);
    assert!((195..=205).contains(&a), "{a}/{b} after the rule is gone");
    registry.close().await;
}

#[tokio::test]
async fn a_disabling_configurator_removes_the_provider() {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    put(&zk, "providers", "dubbo://127.0.0.1:20880/com.acme.Greeter").await;
    put(&zk, "providers", "dubbo://127.0.0.1:20881/com.acme.Greeter").await;
    let registry = registry(&zookeeper).await;
    let (directory, subscription) =
        common::subscribe(&registry, ConsumerSpec::new("com.acme.Greeter")).await;
    put(
        &zk,
        "configurators",
        "override://127.0.0.1:20881/com.acme.Greeter?category=configurators&disabled=true",
    )
    .await;
    wait_providers(&subscription, 1).await;
    assert_eq!(addresses(&directory), ["127.0.0.1:20880"]);
    registry.close().await;
}

#[tokio::test]
async fn malformed_nodes_are_skipped_and_counted() {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    put(&zk, "providers", "dubbo://127.0.0.1:20880/com.acme.Greeter").await;
    put_raw(&zk, "com.acme.Greeter", "providers", "dubbo%3A%2F%2F%ZZ").await;
    put_raw(
        &zk,
        "com.acme.Greeter",
        "providers",
        "dubbo%3A%2F%2F127.0.0.1%3A99999%2Fx",
    )
    .await;
    put(
        &zk,
        "providers",
        "dubbo://127.0.0.1:20881/com.acme.Greeter?weight=heavy",
    )
    .await;
    let registry = registry(&zookeeper).await;
    let (directory, subscription) =
        common::subscribe(&registry, ConsumerSpec::new("com.acme.Greeter")).await;
    // An unusable parameter value never drops its provider: the value is ignored (weight 100).
    assert_eq!(
        addresses(&directory),
        ["127.0.0.1:20880", "127.0.0.1:20881"]
    );
    assert_eq!(
        directory.snapshot().providers()[1].configured_weight("m"),
        100
    );
    let status = subscription.status().borrow().clone();
    assert_eq!(status.malformed, 2, "{status:?}");
    assert_eq!(status.rejected, 0, "{status:?}");

    // A good provider added later still arrives.
    put(&zk, "providers", "dubbo://127.0.0.1:20882/com.acme.Greeter").await;
    wait_providers(&subscription, 3).await;
    registry.close().await;
}

#[tokio::test]
async fn ten_thousand_providers_load_and_one_change_applies() {
    const N: usize = 10_000;
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    let persistent = CreateMode::Persistent.with_acls(Acls::anyone_all());
    let parent = "/dubbo/com.acme.Big/providers";
    zk.mkdir(parent, &persistent).await.expect("mkdir");
    let node = |i: usize| {
        let url = format!(
            "dubbo://10.{}.{}.{}:20880/com.acme.Big?application=big&dubbo=2.0.2&interface=com.acme.Big\
             &methods=sayHello&release=3.3.1&side=provider&timestamp=1714144945493&weight=100",
            i / 65_536,
            (i / 256) % 256,
            i % 256
        );
        format!("{parent}/{}", DubboUrl::parse(&url).unwrap().to_node_name())
    };
    let paths: Vec<String> = (0..N).map(node).collect();
    // Pipelined: each `create` is sent when called; awaiting in chunks bounds what is in flight.
    for chunk in paths.chunks(1_000) {
        let pending: Vec<_> = chunk
            .iter()
            .map(|p| zk.create(p, b"", &persistent))
            .collect();
        for created in pending {
            created.await.expect("create provider");
        }
    }

    let registry = registry(&zookeeper).await;
    let directory = Arc::new(Directory::default());
    let started = Instant::now();
    let subscription = registry
        .subscribe(ConsumerSpec::new("com.acme.Big"), Arc::clone(&directory))
        .await
        .expect("subscribe");
    let load = started.elapsed();
    assert_eq!(directory.snapshot().providers().len(), N);

    let extra = node(N);
    let started = Instant::now();
    zk.create(&extra, b"", &persistent)
        .await
        .expect("create one more");
    wait_providers(&subscription, N + 1).await;
    let one_change = started.elapsed();
    eprintln!(
        "10,000 providers: initial load {load:?}, one added provider applied in {one_change:?}"
    );
    assert!(addresses(&directory).contains(&"10.0.39.16:20880".to_owned()));
    registry.close().await;
}

#[tokio::test]
async fn backup_hosts_credentials_and_chroot_are_honoured() {
    let zookeeper = common::zookeeper().await;
    let dead_port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    // The first host is dead; the backup answers. Nodes go under the chroot, readable only with the
    // credentials (Dubbo's CREATOR_ALL_ACL).
    let url = format!(
        "zookeeper://app:s3cret@127.0.0.1:{dead_port}?backup={}&chroot=/prod",
        zookeeper.connect_string()
    );
    let registry = ZookeeperRegistry::connect(&url, options())
        .await
        .expect("connects through the backup host");
    assert!(!format!("{registry:?}").contains("s3cret"));
    let (directory, subscription) =
        common::subscribe(&registry, ConsumerSpec::new("com.acme.Greeter")).await;
    let providers = "/prod/dubbo/com.acme.Greeter/providers";
    let anonymous = common::writer(&zookeeper).await;
    assert_eq!(
        anonymous.list_children(providers).await,
        Err(zookeeper_client::Error::NoAuth)
    );
    let owner = Client::connector()
        .with_auth("digest", b"app:s3cret")
        .connect(&zookeeper.connect_string())
        .await
        .expect("owner connects");
    let url = DubboUrl::parse("dubbo://127.0.0.1:20880/com.acme.Greeter").unwrap();
    owner
        .create(
            &format!("{providers}/{}", url.to_node_name()),
            b"",
            &CreateMode::Persistent.with_acls(Acls::creator_all()),
        )
        .await
        .expect("create under the chroot");
    wait_providers(&subscription, 1).await;
    assert_eq!(addresses(&directory), ["127.0.0.1:20880"]);
    registry.close().await;
}
