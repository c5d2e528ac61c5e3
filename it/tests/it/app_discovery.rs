//! Application-level discovery (issue 16) against a real Java Dubbo 3.3 provider: one started with
//! `register-mode=instance` writes no `/dubbo/<interface>/providers` node, only its instance under
//! `/services/<app>`, the interface-application mapping and (served by itself) its MetadataInfo;
//! rudder finds it through the mapping, asks its MetadataService for the revision's services and
//! calls it. With `register-mode=all` both views exist, and `APPLICATION_FIRST` (the default, as
//! Dubbo 3.3) uses the application view. Against the Java provider too: an instance that stops
//! leaves the view, a revision change (the provider exports one more service) is fetched once and
//! its new service called, and `metadata-type=remote` is read from the metadata report. Other tests
//! follow hand-written nodes (remote metadata) through instances coming, going and changing
//! revision, and the mapping growing.

use std::sync::Arc;
use std::time::Duration;

use rudder::{DiscoveryView, Reference, SubscriptionStatus, Value};
use rudder_cluster::directory::Directory;
use rudder_common::url::merge::ConsumerParams;
use rudder_common::url::DubboUrl;
use rudder_it::{Peer, PeerConfig, PeerKind, ZooKeeperContainer};
use rudder_registry::{ConsumerSpec, RegistryOptions, Subscription, ZookeeperRegistry};
use zookeeper_client::{Acls, Client, CreateMode};

use crate::common::changes::reference_reaches;
use crate::common::providers::put_node as put;

const SERVICE: &str = "org.rudder.it.GreetingService";
const APP: &str = "rudder-it-java-provider";
const READY_WITHIN: Duration = Duration::from_secs(120);

async fn java(zookeeper: &ZooKeeperContainer, instance: &str, mode: &str) -> Peer {
    let mut config = PeerConfig::new(PeerKind::Java, &zookeeper.connect_string(), instance);
    config.register_mode = Some(mode.to_owned());
    Peer::start(config, READY_WITHIN).await.unwrap()
}

async fn reference(zookeeper: &ZooKeeperContainer, step: Option<&str>) -> Reference {
    let mut builder = Reference::builder(SERVICE)
        .registry(&format!("zookeeper://{}", zookeeper.connect_string()))
        .application("rudder-it-appdisc")
        .timeout(Duration::from_secs(5));
    if let Some(step) = step {
        builder = builder.parameter("migration.step", step);
    }
    builder.build().await.unwrap()
}

fn status(reference: &Reference) -> SubscriptionStatus {
    reference.registry_status()[0].clone().expect("subscribed")
}

async fn say_hello(reference: &Reference) -> String {
    reference
        .call::<Value, _>("sayHello", &["java.lang.String"], vec![Value::from("rust")])
        .await
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_java_provider_registered_only_as_an_instance_is_found_and_called() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let peer = java(&zookeeper, "java-instance", "instance").await;
    let zk = Client::connect(&zookeeper.connect_string()).await.unwrap();

    // What the Java provider wrote: no interface-level provider, one instance, the mapping.
    let interface_level = zk
        .list_children(&format!("/dubbo/{SERVICE}/providers"))
        .await
        .unwrap_or_default();
    assert!(interface_level.is_empty(), "{interface_level:?}");
    let instances = zk.list_children(&format!("/services/{APP}")).await.unwrap();
    assert_eq!(instances, [format!("127.0.0.1:{}", peer.port())]);
    let (mapping, _) = zk
        .get_data(&format!("/dubbo/mapping/{SERVICE}"))
        .await
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&mapping), APP);

    // The default step (APPLICATION_FIRST) finds it through the mapping and the MetadataService.
    let reference = reference(&zookeeper, None).await;
    assert_eq!(
        say_hello(&reference).await,
        "Hello rust, from java-instance"
    );
    let seen = status(&reference);
    assert_eq!(seen.view, DiscoveryView::Application);
    assert_eq!(seen.migration_step, "APPLICATION_FIRST");
    assert_eq!(seen.applications, [APP]);
    assert_eq!(
        (seen.application_providers, seen.interface_providers),
        (1, 0)
    );
    assert_eq!(
        (
            seen.metadata_fetches,
            seen.metadata_failures,
            seen.revisions
        ),
        (1, 0, 1)
    );
    // The provider URL as Dubbo builds it from instance and ServiceInfo: the instance's `timestamp`
    // (warmup reads it), the service's parameters.
    let providers = reference.providers();
    let url = providers[0].url();
    assert_eq!(url.port(), peer.port());
    assert!(url.parameter("timestamp").is_some(), "{url}");
    assert_eq!(url.parameter("rudder.instance"), Some("java-instance"));
    assert_eq!(url.parameter("remote.application"), Some(APP));

    // FORCE_APPLICATION finds it too; FORCE_INTERFACE (rudder before this) finds nothing.
    let forced = reference_with(&zookeeper, "FORCE_APPLICATION").await;
    assert_eq!(say_hello(&forced).await, "Hello rust, from java-instance");
    let interface_only = reference_with(&zookeeper, "FORCE_INTERFACE").await;
    assert!(interface_only.providers().is_empty());
    assert_eq!(status(&interface_only).view, DiscoveryView::Interface);
}

