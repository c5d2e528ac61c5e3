//! Everything a consumer opens, it closes: a dropped reference frees its providers' connections and
//! statistics, and the last handle (or `shutdown`) ends every connection and task.

use rudder::{Consumer, Invocation, Value};
use rudder_rpc::server::DubboServer;
use rudder_test_support::wait::within;

async fn server() -> DubboServer {
    DubboServer::bind(0, |_call: Invocation| async { Ok(Value::Int(1)) })
        .await
        .unwrap()
}

#[tokio::test]
async fn a_dropped_reference_frees_what_only_it_used() {
    let (a, b) = (server().await, server().await);
    let consumer = Consumer::builder().build();
    let on_a = consumer
        .reference("com.acme.A")
        .provider(&format!("dubbo://{}/com.acme.A", a.local_addr()))
        .build()
        .await
        .unwrap();
    let on_both = consumer
        .reference("com.acme.B")
        .provider(&format!("dubbo://{}/com.acme.B", a.local_addr()))
        .provider(&format!("dubbo://{}/com.acme.B", b.local_addr()))
        .loadbalance("roundrobin")
        .build()
        .await
        .unwrap();
    on_a.call::<Value, _>("x", &[], vec![]).await.unwrap();
    on_both.call::<Value, _>("x", &[], vec![]).await.unwrap();
    on_both.call::<Value, _>("x", &[], vec![]).await.unwrap();
    assert_eq!(
        consumer.diagnostics().open_connections(),
        2,
        "one per address, shared"
    );
    assert_eq!(consumer.statuses().len(), 3);

    // `a` is still used by `on_a`: only `b`'s connection goes, and `on_both`'s statistics.
    drop(on_both);
    b.wait_for_open_connections(0).await;
    assert_eq!(a.open_connections(), 1);
    assert_eq!(consumer.diagnostics().open_connections(), 1);
    assert_eq!(consumer.statuses().len(), 1);
    on_a.call::<Value, _>("x", &[], vec![]).await.unwrap();

    drop(on_a);
    within("a's socket to close", a.wait_for_open_connections(0)).await;
    within(
        "the consumer to be idle",
        consumer.diagnostics().wait_until_idle(),
    )
    .await;
    assert_eq!(
        (
            consumer.diagnostics().open_connections(),
            consumer.diagnostics().live_tasks()
        ),
        (0, 0)
    );
    assert_eq!(consumer.statuses().len(), 0);
}

#[tokio::test]
async fn dropping_the_last_handle_closes_every_connection() {
    let servers = [server().await, server().await, server().await];
    let consumer = Consumer::builder().build();
    let mut reference = consumer.reference("com.acme.S").loadbalance("roundrobin");
    for s in &servers {
        reference = reference.provider(&format!(
            "dubbo://{}/com.acme.S?heartbeat=100",
            s.local_addr()
        ));
    }
    let reference = reference.build().await.unwrap();
    for _ in 0..3 {
        reference.call::<Value, _>("x", &[], vec![]).await.unwrap();
    }
    for s in &servers {
        assert_eq!(s.open_connections(), 1);
    }
    // A clone keeps everything alive; heartbeats do not.
    let clone = reference.clone();
    drop(reference);
    drop(consumer);
    clone.call::<Value, _>("x", &[], vec![]).await.unwrap();
    drop(clone);
    for s in &servers {
        within(
            "the provider to see its socket close",
            s.wait_for_open_connections(0),
        )
        .await;
    }
}

#[tokio::test]
async fn shutdown_waits_until_every_task_has_ended() {
    let a = server().await;
    let consumer = Consumer::builder().build();
    let reference = consumer
        .reference("com.acme.S")
        .provider(&format!("dubbo://{}/com.acme.S", a.local_addr()))
        .build()
        .await
        .unwrap();
    reference.call::<Value, _>("x", &[], vec![]).await.unwrap();
    assert!(consumer.diagnostics().live_tasks() > 0);
    within("shutdown", consumer.shutdown()).await;
    assert_eq!(consumer.diagnostics().live_tasks(), 0);
    assert_eq!(consumer.diagnostics().open_connections(), 0);
    within("a's socket to close", a.wait_for_open_connections(0)).await;
}
