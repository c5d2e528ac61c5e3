//! The facade's contract: settings checked when given, errors that keep their cause and kind, calls
//! checked before anything is sent, a shut-down consumer's calls never retried.

use std::error::Error as _;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use rudder::{
    BuildError, CallError, ClusterMode, Consumer, Invocation, JavaException, LoadBalanceStrategy,
    Reference, RpcErrorKind, Value,
};
use rudder_rpc::server::DubboServer;
use rudder_test_support::wait::within;
use tokio::sync::Notify;

struct NoWake;

impl Wake for NoWake {
    fn wake(self: Arc<Self>) {}
}

#[test]
fn build_outside_a_tokio_runtime_is_an_error_not_a_panic() {
    let build = Reference::builder("com.acme.Greeter")
        .provider("dubbo://127.0.0.1:1/com.acme.Greeter")
        .build();
    let waker = Waker::from(Arc::new(NoWake));
    let mut build = pin!(build);
    match build.as_mut().poll(&mut Context::from_waker(&waker)) {
        Poll::Ready(Err(BuildError::NoRuntime)) => {}
        Poll::Ready(other) => panic!("expected NoRuntime, got {other:?}"),
        Poll::Pending => panic!("a provider-URL build has nothing to wait for"),
    }
}

#[tokio::test]
async fn a_wrong_setting_is_kept_when_given_and_returned_by_build() {
    // The first error wins, even though later settings are fine (and a later one is wrong too).
    let error = Reference::builder("S")
        .provider("dubbo://[::1/S")
        .loadbalance("no-such-strategy")
        .provider("dubbo://127.0.0.1:1/S")
        .build()
        .await
        .unwrap_err();
    assert!(matches!(error, BuildError::Url(_)), "{error}");

    let error = Reference::builder("S")
        .provider("dubbo://127.0.0.1:1/S")
        .loadbalance(LoadBalanceStrategy::custom("nosuchlb"))
        .build()
        .await
        .unwrap_err();
    assert!(matches!(error, BuildError::LoadBalance(_)), "{error}");
    assert!(error.to_string().contains("nosuchlb"), "{error}");

    for (key, value) in [
        ("cluster", "zone-aware"),
        ("sayHello.loadbalance", "nope"),
        ("registry.failover", "maybe"),
    ] {
        let error = Reference::builder("S")
            .parameter(key, value)
            .provider("dubbo://127.0.0.1:1/S")
            .build()
            .await
            .unwrap_err();
        assert!(!matches!(error, BuildError::NoSource), "{key}: {error}");
        assert!(error.to_string().contains(value), "{key}: {error}");
    }

    let error = Reference::builder("S")
        .timeout(Duration::ZERO)
        .provider("dubbo://127.0.0.1:1/S")
        .build()
        .await
        .unwrap_err();
    assert!(matches!(error, BuildError::BadParameter(_)), "{error}");
}

#[tokio::test]
async fn typed_settings_reach_the_consumer_url() {
    let reference = Reference::builder("S")
        .provider("dubbo://127.0.0.1:1/S")
        .timeout(Duration::from_micros(2_500))
        .cluster(ClusterMode::Forking {
            forks: 3,
            timeout_millis: 0,
        })
        .loadbalance(LoadBalanceStrategy::LeastActive)
        .build()
        .await
        .unwrap();
    let url = reference.consumer_url();
    assert_eq!(
        url.parameter("timeout"),
        Some("3"),
        "rounded up to whole ms"
    );
    assert_eq!(url.parameter("cluster"), Some("forking"));
    assert_eq!(url.parameter("forks"), Some("3"));
    assert_eq!(url.parameter("loadbalance"), Some("leastactive"));
}

#[cfg(feature = "zookeeper")]
#[tokio::test]
async fn registry_errors_stay_typed() {
    let error = Reference::builder("S")
        .registry("http://127.0.0.1:2181")
        .build()
        .await
        .unwrap_err();
    assert!(
        matches!(
            error.registry(),
            Some(rudder::RegistryError::BadRegistryUrl { .. })
        ),
        "{error}"
    );
    // Said once: the build error is the registry's error (a bad URL has no further cause).
    let registry = error.registry().expect("typed");
    assert_eq!(error.to_string(), registry.to_string());
    assert!(error.source().is_none(), "{error:?}");
}

/// What a test provider shares with its test: calls counted, `hold` calls told and released.
#[derive(Default)]
struct Signals {
    calls: AtomicUsize,
    arrived: Notify,
    release: Notify,
}