async fn reference_with(zookeeper: &ZooKeeperContainer, step: &str) -> Reference {
    reference(zookeeper, Some(step)).await
}

#[tokio::test]
async fn register_mode_all_is_reached_through_the_application_view_under_application_first() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let peer = java(&zookeeper, "java-all", "all").await;

    let preferred = reference(&zookeeper, None).await;
    assert_eq!(say_hello(&preferred).await, "Hello rust, from java-all");
    let seen = status(&preferred);
    assert_eq!(seen.view, DiscoveryView::Application, "{seen:?}");
    assert_eq!(
        (seen.application_providers, seen.interface_providers),
        (1, 1)
    );
    let url = preferred.providers()[0].url().clone();
    assert_eq!(url.port(), peer.port());
    assert!(
        url.parameter("dubbo.metadata.revision").is_some(),
        "built from the instance: {url}"
    );

    let interface = reference_with(&zookeeper, "FORCE_INTERFACE").await;
    assert_eq!(say_hello(&interface).await, "Hello rust, from java-all");
    assert_eq!(status(&interface).view, DiscoveryView::Interface);
    let url = interface.providers()[0].url().clone();
    assert_eq!(url.parameter("dubbo.metadata.revision"), None, "{url}");

    // A threshold the application view does not reach (1 instance / 1 provider < 2) keeps the
    // interface view, as Dubbo's DefaultMigrationAddressComparator.
    let strict = Reference::builder(SERVICE)
        .registry(&format!("zookeeper://{}", zookeeper.connect_string()))
        .parameter("migration.threshold", "2")
        .build()
        .await
        .unwrap();
    assert_eq!(status(&strict).view, DiscoveryView::Interface);
}

/// A MetadataInfo JSON as a provider with `storage-type=remote` writes it, exporting `services`.
fn remote_metadata(app: &str, revision: &str, services: &[&str]) -> String {
    let entries: Vec<String> = services
        .iter()
        .map(|s| {
            format!(
                r#""{s}:dubbo":{{"name":"{s}","protocol":"dubbo","path":"{s}","port":-1,
                   "params":{{"side":"provider","application":"{app}","methods":"whoAmI"}}}}"#
            )
        })
        .collect();
    format!(
        r#"{{"app":"{app}","revision":"{revision}","services":{{{}}}}}"#,
        entries.join(",")
    )
}

/// A Curator instance node of `app` at `127.0.0.1:port`, as a Java 3.3 provider writes it.
fn instance_node(app: &str, port: u16, revision: &str) -> String {
    format!(
        r#"{{"name":"{app}","id":"127.0.0.1:{port}","address":"127.0.0.1","port":{port},"sslPort":null,
           "payload":{{"@class":"org.apache.dubbo.registry.zookeeper.ZookeeperInstance","metadata":{{
             "dubbo.endpoints":"[{{\"port\":{port},\"protocol\":\"dubbo\"}}]",
             "dubbo.metadata.revision":"{revision}","dubbo.metadata.storage-type":"remote",
             "timestamp":"1700000000000"}}}},"serviceType":"DYNAMIC"}}"#
    )
}

/// The instance node of `app` at `127.0.0.1:port` with `revision`, where Curator writes it.
pub(crate) async fn put_instance(zk: &Client, app: &str, port: u16, revision: &str) {
    let path = format!("/services/{app}/127.0.0.1:{port}");
    put(zk, &path, &instance_node(app, port, revision)).await;
}

