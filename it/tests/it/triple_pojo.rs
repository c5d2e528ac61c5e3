//! rudder calling a Java Dubbo 3.3 provider that exports its Java interface over Triple (tri://), through
//! the same facade, cluster and balancers as dubbo://: by URL, found in ZooKeeper beside a dubbo://
//! provider of the same interface (both used; `protocol=tri` narrows to one), and through the CLI.

use std::collections::BTreeSet;
use std::time::Duration;

use rudder::{CallError, Reference, RpcErrorKind, Value};
use rudder_it::{run_rudder, Peer, PeerConfig, PeerKind, ZooKeeperContainer};

use crate::common::java_greeter::{assert_greets_as, User};

const SERVICE: &str = "org.rudder.it.GreetingService";
const READY_WITHIN: Duration = Duration::from_secs(120);

async fn java(zookeeper: &ZooKeeperContainer, instance: &str, protocol: Option<&str>) -> Peer {
    let mut config = PeerConfig::new(PeerKind::Java, &zookeeper.connect_string(), instance);
    config.version = Some("1.0.0".into());
    config.group = Some("g1".into());
    config.protocol = protocol.map(str::to_owned);
    Peer::start(config, READY_WITHIN).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_interface_services_answer_over_tri_by_url_and_through_the_registry() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let (tri, dubbo) = tokio::join!(
        java(&zookeeper, "java-tri", Some("tri")),
        java(&zookeeper, "java-dubbo", None)
    );
    assert!(tri.url().starts_with("tri://127.0.0.1:"), "{}", tri.url());

    // By URL: every kind of POJO call, with the values asserted.
    let greeter = Reference::builder(SERVICE)
        .provider(&format!(
            "tri://127.0.0.1:{}/{SERVICE}?version=1.0.0&group=g1",
            tri.port()
        ))
        .application("rudder-it")
        .timeout(Duration::from_millis(5000))
        .build()
        .await
        .unwrap();
    assert_greets_as(&greeter, "java-tri").await;
    match greeter
        .call::<Value, _>("nosuch", &["java.lang.String"], vec![Value::from("x")])
        .await
    {
        Err(CallError::Rpc(e)) => {
            assert_eq!(e.kind(), RpcErrorKind::MethodNotFound, "{e}");
            // The provider's answer is the cause of the cluster's error.
            assert!(
                e.message_with_causes()
                    .contains("no such service or method at group g1, version 1.0.0"),
                "{e}"
            );
        }
        other => panic!("expected no such method, got {other:?}"),
    }
    // A timeout is a timeout, and the connection still serves the next call.
    let impatient = Reference::builder(SERVICE)
        .provider(&format!(
            "tri://127.0.0.1:{}/{SERVICE}?version=1.0.0&group=g1",
            tri.port()
        ))
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
    let again = impatient
        .call::<Value, _>("add", &["int", "int"], vec![Value::Int(1), Value::Int(1)])
        .await
        .unwrap();
    assert_eq!(again, Value::Int(2));

    // `timeout=0` on the provider URL is "not set" (Dubbo's getPositiveParameter: 1000 ms) over tri://
    // as over dubbo://: a 300 ms call answers. It used to be clamped to a 1 ms deadline over tri://.
    for (protocol, port) in [("tri", tri.port()), ("dubbo", dubbo.port())] {
        let unset = Reference::builder(SERVICE)
            .provider(&format!(
                "{protocol}://127.0.0.1:{port}/{SERVICE}?version=1.0.0&group=g1&timeout=0"
            ))
            .retries(0)
            .build()
            .await
            .unwrap();
        let answer = unset
            .call::<Value, _>("slow", &["int"], vec![Value::Int(300)])
            .await;
        assert_eq!(
            answer.map_err(|e| e.to_string()),
            Ok(Value::from("slept 300")),
            "{protocol}"
        );
    }

    // Through ZooKeeper: the tri:// and the dubbo:// provider of the interface are both used, as a Java
    // consumer uses both ...
    let registry = format!("zookeeper://{}", zookeeper.connect_string());
    let both = Reference::builder(SERVICE)
        .registry(&registry)
        .version("1.0.0")
        .group("g1")
        .loadbalance("roundrobin")
        .timeout(Duration::from_millis(5000))
        .build()
        .await
        .unwrap();
    let protocols: BTreeSet<String> = both
        .providers()
        .iter()
        .map(|p| p.url().protocol().to_owned())
        .collect();
    assert_eq!(protocols, BTreeSet::from(["dubbo".into(), "tri".into()]));
    let mut answered = BTreeSet::new();
    for _ in 0..4 {
        let who = both.call::<Value, _>("whoAmI", &[], vec![]).await.unwrap();
        answered.insert(who.as_str().unwrap_or("?").to_owned());
    }
    assert_eq!(
        answered,
        BTreeSet::from(["java-dubbo".into(), "java-tri".into()])
    );
    // ... and the consumer's `protocol` narrows to one.
    let tri_only = Reference::builder(SERVICE)
        .registry(&registry)
        .version("1.0.0")
        .group("g1")
        .parameter("protocol", "tri")
        .timeout(Duration::from_millis(5000))
        .build()
        .await
        .unwrap();
    assert_eq!(tri_only.providers().len(), 1);
    for _ in 0..3 {
        let who = tri_only
            .call::<Value, _>("whoAmI", &[], vec![])
            .await
            .unwrap();
        assert_eq!(who, Value::from("java-tri"));
    }
    let alice = User {
        name: "alice".into(),
        age: 30,
        tags: vec!["x".into()],
    };
    let back: User = tri_only
        .call("echoUser", &["org.rudder.it.User"], (&alice,))
        .await
        .unwrap();
    assert_eq!(back.tags, ["x", "seen-by:java-tri"]);

    // The consumer owns the tri:// connection: a reference dropped takes its provider's connection
    // with it (the provider left every directory of this consumer).
    let consumer = rudder::Consumer::builder().application("rudder-it").build();
    let owned = consumer
        .reference(SERVICE)
        .provider(&format!(
            "tri://127.0.0.1:{}/{SERVICE}?version=1.0.0&group=g1",
            tri.port()
        ))
        .build()
        .await
        .unwrap();
    let sum = owned
        .call::<Value, _>("add", &["int", "int"], vec![Value::Int(3), Value::Int(4)])
        .await
        .unwrap();
    assert_eq!(sum, Value::Int(7));
    assert_eq!(consumer.diagnostics().open_connections(), 1);
    drop(owned);
    assert_eq!(consumer.diagnostics().open_connections(), 0);
    consumer.shutdown().await;

    // The CLI: `rudder invoke --url tri://...` calls exactly like dubbo://.
    let url = format!(
        "tri://127.0.0.1:{}/{SERVICE}?version=1.0.0&group=g1",
        tri.port()
    );
    let out = run_rudder(&[
        "invoke", "--url", &url, "--method", "add", "--types", "int,int", "--args", "[20,22]",
    ])
    .await;
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "42\n"),
        "{}",
        out.stderr
    );
    drop(dubbo);
}