/// A provider that answers `who` with its name, throws (with a cause) on `fail`, and holds `hold`
/// until released.
async fn holding(name: &'static str, signals: Arc<Signals>) -> DubboServer {
    DubboServer::bind(0, move |call: Invocation| {
        let signals = Arc::clone(&signals);
        async move {
            signals.calls.fetch_add(1, Ordering::SeqCst);
            if call.method_name() == "hold" {
                let release = signals.release.notified();
                signals.arrived.notify_one();
                release.await;
            }
            if call.method_name() == "fail" {
                return Err(JavaException {
                    class: "java.lang.IllegalStateException".into(),
                    message: Some("outer".into()),
                    cause: Some(Box::new(JavaException {
                        class: "java.io.IOException".into(),
                        message: Some("disk full".into()),
                        cause: None,
                    })),
                });
            }
            Ok(Value::from(name))
        }
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn argument_counts_are_checked_before_anything_is_sent() {
    let signals = Arc::new(Signals::default());
    let server = holding("a", Arc::clone(&signals)).await;
    let reference = Reference::builder("S")
        .provider(&format!("dubbo://{}/S", server.local_addr()))
        .build()
        .await
        .unwrap();
    let error = reference
        .call::<Value, _>("who", &["java.lang.String"], vec![])
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            CallError::ArgumentCount {
                types: 1,
                arguments: 0
            }
        ),
        "{error}"
    );
    let error = reference
        .call::<String, _>("who", &[], ("extra", 2))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            CallError::ArgumentCount {
                types: 0,
                arguments: 2
            }
        ),
        "{error}"
    );
    assert_eq!(
        signals.calls.load(Ordering::SeqCst),
        0,
        "nothing reached the provider"
    );
    let answer: String = reference.call("who", &[], ()).await.unwrap();
    assert_eq!(answer, "a");
}

#[tokio::test]
async fn a_provider_exception_exposes_its_java_cause_chain() {
    let server = holding("a", Arc::default()).await;
    let reference = Reference::builder("S")
        .provider(&format!("dubbo://{}/S", server.local_addr()))
        .build()
        .await
        .unwrap();
    let error = reference
        .call::<Value, _>("fail", &[], vec![])
        .await
        .unwrap_err();
    assert_eq!(error.kind(), RpcErrorKind::Biz);
    let thrown = error.exception().expect("the JavaException");
    assert_eq!(thrown.to_string(), "java.lang.IllegalStateException: outer");
    // The error says the exception; its source is the exception's Java cause, said once.
    assert_eq!(
        error.to_string(),
        "provider threw java.lang.IllegalStateException: outer"
    );
    let cause = error.source().expect("its Java cause");
    assert_eq!(cause.to_string(), "java.io.IOException: disk full");
    assert!(cause.source().is_none());
}

#[tokio::test]
async fn a_call_cut_by_shutdown_is_never_retried() {
    let signals = Arc::new(Signals::default());
    let a = holding("a", Arc::clone(&signals)).await;
    let b = holding("b", Arc::clone(&signals)).await;
    let consumer = Consumer::builder().build();
    let reference = consumer
        .reference("S")
        .provider(&format!("dubbo://{}/S", a.local_addr()))
        .provider(&format!("dubbo://{}/S", b.local_addr()))
        .cluster(ClusterMode::Failover { retries: 5 })
        .timeout(Duration::from_secs(30))
        .build()
        .await
        .unwrap();
    let held = tokio::spawn({
        let reference = reference.clone();
        async move { reference.call::<Value, _>("hold", &[], vec![]).await }
    });
    within("the held call to arrive", signals.arrived.notified()).await;
    within("shutdown", consumer.shutdown()).await;
    let error = within("the held call to end", held)
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(error.kind(), RpcErrorKind::ShutDown, "{error}");
    assert!(error.is_shut_down());
    assert_eq!(
        signals.calls.load(Ordering::SeqCst),
        1,
        "no retry on the other provider"
    );
    assert!(error.attempts().len() <= 1, "{:?}", error.attempts());

    let after = reference
        .call::<Value, _>("who", &[], vec![])
        .await
        .unwrap_err();
    assert_eq!(after.kind(), RpcErrorKind::ShutDown, "{after}");
    let raw = reference
        .invoke(Invocation::new("who", vec![], vec![]))
        .await
        .unwrap_err();
    assert_eq!(raw.kind(), RpcErrorKind::ShutDown);
    signals.release.notify_waiters();
}
