//! Checks `adaptive` against Dubbo's own classes: tests/vectors/adaptive.txt was written by
//! tests/vectors/gen-dubbo, which drives org.apache.dubbo's `AdaptiveMetrics` and
//! `AdaptiveLoadBalance` (Dubbo 3.3.6) through random event sequences. Java is not needed to run this.

use std::sync::Arc;

use rand::{rngs::SmallRng, SeedableRng};
use rudder_cluster::loadbalance::{select, LoadBalanceRegistry, MethodView, Pick};
use rudder_cluster::provider::Provider;
use rudder_common::invocation::Invocation;
use rudder_common::status::record::RecordAdaptive;
use rudder_common::status::{AdaptiveMetrics, StatusRegistry};
use rudder_common::url::DubboUrl;

/// The instant every scenario is replayed at (Java ran each at its own clock's now).
const NOW: i64 = 1_800_000_000_000;

fn scenarios() -> Vec<(String, Vec<String>)> {
    let path = format!("{}/tests/vectors/adaptive.txt", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut all: Vec<(String, Vec<String>)> = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        match line.strip_prefix("scenario ") {
            Some(name) => all.push((name.to_owned(), Vec::new())),
            None => all
                .last_mut()
                .expect("a scenario first")
                .1
                .push(line.to_owned()),
        }
    }
    assert!(all.len() >= 600, "{path} has {} scenarios", all.len());
    all
}

fn hex_text(hex: &str) -> String {
    if hex == "-" {
        return String::new();
    }
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    String::from_utf8(bytes).unwrap()
}

fn bits(hex: &str) -> u64 {
    u64::from_str_radix(hex, 16).unwrap()
}

/// Applies one metrics event; returns the load a `load` line computed and the one Java computed.
fn apply(metrics: &AdaptiveMetrics, op: &[&str]) -> Option<(u64, u64)> {
    match op {
        ["req"] => metrics.count_request(NOW),
        ["ok"] => metrics.answered(None, 0, NOW),
        ["err"] => metrics.failed(NOW),
        ["pick", t] => metrics.set_pick_time(NOW + t.parse::<i64>().unwrap()),
        ["report", c, rt, hex] => {
            let at = (NOW + c.parse::<i64>().unwrap()).to_string();
            let attachment = hex_text(hex).replace('@', &at);
            metrics.answered(Some(&attachment), rt.parse().unwrap(), NOW);
        }
        ["load", w, t, expected] => {
            let load = metrics.load(w.parse().unwrap(), t.parse().unwrap(), NOW);
            return Some((load.to_bits(), bits(expected)));
        }
        other => panic!("unknown op {other:?}"),
    }
    None
}

#[test]
fn metrics_match_dubbos_adaptive_metrics() {
    let mut loads = 0;
    for (name, lines) in scenarios()
        .into_iter()
        .filter(|(n, _)| n.starts_with("metrics"))
    {
        let metrics = AdaptiveMetrics::default();
        for (i, line) in lines.iter().enumerate() {
            let op: Vec<&str> = line.split(' ').collect();
            if let Some((ours, java)) = apply(&metrics, &op) {
                loads += 1;
                assert_eq!(
                    ours,
                    java,
                    "scenario {name}, line {i} ({line}): {} vs Java's {}",
                    f64::from_bits(ours),
                    f64::from_bits(java)
                );
            }
        }
    }
    assert!(loads > 1000, "{loads} loads compared");
}

#[test]
fn choices_match_dubbos_adaptive_load_balance() {
    let policy = LoadBalanceRegistry::with_builtins()
        .get("adaptive")
        .unwrap();
    let call = Invocation::new("sayHello", vec![], vec![]);
    let mut rng = SmallRng::seed_from_u64(5);
    let (mut decided, mut ties) = (0, 0);
    for (name, lines) in scenarios()
        .into_iter()
        .filter(|(n, _)| n.starts_with("select"))
    {
        let head: Vec<&str> = lines[0].split(' ').collect();
        let statuses = StatusRegistry::default();
        let providers: Arc<[Arc<Provider>]> = [(head[1], head[2], 1), (head[3], head[4], 2)]
            .iter()
            .map(|(w, t, port)| {
                let url = format!("dubbo://127.0.0.1:{port}/org.rudder.S?weight={w}&timeout={t}");
                Arc::new(Provider::new(DubboUrl::parse(&url).unwrap(), &statuses).unwrap())
            })
            .collect();
        let view = MethodView::new(Arc::clone(&providers), "sayHello");
        let metrics = |i: usize| providers[i].status().adaptive();
        for (i, line) in lines.iter().enumerate().skip(1) {
            let op: Vec<&str> = line.split(' ').collect();
            match op[..] {
                ["select", "tie", l0, l1, java_choice] => {
                    // The loads Java compared were equal and it drew by weight: the same loads (read
                    // as a pick reads them), then Java's choice, so the state stays Java's.
                    let w = |i: usize| view.configured_weight(i);
                    let t = |i: usize| head[2 + 2 * i].parse::<i32>().unwrap();
                    assert_eq!(
                        metrics(0).load(w(0), t(0), NOW).to_bits(),
                        bits(l0),
                        "{name}:{i}"
                    );
                    assert_eq!(
                        metrics(1).load(w(1), t(1), NOW).to_bits(),
                        bits(l1),
                        "{name}:{i}"
                    );
                    metrics(java_choice.parse().unwrap()).picked(NOW);
                    ties += 1;
                }
                ["select", k, _, _] => {
                    let pick = Pick::at(NOW);
                    let chosen = select(&*policy, &view, &call, &pick, &mut rng).unwrap();
                    assert_eq!(chosen.to_string(), k, "scenario {name}, line {i}");
                    assert!(pick.load_report_asked(), "adaptive asks for lb_adaptive");
                    decided += 1;
                }
                _ => {
                    let who: usize = op[0].parse().unwrap();
                    assert_eq!(apply(metrics(who), &op[1..]), None);
                }
            }
        }
    }
    assert!(
        decided > 300 && ties > 300,
        "{decided} decided, {ties} ties"
    );
}
