//! The ZooKeeper registry across network trouble between rudder and a ZooKeeper that keeps serving
//! everyone else, and across a consumer node it may not write.
//!
//! A proxy (`common::proxy`) stands between rudder and ZooKeeper and is cut and restored; writers and
//! providers that are not behind it keep working meanwhile. What `registry_faults.rs` covers (ZooKeeper
//! unreachable at start, stopped for 30 s, frozen until sessions expire on the client's clock) is not
//! repeated here. Every wait is on a status or ZooKeeper event, bounded by `common::WAIT`.
//!
//! Needs Docker and the local image: run `scripts/it-setup.sh` first.

use crate::common;
use std::time::{Duration, Instant};

use crate::common::proxy::ZkProxy;
use crate::common::{addresses, must_reach, provider_path, put_provider, CONSUMERS, WAIT};
use rudder_common::url::DubboUrl;
use rudder_registry::{ConsumerSpec, RegistryOptions, ZookeeperRegistry};
use zookeeper_client::{Acl, Acls, AuthId, Client, CreateMode, EventType, Permission};

/// The consumer's session timeout: far longer than any outage here except the one that expires it.
const SESSION: Duration = Duration::from_secs(20);

fn greeter() -> ConsumerSpec {
    ConsumerSpec::new("com.acme.Greeter")
}

async fn connect(connect_string: &str, session: Duration) -> ZookeeperRegistry {
    let options = RegistryOptions::default()
        .with_connect_timeout(Duration::from_secs(5))
        .with_session_timeout(session)
        .with_retry(Duration::from_millis(100), Duration::from_secs(1));
    ZookeeperRegistry::connect(&format!("zookeeper://{connect_string}"), options)
        .await
        .expect("registry connects")
}

fn local(ports: &[u16]) -> Vec<String> {
    ports.iter().map(|p| format!("127.0.0.1:{p}")).collect()
}

#[tokio::test]
async fn a_short_outage_keeps_the_session_and_shows_changes_made_meanwhile() {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    let gone = put_provider(&zk, "127.0.0.1:20880").await;
    put_provider(&zk, "127.0.0.1:20881").await;
    let proxy = ZkProxy::start(zookeeper.port()).await;
    let registry = connect(&proxy.connect_string(), SESSION).await;
    let (directory, subscription) = common::subscribe(&registry, greeter()).await;
    assert_eq!(addresses(&directory), local(&[20880, 20881]));

    proxy.cut();
    let cut_at = Instant::now();
    must_reach(&subscription, "disconnect noticed", |s| !s.connected).await;
    // Another session changes the providers while this consumer cannot see ZooKeeper.
    zk.delete(&gone, None).await.expect("delete provider");
    put_provider(&zk, "127.0.0.1:20882").await;
    assert_eq!(
        addresses(&directory),
        local(&[20880, 20881]),
        "the last known providers are kept while disconnected"
    );
    proxy.restore();

    let expected = local(&[20881, 20882]);
    let status = must_reach(&subscription, "changes seen after reconnecting", |s| {
        s.connected && addresses(&directory) == expected
    })
    .await;
    assert!(
        cut_at.elapsed() < SESSION,
        "the outage outlasted the session"
    );
    assert_eq!(registry.sessions_established(), 1, "same session");
    assert_eq!(status.sessions, 1);
    assert!(status.registered, "the consumer node lived on: {status:?}");
    assert_eq!(
        zk.list_children(CONSUMERS).await.expect("consumers").len(),
        1
    );
    registry.close().await;
}

#[tokio::test]
async fn a_session_expired_by_the_server_is_replaced_and_everything_relisted() {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    let gone = put_provider(&zk, "127.0.0.1:20880").await;
    put_provider(&zk, "127.0.0.1:20881").await;
    let proxy = ZkProxy::start(zookeeper.port()).await;
    let registry = connect(&proxy.connect_string(), SESSION).await;
    let (directory, subscription) = common::subscribe(&registry, greeter()).await;
    let consumers = zk.list_children(CONSUMERS).await.expect("consumers");
    assert_eq!(consumers.len(), 1);
    let node = format!("{CONSUMERS}/{}", consumers[0]);
    let (_, stat) = zk.get_data(&node).await.expect("consumer node");
    let first_session = stat.ephemeral_owner;

    proxy.cut();
    let cut_at = Instant::now();
    must_reach(&subscription, "disconnect noticed", |s| !s.connected).await;
    let password = proxy
        .password_of(first_session)
        .expect("the consumer's session went through the proxy");
    common::session::expire(zookeeper.port(), first_session, &password).await;
    assert!(
        zk.check_stat(&node).await.expect("stat").is_none(),
        "the server dropped the consumer node with the session"
    );
    zk.delete(&gone, None).await.expect("delete provider");
    put_provider(&zk, "127.0.0.1:20882").await;
    proxy.restore();

    let expected = local(&[20881, 20882]);
    let status = must_reach(
        &subscription,
        "new session, re-registered, re-listed",
        |s| s.sessions == 2 && s.connected && s.registered && addresses(&directory) == expected,
    )
    .await;
    // The client's own expiry clock runs 1.4 session timeouts: this renewal was the server's word.
    assert!(cut_at.elapsed() < SESSION, "took {:?}", cut_at.elapsed());
    assert_eq!(registry.sessions_established(), 2);
    assert_eq!(status.registration_error, None);
    let (_, again) = zk.get_data(&node).await.expect("consumer node re-created");
    assert_ne!(again.ephemeral_owner, first_session);

    // The new session's watches are armed.
    put_provider(&zk, "127.0.0.1:20883").await;
    must_reach(&subscription, "a provider added after renewal", |s| {
        s.providers == 3
    })
    .await;
    registry.close().await;
}

