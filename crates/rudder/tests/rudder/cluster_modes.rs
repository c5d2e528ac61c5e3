//! Every cluster mode through a `Reference`, against real dubbo:// providers on loopback.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rudder::{CallError, ClusterMode, Invocation, JavaException, Reference, RpcErrorKind, Value};
use rudder_rpc::server::DubboServer;
use tokio::sync::{Notify, Semaphore};

/// A provider named `name`: `who` answers the name, `numbers` a list of `numbers`, `slow` the name after
/// 2 s, `fail` throws, `held` answers the name once the test releases it; every call is counted and
/// announced.
struct Provider {
    server: DubboServer,
    calls: Arc<AtomicUsize>,
    called: Arc<Notify>,
    held: Arc<Semaphore>,
}

async fn provider(name: &'static str, numbers: &'static [i32]) -> Provider {
    provider_on(0, name, numbers).await
}

async fn provider_on(port: u16, name: &'static str, numbers: &'static [i32]) -> Provider {
    let calls = Arc::new(AtomicUsize::new(0));
    let called = Arc::new(Notify::new());
    let held = Arc::new(Semaphore::new(0));
    let (count, notify, gate) = (Arc::clone(&calls), Arc::clone(&called), Arc::clone(&held));
    let server = DubboServer::bind(port, move |call: Invocation| {
        count.fetch_add(1, Ordering::SeqCst);
        notify.notify_waiters();
        let gate = Arc::clone(&gate);
        async move {
            match call.method_name() {
                "held" => {
                    let _released = gate.acquire().await;
                    Ok(Value::from(name))
                }
                "numbers" => Ok(Value::List {
                    type_name: None,
                    items: numbers.iter().map(|n| Value::Int(*n)).collect(),
                }),
                "slow" => {
                    tokio::time::sleep(Duration::from_secs(2)).await;
                    Ok(Value::from(name))
                }
                "fail" => Err(JavaException {
                    class: "com.acme.RefreshException".into(),
                    message: Some(format!("{name} cannot refresh")),
                    cause: None,
                }),
                _ => Ok(Value::from(name)),
            }
        }
    })
    .await
    .unwrap();
    Provider {
        server,
        calls,
        called,
        held,
    }
}

impl Provider {
    fn url(&self, params: &str) -> String {
        format!(
            "dubbo://{}/com.acme.Greeter?{params}",
            self.server.local_addr()
        )
    }
    /// Lets this provider's `held` calls answer.
    fn release(&self) {
        self.held.add_permits(Semaphore::MAX_PERMITS / 2);
    }
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
    /// Waits (at most 10 s) until this provider has had `n` calls.
    async fn wait_for_calls(&self, n: usize) {
        tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                let called = self.called.notified();
                if self.calls() >= n {
                    return;
                }
                called.await;
            }
        })
        .await
        .expect("the call arrived");
    }
}

/// A loopback port where nothing listens (yet).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// A loopback address where nothing listens: calls to it fail with a network error.
fn dead_url(params: &str) -> String {
    format!(
        "dubbo://127.0.0.1:{}/com.acme.Greeter?{params}",
        free_port()
    )
}

fn builder() -> rudder::ReferenceBuilder {
    Reference::builder("com.acme.Greeter").timeout(Duration::from_millis(5_000))
}

#[tokio::test]
async fn failback_answers_empty_and_retries_the_call_once_the_provider_is_up() {
    let port = free_port();
    let greeter = builder()
        .parameter("cluster", "failback")
        .parameter("retry.period", "300")
        .provider(&format!("dubbo://127.0.0.1:{port}/com.acme.Greeter"))
        .build()
        .await
        .unwrap();
    // Nothing listens yet: the caller gets the empty result at once.
    let answer = greeter
        .call::<Value, _>("record", &[], vec![])
        .await
        .unwrap();
    assert_eq!(answer, Value::Null);
    // The provider comes up; a retry (300 ms apart, after the connection's 100 ms backoff) reaches it.
    let live = provider_on(port, "live", &[]).await;
    live.wait_for_calls(1).await;
    assert_eq!(live.calls(), 1);
}

#[tokio::test]
async fn forking_returns_the_first_answer_and_a_timeout_lists_the_forks() {
    let (fast, slow) = (provider("fast", &[]).await, provider("slow", &[]).await);
    let greeter = builder()
        .parameter("cluster", "forking")
        .parameter("forks", "2")
        .parameter("held.timeout", "5000")
        .parameter("slow.timeout", "200")
        .provider(&slow.url(""))
        .provider(&fast.url(""))
        .build()
        .await
        .unwrap();
    // Both providers get the call and hold it; then only the fast one may answer, so the first
    // answer is known (the losers' calls are cancelled, so they must have arrived before it).
    let call = tokio::spawn({
        let greeter = greeter.clone();
        async move { greeter.call::<Value, _>("held", &[], vec![]).await }
    });
    fast.wait_for_calls(1).await;
    slow.wait_for_calls(1).await;
    fast.release();
    assert_eq!(call.await.unwrap().unwrap(), Value::from("fast"));
    assert_eq!((fast.calls(), slow.calls()), (1, 1));
    slow.release();

    let started = Instant::now();
    let err = greeter
        .invoke(Invocation::new("slow", vec![], vec![]))
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_millis(1_500));
    assert_eq!(err.kind(), RpcErrorKind::Timeout);
    assert_eq!(err.attempts().len(), 2, "{err}");
    // The forking deadline and each fork's own rpc deadline are the same `timeout`: either ends it.
    assert!(
        err.attempts()
            .iter()
            .all(|a| a.kind == RpcErrorKind::Timeout),
        "{err}"
    );
}

