//! A provider (or anything between consumer and provider) that answers with a body built to decode
//! into gigabytes fails that one call; the connection and the calls sharing it go on.

use crate::support::*;
use rudder_common::error::RpcErrorKind;
use rudder_common::url::DubboUrl;
use rudder_common::value::Value;
use rudder_hessian::{Hessian2Reader, Hessian2Writer};
use rudder_rpc::DubboProtocol;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const HEADER_LEN: usize = 16;
const EVENT: u8 = 0x20;

/// A dubbo:// response frame (hessian2, status OK) for request `id`.
fn response_frame(id: i64, event: bool, body: &[u8]) -> Vec<u8> {
    let mut frame = vec![0xda, 0xbb, 0x02 | if event { EVENT } else { 0 }, 20];
    frame.extend_from_slice(&id.to_be_bytes());
    frame.extend_from_slice(&u32::try_from(body.len()).unwrap().to_be_bytes());
    frame.extend_from_slice(body);
    frame
}

/// A value response: kind flag 1, then the value's bytes.
fn value_body(value: &[u8]) -> Vec<u8> {
    let mut body = vec![0x91];
    body.extend_from_slice(value);
    body
}

/// 300,000 objects of a class with a 64 KiB name (about 650 KB), which decoded to 19 GB when every
/// object copied its class definition.
fn hostile_value() -> Vec<u8> {
    let mut w = Hessian2Writer::new();
    w.write_int(300_000);
    let mut value = vec![b'X'];
    value.extend_from_slice(w.as_bytes());
    value.push(b'C');
    let mut w = Hessian2Writer::new();
    w.write_string(&format!("com.example.{}", "x".repeat(64 << 10)));
    w.write_int(1);
    w.write_string("value");
    value.extend_from_slice(w.as_bytes());
    for _ in 0..300_000 {
        value.extend_from_slice(b"\x60N");
    }
    value
}

/// Reads one frame: its id, whether it is an event, and the method name of a request.
async fn read_request(socket: &mut TcpStream) -> Option<(i64, bool, String)> {
    let mut header = [0u8; HEADER_LEN];
    socket.read_exact(&mut header).await.ok()?;
    let id = i64::from_be_bytes(header[4..12].try_into().ok()?);
    let len = u32::from_be_bytes(header[12..16].try_into().ok()?);
    let mut body = vec![0u8; usize::try_from(len).ok()?];
    socket.read_exact(&mut body).await.ok()?;
    let event = header[2] & EVENT != 0;
    let method = if event {
        String::new()
    } else {
        let mut r = Hessian2Reader::new(&body);
        (0..4).map(|_| r.read_string().ok()).last()??
    };
    Some((id, event, method))
}

/// A provider that serves exactly one connection: it waits for two calls, answers `hostile` with
/// the hostile body first and the other call after it, then answers each further call with `"ok"`.
/// Since it never accepts a second connection, a later call answered proves the consumer kept the
/// connection.
async fn provider(listener: TcpListener) {
    let (mut socket, _) = listener.accept().await.expect("accept");
    let mut waiting = Vec::new();
    while let Some((id, event, method)) = read_request(&mut socket).await {
        if event {
            let _ = socket.write_all(&response_frame(id, true, b"N")).await;
            continue;
        }
        waiting.push((id, method));
        if waiting.len() < 2 && waiting.iter().all(|(_, m)| m != "after") {
            continue;
        }
        waiting.sort_by_key(|(_, method)| method != "hostile");
        for (id, method) in waiting.drain(..) {
            let value = if method == "hostile" {
                hostile_value()
            } else {
                b"\x02ok".to_vec()
            };
            let frame = response_frame(id, false, &value_body(&value));
            if socket.write_all(&frame).await.is_err() {
                return;
            }
        }
    }
}

#[tokio::test]
async fn a_hostile_response_fails_only_its_call_and_the_connection_goes_on() {
    bounded(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        let provider = tokio::spawn(provider(listener));
        let url =
            DubboUrl::parse(&format!("dubbo://{addr}/{SERVICE}?timeout=15000")).expect("valid URL");
        let protocol = DubboProtocol::new();

        let concurrent = {
            let (protocol, url) = (protocol.clone(), url.clone());
            tokio::spawn(async move {
                protocol
                    .invoke(&url, &call("concurrent", &[], vec![]))
                    .await
            })
        };
        let hostile = protocol.invoke(&url, &call("hostile", &[], vec![])).await;
        let err = hostile.unwrap_err();
        assert_eq!(err.kind(), RpcErrorKind::Serialization, "{err}");
        // The message says which response; its cause, the decoder's error, says what.
        let cause = std::error::Error::source(&err).expect("the decoder's error");
        assert!(
            cause.to_string().contains("over the budget"),
            "{err}: {cause}"
        );
        assert!(
            !err.message().contains("over the budget"),
            "said once: {err}"
        );

        // The call that was in flight on the same connection gets its answer...
        let concurrent = concurrent.await.unwrap().unwrap();
        assert_eq!(concurrent.value(), Some(&Value::from("ok")));
        // ...and a later call is answered, which the provider does only on its one connection.
        let after = protocol
            .invoke(&url, &call("after", &[], vec![]))
            .await
            .unwrap();
        assert_eq!(after.value(), Some(&Value::from("ok")));

        protocol.shutdown().await;
        provider.await.unwrap();
    })
    .await;
}