/// `app`'s MetadataInfo of `revision` exporting `services`, where remote storage keeps it.
pub(crate) async fn put_remote_metadata(zk: &Client, app: &str, revision: &str, services: &[&str]) {
    let path = format!("/dubbo/metadata/{app}/{revision}");
    put(zk, &path, &remote_metadata(app, revision, services)).await;
}

async fn wait(
    subscription: &Subscription,
    what: &str,
    condition: impl FnMut(&SubscriptionStatus) -> bool,
) -> SubscriptionStatus {
    match subscription
        .wait_for(Duration::from_secs(30), condition)
        .await
    {
        Some(status) => status,
        None => panic!("{what}: {:?}", subscription.status().borrow()),
    }
}

fn ports(directory: &Directory) -> Vec<u16> {
    directory
        .snapshot()
        .providers()
        .iter()
        .map(|p| p.url().port())
        .collect()
}

#[tokio::test]
async fn instances_revisions_and_the_mapping_are_followed_live() {
    const LIVE: &str = "com.acme.AppLevel";
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let zk = Client::connect(&zookeeper.connect_string()).await.unwrap();
    put_remote_metadata(&zk, "shop", "r1", &[LIVE]).await;
    put_remote_metadata(&zk, "shop", "r2", &["com.acme.Other"]).await;
    put_remote_metadata(&zk, "shop2", "r3", &[LIVE]).await;
    put(&zk, &format!("/dubbo/mapping/{LIVE}"), "shop").await;
    put_instance(&zk, "shop", 20001, "r1").await;
    put(&zk, "/services/shop/127.0.0.1:29999", "not curator json").await;
    put_instance(&zk, "shop", 29998, "0").await;

    let registry = crate::common::registry(&zookeeper).await;
    let settings = DubboUrl::parse(&format!(
        "consumer://0.0.0.0/{LIVE}?migration.step=FORCE_APPLICATION"
    ))
    .unwrap();
    let spec = || ConsumerSpec::new(LIVE).parameters(ConsumerParams::new(&settings));
    let directory = Arc::new(Directory::default());
    let subscription = registry
        .subscribe(spec(), Arc::clone(&directory))
        .await
        .unwrap();

    // Found through the mapping; the junk node is counted, the revision-0 instance skipped.
    let seen = wait(&subscription, "the first instance", |s| s.providers == 1).await;
    assert_eq!(seen.view, DiscoveryView::Application);
    assert_eq!((seen.instance_malformed, seen.metadata_fetches), (1, 1));
    assert_eq!(ports(&directory), [20001]);

    // A second instance of the same revision: no new metadata fetch.
    put_instance(&zk, "shop", 20002, "r1").await;
    let seen = wait(&subscription, "the second instance", |s| s.providers == 2).await;
    assert_eq!(seen.metadata_fetches, 1, "one fetch per revision");

    // The second instance changes its revision in place to one that no longer exports the service.
    put_instance(&zk, "shop", 20002, "r2").await;
    let seen = wait(&subscription, "the revision change", |s| s.providers == 1).await;
    assert_eq!((seen.metadata_fetches, seen.revisions), (2, 2));
    assert_eq!(ports(&directory), [20001]);

    // Another application joins the mapping: its instance is followed too.
    put_instance(&zk, "shop2", 20003, "r3").await;
    put(&zk, &format!("/dubbo/mapping/{LIVE}"), "shop,shop2").await;
    let seen = wait(&subscription, "the second application", |s| {
        s.providers == 2
    })
    .await;
    assert_eq!(seen.applications, ["shop", "shop2"]);
    assert_eq!(ports(&directory), [20001, 20003]);

    // An instance leaving.
    zk.delete("/services/shop/127.0.0.1:20001", None)
        .await
        .unwrap();
    wait(&subscription, "the instance leaving", |s| s.providers == 1).await;
    assert_eq!(ports(&directory), [20003]);

    // A second subscription shares the application watches: it sees the metadata fetched so far
    // (3 fetches: r1, r2, r3) instead of fetching the two live revisions again.
    let other = Arc::new(Directory::default());
    let second = registry
        .subscribe(spec(), Arc::clone(&other))
        .await
        .unwrap();
    let seen = wait(&second, "the second subscription", |s| s.providers == 1).await;
    assert_eq!(seen.metadata_fetches, 3, "{seen:?}");
    assert_eq!(ports(&other), [20003]);

    // A revision whose metadata cannot be had leaves out only its instances, counted.
    put_instance(&zk, "shop2", 20004, "r404").await;
    let seen = wait(&second, "the failed revision", |s| s.metadata_failures >= 1).await;
    assert_eq!(seen.providers, 1);
    assert_eq!(ports(&other), [20003]);

    second.close().await;
    subscription.close().await;
    registry.close().await;
}