#[tokio::test]
async fn a_provider_that_expires_during_an_outage_is_gone_after_it() {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    put_provider(&zk, "127.0.0.1:20881").await;
    let proxy = ZkProxy::start(zookeeper.port()).await;
    // The provider is cut off too, and its short session ends on the server during the outage.
    let provider = connect(&proxy.connect_string(), Duration::from_secs(2)).await;
    let url = DubboUrl::parse("dubbo://127.0.0.1:20880/com.acme.Greeter").unwrap();
    provider
        .register_provider(&url)
        .await
        .expect("provider registers");
    let ephemeral = provider_path("127.0.0.1:20880");
    let registry = connect(&proxy.connect_string(), SESSION).await;
    let (directory, subscription) = common::subscribe(&registry, greeter()).await;
    assert_eq!(addresses(&directory), local(&[20880, 20881]));
    let (stat, deleted) = zk
        .check_and_watch_stat(&ephemeral)
        .await
        .expect("watch the provider node");
    assert!(stat.is_some_and(|s| s.ephemeral_owner != 0));

    proxy.cut();
    must_reach(&subscription, "disconnect noticed", |s| !s.connected).await;
    let event = tokio::time::timeout(WAIT, deleted.changed())
        .await
        .expect("the provider's session expired on the server");
    assert_eq!(event.event_type, EventType::NodeDeleted);
    assert_eq!(
        addresses(&directory),
        local(&[20880, 20881]),
        "kept while disconnected"
    );
    proxy.restore();

    let expected = local(&[20881]);
    must_reach(&subscription, "expired provider removed", |s| {
        s.connected && addresses(&directory) == expected
    })
    .await;
    assert_eq!(registry.sessions_established(), 1);
    provider.close().await;
    registry.close().await;
}

#[tokio::test]
async fn a_consumer_node_refused_by_an_acl_does_not_stop_discovery() {
    let zookeeper = common::zookeeper().await;
    // An administrator owns the consumers node: others may only read it.
    let admin = Client::connector()
        .with_auth("digest", b"admin:adm1n-pass")
        .connect(&zookeeper.connect_string())
        .await
        .expect("admin connects");
    let open = CreateMode::Persistent.with_acls(Acls::anyone_all());
    admin
        .mkdir("/dubbo/com.acme.Greeter", &open)
        .await
        .expect("service node");
    let owned = [
        Acl::new(Permission::ALL, AuthId::authed()),
        Acl::new(Permission::READ, AuthId::anyone()),
    ];
    admin
        .create(
            CONSUMERS,
            b"",
            &CreateMode::Persistent.with_acls(Acls::new(&owned)),
        )
        .await
        .expect("consumers node");
    put_provider(&admin, "127.0.0.1:20880").await;

    let registry = connect(&zookeeper.connect_string(), SESSION).await;
    let (directory, subscription) = common::subscribe(&registry, greeter()).await;
    let status = subscription.status().borrow().clone();
    assert!(!status.registered);
    let error = status.registration_error.expect("the refusal is reported");
    assert!(
        error.contains(CONSUMERS) && error.contains("not authorized"),
        "{error}"
    );
    assert_eq!(addresses(&directory), local(&[20880]));
    // Discovery goes on while registration keeps failing.
    put_provider(&admin, "127.0.0.1:20881").await;
    let expected = local(&[20880, 20881]);
    must_reach(&subscription, "a provider added after the refusal", |_| {
        addresses(&directory) == expected
    })
    .await;
    assert!(!subscription.status().borrow().registered);
    assert!(admin
        .list_children(CONSUMERS)
        .await
        .expect("consumers")
        .is_empty());

    // Once the administrator opens the node, the background retry registers the consumer.
    admin
        .set_acl(CONSUMERS, &Acls::anyone_all(), None)
        .await
        .expect("open the consumers node");
    let status = must_reach(&subscription, "registered on a retry", |s| s.registered).await;
    assert_eq!(status.registration_error, None);
    assert_eq!(
        admin
            .list_children(CONSUMERS)
            .await
            .expect("consumers")
            .len(),
        1
    );
    registry.close().await;
}
