//! Providers that misbehave at the socket level, each on 127.0.0.1: one that never accepts (a full
//! backlog: SYNs are dropped), one that accepts and hangs up, one that stops reading, one that
//! closes in the middle of a frame with calls in flight. Each test states the bound it holds to.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::*;
use rudder_common::error::RpcErrorKind;
use rudder_common::url::DubboUrl;
use rudder_common::value::Value;
use rudder_rpc::DubboProtocol;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::watch;

fn raw_url(addr: SocketAddr, params: &str) -> DubboUrl {
    DubboUrl::parse(&format!("dubbo://{addr}/{SERVICE}?{params}")).unwrap()
}

/// A listener with a backlog of 0 whose queue is filled and never accepted: Linux then drops new
/// SYNs, so a connect neither succeeds nor fails. Proven by a probe connect that times out.
async fn black_hole() -> (TcpListener, Vec<TcpStream>, SocketAddr) {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(0).unwrap();
    let addr = listener.local_addr().unwrap();
    let mut fillers = Vec::new();
    for _ in 0..16 {
        match tokio::time::timeout(Duration::from_millis(300), TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => fillers.push(stream),
            Ok(Err(e)) => panic!("connect to the filling listener failed: {e}"),
            Err(_) => return (listener, fillers, addr),
        }
    }
    panic!("the backlog never filled");
}

