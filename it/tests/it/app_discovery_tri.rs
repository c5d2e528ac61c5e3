//! Application-level discovery of a Java Dubbo 3.3 provider that exports only Triple and registers
//! only as an instance (`protocol=tri`, `register-mode=instance`): its MetadataService is on the
//! Triple port too (`dubbo.metadata-service.url-params` says `"protocol":"tri"`), so rudder must ask
//! for the revision's services over tri://, not dubbo://, and then call the service over tri://.
//!
//! With tri and protobuf-java on its classpath the Java provider also exports MetadataServiceV2 and
//! says `meta-v=2.0.0`: rudder asks V2 (protobuf), as a Java 3.3 consumer does, and that must work
//! when V1 is not exported at all (`only-use-metadata-v2`). A dubbo:// provider says `meta-v=1.0.0`
//! and is asked V1 (hessian2). Which one answered is what [`Consumer::metadata_service_calls`] says.

use std::time::Duration;

use rudder::{Consumer, DiscoveryView, MetadataServiceCalls, Reference, Value};
use rudder_it::{Peer, PeerConfig, PeerKind, ZooKeeperContainer};

const SERVICE: &str = "org.rudder.it.GreetingService";
const READY_WITHIN: Duration = Duration::from_secs(120);

/// Starts a Java provider of `protocol` registered as an instance only, and a reference to it through
/// a consumer of its own (whose MetadataService calls are then this discovery's alone).
async fn discovered(
    zookeeper: &ZooKeeperContainer,
    name: &str,
    protocol: &str,
    v2_only: bool,
) -> (Peer, Consumer, Reference) {
    let mut config = PeerConfig::new(PeerKind::Java, &zookeeper.connect_string(), name);
    config.register_mode = Some("instance".to_owned());
    config.protocol = Some(protocol.to_owned());
    config.metadata_v2_only = v2_only;
    let peer = Peer::start(config, READY_WITHIN).await.unwrap();
    let consumer = Consumer::builder()
        .application("rudder-it-appdisc-tri")
        .build();
    let reference = consumer
        .reference(SERVICE)
        .registry(&format!("zookeeper://{}", zookeeper.connect_string()))
        .timeout(Duration::from_secs(5))
        .build()
        .await
        .unwrap();
    (peer, consumer, reference)
}

fn calls(v1_answered: u64, v2_answered: u64) -> (u64, u64, u64) {
    (v1_answered, v2_answered, 0)
}

fn seen(consumer: &Consumer) -> (u64, u64, u64) {
    let MetadataServiceCalls {
        v1_answered,
        v2_answered,
        v2_fallbacks,
        ..
    } = consumer.diagnostics().metadata_service_calls();
    (v1_answered, v2_answered, v2_fallbacks)
}

#[tokio::test]
async fn a_triple_only_instance_is_resolved_through_metadata_service_v2_and_called() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let (peer, consumer, reference) = discovered(&zookeeper, "java-tri-app", "tri", false).await;
    let answer = reference
        .call::<Value, _>("sayHello", &["java.lang.String"], vec![Value::from("rust")])
        .await
        .unwrap();
    assert_eq!(answer.as_str(), Some("Hello rust, from java-tri-app"));

    let status = reference.registry_status()[0].clone().expect("subscribed");
    assert_eq!(status.view, DiscoveryView::Application);
    assert_eq!(
        (status.metadata_fetches, status.metadata_failures),
        (1, 0),
        "one metadata call, over tri://, and it answered"
    );
    assert_eq!(
        seen(&consumer),
        calls(0, 1),
        "MetadataServiceV2 answered, V1 was not asked"
    );
    let providers = reference.providers();
    assert_eq!(providers.len(), 1);
    let url = providers[0].url();
    assert_eq!((url.protocol(), url.port()), ("tri", peer.port()), "{url}");
    // The parameters came through MetadataInfoV2's params map.
    assert_eq!(
        url.parameter("rudder.instance"),
        Some("java-tri-app"),
        "{url}"
    );
    consumer.shutdown().await;
}

#[tokio::test]
async fn a_provider_serving_only_metadata_service_v2_is_resolved_and_called() {
    // `only-use-metadata-v2`: no hessian2 MetadataService at all, so only a V2 call can answer.
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let (_peer, consumer, reference) = discovered(&zookeeper, "java-v2-only", "tri", true).await;
    let answer = reference
        .call::<Value, _>("sayHello", &["java.lang.String"], vec![Value::from("v2")])
        .await
        .unwrap();
    assert_eq!(answer.as_str(), Some("Hello v2, from java-v2-only"));
    let sum = reference
        .call::<Value, _>("add", &["int", "int"], vec![Value::Int(20), Value::Int(22)])
        .await
        .unwrap();
    assert_eq!(sum, Value::Int(42));
    assert_eq!(seen(&consumer), calls(0, 1));
    consumer.shutdown().await;
}

#[tokio::test]
async fn a_dubbo_instance_says_meta_v_1_and_is_asked_the_v1_metadata_service() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let (peer, consumer, reference) =
        discovered(&zookeeper, "java-dubbo-app", "dubbo", false).await;
    let answer = reference
        .call::<Value, _>("sayHello", &["java.lang.String"], vec![Value::from("v1")])
        .await
        .unwrap();
    assert_eq!(answer.as_str(), Some("Hello v1, from java-dubbo-app"));
    assert_eq!(
        seen(&consumer),
        calls(1, 0),
        "hessian2 getMetadataInfo, no V2 call"
    );
    let url = reference.providers()[0].url().clone();
    assert_eq!(
        (url.protocol(), url.port()),
        ("dubbo", peer.port()),
        "{url}"
    );
    consumer.shutdown().await;
}

#[tokio::test]
async fn an_unknown_revision_is_a_failure_of_the_v2_call_not_a_fallback() {
    // Asked directly, as the registry asks it: Java's MetadataServiceV2 returns null for a revision it
    // does not have, which Java 3.3.6 sends as `UNKNOWN` "Internal Server Error": a failure of the
    // call (the registry retries it later), not a reason to ask V1.
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let mut config = PeerConfig::new(PeerKind::Java, &zookeeper.connect_string(), "java-rev");
    config.register_mode = Some("instance".to_owned());
    config.protocol = Some("tri".to_owned());
    let peer = Peer::start(config, READY_WITHIN).await.unwrap();
    let url = rudder::DubboUrl::parse(&format!(
        "tri://127.0.0.1:{}/org.apache.dubbo.metadata.MetadataService?group=rudder-it-java-provider&version=2.0.0&timeout=5000",
        peer.port()
    ))
    .unwrap();
    let fetcher = rudder::tools::metadata_fetcher();
    let error = fetcher
        .fetch(rudder_registry::MetadataRequest {
            url,
            revision: "no-such-revision".to_owned(),
            metadata_version: Some("2.0.0".to_owned()),
        })
        .await
        .unwrap_err();
    assert!(error.contains("MetadataServiceV2"), "{error}");
    assert!(error.contains("answered Unknown"), "{error}");
}