#[tokio::test]
async fn application_first_switches_views_as_instances_come_and_go() {
    const BOTH: &str = "com.acme.BothViews";
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let zk = Client::connect(&zookeeper.connect_string()).await.unwrap();
    let provider = DubboUrl::parse(&format!(
        "dubbo://127.0.0.1:20100/{BOTH}?interface={BOTH}&application=both&side=provider"
    ))
    .unwrap();
    put(
        &zk,
        &format!("/dubbo/{BOTH}/providers/{}", provider.to_node_name()),
        "",
    )
    .await;
    put(&zk, &format!("/dubbo/mapping/{BOTH}"), "both").await;
    put_remote_metadata(&zk, "both", "r1", &[BOTH]).await;

    let registry = crate::common::registry(&zookeeper).await;
    let directory = Arc::new(Directory::default());
    // No migration.step: APPLICATION_FIRST.
    let subscription = registry
        .subscribe(ConsumerSpec::new(BOTH), Arc::clone(&directory))
        .await
        .unwrap();
    let seen = wait(&subscription, "the interface view", |s| s.providers == 1).await;
    assert_eq!(seen.view, DiscoveryView::Interface, "no instance yet");
    assert_eq!(ports(&directory), [20100]);

    put_instance(&zk, "both", 20101, "r1").await;
    wait(&subscription, "the switch to the application view", |s| {
        s.view == DiscoveryView::Application
    })
    .await;
    assert_eq!(ports(&directory), [20101]);

    zk.delete("/services/both/127.0.0.1:20101", None)
        .await
        .unwrap();
    let seen = wait(&subscription, "the switch back", |s| {
        s.view == DiscoveryView::Interface
    })
    .await;
    assert_eq!(
        (seen.application_providers, seen.interface_providers),
        (0, 1)
    );
    assert_eq!(ports(&directory), [20100]);

    subscription.close().await;
    registry.close().await;
}

#[tokio::test]
async fn application_watches_survive_a_session_expiry() {
    const KEPT: &str = "com.acme.Kept";
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let zk = Client::connect(&zookeeper.connect_string()).await.unwrap();
    put_remote_metadata(&zk, "kept", "r1", &[KEPT]).await;
    put(&zk, &format!("/dubbo/mapping/{KEPT}"), "kept").await;
    put_instance(&zk, "kept", 20201, "r1").await;
    drop(zk);
    let options = RegistryOptions::default()
        .with_connect_timeout(Duration::from_secs(2))
        .with_session_timeout(Duration::from_secs(2))
        .with_retry(Duration::from_millis(100), Duration::from_secs(1));
    let registry = ZookeeperRegistry::connect(
        &format!("zookeeper://{}", zookeeper.connect_string()),
        options,
    )
    .await
    .unwrap();
    let directory = Arc::new(Directory::default());
    let subscription = registry
        .subscribe(ConsumerSpec::new(KEPT), Arc::clone(&directory))
        .await
        .unwrap();
    wait(&subscription, "the instance", |s| s.providers == 1).await;

    // A frozen server expires the session; the instances stay in the directory meanwhile.
    zookeeper.pause().await.expect("pause ZooKeeper");
    // (`registered` turns false once the client gives the session up, past its 2 s timeout.)
    wait(&subscription, "the session loss", |s| !s.registered).await;
    assert_eq!(ports(&directory), [20201]);
    zookeeper.unpause().await.expect("unpause ZooKeeper");
    wait(&subscription, "the new session", |s| {
        s.sessions >= 2 && s.connected
    })
    .await;

    // The application watch was re-armed in the new session: a new instance is seen.
    let zk = Client::connect(&zookeeper.connect_string()).await.unwrap();
    put_instance(&zk, "kept", 20202, "r1").await;
    wait(&subscription, "an instance after the renewal", |s| {
        s.providers == 2
    })
    .await;
    assert_eq!(ports(&directory), [20201, 20202]);
    subscription.close().await;
    registry.close().await;
}

