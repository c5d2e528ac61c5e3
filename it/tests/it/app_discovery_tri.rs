//! Application-level discovery of a Java Dubbo 3.3 provider that exports only Triple and registers
//! only as an instance (`protocol=tri`, `register-mode=instance`): its MetadataService is on the
//! Triple port too (`dubbo.metadata-service.url-params` says `"protocol":"tri"`), so rudder must ask
//! for the revision's services over tri://, not dubbo://, and then call the service over tri://.

use std::time::Duration;

use rudder::{DiscoveryView, Reference, Value};
use rudder_it::{Peer, PeerConfig, PeerKind, ZooKeeperContainer};

const SERVICE: &str = "org.rudder.it.GreetingService";
const READY_WITHIN: Duration = Duration::from_secs(120);

#[tokio::test]
async fn a_triple_only_instance_is_resolved_through_its_triple_metadata_service_and_called() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let mut config = PeerConfig::new(PeerKind::Java, &zookeeper.connect_string(), "java-tri-app");
    config.register_mode = Some("instance".to_owned());
    config.protocol = Some("tri".to_owned());
    let peer = Peer::start(config, READY_WITHIN).await.unwrap();

    let reference = Reference::builder(SERVICE)
        .registry(&format!("zookeeper://{}", zookeeper.connect_string()))
        .application("rudder-it-appdisc-tri")
        .timeout(Duration::from_secs(5))
        .build()
        .await
        .unwrap();
    let answer = reference
        .invoke("sayHello", &["java.lang.String"], vec![Value::from("rust")])
        .await
        .unwrap();
    assert_eq!(answer.as_str(), Some("Hello rust, from java-tri-app"));

    let status = reference.registry_status()[0].clone().expect("subscribed");
    assert_eq!(status.view, DiscoveryView::Application);
    assert_eq!(
        (status.metadata_fetches, status.metadata_failures),
        (1, 0),
        "one getMetadataInfo, over tri://, and it answered"
    );
    let providers = reference.providers();
    assert_eq!(providers.len(), 1);
    let url = providers[0].url();
    assert_eq!((url.protocol(), url.port()), ("tri", peer.port()), "{url}");
}
