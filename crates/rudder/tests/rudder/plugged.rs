//! A transport plugged in with `ConsumerBuilder::transport` is treated as the built-in ones are: its
//! endpoints get the consumer's layers (the metrics), and `Consumer::shutdown` waits for its close,
//! for at most its deadline (`ConsumerBuilder::transport_shutdown_deadline`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rudder::transport::{Endpoint, ShutdownFuture, Transport};
use rudder::{Consumer, DubboUrl, RpcErrorKind, RpcResponse, Value};
use rudder_test_support::wait::within;
use std::time::Instant;

const SERVICE: &str = "com.acme.Greeter";
const PROVIDER: &str = "mem://10.0.0.1:1/com.acme.Greeter";

/// How a transport's close ends.
#[derive(Debug, Clone, Copy)]
enum Close {
    /// After yielding to the runtime a few times (a close that has work to finish).
    Soon,
    /// Never.
    Never,
}

/// Answers every call with `null` at once; its close ends as `close` says.
#[derive(Debug)]
struct InMemory {
    close: Close,
    closes: Arc<AtomicUsize>,
    closed: Arc<AtomicUsize>,
}

impl InMemory {
    fn new(close: Close) -> InMemory {
        InMemory {
            close,
            closes: Arc::default(),
            closed: Arc::default(),
        }
    }
}

impl Transport for InMemory {
    fn endpoint(&self, _: &DubboUrl) -> Endpoint {
        Endpoint::from_fn(|_| std::future::ready(Ok(RpcResponse::from_value(Value::Null))))
    }

    fn shutdown(&self) -> ShutdownFuture {
        self.closes.fetch_add(1, Ordering::SeqCst);
        let (close, closed) = (self.close, Arc::clone(&self.closed));
        Box::pin(async move {
            match close {
                Close::Soon => {
                    for _ in 0..3 {
                        tokio::task::yield_now().await;
                    }
                }
                Close::Never => std::future::pending().await,
            }
            closed.fetch_add(1, Ordering::SeqCst);
        })
    }
}

/// A consumer over `transport` (scheme `mem`, shutdown deadline `deadline`) that has called its
/// provider once.
async fn called_once(transport: Arc<InMemory>, deadline: Duration) -> Consumer {
    let consumer = Consumer::builder()
        .transport("mem", transport)
        .transport_shutdown_deadline(deadline)
        .build();
    let reference = consumer
        .reference(SERVICE)
        .provider(PROVIDER)
        .build()
        .await
        .unwrap();
    reference
        .call::<Value, _>("sayHello", &[], vec![])
        .await
        .unwrap();
    consumer
}

#[tokio::test]
async fn shutdown_gives_up_on_a_plugged_transport_whose_close_never_ends() {
    let deadline = Duration::from_millis(200);
    let transport = Arc::new(InMemory::new(Close::Never));
    let consumer = called_once(Arc::clone(&transport), deadline).await;
    let started = Instant::now();
    within("shutdown past a close that never ends", consumer.shutdown()).await;
    let took = started.elapsed();
    assert_eq!(
        transport.closes.load(Ordering::SeqCst),
        1,
        "asked to close once"
    );
    assert_eq!(
        transport.closed.load(Ordering::SeqCst),
        0,
        "it never closed"
    );
    assert!(
        took >= deadline,
        "shutdown waited the deadline first ({took:?})"
    );
    assert!(consumer.is_shut_down());
    let refused = match consumer.reference(SERVICE).provider(PROVIDER).build().await {
        Ok(reference) => reference
            .call::<Value, _>("sayHello", &[], vec![])
            .await
            .unwrap_err()
            .kind(),
        Err(rudder::BuildError::ShutDown) => RpcErrorKind::ShutDown,
        Err(other) => panic!("refused for another reason: {other}"),
    };
    assert_eq!(refused, RpcErrorKind::ShutDown);
}

#[tokio::test]
async fn shutdown_waits_for_a_plugged_transport_that_closes() {
    let transport = Arc::new(InMemory::new(Close::Soon));
    // The deadline is far: shutdown returns because the close ended, not because time ran out.
    let consumer = called_once(Arc::clone(&transport), Duration::from_secs(3600)).await;
    within("shutdown", consumer.shutdown()).await;
    assert_eq!(transport.closes.load(Ordering::SeqCst), 1);
    assert_eq!(
        transport.closed.load(Ordering::SeqCst),
        1,
        "its close finished first"
    );
}

#[cfg(feature = "metrics")]
#[tokio::test]
async fn a_plugged_transport_gets_the_metrics_layer() {
    let consumer = Consumer::builder()
        .transport("mem", Arc::new(InMemory::new(Close::Soon)))
        .metrics(rudder::metrics::MetricsConfig::default())
        .build();
    let reference = consumer
        .reference(SERVICE)
        .provider(PROVIDER)
        .build()
        .await
        .unwrap();
    for _ in 0..3 {
        reference
            .call::<Value, _>("sayHello", &[], vec![])
            .await
            .unwrap();
    }
    let text = consumer.metrics().expect("metrics are on").encode();
    let count = |name: &str| {
        let series = format!("{name}{{provider=\"{PROVIDER}\",method=\"sayHello\"}} ");
        text.lines()
            .find_map(|line| line.strip_prefix(series.as_str()))
            .unwrap_or_else(|| panic!("{series}missing:\n{text}"))
            .to_owned()
    };
    assert_eq!(count("rudder_calls_total"), "3");
    assert_eq!(count("rudder_call_duration_seconds_count"), "3");
    assert_eq!(count("rudder_calls_in_flight"), "0");
    consumer.shutdown().await;
}
