//! A `Reference` over real dubbo:// connections to in-process providers on loopback.

use rudder::{CallError, ClusterMode, Invocation, JavaException, Reference, RpcErrorKind, Value};
use rudder_rpc::server::DubboServer;
use serde::{Deserialize, Serialize};

/// A provider answering `who` with its name, `fail` with a business exception, `slow` after 300 ms, and
/// echoing anything else's first argument.
async fn provider(name: &'static str) -> DubboServer {
    DubboServer::bind(0, move |call: Invocation| async move {
        match call.method_name() {
            "who" => Ok(Value::from(name)),
            "fail" => Err(JavaException {
                class: "org.rudder.it.GreetingException".into(),
                message: Some(format!("no greeting from {name}")),
                cause: None,
            }),
            "slow" => {
                tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                Ok(Value::Null)
            }
            _ => Ok(call.arguments().first().cloned().unwrap_or(Value::Null)),
        }
    })
    .await
    .unwrap()
}

fn url(server: &DubboServer, params: &str) -> String {
    format!("dubbo://{}/com.acme.Greeter?{params}", server.local_addr())
}

#[tokio::test]
async fn round_robin_split_over_the_wire_follows_weights_exactly() {
    let (a, b) = (provider("a").await, provider("b").await);
    let greeter = Reference::builder("com.acme.Greeter")
        .provider(&url(&a, "weight=100&loadbalance=roundrobin"))
        .provider(&url(&b, "weight=300"))
        .build()
        .await
        .unwrap();
    let mut counts = [0, 0];
    for _ in 0..400 {
        match greeter
            .call::<Value, _>("who", &[], vec![])
            .await
            .unwrap()
            .as_str()
        {
            Some("a") => counts[0] += 1,
            Some("b") => counts[1] += 1,
            other => panic!("unexpected answer {other:?}"),
        }
    }
    assert_eq!(counts, [100, 300]);
    // Every call was counted, and none is left active.
    let snapshot = greeter.snapshot();
    let totals: Vec<i64> = snapshot
        .providers()
        .iter()
        .map(|p| p.status().method("who").total())
        .collect();
    assert_eq!(totals, [100, 300]);
    assert!(snapshot
        .providers()
        .iter()
        .all(|p| p.status().service().active() == 0));
}

#[tokio::test]
async fn failover_hides_a_dead_provider() {
    let (alive, dead) = (provider("alive").await, provider("dead").await);
    let dead_url = url(&dead, "");
    dead.shutdown().await;
    let greeter = Reference::builder("com.acme.Greeter")
        .provider(&url(&alive, "loadbalance=roundrobin"))
        .provider(&dead_url)
        .build()
        .await
        .unwrap();
    for _ in 0..20 {
        assert_eq!(
            greeter.call::<Value, _>("who", &[], vec![]).await.unwrap(),
            Value::from("alive")
        );
    }
    let failfast = Reference::builder("com.acme.Greeter")
        .provider(&dead_url)
        .cluster(ClusterMode::Failfast)
        .build()
        .await
        .unwrap();
    let err = failfast
        .call::<Value, _>("who", &[], vec![])
        .await
        .unwrap_err();
    assert!(
        matches!(err, CallError::Rpc(ref e) if e.kind() == RpcErrorKind::Network),
        "{err}"
    );
}

#[tokio::test]
async fn business_exception_is_returned_not_retried() {
    let a = provider("a").await;
    let greeter = Reference::builder("com.acme.Greeter")
        .provider(&url(&a, ""))
        .build()
        .await
        .unwrap();
    match greeter.call::<Value, _>("fail", &[], vec![]).await {
        Err(CallError::Exception(e)) => {
            assert_eq!(e.class, "org.rudder.it.GreetingException");
            assert_eq!(e.message.as_deref(), Some("no greeting from a"));
        }
        other => panic!("expected a business exception, got {other:?}"),
    }
    let status = greeter.snapshot().providers()[0].status().method("fail");
    assert_eq!(
        (status.total(), status.failed()),
        (1, 0),
        "one attempt, counted as answered"
    );
}

#[tokio::test]
async fn consumer_timeout_applies_per_method() {
    let a = provider("a").await;
    let greeter = Reference::builder("com.acme.Greeter")
        .provider(&url(&a, "timeout=5000"))
        .parameter("slow.timeout", "50")
        .retries(0)
        .build()
        .await
        .unwrap();
    let err = greeter
        .call::<Value, _>("slow", &[], vec![])
        .await
        .unwrap_err();
    assert!(
        matches!(err, CallError::Rpc(ref e) if e.kind() == RpcErrorKind::Timeout),
        "{err}"
    );
    // The connection survives the timeout.
    assert_eq!(
        greeter.call::<Value, _>("who", &[], vec![]).await.unwrap(),
        Value::from("a")
    );
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename = "org.rudder.it.User")]
struct User {
    name: String,
    age: i32,
}

#[tokio::test]
async fn typed_call_round_trips_a_java_object() {
    let a = provider("a").await;
    let greeter = Reference::builder("com.acme.Greeter")
        .provider(&url(&a, ""))
        .build()
        .await
        .unwrap();
    let alice = User {
        name: "alice".into(),
        age: 30,
    };
    let back: User = greeter
        .call("echoUser", &["org.rudder.it.User"], (&alice,))
        .await
        .unwrap();
    assert_eq!(back, alice);
}

#[tokio::test]
async fn no_providers_is_a_clear_error() {
    // Every provider is routed away: a forced tag no provider carries.
    let greeter = Reference::builder("com.acme.Greeter")
        .provider("dubbo://127.0.0.1:1/com.acme.Greeter")
        .build()
        .await
        .unwrap();
    let mut call = Invocation::new("who", vec![], vec![]);
    call.set_attachment("dubbo.tag", "gray");
    call.set_attachment("dubbo.force.tag", "true");
    let err = greeter.invoke(call).await.unwrap_err();
    assert!(
        matches!(err, CallError::Rpc(ref e) if e.kind() == RpcErrorKind::NoProvider),
        "{err}"
    );
    assert!(matches!(
        Reference::builder("x").build().await,
        Err(rudder::BuildError::NoSource)
    ));
}
