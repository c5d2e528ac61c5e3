//! The consumer runtime: shared statistics and strategies, consumer-side settings merged as Dubbo merges
//! them, one provider source per reference, shutdown, and tower back-pressure under `actives`.

use std::sync::Arc;
use std::time::Duration;

use rudder::extension::{LoadBalance, MethodView, Pick, PickRng};
use rudder::{BuildError, CallError, Consumer, Invocation, MethodCall, RpcErrorKind, Value};
use rudder_rpc::server::DubboServer;
use rudder_test_support::wait::within;
use tokio::sync::{watch, Semaphore};
use tower_service::Service;

/// Where `hold` calls wait at the provider: each one counts as arrived, then waits for a permit.
/// A call that arrived was counted in flight by the consumer before it was sent, so the arrival is
/// the event a test waits for before reading the consumer's statistics.
#[derive(Debug)]
pub(crate) struct Gate {
    permits: Semaphore,
    arrived: watch::Sender<usize>,
}

impl Gate {
    /// A gate that lets no call through until [`Gate::add_permits`].
    pub(crate) fn closed() -> Arc<Gate> {
        Arc::new(Gate {
            permits: Semaphore::new(0),
            arrived: watch::Sender::new(0),
        })
    }

    /// Lets `n` held calls through.
    pub(crate) fn add_permits(&self, n: usize) {
        self.permits.add_permits(n);
    }

    /// Returns once `n` `hold` calls have reached the provider (over all providers of the gate).
    pub(crate) async fn arrivals(&self, n: usize) {
        let mut arrived = self.arrived.subscribe();
        within(&format!("{n} held call(s) to reach the provider"), async {
            arrived
                .wait_for(|count| *count >= n)
                .await
                .expect("the gate lives");
        })
        .await;
    }

    /// Counts a `hold` call as arrived, then waits for a permit; what the provider does for it.
    pub(crate) async fn hold(&self) {
        self.arrived.send_modify(|count| *count += 1);
        self.permits.acquire().await.expect("gate open").forget();
    }
}

/// A provider answering `who` with its name and `hold` once `gate` lets the call through.
async fn provider(name: &'static str, gate: Arc<Gate>) -> DubboServer {
    DubboServer::bind(0, move |call: Invocation| {
        let gate = Arc::clone(&gate);
        async move {
            if call.method_name() == "hold" {
                gate.hold().await;
            }
            Ok(Value::from(name))
        }
    })
    .await
    .unwrap()
}

fn url(server: &DubboServer, params: &str) -> String {
    format!("dubbo://{}/com.acme.Greeter?{params}", server.local_addr())
}

#[tokio::test]
async fn references_of_one_consumer_share_call_statistics() {
    let gate = Gate::closed();
    let a = provider("a", Arc::clone(&gate)).await;
    let consumer = Consumer::builder().application("orders").build();
    let fast = consumer
        .reference("com.acme.Greeter")
        .provider(&url(&a, ""))
        .timeout(Duration::from_millis(5000))
        .build()
        .await
        .unwrap();
    let other = consumer
        .reference("com.acme.Greeter")
        .provider(&url(&a, ""))
        .loadbalance("leastactive")
        .build()
        .await
        .unwrap();
    let held = tokio::spawn({
        let fast = fast.clone();
        async move { fast.call::<Value, _>("hold", &[], vec![]).await }
    });
    // The call made through `fast` is in flight in the statistics `other` picks by.
    let seen = other.snapshot().providers()[0].status().clone();
    gate.arrivals(1).await;
    assert_eq!(seen.method("hold").active(), 1, "the held call is counted");
    assert_eq!(consumer.statuses().len(), 1);
    gate.add_permits(1);
    assert_eq!(
        within("the held call", held).await.unwrap().unwrap(),
        Value::from("a")
    );
    assert_eq!(seen.method("hold").active(), 0);
    assert_eq!(seen.method("hold").succeeded(), 1);
}