#[tokio::test]
async fn broadcast_calls_every_provider_and_fails_on_any_exception() {
    let (a, b, c) = (
        provider("a", &[]).await,
        provider("b", &[]).await,
        provider("c", &[]).await,
    );
    let greeter = builder()
        .cluster(ClusterMode::Broadcast { fail_percent: 100 })
        .provider(&a.url(""))
        .provider(&b.url(""))
        .provider(&c.url(""))
        .build()
        .await
        .unwrap();
    let last = greeter
        .call::<Value, _>("refresh", &[], vec![])
        .await
        .unwrap();
    // One after another in list order, and the answer is the last one's. The list order of three
    // loopback providers depends on their ports, so the expected name is read from the list.
    let names = [("a", &a), ("b", &b), ("c", &c)];
    let last_listed = greeter.snapshot().providers()[2].address().to_owned();
    let (expected, _) = names
        .iter()
        .find(|(_, p)| p.server.local_addr().to_string() == last_listed)
        .expect("the last listed provider is one of the three");
    assert_eq!(last, Value::from(*expected));
    assert_eq!((a.calls(), b.calls(), c.calls()), (1, 1, 1));

    let err = greeter
        .call::<Value, _>("fail", &[], vec![])
        .await
        .unwrap_err();
    let CallError::Rpc(err) = err else {
        panic!("broadcast reports a failure as an error: {err}");
    };
    assert_eq!(err.kind(), RpcErrorKind::Biz);
    assert_eq!(err.attempts().len(), 3);
    assert!(err.attempts()[0].message.contains("cannot refresh"));
    assert_eq!((a.calls(), b.calls(), c.calls()), (2, 2, 2));
}

#[tokio::test]
async fn a_multi_group_reference_merges_the_groups_lists() {
    let (a, b) = (provider("a", &[1, 2]).await, provider("b", &[3]).await);
    let greeter = builder()
        .group("b,a")
        .parameter("merger", "list")
        .provider(&a.url("group=a"))
        .provider(&b.url("group=b"))
        .build()
        .await
        .unwrap();
    let merged = greeter
        .call::<Value, _>("numbers", &[], vec![])
        .await
        .unwrap();
    let items = |v: &[i32]| v.iter().map(|n| Value::Int(*n)).collect::<Vec<_>>();
    match merged {
        Value::List { items: got, .. } => assert_eq!(got, items(&[3, 1, 2]), "group order b, a"),
        other => panic!("a list: {other:?}"),
    }
    // Without a merger the first group answers alone.
    let first = builder()
        .group("a,b")
        .provider(&a.url("group=a"))
        .provider(&b.url("group=b"))
        .build()
        .await
        .unwrap();
    assert_eq!(
        first.call::<Value, _>("who", &[], vec![]).await.unwrap(),
        Value::from("a")
    );
}

#[tokio::test]
async fn available_skips_a_provider_whose_connection_failed() {
    let live = provider("live", &[]).await;
    let greeter = builder()
        .cluster(ClusterMode::Available)
        .provider(&dead_url(""))
        .provider(&live.url(""))
        .build()
        .await
        .unwrap();
    // The directory orders providers by URL; whichever comes first, after one network failure every
    // call goes to the live one.
    let mut answers = Vec::new();
    for _ in 0..4 {
        answers.push(greeter.call::<Value, _>("who", &[], vec![]).await.ok());
    }
    assert!(
        answers[1..].iter().all(|a| *a == Some(Value::from("live"))),
        "{answers:?}"
    );
}

#[tokio::test]
async fn a_failover_error_lists_every_provider_tried() {
    let (dead_a, dead_b) = (dead_url(""), dead_url(""));
    let greeter = builder()
        .retries(1)
        .provider(&dead_a)
        .provider(&dead_b)
        .build()
        .await
        .unwrap();
    let err = greeter
        .invoke(Invocation::new("who", vec![], vec![]))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RpcErrorKind::Network);
    let mut tried: Vec<&str> = err.attempts().iter().map(|a| a.provider.as_str()).collect();
    tried.sort();
    let mut expected: Vec<String> = [dead_a, dead_b]
        .iter()
        .map(|u| u["dubbo://".len()..].split('/').next().unwrap().to_owned())
        .collect();
    expected.sort();
    assert_eq!(tried, expected);
    assert!(err
        .attempts()
        .iter()
        .all(|a| a.kind == RpcErrorKind::Network));
}
