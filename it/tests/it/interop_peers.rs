//! rudder calling real providers written by others, over dubbo:// on loopback: Apache Dubbo 3.3 (Java)
//! and sofa-rpc-node. ZooKeeper (which both providers need to start) runs in testcontainers.

use std::time::Duration;

use rudder::{CallError, Reference, RpcErrorKind, Value};
use rudder_it::{Peer, PeerConfig, PeerKind, ZooKeeperContainer};

use crate::common::java_greeter::assert_greets_as;

const SERVICE: &str = "org.rudder.it.GreetingService";
const READY_WITHIN: Duration = Duration::from_secs(120);

fn direct_builder(peer: &Peer, query: &str) -> rudder::ReferenceBuilder {
    Reference::builder(SERVICE)
        .provider(&format!(
            "dubbo://127.0.0.1:{}/{SERVICE}?{query}",
            peer.port()
        ))
        .timeout(std::time::Duration::from_millis(5000))
}

async fn direct(peer: &Peer, query: &str) -> Reference {
    direct_builder(peer, query).build().await.unwrap()
}

#[tokio::test]
async fn java_dubbo_provider_answers_every_kind_of_call() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let peer = Peer::start(
        PeerConfig::new(PeerKind::Java, &zookeeper.connect_string(), "java-a"),
        READY_WITHIN,
    )
    .await
    .unwrap();
    let greeter = direct(&peer, "").await;

    assert_greets_as(&greeter, "java-a").await;

    // The consumer's method-level timeout beats its service-level one (and any provider default).
    let impatient = direct_builder(&peer, "")
        .parameter("slow.timeout", "200")
        .retries(0)
        .build()
        .await
        .unwrap();
    let err = impatient
        .call::<Value, _>("slow", &["int"], vec![Value::Int(2000)])
        .await
        .unwrap_err();
    assert!(
        matches!(err, CallError::Rpc(ref e) if e.kind() == RpcErrorKind::Timeout),
        "{err}"
    );
    // The connection is still good after the timeout.
    let again = impatient
        .call::<Value, _>("add", &["int", "int"], vec![Value::Int(1), Value::Int(1)])
        .await
        .unwrap();
    assert_eq!(again, Value::Int(2));
}

#[tokio::test]
async fn sofa_rpc_node_provider_answers_with_its_quirks() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let peer = Peer::start(
        PeerConfig::new(PeerKind::Node, &zookeeper.connect_string(), "node-a"),
        READY_WITHIN,
    )
    .await
    .unwrap();
    // sofa-rpc-node routes on the exact version sent in the request body.
    let greeter = direct(&peer, "version=1.0.0").await;
    let hello = greeter
        .call::<Value, _>("sayHello", &["java.lang.String"], vec![Value::from("rust")])
        .await
        .unwrap();
    assert!(
        hello
            .as_str()
            .is_some_and(|s| s.contains("rust") && s.contains("node-a")),
        "{hello:?}"
    );
    let sum = greeter
        .call::<Value, _>("add", &["int", "int"], vec![Value::Int(2), Value::Int(3)])
        .await
        .unwrap();
    assert_eq!(sum.as_i64(), Some(5));
    // A null comes back as a bare `N` body, without the response flag Java writes.
    assert_eq!(
        greeter
            .call::<Value, _>("nullValue", &[], vec![])
            .await
            .unwrap(),
        Value::Null
    );
    // A thrown error comes back as status 80 with the message: an RpcError, not a Java exception.
    let err = greeter
        .call::<Value, _>("fail", &["java.lang.String"], vec![Value::from("boom")])
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::Rpc(_)), "{err}");
    let status = err
        .provider_error()
        .expect("the status answer is the cause");
    assert!(status.message().contains("boom"), "{status:#}");
}