#[tokio::test]
async fn consumer_loadbalance_beats_the_providers_and_method_settings_beat_both() {
    let gate = Gate::closed();
    let (a, b) = (
        provider("a", Arc::clone(&gate)).await,
        provider("b", gate).await,
    );
    let consumer = Consumer::builder().seed(1).build();
    let greeter = consumer
        .reference("com.acme.Greeter")
        .provider(&url(&a, "loadbalance=random"))
        .provider(&url(&b, "loadbalance=random"))
        .loadbalance("roundrobin")
        .build()
        .await
        .unwrap();
    let mut answers = Vec::new();
    for _ in 0..6 {
        answers.push(greeter.call::<Value, _>("who", &[], vec![]).await.unwrap());
    }
    // Equal weights under round robin alternate exactly; random with seed 1 would not.
    let first = answers[0].clone();
    for (i, answer) in answers.iter().enumerate() {
        assert_eq!((i % 2 == 0), (*answer == first), "{answers:?}");
    }
    let view = greeter.snapshot().view("who");
    assert_eq!(view.loadbalance_name(), "roundrobin");

    // A provider's `<method>.loadbalance` beats the consumer's plain `loadbalance`, and the consumer's
    // `<method>.loadbalance` beats both (Dubbo's order: consumer m.k, provider m.k, consumer k).
    let per_method = consumer
        .reference("com.acme.Greeter")
        .provider(&url(&a, "who.loadbalance=leastactive"))
        .loadbalance("roundrobin")
        .parameter("hold.loadbalance", "consistenthash")
        .build()
        .await
        .unwrap();
    let snapshot = per_method.snapshot();
    assert_eq!(snapshot.view("who").loadbalance_name(), "leastactive");
    assert_eq!(snapshot.view("hold").loadbalance_name(), "consistenthash");
    assert_eq!(snapshot.view("other").loadbalance_name(), "roundrobin");
}

#[tokio::test]
async fn provider_retries_and_cluster_are_ignored_as_in_dubbo_3() {
    let dead = DubboServer::bind(0, |_call: Invocation| async { Ok(Value::Null) })
        .await
        .unwrap();
    let dead_url = url(&dead, "retries=0&cluster=failfast");
    dead.shutdown().await;
    let gate = Gate::closed();
    let alive = provider("alive", gate).await;
    let greeter = Consumer::builder()
        .build()
        .reference("com.acme.Greeter")
        .provider(&dead_url)
        .provider(&url(&alive, "retries=0&cluster=failfast"))
        .loadbalance("roundrobin")
        .build()
        .await
        .unwrap();
    // Failover with the consumer's default retries: the dead provider is always hidden.
    for _ in 0..10 {
        assert_eq!(
            greeter.call::<Value, _>("who", &[], vec![]).await.unwrap(),
            Value::from("alive")
        );
    }
}

#[cfg(feature = "zookeeper")]
#[tokio::test]
async fn one_provider_source_per_reference() {
    let consumer = Consumer::builder().build();
    let twice = consumer
        .reference("S")
        .registry("zookeeper://127.0.0.1:1")
        .provider("dubbo://127.0.0.1:1/S")
        .build()
        .await;
    assert!(
        matches!(twice, Err(BuildError::ConflictingSources("provider"))),
        "{twice:?}"
    );
}

#[tokio::test]
async fn unknown_strategy_names_fail_the_build_and_custom_ones_are_registered_once() {
    #[derive(Debug)]
    struct Last;
    impl LoadBalance for Last {
        fn pick(
            &self,
            view: &MethodView,
            _: &Invocation,
            _: &Pick<'_>,
            _: &mut dyn PickRng,
        ) -> Option<usize> {
            view.len().checked_sub(1)
        }
    }
    let consumer = Consumer::builder()
        .loadbalance_policy("last", Arc::new(Last))
        .build();
    let unknown = consumer
        .reference("S")
        .provider("dubbo://127.0.0.1:1/S")
        .parameter("m.loadbalance", "nosuchlb")
        .build()
        .await;
    match unknown {
        Err(BuildError::LoadBalance(e)) => assert_eq!(e.name, "nosuchlb"),
        other => panic!("expected an unknown load balancer, got {other:?}"),
    }
    let gate = Gate::closed();
    let (a, b) = (
        provider("a", Arc::clone(&gate)).await,
        provider("b", gate).await,
    );
    let greeter = consumer
        .reference("com.acme.Greeter")
        .provider(&url(&a, ""))
        .provider(&url(&b, ""))
        .loadbalance("last")
        .build()
        .await
        .unwrap();
    let last = greeter.snapshot().providers()[1].address().to_owned();
    let expected = if last == a.local_addr().to_string() {
        "a"
    } else {
        "b"
    };
    for _ in 0..4 {
        assert_eq!(
            greeter.call::<Value, _>("who", &[], vec![]).await.unwrap(),
            Value::from(expected)
        );
    }
}

