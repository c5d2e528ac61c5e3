//! Application-level discovery (issue 16) against a real Java Dubbo 3.3 provider: one started with
//! `register-mode=instance` writes no `/dubbo/<interface>/providers` node, only its instance under
//! `/services/<app>`, the interface-application mapping and (served by itself) its MetadataInfo;
//! rudder finds it through the mapping, asks its MetadataService for the revision's services and
//! calls it. With `register-mode=all` both views exist, and `APPLICATION_FIRST` (the default, as
//! Dubbo 3.3) uses the application view.

use std::time::Duration;

use rudder::{DiscoveryView, Reference, SubscriptionStatus, Value};
use rudder_it::{Peer, PeerConfig, PeerKind, ZooKeeperContainer};
use zookeeper_client::Client;

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
        .invoke("sayHello", &["java.lang.String"], vec![Value::from("rust")])
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