/// Scale, measured (printed; the bounds asserted are generous): one application with 1,000 instances
/// of one revision, 50 references of its interface on one registry.
#[tokio::test]
async fn a_thousand_instances_load_once_and_one_change_reaches_every_subscription() {
    const SCALED: &str = "com.acme.Scaled";
    const N: u16 = 1_000;
    const REFERENCES: usize = 50;
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let zk = Client::connect(&zookeeper.connect_string()).await.unwrap();
    put_remote_metadata(&zk, "big", "r1", &[SCALED]).await;
    put(&zk, &format!("/dubbo/mapping/{SCALED}"), "big").await;
    put_instance(&zk, "big", 30000, "r1").await;
    let persistent = CreateMode::Persistent.with_acls(Acls::anyone_all());
    let nodes: Vec<(String, String)> = (1..N)
        .map(|i| {
            let port = 30000 + i;
            (
                format!("/services/big/127.0.0.1:{port}"),
                instance_node("big", port, "r1"),
            )
        })
        .collect();
    // Pipelined: each `create` is sent when called.
    let pending: Vec<_> = nodes
        .iter()
        .map(|(path, data)| zk.create(path, data.as_bytes(), &persistent))
        .collect();
    for created in pending {
        created.await.expect("create instance");
    }

    let registry = crate::common::registry(&zookeeper).await;
    let started = std::time::Instant::now();
    let mut subscriptions = Vec::new();
    for _ in 0..REFERENCES {
        let directory = Arc::new(Directory::default());
        let subscription = registry
            .subscribe(ConsumerSpec::new(SCALED), Arc::clone(&directory))
            .await
            .unwrap();
        subscriptions.push((subscription, directory));
    }
    for (subscription, _) in &subscriptions {
        wait(subscription, "all instances", |s| {
            s.providers == usize::from(N)
        })
        .await;
    }
    let load = started.elapsed();
    let fetches = subscriptions[0].0.status().borrow().metadata_fetches;
    assert_eq!(
        fetches, 1,
        "one revision, one fetch, however many references"
    );

    let started = std::time::Instant::now();
    put_instance(&zk, "big", 31000, "r1").await;
    for (subscription, _) in &subscriptions {
        wait(subscription, "the added instance", |s| {
            s.providers == usize::from(N) + 1
        })
        .await;
    }
    let one_change = started.elapsed();
    eprintln!(
        "1,000 instances x {REFERENCES} references: first providers in {load:?}, one added instance \
         in every directory in {one_change:?}, {fetches} metadata fetch"
    );
    assert!(one_change < Duration::from_secs(10), "{one_change:?}");
    for (subscription, _) in subscriptions {
        subscription.close().await;
    }
    registry.close().await;
}

async fn java_with(
    zookeeper: &ZooKeeperContainer,
    instance: &str,
    edit: impl FnOnce(&mut PeerConfig),
) -> Peer {
    let mut config = PeerConfig::new(PeerKind::Java, &zookeeper.connect_string(), instance);
    config.register_mode = Some("instance".to_owned());
    edit(&mut config);
    Peer::start(config, READY_WITHIN).await.unwrap()
}

/// The instances 30 `whoAmI` calls reach (a miss of one of two has probability 2^-29).
async fn instances_reached(reference: &Reference) -> std::collections::BTreeSet<String> {
    let mut reached = std::collections::BTreeSet::new();
    for _ in 0..30 {
        let answer = reference
            .call::<Value, _>("whoAmI", &[], vec![])
            .await
            .unwrap();
        reached.insert(answer.as_str().unwrap().to_owned());
    }
    reached
}

#[tokio::test]
async fn a_java_instance_that_stops_leaves_the_application_view() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let mut leaving = java(&zookeeper, "java-leaving", "instance").await;
    let _staying = java(&zookeeper, "java-staying", "instance").await;
    let reference = reference(&zookeeper, Some("FORCE_APPLICATION")).await;
    reference_reaches(&reference, "both instances", READY_WITHIN, || {
        reference.providers().len() == 2
    })
    .await;
    assert_eq!(
        instances_reached(&reference).await,
        ["java-leaving".to_owned(), "java-staying".to_owned()].into()
    );

    // SIGTERM: Dubbo's shutdown hook deletes its instance node; rudder drops it.
    leaving.terminate().await.unwrap();
    reference_reaches(&reference, "the instance gone", READY_WITHIN, || {
        reference.providers().len() == 1
    })
    .await;
    assert_eq!(
        instances_reached(&reference).await,
        ["java-staying".to_owned()].into()
    );
    assert_eq!(status(&reference).application_providers, 1);
}

