//! Who closes what: connections end with their last user, retired addresses close once their calls
//! end, shutdown waits for every task. Every wait is on an event, bounded by the test deadline.

use crate::support::*;
use rudder_common::value::Value;
use rudder_rpc::DubboProtocol;

fn sleep_call(ms: i64) -> rudder_common::invocation::Invocation {
    call("sleep", &["long"], vec![Value::Long(ms)])
}

#[tokio::test]
async fn heartbeats_do_not_keep_a_retired_connection_alive() {
    bounded(async {
        let (server, _entered) = start(0).await;
        let url = url(&server, "heartbeat=100");
        let protocol = DubboProtocol::new();
        assert!(protocol.invoke(&url, &say_hello("hb")).await.is_ok());
        server.wait_for_heartbeats(1).await;
        assert_eq!(protocol.retain_addresses(|_| false), 1);
        protocol.wait_until_idle().await;
        server.wait_for_open_connections(0).await;
        assert_eq!((protocol.open_connections(), protocol.live_tasks()), (0, 0));
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn a_retired_address_closes_only_after_its_calls_in_flight_end() {
    bounded(async {
        let (server, mut entered) = start(0).await;
        let url = url(&server, "timeout=15000");
        let protocol = DubboProtocol::new();
        let in_flight = {
            let (protocol, url) = (protocol.clone(), url.clone());
            tokio::spawn(async move { protocol.invoke(&url, &sleep_call(200)).await })
        };
        assert_eq!(entered.recv().await.as_deref(), Some("sleep"));
        let gone = url.address();
        assert_eq!(protocol.retain_addresses(|addr| addr != gone), 1);
        assert_eq!(protocol.open_connections(), 1, "the call still uses it");

        let answer = in_flight.await.unwrap().expect("retiring cuts no call");
        assert_eq!(answer.value(), Some(&Value::from("slept")));
        protocol.wait_until_idle().await;
        server.wait_for_open_connections(0).await;

        // A new call to the retired address opens a fresh pool.
        assert!(protocol.invoke(&url, &say_hello("back")).await.is_ok());
        assert_eq!(server.accepted_connections(), 2);
        assert_eq!(protocol.open_connections(), 1);
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn retain_keeps_the_addresses_it_is_told_to() {
    bounded(async {
        let (a, _ea) = start(0).await;
        let (b, _eb) = start(0).await;
        let (url_a, url_b) = (url(&a, ""), url(&b, "connections=2"));
        let protocol = DubboProtocol::new();
        assert!(protocol.invoke(&url_a, &say_hello("a")).await.is_ok());
        for _ in 0..2 {
            assert!(protocol.invoke(&url_b, &say_hello("b")).await.is_ok());
        }
        assert_eq!(protocol.open_connections(), 3);
        let keep = url_b.address();
        assert_eq!(protocol.retain_addresses(|addr| addr == keep), 1);
        a.wait_for_open_connections(0).await;
        assert_eq!(b.open_connections(), 2);
        assert!(protocol.invoke(&url_b, &say_hello("b")).await.is_ok());
        assert_eq!(
            b.accepted_connections(),
            2,
            "kept pools keep their connections"
        );
        a.shutdown().await;
        b.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn shutdown_returns_after_every_task_has_ended() {
    bounded(async {
        let mut servers = Vec::new();
        for _ in 0..5 {
            servers.push(start(0).await);
        }
        let protocol = DubboProtocol::new();
        for (server, _) in &servers {
            let url = url(server, "connections=3");
            for _ in 0..3 {
                assert!(protocol.invoke(&url, &say_hello("x")).await.is_ok());
            }
        }
        assert_eq!(protocol.open_connections(), 15);
        assert!(protocol.live_tasks() >= 30, "a driver and a writer each");
        protocol.shutdown().await;
        // No waiting here: shutdown itself waited.
        assert_eq!((protocol.open_connections(), protocol.live_tasks()), (0, 0));
        for (server, _) in servers {
            server.wait_for_open_connections(0).await;
            server.shutdown().await;
        }
    })
    .await;
}

#[tokio::test]
async fn dropping_the_last_clone_closes_every_connection() {
    bounded(async {
        let (server, _entered) = start(0).await;
        let protocol = DubboProtocol::new();
        let clone = protocol.clone();
        assert!(clone
            .invoke(&url(&server, ""), &say_hello("x"))
            .await
            .is_ok());
        drop(protocol);
        assert_eq!(server.open_connections(), 1, "a clone still holds it");
        drop(clone);
        server.wait_for_open_connections(0).await;
        server.shutdown().await;
    })
    .await;
}
