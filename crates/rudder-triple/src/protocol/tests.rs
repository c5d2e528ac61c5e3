//! The client's failures and lifecycle against plain sockets on loopback (the Java provider's answers
//! are in it/tests/it/triple_pojo.rs).

use std::time::Duration;

use rudder_common::error::RpcErrorKind;
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_common::value::Value;
use tokio::net::TcpListener;

use super::TripleProtocol;

fn hello() -> Invocation {
    Invocation::new(
        "sayHello",
        vec!["java.lang.String".into()],
        vec![Value::from("rust")],
    )
}

#[tokio::test]
async fn a_closed_port_is_a_retryable_network_failure() {
    // Bind and drop: nothing listens on the port afterwards.
    let port = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = DubboUrl::parse(&format!("tri://127.0.0.1:{port}/com.acme.Greeter")).unwrap();
    let protocol = TripleProtocol::new(None);
    let error = protocol.invoke(&url, &hello()).await.unwrap_err();
    assert_eq!(error.kind(), RpcErrorKind::Network, "{error}");
    assert!(error.kind().is_retryable());
    assert!(
        error.message().contains(&format!("tri://127.0.0.1:{port}")),
        "{error}"
    );
    assert_eq!(protocol.open_connections(), 0);
}

#[tokio::test]
async fn a_silent_provider_times_out_and_its_connection_is_dropped_when_it_leaves() {
    // Accepts the connection and never speaks HTTP/2: the call ends at its deadline.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (seen, mut accepted) = tokio::sync::mpsc::channel(1);
    let server = tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        seen.send(()).await.unwrap();
        let mut buf = vec![0; 1024];
        // Read until the client closes: then the socket's owner has let go of it.
        while socket.readable().await.is_ok() {
            match socket.try_read(&mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => break,
            }
        }
    });
    let url = DubboUrl::parse(&format!("tri://{addr}/com.acme.Greeter?timeout=300")).unwrap();
    let protocol = TripleProtocol::new(Some("it".into()));
    let error = protocol.invoke(&url, &hello()).await.unwrap_err();
    assert!(error.kind() == RpcErrorKind::Timeout, "{error}");
    accepted.recv().await.unwrap();

    // The connection was made (the socket accepted, HTTP/2's preface sent); only the answer never came.
    assert_eq!(protocol.open_connections(), 1);
    assert_eq!(protocol.retain_addresses(|a| a == "127.0.0.1:1"), 1);
    assert_eq!(protocol.open_connections(), 0);
    // The peer sees the connection close once nothing holds it (bounded, not a sleep).
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("the dropped connection closes")
        .unwrap();
}

#[tokio::test]
async fn after_shutdown_every_call_is_refused() {
    let protocol = TripleProtocol::new(None);
    protocol.shutdown();
    let url = DubboUrl::parse("tri://127.0.0.1:1/com.acme.Greeter").unwrap();
    let error = protocol.clone().invoke(&url, &hello()).await.unwrap_err();
    assert_eq!(error.kind(), RpcErrorKind::ShutDown);
    assert!(!error.kind().is_retryable());
}

#[tokio::test(start_paused = true)]
async fn after_a_failed_connect_calls_fail_fast_until_the_backoff_ends() {
    let port = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = DubboUrl::parse(&format!("tri://127.0.0.1:{port}/com.acme.Greeter")).unwrap();
    let protocol = TripleProtocol::new(None);
    let first = protocol.invoke(&url, &hello()).await.unwrap_err();
    assert!(first.message().contains("cannot connect"), "{first}");
    // Within the first wait (at least 50 ms): refused without a connect.
    let second = protocol.invoke(&url, &hello()).await.unwrap_err();
    assert_eq!(second.kind(), RpcErrorKind::Network);
    assert!(
        second.message().contains("1 connect(s) failed in a row"),
        "{second}"
    );
    // After the first wait's ceiling (100 ms) a connect is tried again, and fails again.
    tokio::time::advance(Duration::from_millis(101)).await;
    let third = protocol.invoke(&url, &hello()).await.unwrap_err();
    assert!(third.message().contains("cannot connect"), "{third}");
    let fourth = protocol.invoke(&url, &hello()).await.unwrap_err();
    assert!(
        fourth.message().contains("2 connect(s) failed in a row"),
        "{fourth}"
    );
}
