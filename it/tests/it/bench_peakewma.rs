//! `rudder bench` against real Java Dubbo 3.3 providers found in ZooKeeper, one of them slow (50 ms per
//! call): `peakewma` sends it a small fraction of the calls, `random` its full third.

use std::time::Duration;

use rudder_it::{run_rudder, Peer, PeerConfig, PeerKind, ZooKeeperContainer};

const SERVICE: &str = "org.rudder.it.GreetingService";
const READY_WITHIN: Duration = Duration::from_secs(120);

/// The slow provider's share of the measured attempts, and the call p99, from the JSON report.
async fn bench(registry: &str, loadbalance: &str, slow_port: u16) -> (f64, f64) {
    let out = run_rudder(&[
        "bench",
        "--registry",
        registry,
        "--interface",
        SERVICE,
        "--method",
        "whoAmI",
        "--loadbalance",
        loadbalance,
        "--param",
        "cluster=failfast",
        "--concurrency",
        "6",
        "--warmup",
        "60",
        "--calls",
        "600",
        "--format",
        "json",
    ])
    .await;
    assert_eq!(out.code, 0, "rudder bench failed: {}", out.stderr);
    let last = out.stdout.lines().last().expect("a JSON line");
    let report: serde_json::Value = serde_json::from_str(last).expect("JSON");
    assert_eq!(report["calls"], 600, "{report}");
    assert_eq!(report["errors"], 0, "{report}");
    let providers = report["providers"].as_array().expect("providers");
    let total: f64 = providers.iter().map(|p| p["calls"].as_f64().unwrap()).sum();
    let slow: f64 = providers
        .iter()
        .filter(|p| p["address"] == format!("127.0.0.1:{slow_port}"))
        .map(|p| p["calls"].as_f64().unwrap())
        .sum();
    (slow / total, report["latency_ms"]["p99"].as_f64().unwrap())
}

#[tokio::test]
async fn peakewma_avoids_the_slow_java_provider() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let connect = zookeeper.connect_string();
    // Warmup off: with Dubbo's 10-minute ramp, peers started one after another weigh in proportion
    // to their uptimes, and the first one started (the slow one) drew 61 % of random's calls.
    let peer = |name: &str, delay_ms: Option<u32>| {
        let mut config = PeerConfig::new(PeerKind::Java, &connect, name);
        config.delay_ms = delay_ms;
        config.warmup_ms = Some(0);
        config
    };
    let mut peers = vec![Peer::start(peer("java-slow", Some(50)), READY_WITHIN)
        .await
        .unwrap()];
    for name in ["java-a", "java-b"] {
        peers.push(Peer::start(peer(name, None), READY_WITHIN).await.unwrap());
    }
    let registry = format!("zookeeper://{connect}");
    let slow_port = peers[0].port();

    let (random_share, random_p99) = bench(&registry, "random", slow_port).await;
    let (ewma_share, ewma_p99) = bench(&registry, "peakewma", slow_port).await;
    eprintln!(
        "slow provider's share and call p99: random {random_share:.3}, {random_p99:.1} ms; \
         peakewma {ewma_share:.3}, {ewma_p99:.1} ms"
    );
    // random: a third of the calls, ± 4 standard deviations of 600 draws (±0.077).
    assert!(
        (0.25..=0.42).contains(&random_share),
        "random sent {random_share:.3} to the slow one"
    );
    assert!(
        random_p99 >= 45.0,
        "random's p99 waits for the slow provider: {random_p99}"
    );
    // peakewma learns it is slow from its first answers and sends it a small share.
    assert!(
        ewma_share < 0.10,
        "peakewma sent {ewma_share:.3} to the slow one"
    );
    assert!(
        ewma_p99 < random_p99,
        "peakewma p99 {ewma_p99} vs random {random_p99}"
    );
}