#[tokio::test]
async fn shutdown_fails_later_calls_and_builds() {
    let gate = Gate::closed();
    let a = provider("a", gate).await;
    let consumer = Consumer::builder().build();
    let greeter = consumer
        .reference("com.acme.Greeter")
        .provider(&url(&a, ""))
        .build()
        .await
        .unwrap();
    assert_eq!(
        greeter.call::<Value, _>("who", &[], vec![]).await.unwrap(),
        Value::from("a")
    );
    consumer.shutdown().await;
    assert!(consumer.is_shut_down());
    let err = greeter
        .call::<Value, _>("who", &[], vec![])
        .await
        .unwrap_err();
    assert!(
        matches!(err, CallError::Rpc(ref e) if e.kind() == RpcErrorKind::ShutDown),
        "{err}"
    );
    let late = consumer
        .reference("com.acme.Greeter")
        .provider(&url(&a, ""))
        .build()
        .await;
    assert!(matches!(late, Err(BuildError::ShutDown)), "{late:?}");
}

#[tokio::test]
async fn poll_ready_waits_while_every_provider_is_at_its_actives_limit() {
    let gate = Gate::closed();
    let a = provider("a", Arc::clone(&gate)).await;
    let greeter = Consumer::builder()
        .build()
        .reference("com.acme.Greeter")
        .provider(&url(&a, "hold.actives=1"))
        .timeout(Duration::from_millis(10_000))
        .build()
        .await
        .unwrap();
    let mut service = greeter.service("hold", &[]);
    within(
        "first readiness",
        std::future::poll_fn(|cx| service.poll_ready(cx)),
    )
    .await
    .unwrap();
    let first = tokio::spawn(service.call(MethodCall::new(vec![])));
    let status = greeter.snapshot().providers()[0].status().clone();
    gate.arrivals(1).await;
    assert_eq!(
        status.method("hold").active(),
        1,
        "the first call holds its slot"
    );

    // The only slot is taken: not ready, and woken when it frees.
    let mut second = greeter.service("hold", &[]);
    let waker_count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let waker = counting_waker(Arc::clone(&waker_count));
    let mut cx = std::task::Context::from_waker(&waker);
    assert!(second.poll_ready(&mut cx).is_pending());
    gate.add_permits(1);
    within("the first call", first).await.unwrap().unwrap();
    assert!(
        waker_count.load(std::sync::atomic::Ordering::SeqCst) >= 1,
        "the waiter was woken"
    );
    assert!(second.poll_ready(&mut cx).is_ready());

    // Other methods have no limit and are always ready; arguments that do not match the method's
    // parameter types are refused before anything is sent.
    let mut who = greeter.service("who", &[]);
    assert!(who.poll_ready(&mut cx).is_ready());
    let wrong = who
        .call(MethodCall::new(vec![Value::from("extra")]))
        .await
        .unwrap_err();
    assert!(
        matches!(
            wrong,
            CallError::ArgumentCount {
                types: 0,
                arguments: 1
            }
        ),
        "{wrong:?}"
    );
}

fn counting_waker(count: Arc<std::sync::atomic::AtomicUsize>) -> std::task::Waker {
    struct Count(Arc<std::sync::atomic::AtomicUsize>);
    impl std::task::Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
    std::task::Waker::from(Arc::new(Count(count)))
}

#[tokio::test]
async fn static_tags_route_as_in_dubbo_and_every_decision_is_explained() {
    let gate = Gate::closed();
    let (gray, plain) = (
        provider("gray", Arc::clone(&gate)).await,
        provider("plain", gate).await,
    );
    let greeter = Consumer::builder()
        .build()
        .reference("com.acme.Greeter")
        .provider(&url(&gray, "dubbo.tag=gray"))
        .provider(&url(&plain, ""))
        .build()
        .await
        .unwrap();
    // Untagged calls never reach a tagged provider; tagged calls go to their tag.
    for _ in 0..10 {
        assert_eq!(
            greeter.call::<Value, _>("who", &[], vec![]).await.unwrap(),
            Value::from("plain")
        );
        let mut tagged = Invocation::new("who", vec![], vec![]);
        tagged.set_attachment("dubbo.tag", "gray");
        let answer = greeter.invoke(tagged).await.unwrap();
        assert_eq!(answer.value(), Some(&Value::from("gray")));
        // The tower service carries a request's attachments the same way.
        let mut service = greeter.service("who", &[]);
        std::future::poll_fn(|cx| service.poll_ready(cx))
            .await
            .unwrap();
        let answer = service
            .call(MethodCall::new(vec![]).attachment("dubbo.tag", "gray"))
            .await
            .unwrap();
        assert_eq!(answer.value(), Some(&Value::from("gray")));
    }
    let explanation = greeter.explain(&Invocation::new("who", vec![], vec![]));
    assert_eq!(explanation.kept(), 1, "{explanation}");
}
