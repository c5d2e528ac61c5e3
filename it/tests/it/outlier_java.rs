//! Outlier ejection against four real Java Dubbo 3.3.6 providers found in ZooKeeper, retries off
//! (`cluster=failfast`), one of them throwing `IllegalStateException` on every `whoAmI` (while a flag
//! file exists: the test breaks and mends it). `rudder bench` measures the error share of plain
//! `random`, of `outlier.consecutive-errors=5` alone, and of the relative detections (failure
//! percentage, success rate): each ejecting one at most a quarter of plain random's. Then, in one
//! consumer: every provider throwing ejects nobody and another method is unaffected; a provider
//! that recovers is back when its ejection ends.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rudder::{Reference, Value};
use rudder_it::{run_rudder, Peer, PeerConfig, PeerKind, ZooKeeperContainer};

const SERVICE: &str = "org.rudder.it.GreetingService";
const READY_WITHIN: Duration = Duration::from_secs(120);
const NAMES: [&str; 4] = ["java-0", "java-1", "java-2", "java-3"];

/// ZooKeeper, four Java providers and their flag files (provider i throws while flag i exists).
struct Fleet {
    _zookeeper: ZooKeeperContainer,
    registry: String,
    peers: Vec<Peer>,
    flags: Vec<PathBuf>,
    dir: PathBuf,
}

