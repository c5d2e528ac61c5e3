//! Discovery through a real ZooKeeper (testcontainers), calls to real Java Dubbo 3.3 providers: the
//! traffic split follows the registered weights, and a provider killed mid-run is failed over.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rudder::extension::Pick;
use rudder::extension::{Clock, ManualClock, SystemClock};

use rudder::{Reference, Value};
use rudder_it::{run_rudder, Peer, PeerConfig, PeerKind, ZooKeeperContainer};

const SERVICE: &str = "org.rudder.it.GreetingService";
const READY_WITHIN: Duration = Duration::from_secs(120);

async fn java(zookeeper: &ZooKeeperContainer, instance: &str, weight: u32) -> Peer {
    let mut config = PeerConfig::new(PeerKind::Java, &zookeeper.connect_string(), instance);
    config.weight = Some(weight);
    Peer::start(config, READY_WITHIN).await.unwrap()
}

async fn split(reference: &Reference, calls: usize) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for _ in 0..calls {
        let answer = reference
            .call::<Value, _>("sayHello", &["java.lang.String"], vec![Value::from("rust")])
            .await
            .unwrap();
        let who = answer
            .as_str()
            .and_then(|s| s.rsplit(' ').next())
            .unwrap_or("?")
            .to_owned();
        *counts.entry(who).or_default() += 1;
    }
    counts
}

#[tokio::test]
async fn weights_registered_by_java_providers_drive_the_split_and_failover_hides_a_killed_one() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let (light, mut heavy) = tokio::join!(
        java(&zookeeper, "java-light", 100),
        java(&zookeeper, "java-heavy", 300)
    );
    let registry = format!("zookeeper://{}", zookeeper.connect_string());

    // The providers registered a moment ago, with their start `timestamp`: they are warming up (Dubbo's
    // 10 minutes), which rudder honours and Dubbo 3.3's own consumer cannot (it strips the timestamp).
    let now = SystemClock.now_millis();
    let probe = Reference::builder(SERVICE)
        .registry(&registry)
        .build()
        .await
        .unwrap();
    let view = probe.snapshot().view("sayHello");
    assert_eq!(view.len(), 2, "both providers discovered");
    for i in 0..view.len() {
        let warming = view.weight(i, &Pick::at(now));
        assert!(
            warming < view.configured_weight(i) / 10,
            "weight {warming} should still be ramping up"
        );
    }

    // An hour later (an injected clock) they are warm, and the split is the registered 100 : 300.
    let later: Arc<dyn Clock> = Arc::new(ManualClock::new(now + 3_600_000));
    let round_robin = Reference::builder(SERVICE)
        .registry(&registry)
        .application("rudder-it")
        .loadbalance("roundrobin")
        .clock(Arc::clone(&later))
        .timeout(std::time::Duration::from_millis(5000))
        .build()
        .await
        .unwrap();
    let counts = split(&round_robin, 400).await;
    assert_eq!(
        (counts["java-light"], counts["java-heavy"]),
        (100, 300),
        "{counts:?}"
    );

    let random = Reference::builder(SERVICE)
        .registry(&registry)
        .clock(later)
        .timeout(std::time::Duration::from_millis(5000))
        .seed(5)
        .build()
        .await
        .unwrap();
    let counts = split(&random, 2000).await;
    // Expected 500 : 1500; 4 standard deviations of a binomial(2000, 0.25) is about 77.
    assert!(counts["java-light"].abs_diff(500) < 80, "{counts:?}");

    // SIGKILL leaves the provider's ZooKeeper node in place until its session expires, so the consumer
    // still lists it: every call must still succeed, by failing over to the live provider.
    heavy.kill().await;
    let counts = split(&round_robin, 50).await;
    assert_eq!(counts.get("java-light"), Some(&50), "{counts:?}");
    // The killed provider is either out of the pick already (its connection seen closed: Dubbo's
    // `cluster.availablecheck`), or the calls that raced the close are counted as its failures.
    let heavy_state = round_robin
        .providers()
        .iter()
        .find(|p| p.url().port() == heavy.port())
        .map(|p| (p.is_available(), p.status().method("sayHello").failed()));
    assert!(
        heavy_state.is_some_and(|(available, failed)| !available || failed > 0),
        "the killed provider is out of the pick or its failed calls are counted: {heavy_state:?}"
    );
    drop(light);
}

#[tokio::test]
async fn rudder_invoke_finds_the_java_provider_in_zookeeper() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let _provider = java(&zookeeper, "java-cli", 100).await;
    let registry = format!("zookeeper://{}", zookeeper.connect_string());
    let invoke = |method: &'static str, more: &[&'static str]| {
        let head = [
            "invoke",
            "--registry",
            &registry,
            "--interface",
            SERVICE,
            "--method",
            method,
        ];
        [&head[..], more].concat()
    };
    let out = run_rudder(&invoke("add", &["--args", "[20, 22]", "--calls", "2"])).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "42\n42\n");
    // The service named as `rudder providers` and `rudder list` take it, without --interface.
    let positional = [
        "invoke",
        "--registry",
        &registry,
        SERVICE,
        "--method",
        "add",
        "--args",
        "[1, 2]",
    ];
    let out = run_rudder(&positional).await;
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "3\n"),
        "{}",
        out.stderr
    );

    let out = run_rudder(&invoke("fail", &["--args", "[\"no\"]"])).await;
    assert_eq!(out.code, 1);
    let stderr = out.stderr;
    assert!(
        stderr.contains("exception: org.rudder.it.GreetingException: no"),
        "{stderr}"
    );
}
