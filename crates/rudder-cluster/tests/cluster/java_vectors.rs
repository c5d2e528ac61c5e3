//! Checks rudder against vectors computed by a Java 17 program written from Dubbo 3.3's algorithms
//! (tests/vectors/gen/VectorGen.java; the vectors are committed, Java is not needed to run this).

use std::sync::Arc;

use rand::{rngs::SmallRng, SeedableRng};
use rudder_cluster::loadbalance::consistent_hash::{key_hash, ConsistentHash};
use rudder_cluster::loadbalance::round_robin::RoundRobin;
use rudder_cluster::loadbalance::weight::warmup_weight;
use rudder_cluster::loadbalance::{select, MethodView, Pick};
use rudder_cluster::provider::Provider;
use rudder_common::invocation::Invocation;
use rudder_common::java_string::write_java_double;
use rudder_common::status::StatusRegistry;
use rudder_common::url::{java_url_encode, DubboUrl};
use rudder_common::Value;

fn vectors(name: &str) -> Vec<String> {
    let path = format!("{}/tests/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let lines: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(str::to_owned)
        .collect();
    assert!(!lines.is_empty(), "{path} has no vectors");
    lines
}

fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    line.split(' ')
        .find_map(|f| f.strip_prefix(name).and_then(|r| r.strip_prefix('=')))
}

fn hex_decode(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn warmup_weight_matches_java_f32_arithmetic() {
    for line in vectors("warmup.txt") {
        let n: Vec<i32> = line.split(' ').map(|x| x.parse().unwrap()).collect();
        assert_eq!(
            warmup_weight(n[0], n[1], n[2]),
            n[3],
            "uptime warmup weight = {line}"
        );
    }
}

#[test]
fn get_weight_matches_java_from_url_parameters() {
    let statuses = StatusRegistry::default();
    for line in vectors("getweight.txt") {
        let f: Vec<&str> = line.split(' ').collect();
        let mut url = DubboUrl::parse("dubbo://10.0.0.1:20880/DemoService").unwrap();
        for (key, value) in [("weight", f[0]), ("warmup", f[1]), ("timestamp", f[2])] {
            if value != "-" {
                url = url.with_parameter(key, value);
            }
        }
        let providers: Arc<[Arc<Provider>]> =
            Arc::from(vec![Arc::new(Provider::new(url, &statuses).unwrap())]);
        let view = MethodView::new(providers, "test");
        let pick = Pick::at(f[3].parse().unwrap());
        assert_eq!(
            view.weight(0, &pick),
            f[4].parse::<i32>().unwrap(),
            "{line}"
        );
    }
}

fn weighted_view(weights: &str, statuses: &StatusRegistry) -> MethodView {
    let urls: Vec<String> = weights
        .split(',')
        .enumerate()
        .map(|(i, w)| format!("dubbo://127.0.0.1:{}/DemoService?weight={w}", i + 1))
        .collect();
    let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
    crate::support::view(&urls, "test", statuses)
}

fn rr_picks(policy: &RoundRobin, view: &MethodView, runs: usize) -> Vec<String> {
    let mut rng = SmallRng::seed_from_u64(0);
    let call = Invocation::new("test", vec![], vec![]);
    (0..runs)
        .map(|_| {
            select(policy, view, &call, &Pick::default(), &mut rng)
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn round_robin_sequences_match_java() {
    for line in vectors("roundrobin.txt") {
        let statuses = StatusRegistry::default();
        let policy = RoundRobin::default();
        let first = weighted_view(field(&line, "weights").unwrap(), &statuses);
        let expected: Vec<&str> = field(&line, "picks").unwrap().split(',').collect();
        match field(&line, "then") {
            None => assert_eq!(
                rr_picks(&policy, &first, expected.len()),
                expected,
                "{line}"
            ),
            Some(then) => {
                rr_picks(&policy, &first, 50);
                // Same identities, new weights: a new snapshot, as a registry weight change produces.
                let changed = weighted_view(then, &statuses);
                assert_eq!(
                    rr_picks(&policy, &changed, expected.len()),
                    expected,
                    "{line}"
                );
            }
        }
    }
}

#[test]
fn consistent_hash_owners_match_java() {
    let mut rng = SmallRng::seed_from_u64(0);
    let mut checked = 0;
    let mut last: Option<(String, MethodView)> = None;
    let statuses = StatusRegistry::default();
    for line in vectors("consistenthash.txt") {
        let list = format!(
            "{} {}",
            field(&line, "providers").unwrap(),
            field(&line, "nodes").unwrap()
        );
        if last.as_ref().is_none_or(|(l, _)| *l != list) {
            let nodes = field(&line, "nodes").unwrap();
            let urls: Vec<String> = field(&line, "providers")
                .unwrap()
                .split(',')
                .map(|a| format!("dubbo://{a}/DemoService?hash.nodes={nodes}"))
                .collect();
            let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
            last = Some((list, crate::support::view(&urls, "test", &statuses)));
        }
        let view = &last.as_ref().unwrap().1;
        let key = String::from_utf8(hex_decode(field(&line, "keyhex").unwrap())).unwrap();
        assert_eq!(
            key_hash(&key).to_string(),
            field(&line, "hash").unwrap(),
            "{line}"
        );
        let call = Invocation::new(
            "test",
            vec!["java.lang.String".into()],
            vec![Value::from(key.as_str())],
        );
        let chosen = select(&ConsistentHash, view, &call, &Pick::default(), &mut rng).unwrap();
        assert_eq!(
            view.providers()[chosen].address(),
            field(&line, "owner").unwrap(),
            "{line}"
        );
        checked += 1;
    }
    assert!(checked > 3000);
}

#[test]
fn url_encoding_matches_java_url_encoder() {
    for line in vectors("urlencode.txt") {
        let (hex, want) = line.split_once(' ').unwrap();
        let input = String::from_utf8(hex_decode(hex)).unwrap();
        assert_eq!(java_url_encode(&input), want, "{input:?}");
    }
}

/// Java 17 prints some doubles with more digits than needed (and a few subnormals differently); rudder
/// prints what Java 19+ prints (JDK-4511638). Every line must match exactly or be a Java 17 rendering of
/// the same double that differs only in digit choice.
#[test]
fn doubles_render_as_java_double_to_string() {
    let (mut exact, mut java17_longer) = (0, 0);
    for line in vectors("java_double.txt") {
        let (hex, want) = line.split_once(' ').unwrap();
        let d = f64::from_bits(u64::from_str_radix(hex, 16).unwrap());
        let mut ours = String::new();
        write_java_double(&mut ours, d).unwrap();
        if ours == want {
            exact += 1;
            continue;
        }
        let same_value = want.parse::<f64>().ok() == ours.parse::<f64>().ok();
        assert!(same_value, "{d:e}: java {want}, ours {ours}");
        java17_longer += 1;
    }
    assert!(
        exact >= 420 && java17_longer <= 80,
        "exact {exact}, longer in Java 17 {java17_longer}"
    );
}
