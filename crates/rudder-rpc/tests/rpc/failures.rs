//! What happens when calls or connections go wrong: timeouts, dead providers, oversized or
//! malformed frames, shutdown, and how `invoke_counted` counts them.

use crate::support::*;
use rudder_common::error::RpcErrorKind;
use rudder_common::status::record::RecordProviders;
use rudder_common::status::StatusRegistry;
use rudder_common::value::Value;
use rudder_rpc::backoff::Backoff;
use rudder_rpc::DubboProtocol;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

fn sleep_call(ms: i64) -> rudder_common::invocation::Invocation {
    call("sleep", &["long"], vec![Value::Long(ms)])
}

#[tokio::test]
async fn timeout_fails_the_call_and_the_connection_stays_usable() {
    bounded(async {
        let (server, _entered) = start(0).await;
        let url = url(&server, "sleep.timeout=100");
        let protocol = DubboProtocol::new();
        let err = protocol.invoke(&url, &sleep_call(1000)).await.unwrap_err();
        assert_eq!(err.kind(), RpcErrorKind::Timeout);
        assert!(err.message().contains("in 100 ms"), "{err}");
        // The late answer to the timed-out call must not be mistaken for this one.
        let hello = protocol.invoke(&url, &say_hello("again")).await.unwrap();
        assert_eq!(hello.value(), Some(&Value::from("Hello again")));
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn killed_server_gives_network_errors_then_reconnects_after_restart() {
    bounded(async {
        let (server, mut entered) = start(0).await;
        let port = server.local_addr().port();
        let url = url(&server, "timeout=15000");
        let protocol = DubboProtocol::new();
        assert!(protocol.invoke(&url, &say_hello("before")).await.is_ok());
        assert_eq!(entered.recv().await.as_deref(), Some("sayHello"));

        let in_flight = {
            let (protocol, url) = (protocol.clone(), url.clone());
            tokio::spawn(async move { protocol.invoke(&url, &call("block", &[], vec![])).await })
        };
        assert_eq!(entered.recv().await.as_deref(), Some("block"));
        server.shutdown().await;

        let err = in_flight.await.unwrap().unwrap_err();
        assert_eq!(err.kind(), RpcErrorKind::Network, "{err}");
        assert!(err.message().contains("closed"), "{err}");
        let refused = protocol.invoke(&url, &say_hello("down")).await.unwrap_err();
        assert_eq!(refused.kind(), RpcErrorKind::Network, "{refused}");

        let (restarted, _entered) = start(port).await;
        // The refused connect was the slot's first failure since it last had a connection: its
        // backoff ends within `Backoff::ceiling(1)`. The slot reads tokio's clock, so the test moves
        // that clock past the backoff instead of sleeping through it, then lets it run again.
        tokio::time::pause();
        tokio::time::advance(Backoff::ceiling(1)).await;
        tokio::time::resume();
        let hello = protocol
            .invoke(&url, &say_hello("after"))
            .await
            .expect("a reconnect once the backoff is over");
        assert_eq!(hello.value(), Some(&Value::from("Hello after")));
        restarted.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn oversized_response_fails_that_call_only_and_the_connection_stays() {
    bounded(async {
        let (server, mut entered) = start(0).await;
        let small = url(&server, "payload=1024&timeout=15000");
        let protocol = DubboProtocol::new();
        assert!(protocol.invoke(&small, &say_hello("first")).await.is_ok());
        assert_eq!(entered.recv().await.as_deref(), Some("sayHello"));
        // A call in flight on the same connection while the oversized answer streams past it.
        let blocked = {
            let (protocol, small) = (protocol.clone(), small.clone());
            tokio::spawn(async move { protocol.invoke(&small, &sleep_call(300)).await })
        };
        assert_eq!(entered.recv().await.as_deref(), Some("sleep"));

        let big = call("big", &["int"], vec![Value::Int(200_000)]);
        let err = protocol.invoke(&small, &big).await.unwrap_err();
        assert_eq!(err.kind(), RpcErrorKind::Serialization, "{err}");
        assert!(
            err.message()
                .contains("over the payload limit of 1024 bytes (skipped)"),
            "{err}"
        );
        // The connection carries on: the call in flight is answered and new calls go through it.
        let slept = blocked.await.unwrap().unwrap();
        assert_eq!(slept.value(), Some(&Value::from("slept")));
        let hello = protocol.invoke(&small, &say_hello("again")).await.unwrap();
        assert_eq!(hello.value(), Some(&Value::from("Hello again")));
        assert_eq!(protocol.open_connections(), 1);
        assert_eq!(server.accepted_connections(), 1, "no reconnect");
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn request_over_the_payload_limit_is_not_sent() {
    bounded(async {
        let (server, _entered) = start(0).await;
        let url = url(&server, "payload=512");
        let protocol = DubboProtocol::new();
        let huge = say_hello(&"y".repeat(2048));
        let err = protocol.invoke(&url, &huge).await.unwrap_err();
        assert_eq!(err.kind(), RpcErrorKind::Serialization, "{err}");
        assert!(protocol.invoke(&url, &say_hello("small")).await.is_ok());
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn shutdown_fails_calls_in_flight_and_later_ones() {
    bounded(async {
        let (server, mut entered) = start(0).await;
        let url = url(&server, "timeout=15000");
        let protocol = DubboProtocol::new();
        let in_flight = {
            let (protocol, url) = (protocol.clone(), url.clone());
            tokio::spawn(async move { protocol.invoke(&url, &call("block", &[], vec![])).await })
        };
        assert_eq!(entered.recv().await.as_deref(), Some("block"));
        protocol.shutdown().await;
        // Its own kind, so that no cluster mode retries it on another provider.
        let err = in_flight.await.unwrap().unwrap_err();
        assert_eq!(err.kind(), RpcErrorKind::ShutDown);
        assert!(!err.kind().is_retryable());
        assert!(err.message().contains("shut down"), "{err}");
        let later = protocol.invoke(&url, &say_hello("x")).await.unwrap_err();
        assert_eq!(later.kind(), RpcErrorKind::ShutDown);
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn invoke_counted_tracks_active_failed_and_succeeded() {
    bounded(async {
        let (server, _entered) = start(0).await;
        let url = url(&server, "sleep.timeout=50");
        let protocol = DubboProtocol::new();
        let statuses = StatusRegistry::default();
        let status = statuses.provider(&url.identity());

        assert!(protocol
            .invoke_counted(&status, &url, &say_hello("a"))
            .await
            .is_ok());
        let timed_out = protocol
            .invoke_counted(&status, &url, &sleep_call(500))
            .await;
        assert_eq!(timed_out.unwrap_err().kind(), RpcErrorKind::Timeout);
        let boom = protocol
            .invoke_counted(&status, &url, &call("boom", &[], vec![]))
            .await;
        assert!(boom.unwrap().exception().is_some());

        assert_eq!(status.service().active(), 0);
        assert_eq!(status.service().total(), 3);
        assert_eq!(status.service().failed(), 1);
        assert_eq!(status.method("sleep").failed(), 1);
        assert!(status.method("sleep").failed_elapsed() >= 50);
        assert_eq!(
            status.method("boom").succeeded(),
            1,
            "a business exception is a success"
        );
        assert_eq!(status.method("sayHello").succeeded(), 1);
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn actives_limit_refuses_without_sending() {
    bounded(async {
        let (server, mut entered) = start(0).await;
        let url = url(&server, "actives=1&timeout=15000");
        let protocol = DubboProtocol::new();
        let status = StatusRegistry::default().provider(&url.identity());
        let first = {
            let (protocol, url, status) = (protocol.clone(), url.clone(), status.clone());
            tokio::spawn(async move {
                protocol
                    .invoke_counted(&status, &url, &call("block", &[], vec![]))
                    .await
            })
        };
        assert_eq!(entered.recv().await.as_deref(), Some("block"));
        let second = protocol
            .invoke_counted(&status, &url, &call("block", &[], vec![]))
            .await;
        assert_eq!(second.unwrap_err().kind(), RpcErrorKind::LimitExceeded);
        protocol.shutdown().await;
        assert!(first.await.unwrap().is_err());
        assert_eq!(status.service().active(), 0);
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn idle_connection_sends_heartbeats() {
    bounded(async {
        let (server, _entered) = start(0).await;
        let url = url(&server, "heartbeat=100");
        let protocol = DubboProtocol::new();
        assert!(protocol.invoke(&url, &say_hello("hb")).await.is_ok());
        server.wait_for_heartbeats(3).await;
        assert!(server.heartbeats_received() >= 3);
        // Answered heartbeats keep the connection alive well past 3 × heartbeat.
        assert!(protocol.invoke(&url, &say_hello("still")).await.is_ok());
        server.shutdown().await;
    })
    .await;
}

/// Reads one frame: (flags, id, body).
async fn read_frame(stream: &mut tokio::net::TcpStream) -> (u8, i64, Vec<u8>) {
    let mut head = [0u8; 16];
    stream.read_exact(&mut head).await.unwrap();
    assert_eq!(head[..2], [0xda, 0xbb]);
    let id = i64::from_be_bytes(head[4..12].try_into().unwrap());
    let len = u32::from_be_bytes(head[12..16].try_into().unwrap());
    let mut body = vec![0u8; len as usize];
    stream.read_exact(&mut body).await.unwrap();
    (head[2], id, body)
}

fn ok_frame(id: i64) -> Vec<u8> {
    let mut frame = vec![0xda, 0xbb, 0x02, 0x14];
    frame.extend_from_slice(&id.to_be_bytes());
    frame.extend_from_slice(&4u32.to_be_bytes());
    frame.extend_from_slice(b"\x91\x02ok");
    frame
}

#[tokio::test]
async fn provider_heartbeat_requests_are_answered() {
    bounded(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let provider = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            // The Java peer's heartbeat, byte for byte (wire-protocols.md 2.4).
            stream
                .write_all(b"\xda\xbb\xe2\x00\0\0\0\0\0\0\0\x63\0\0\0\x01\x4e")
                .await
                .unwrap();
            let (mut request_id, mut heartbeat_answer) = (None, None);
            while request_id.is_none() || heartbeat_answer.is_none() {
                match read_frame(&mut stream).await {
                    (0x22, id, body) => heartbeat_answer = Some((id, body)),
                    (0xc2, id, _) => request_id = Some(id),
                    (flags, ..) => panic!("unexpected flags 0x{flags:02x}"),
                }
            }
            stream
                .write_all(&ok_frame(request_id.unwrap()))
                .await
                .unwrap();
            heartbeat_answer.unwrap()
        });
        let url =
            rudder_common::url::DubboUrl::parse(&format!("dubbo://{addr}/{SERVICE}")).unwrap();
        let protocol = DubboProtocol::new();
        let response = protocol.invoke(&url, &say_hello("raw")).await.unwrap();
        assert_eq!(response.value(), Some(&Value::from("ok")));
        assert_eq!(provider.await.unwrap(), (0x63, b"N".to_vec()));
    })
    .await;
}

#[tokio::test]
async fn malformed_frame_fails_pending_calls_with_a_clear_error() {
    bounded(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let provider = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let _ = read_frame(&mut stream).await;
            stream.write_all(b"telnet> hello, not dubbo").await.unwrap();
            // The consumer must hang up on us.
            let mut rest = Vec::new();
            stream.read_to_end(&mut rest).await.unwrap();
        });
        let url =
            rudder_common::url::DubboUrl::parse(&format!("dubbo://{addr}/{SERVICE}?timeout=10000"))
                .unwrap();
        let err = DubboProtocol::new()
            .invoke(&url, &say_hello("x"))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), RpcErrorKind::Network);
        assert!(
            err.message().contains("malformed frame: bad magic"),
            "{err}"
        );
        provider.await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn non_ok_status_maps_to_a_typed_error() {
    bounded(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let (_, id, _) = read_frame(&mut stream).await;
            let message = b"Not found exported service: x";
            let mut frame = vec![0xda, 0xbb, 0x02, 70];
            frame.extend_from_slice(&id.to_be_bytes());
            frame.extend_from_slice(&(message.len() as u32 + 1).to_be_bytes());
            frame.push(message.len() as u8);
            frame.extend_from_slice(message);
            stream.write_all(&frame).await.unwrap();
            let mut rest = Vec::new();
            let _ = stream.read_to_end(&mut rest).await;
        });
        let url =
            rudder_common::url::DubboUrl::parse(&format!("dubbo://{addr}/{SERVICE}")).unwrap();
        let err = DubboProtocol::new()
            .invoke(&url, &say_hello("x"))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), RpcErrorKind::MethodNotFound, "{err}");
        let status = std::error::Error::source(&err)
            .and_then(|s| s.downcast_ref::<rudder_rpc::ProviderError>())
            .expect("a ProviderError source");
        assert_eq!(status.status(), rudder_rpc::ResponseStatus::ServiceError);
        assert_eq!(status.message(), "Not found exported service: x");
    })
    .await;
}

#[tokio::test]
async fn the_endpoint_reports_its_connection_down_while_the_provider_is_dead() {
    use rudder_rpc::endpoint::Transport;
    bounded(async {
        let (server, _entered) = start(0).await;
        let port = server.local_addr().port();
        let url = url(&server, "timeout=15000");
        let protocol = DubboProtocol::new();
        let endpoint = protocol.endpoint(&url);
        let connection = endpoint
            .availability()
            .expect("dubbo:// tracks its connections")
            .clone();
        assert!(connection.is_available(), "not yet tried: available");
        assert!(endpoint.call(say_hello("before")).await.is_ok());
        assert!(connection.is_available() && !connection.is_down());

        server.shutdown().await;
        // The first call after the close starts the reconnect, which is refused: down until the
        // backoff ends (at least 50 ms: the first delay is 100 ms with jitter).
        let refused = endpoint.call(say_hello("down")).await.unwrap_err();
        assert_eq!(refused.kind(), RpcErrorKind::Network, "{refused}");
        assert!(connection.is_down());
        assert!(!connection.is_available(), "down during the backoff");

        let (restarted, _entered) = start(port).await;
        // The backoff is read from tokio's clock; the availability from the real one, which is
        // waited for by the call below only after the slot agrees (a refusal while backing off).
        tokio::time::pause();
        tokio::time::advance(Backoff::ceiling(1)).await;
        tokio::time::resume();
        let hello = endpoint
            .call(say_hello("after"))
            .await
            .expect("reconnected");
        assert_eq!(hello.value(), Some(&Value::from("Hello after")));
        assert!(
            connection.is_available() && !connection.is_down(),
            "up again"
        );
        restarted.shutdown().await;
    })
    .await;
}