#[tokio::test]
async fn a_black_hole_fails_each_call_at_its_own_deadline_not_at_connect_timeout() {
    bounded(async {
        let (_listener, _fillers, addr) = black_hole().await;
        let protocol = DubboProtocol::new();
        let short = raw_url(addr, "timeout=200&connect.timeout=3000");
        let calls: Vec<_> = (0..4)
            .map(|_| {
                let (protocol, url) = (protocol.clone(), short.clone());
                tokio::spawn(async move {
                    let started = Instant::now();
                    let err = protocol.invoke(&url, &say_hello("x")).await.unwrap_err();
                    (err, started.elapsed())
                })
            })
            .collect();
        for call in calls {
            let (err, took) = call.await.unwrap();
            assert_eq!(err.kind(), RpcErrorKind::Network, "{err}");
            assert!(
                err.message().contains("within the call's 200 ms timeout"),
                "{err}"
            );
            assert!(
                took >= Duration::from_millis(190) && took < Duration::from_millis(1000),
                "{took:?}"
            );
        }

        // With connect.timeout under the call's timeout, the connect's own deadline fires, and the
        // next call is refused while the slot backs off, without a connect. The refusal's message
        // is what says no connect was tried (a connect would end in "timed out after 100 ms"), not
        // a stopwatch. The backoff after one failure is 50-100 ms, which a loaded machine may let
        // pass between two calls; each further failure doubles it, so a refusal comes within a few.
        let other = DubboProtocol::new();
        let quick = raw_url(addr, "timeout=5000&connect.timeout=100");
        let started = Instant::now();
        let err = other.invoke(&quick, &say_hello("x")).await.unwrap_err();
        assert!(err.message().contains("timed out after 100 ms"), "{err}");
        assert!(started.elapsed() < Duration::from_millis(1000));
        let mut refused = None;
        for _ in 0..6 {
            let err = other.invoke(&quick, &say_hello("x")).await.unwrap_err();
            if err.message().contains("next reconnect in") {
                refused = Some(err);
                break;
            }
            assert!(err.message().contains("timed out after 100 ms"), "{err}");
        }
        assert!(refused.is_some(), "no call was refused during the backoff");
        other.shutdown().await;
        protocol.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn a_provider_that_accepts_and_closes_is_not_reconnected_per_call() {
    bounded(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (accepted, accepts) = watch::channel(0u32);
        let acceptor = tokio::spawn(async move {
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                accepted.send_modify(|n| *n += 1);
                drop(stream);
            }
        });
        let protocol = DubboProtocol::new();
        let url = raw_url(addr, "timeout=1000");
        const CALLS: u32 = 120;
        let mut pace = tokio::time::interval(Duration::from_millis(5));
        let started = Instant::now();
        for _ in 0..CALLS {
            pace.tick().await;
            let err = protocol.invoke(&url, &say_hello("x")).await.unwrap_err();
            assert_eq!(err.kind(), RpcErrorKind::Network, "{err}");
        }
        let took = started.elapsed();
        // The bound follows from the time the calls really took, so a slow machine cannot fail it:
        // the k-th retry waits at least half of min(100 ms * 2^(k-1), 10 s) after the k-th failure.
        let connects = *accepts.borrow();
        let allowed = connects_within(took);
        println!("accept-and-close peer: {CALLS} calls in {took:?}, {connects} connects");
        assert!(
            (1..=allowed).contains(&connects),
            "{connects} connects for {CALLS} calls in {took:?} (at most {allowed} with backoff)"
        );
        assert!(allowed < CALLS / 4, "{CALLS} calls took {took:?}");
        acceptor.abort();
        protocol.shutdown().await;
    })
    .await;
}

/// The most connects a slot can make in `elapsed` from its first one: each retry waits at least half
/// of its backoff ceiling, `min(100 ms * 2^(failures-1), 10 s)`, after the failure before it.
fn connects_within(elapsed: Duration) -> u32 {
    let (mut connects, mut earliest) = (1, Duration::ZERO);
    loop {
        let ceiling = Duration::from_millis(100)
            .saturating_mul(1 << connects.min(17) >> 1)
            .min(Duration::from_secs(10));
        earliest += ceiling / 2;
        if earliest > elapsed {
            return connects;
        }
        connects += 1;
    }
}

/// Accepts one connection, never reads it, and sends a heartbeat every 20 ms so the consumer's
/// read side stays busy: only the write deadline can notice that nothing is being read.
async fn deaf_provider() -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(16).unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut beat = tokio::time::interval(Duration::from_millis(20));
        for id in 1_000_000i64.. {
            beat.tick().await;
            let mut heartbeat = vec![0xda, 0xbb, 0xe2, 0x00];
            heartbeat.extend_from_slice(&id.to_be_bytes());
            heartbeat.extend_from_slice(&[0, 0, 0, 1, 0x4e]);
            if stream.write_all(&heartbeat).await.is_err() {
                return; // the consumer gave up on us
            }
        }
    });
    (addr, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_that_stops_reading_is_closed_by_the_write_deadline() {
    bounded(async {
        let (deaf, deaf_task) = deaf_provider().await;
        let (healthy, _entered) = start(0).await;
        let protocol = DubboProtocol::new();
        // heartbeat=1000: a write that makes no progress for 1 s closes the connection.
        let stuck = raw_url(deaf, "heartbeat=1000&timeout=10000");
        // Binary arguments encode as a copy, so the test spends its time on the wire, not encoding.
        let big = call(
            "upload",
            &["byte[]"],
            vec![Value::Binary(vec![7; 512 * 1024])],
        );
        let started = Instant::now();
        let long_calls: Vec<_> = (0..32)
            .map(|_| {
                let (protocol, url, big) = (protocol.clone(), stuck.clone(), big.clone());
                tokio::spawn(async move { protocol.invoke(&url, &big).await })
            })
            .collect();
        // A short call on the stuck connection still ends at its own timeout.
        let mut short = say_hello("short");
        short.set_attachment("timeout", "300");
        let short_started = Instant::now();
        let err = protocol.invoke(&stuck, &short).await.unwrap_err();
        assert_eq!(err.kind(), RpcErrorKind::Timeout, "{err}");
        let short_took = short_started.elapsed();
        assert!(short_took < Duration::from_millis(800), "{short_took:?}");
        // Other connections are unaffected meanwhile.
        let ok = protocol.invoke(&url(&healthy, ""), &say_hello("ok")).await;
        assert_eq!(ok.unwrap().value(), Some(&Value::from("Hello ok")));

        for call in long_calls {
            let err = call.await.unwrap().unwrap_err();
            assert_eq!(err.kind(), RpcErrorKind::Network, "{err}");
            assert!(err.message().contains("write stalled"), "{err}");
        }
        let took = started.elapsed();
        println!("stuck writer detected after {took:?}");
        assert!(
            took >= Duration::from_millis(900) && took < Duration::from_secs(4),
            "{took:?}"
        );
        deaf_task.await.unwrap();
        assert_eq!(
            protocol.open_connections(),
            1,
            "only the healthy connection is left"
        );
        protocol.shutdown().await;
        healthy.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn a_provider_closing_mid_frame_fails_every_call_in_flight_promptly() {
    bounded(async {
        const CALLS: usize = 20;
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let provider = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut ids = Vec::new();
            let mut head = [0u8; 16];
            while ids.len() < CALLS {
                stream.read_exact(&mut head).await.unwrap();
                let len = u32::from_be_bytes(head[12..16].try_into().unwrap()) as usize;
                let mut body = vec![0u8; len];
                stream.read_exact(&mut body).await.unwrap();
                if head[2] & 0x20 == 0 {
                    ids.push(i64::from_be_bytes(head[4..12].try_into().unwrap()));
                }
            }
            // The header of an answer to the first call promises 100 bytes; 10 follow, then EOF.
            let mut frame = vec![0xda, 0xbb, 0x02, 0x14];
            frame.extend_from_slice(&ids[0].to_be_bytes());
            frame.extend_from_slice(&100u32.to_be_bytes());
            frame.extend_from_slice(&[0x91; 10]);
            stream.write_all(&frame).await.unwrap();
        });
        let protocol = Arc::new(DubboProtocol::new());
        let url = raw_url(addr, "timeout=10000");
        let started = Instant::now();
        let calls: Vec<_> = (0..CALLS)
            .map(|i| {
                let (protocol, url) = (Arc::clone(&protocol), url.clone());
                tokio::spawn(async move { protocol.invoke(&url, &say_hello(&i.to_string())).await })
            })
            .collect();
        provider.await.unwrap();
        for call in calls {
            let err = call.await.unwrap().unwrap_err();
            assert_eq!(err.kind(), RpcErrorKind::Network, "{err}");
            assert!(err.message().contains("closed by the provider"), "{err}");
        }
        let took = started.elapsed();
        println!("{CALLS} calls failed {took:?} after they started");
        assert!(took < Duration::from_secs(1), "{took:?}");
        protocol.wait_until_idle().await;
    })
    .await;
}