impl Fleet {
    /// `tag` names the flag directory: the tests run at once in one process, and each fleet's
    /// flags must be its own.
    async fn start(tag: &str) -> Fleet {
        let zookeeper = ZooKeeperContainer::start().await.unwrap();
        let connect = zookeeper.connect_string();
        let dir =
            std::env::temp_dir().join(format!("rudder-outlier-java-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut peers = Vec::new();
        let mut flags = Vec::new();
        for name in NAMES {
            let flag = dir.join(format!("{name}.failing"));
            let mut config = PeerConfig::new(PeerKind::Java, &connect, name);
            // Warmup off: peers started one after another would otherwise weigh by their uptimes.
            config.warmup_ms = Some(0);
            config.failing_file = Some(flag.clone());
            peers.push(Peer::start(config, READY_WITHIN).await.unwrap());
            flags.push(flag);
        }
        Fleet {
            _zookeeper: zookeeper,
            registry: format!("zookeeper://{connect}"),
            peers,
            flags,
            dir,
        }
    }

    fn fail(&self, index: usize, failing: bool) {
        if failing {
            std::fs::write(&self.flags[index], b"down").unwrap();
        } else if self.flags[index].exists() {
            std::fs::remove_file(&self.flags[index]).unwrap();
        }
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `rudder bench` of `whoAmI` with retries off and `params`: the error share, and the failing
/// provider's ejections.
async fn error_share(fleet: &Fleet, params: &[&str]) -> (f64, u64) {
    let mut args = vec![
        "bench",
        "--registry",
        &fleet.registry,
        SERVICE,
        "--method",
        "whoAmI",
        "--param",
        "cluster=failfast",
        "--concurrency",
        "8",
        "--duration",
        "4s",
        "--max-error-rate",
        "1",
        "--format",
        "json",
    ];
    for param in params {
        args.extend(["--param", param]);
    }
    let out = run_rudder(&args).await;
    assert_eq!(out.code, 0, "rudder bench failed: {}", out.stderr);
    let report: serde_json::Value =
        serde_json::from_str(out.stdout.lines().last().expect("a JSON line")).unwrap();
    let calls = report["calls"].as_u64().unwrap();
    assert!(calls > 500, "{report}");
    // Every error is the failing provider's exception, and the rows say so.
    let failed: u64 = report["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["failed"].as_u64().unwrap())
        .sum();
    assert_eq!(report["errors"], failed, "{report}");
    let failing = format!("127.0.0.1:{}", fleet.peers[0].port());
    let ejections = report["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["address"] == failing.as_str())
        .and_then(|p| p["ejections"].as_u64())
        .unwrap_or(0);
    (
        report["errors"].as_u64().unwrap() as f64 / calls as f64,
        ejections,
    )
}

const FAILURE_PERCENTAGE: [&str; 4] = [
    "outlier.enforcing-failure-percentage=100",
    "outlier.failure-percentage-minimum-hosts=4",
    "outlier.failure-percentage-request-volume=20",
    "outlier.interval-ms=500",
];
const SUCCESS_RATE: [&str; 5] = [
    "outlier.enforcing-success-rate=100",
    "outlier.success-rate-minimum-hosts=4",
    "outlier.success-rate-request-volume=20",
    "outlier.success-rate-stdev-factor=1000",
    "outlier.interval-ms=500",
];

#[tokio::test]
async fn one_throwing_java_provider_of_four_is_ejected_and_errors_fall_to_a_quarter() {
    let fleet = Fleet::start("one").await;
    fleet.fail(0, true);
    let (plain, _) = error_share(&fleet, &[]).await;
    let (consecutive, consecutive_ejections) =
        error_share(&fleet, &["outlier.consecutive-errors=5"]).await;
    let (failure_percentage, fp_ejections) = error_share(&fleet, &FAILURE_PERCENTAGE).await;
    let (success_rate, sr_ejections) = error_share(&fleet, &SUCCESS_RATE).await;
    eprintln!(
        "error share, one Java provider of four throwing, failfast, 8 in flight, 4 s: random \
         {:.2} %, consecutive-errors=5 {:.3} %, failure-percentage {:.3} %, success-rate {:.3} %",
        100.0 * plain,
        100.0 * consecutive,
        100.0 * failure_percentage,
        100.0 * success_rate
    );
    // Plain random: a quarter of the calls, ± a wide margin for a busy host.
    assert!((0.15..=0.35).contains(&plain), "random: {plain}");
    for (name, share, ejections) in [
        ("consecutive-errors", consecutive, consecutive_ejections),
        ("failure-percentage", failure_percentage, fp_ejections),
        ("success-rate", success_rate, sr_ejections),
    ] {
        assert!(
            ejections >= 1,
            "{name}: the failing provider was not ejected"
        );
        assert!(
            share <= plain / 4.0,
            "{name}: {share} is more than a quarter of random's {plain}"
        );
    }
}

/// The calls of `method` on each provider so far, in [`NAMES`] order.
fn calls_of(reference: &Reference, fleet: &Fleet, method: &str) -> Vec<i64> {
    let providers = reference.providers();
    fleet
        .peers
        .iter()
        .map(|peer| {
            providers
                .iter()
                .find(|p| p.address() == format!("127.0.0.1:{}", peer.port()))
                .and_then(|p| p.status().find_method(method))
                .map_or(0, |status| status.total())
        })
        .collect()
}

fn ejections_of(reference: &Reference, method: &str) -> u32 {
    reference
        .providers()
        .iter()
        .filter_map(|p| p.status().find_method(method))
        .map(|status| status.outlier().ejections())
        .sum()
}

/// `n` calls, 8 at a time; how many failed.
async fn calls(reference: &Arc<Reference>, method: &str, n: usize) -> usize {
    let (types, args): (&[&str], Vec<Value>) = match method {
        "add" => (&["int", "int"], vec![Value::Int(20), Value::Int(22)]),
        _ => (&[], vec![]),
    };
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (reference, method, args) =
                (Arc::clone(reference), method.to_owned(), args.clone());
            tokio::spawn(async move {
                let mut failed = 0;
                for _ in 0..n / 8 {
                    failed += usize::from(
                        reference
                            .call::<Value, _>(&method, types, args.clone())
                            .await
                            .is_err(),
                    );
                }
                failed
            })
        })
        .collect();
    let mut failed = 0;
    for task in tasks {
        failed += task.await.unwrap();
    }
    failed
}

#[tokio::test]
async fn every_java_provider_throwing_ejects_nobody_and_a_recovered_one_is_back_in_time() {
    let fleet = Fleet::start("all").await;
    let mut builder = Reference::builder(SERVICE)
        .registry(&fleet.registry)
        .parameter("cluster", "failfast")
        .parameter("outlier.consecutive-errors", "5")
        .parameter("outlier.base-ejection-ms", "1000")
        .timeout(Duration::from_secs(5));
    for param in FAILURE_PERCENTAGE {
        let (key, value) = param.split_once('=').unwrap();
        builder = builder.parameter(key, value);
    }
    let reference = Arc::new(builder.build().await.unwrap());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let mut changes = reference.changes();
    while reference.providers().len() < 4 {
        let changed = tokio::time::timeout_at(deadline, changes.changed()).await;
        assert!(matches!(changed, Ok(true)), "four providers within 60 s");
    }

    // The whole service down (a database every provider shares): every call fails, nobody is out,
    // through several comparison intervals.
    for i in 0..4 {
        fleet.fail(i, true);
    }
    let started = tokio::time::Instant::now();
    let mut failed = 0;
    while started.elapsed() < Duration::from_millis(1600) {
        failed += calls(&reference, "whoAmI", 400).await;
        assert_eq!(ejections_of(&reference, "whoAmI"), 0, "nobody ejected");
    }
    assert!(failed >= 400, "{failed}");
    let before = calls_of(&reference, &fleet, "whoAmI");
    assert!(
        before.iter().all(|&n| n > 50),
        "every provider still called: {before:?}"
    );
    // Another method of the same providers is unaffected.
    assert_eq!(calls(&reference, "add", 400).await, 0);
    assert!(calls_of(&reference, &fleet, "add").iter().all(|&n| n > 40));
    assert_eq!(ejections_of(&reference, "add"), 0);

    // Three recover, one stays down: it is ejected once another answers.
    for i in 1..4 {
        fleet.fail(i, false);
    }
    calls(&reference, "whoAmI", 400).await;
    let failing = reference
        .providers()
        .into_iter()
        .find(|p| p.address() == format!("127.0.0.1:{}", fleet.peers[0].port()))
        .unwrap();
    let status = failing.status().find_method("whoAmI").unwrap();
    assert!(
        status.outlier().ejections() >= 1,
        "the failing one is ejected"
    );
    // It recovers; once its ejection ends it is called again, within its interval.
    fleet.fail(0, false);
    let until = status.outlier().ejected_until();
    let back_at = loop {
        assert!(tokio::time::Instant::now() < deadline, "back within 60 s");
        let answer: Value = reference.call("whoAmI", &[], vec![]).await.unwrap();
        if answer.as_str() == Some(NAMES[0]) {
            break SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_millis() as i64;
        }
    };
    eprintln!(
        "recovered provider answered {} ms after its ejection ended",
        back_at - until
    );
    assert!(back_at >= until, "not picked while ejected");
    assert!(
        back_at - until < 1000,
        "back {} ms after its ejection",
        back_at - until
    );
}