#[tokio::test]
async fn a_java_revision_change_is_fetched_once_and_its_new_service_is_called() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let mut peer = java(&zookeeper, "java-revising", "instance").await;
    let reference = reference(&zookeeper, Some("FORCE_APPLICATION")).await;
    assert_eq!(
        say_hello(&reference).await,
        "Hello rust, from java-revising"
    );
    let first = status(&reference);
    assert_eq!(
        (first.metadata_fetches, first.revisions),
        (1, 1),
        "{first:?}"
    );
    let revision = |r: &Reference| {
        r.providers()[0]
            .url()
            .parameter("dubbo.metadata.revision")
            .map(str::to_owned)
    };
    let old = revision(&reference).expect("built from the instance");

    // The provider exports GreetingService in group `later`: a new MetadataInfo revision, which
    // its instance node now names.
    peer.send_line("export-later").await.unwrap();
    reference_reaches(&reference, "the new revision", READY_WITHIN, || {
        revision(&reference).is_some_and(|r| r != old)
    })
    .await;
    let seen = status(&reference);
    assert_eq!(
        seen.metadata_fetches, 2,
        "one fetch for the new revision: {seen:?}"
    );
    assert_eq!(
        say_hello(&reference).await,
        "Hello rust, from java-revising"
    );

    // The new service is reached through the new revision.
    let later = Reference::builder(SERVICE)
        .registry(&format!("zookeeper://{}", zookeeper.connect_string()))
        .application("rudder-it-appdisc")
        .group("later")
        .parameter("migration.step", "FORCE_APPLICATION")
        .timeout(Duration::from_secs(5))
        .build()
        .await
        .unwrap();
    assert_eq!(say_hello(&later).await, "Hello rust, from java-revising");
    assert_eq!(later.providers()[0].url().parameter("group"), Some("later"));
}

#[tokio::test]
async fn a_java_provider_with_remote_metadata_is_found_without_asking_it() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let peer = java_with(&zookeeper, "java-remote", |c| {
        c.metadata_storage_type = Some("remote".to_owned());
    })
    .await;
    let zk = Client::connect(&zookeeper.connect_string()).await.unwrap();
    let node = format!("/services/{APP}/127.0.0.1:{}", peer.port());
    let (data, _) = zk.get_data(&node).await.unwrap();
    let instance: serde_json::Value = serde_json::from_slice(&data).unwrap();
    let metadata = &instance["payload"]["metadata"];
    assert_eq!(
        metadata["dubbo.metadata.storage-type"], "remote",
        "{instance}"
    );
    let revision = metadata["dubbo.metadata.revision"]
        .as_str()
        .unwrap()
        .to_owned();
    let (published, _) = zk
        .get_data(&format!("/dubbo/metadata/{APP}/{revision}"))
        .await
        .unwrap();
    assert!(
        String::from_utf8_lossy(&published).contains(SERVICE),
        "the revision's MetadataInfo is in the metadata report"
    );

    // A registry with no MetadataService client finds it: the metadata came from ZooKeeper.
    let registry = crate::common::registry(&zookeeper).await;
    let settings = DubboUrl::parse(&format!(
        "consumer://0.0.0.0/{SERVICE}?migration.step=FORCE_APPLICATION"
    ))
    .unwrap();
    let directory = Arc::new(Directory::default());
    let subscription = registry
        .subscribe(
            ConsumerSpec::new(SERVICE).parameters(ConsumerParams::new(&settings)),
            Arc::clone(&directory),
        )
        .await
        .unwrap();
    let seen = wait(&subscription, "the remote-metadata instance", |s| {
        s.providers == 1
    })
    .await;
    assert_eq!(seen.metadata_fetches, 1);
    assert_eq!(ports(&directory), [peer.port()]);
    subscription.close().await;
    registry.close().await;

    // And rudder calls it.
    let reference = reference(&zookeeper, Some("FORCE_APPLICATION")).await;
    assert_eq!(say_hello(&reference).await, "Hello rust, from java-remote");
}
