//! `consistenthash` with `hash.balance-factor`: bounded loads over Dubbo's ring.
//!
//! Loads are real calls in flight, started with `ProviderStatus::begin` (what the cluster does for
//! every call) and held by their guards, so the balancer reads them through the statistics it reads in
//! production. The oracle for "the next distinct provider clockwise" is the plain ring's own exclusion
//! walk (failover's path, checked against Java), so these tests do not re-implement the ring.

use std::io::Write;
use std::sync::{Arc, Mutex};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rudder_cluster::loadbalance::bounded_load::BalanceFactor;
use rudder_cluster::loadbalance::consistent_hash::ConsistentHash;
use rudder_cluster::loadbalance::{select, MethodView, Pick};
use rudder_cluster::provider::Provider;
use rudder_common::invocation::Invocation;
use rudder_common::status::record::RecordCall;
use rudder_common::status::{ActiveCall, StatusRegistry};
use rudder_common::Value;

const METHOD: &str = "get";

/// `n` providers 10.0.0.1.. with `params` appended to every URL.
fn urls(n: usize, params: &str) -> Vec<String> {
    (1..=n)
        .map(|i| {
            format!("dubbo://10.0.0.{i}:20880/com.acme.Cache?loadbalance=consistenthash{params}")
        })
        .collect()
}

fn view_of(urls: &[String], statuses: &StatusRegistry) -> MethodView {
    let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
    crate::support::view(&urls, METHOD, statuses)
}

fn call(key: &str) -> Invocation {
    Invocation::new(
        METHOD,
        vec!["java.lang.String".into()],
        vec![Value::from(key)],
    )
}

fn pick_in(view: &MethodView, key: &str, pick: &Pick<'_>) -> usize {
    select(
        &ConsistentHash,
        view,
        &call(key),
        pick,
        &mut SmallRng::seed_from_u64(0),
    )
    .unwrap()
}

fn owner(view: &MethodView, key: &str) -> usize {
    pick_in(view, key, &Pick::default())
}

/// `calls` calls of [`METHOD`] in flight to `provider`, held until the guards drop.
fn hold(provider: &Provider, calls: usize) -> Vec<ActiveCall> {
    (0..calls)
        .map(|_| provider.status().begin(METHOD, 0).unwrap())
        .collect()
}

fn loads(view: &MethodView) -> Vec<u64> {
    (0..view.len())
        .map(|i| view.method_status(i).active() as u64)
        .collect()
}

#[test]
fn unset_is_the_plain_ring_under_any_load() {
    let statuses = StatusRegistry::default();
    let unset = view_of(&urls(10, ""), &statuses);
    let bounded = view_of(&urls(10, "&hash.balance-factor=1.25"), &statuses);
    let idle = view_of(&urls(10, ""), &StatusRegistry::default());
    // Idle, the bound never bites: every owner is under it.
    let idle_picks: Vec<usize> = (0..3000)
        .map(|k| owner(&idle, &format!("user-{k}")))
        .collect();
    for (k, &expected) in idle_picks.iter().enumerate() {
        assert_eq!(owner(&bounded, &format!("user-{k}")), expected, "user-{k}");
    }
    let _busy = hold(&unset.providers()[3], 100);
    let _busier = hold(&unset.providers()[6], 40);
    for (k, &expected) in idle_picks.iter().enumerate() {
        assert_eq!(owner(&unset, &format!("user-{k}")), expected, "user-{k}");
    }
    assert!(idle_picks.contains(&3) && idle_picks.contains(&6));
}

#[test]
fn an_overloaded_owner_sheds_its_keys_to_the_next_distinct_provider_and_only_those() {
    let statuses = StatusRegistry::default();
    let plain = view_of(&urls(10, ""), &statuses);
    let bounded = view_of(&urls(10, "&hash.balance-factor=1.25"), &statuses);
    // One provider far over the bound: 100 in flight, bound ⌈1.25 · 101 / 10⌉ = 13.
    let _held = hold(&bounded.providers()[3], 100);
    let c = BalanceFactor::read(bounded.providers()[0].url(), METHOD).unwrap();
    assert_eq!(c.bound(100, 10), 13);
    let without_3 = [Arc::clone(&plain.providers()[3])];
    let mut moved = 0;
    for k in 0..5000 {
        let key = format!("user-{k}");
        let (was, now) = (owner(&plain, &key), owner(&bounded, &key));
        if was == 3 {
            moved += 1;
            let next = pick_in(&plain, &key, &Pick::default().excluding(&without_3));
            assert_eq!(now, next, "{key}: to the next distinct provider clockwise");
        } else {
            assert_eq!(now, was, "{key} is not on the full provider: it stays");
        }
    }
    assert!(moved > 200, "provider 3 owned {moved} of 5000 keys");

    // Two full providers: keys of either skip both, to the first provider clockwise owned by neither.
    let _held = hold(&bounded.providers()[7], 100);
    assert_eq!(c.bound(200, 10), 26);
    let without_both = [
        Arc::clone(&plain.providers()[3]),
        Arc::clone(&plain.providers()[7]),
    ];
    for k in 0..5000 {
        let key = format!("user-{k}");
        let was = owner(&plain, &key);
        let expected = match was {
            3 | 7 => pick_in(&plain, &key, &Pick::default().excluding(&without_both)),
            other => other,
        };
        assert_eq!(owner(&bounded, &key), expected, "{key}");
    }
}

#[test]
fn no_provider_ever_exceeds_the_bound() {
    for factor in ["1.05", "1.25", "2"] {
        let statuses = StatusRegistry::default();
        let plain = view_of(&urls(10, ""), &statuses);
        let view = view_of(
            &urls(10, &format!("&hash.balance-factor={factor}")),
            &statuses,
        );
        let c = BalanceFactor::read(view.providers()[0].url(), METHOD).unwrap();
        let mut rng = SmallRng::seed_from_u64(0xb0_0d);
        let mut in_flight = Vec::new();
        let mut off_owner = 0;
        const CALLS: usize = 3000;
        for placed in 0..CALLS {
            // Half the calls on five hot keys, so the plain ring would pile them up.
            let key = match rng.random_bool(0.5) {
                true => format!("hot-{}", rng.random_range(0..5)),
                false => format!("user-{}", rng.random_range(0..100_000)),
            };
            let bound = c.bound(placed as u64, view.len());
            let chosen = owner(&view, &key);
            let load = view.method_status(chosen).active() as u64;
            assert!(
                load < bound,
                "{factor}: call {placed} to a provider at {load}, bound {bound}"
            );
            off_owner += usize::from(chosen != owner(&plain, &key));
            in_flight.push(view.providers()[chosen].status().begin(METHOD, 0).unwrap());
        }
        let max = loads(&view).into_iter().max().unwrap();
        let bound = c.bound(CALLS as u64 - 1, view.len());
        assert!(
            max <= bound,
            "{factor}: max load {max} over the bound {bound}"
        );
        assert!(off_owner > 0, "{factor}: the bound never moved a call");
        assert_eq!(loads(&view).iter().sum::<u64>(), CALLS as u64);
    }
}

#[test]
fn exclusions_still_work_and_a_full_house_falls_back_to_the_plain_walk() {
    let statuses = StatusRegistry::default();
    let plain = view_of(&urls(3, ""), &statuses);
    let bounded = view_of(&urls(3, "&hash.balance-factor=1.25"), &statuses);
    let _held = hold(&bounded.providers()[0], 10);
    // Provider 1 already tried: with 0 over the bound, everything goes to 2.
    let tried = [Arc::clone(&bounded.providers()[1])];
    for k in 0..500 {
        let chosen = pick_in(
            &bounded,
            &format!("user-{k}"),
            &Pick::default().excluding(&tried),
        );
        assert_eq!(chosen, 2, "user-{k}");
    }
    // Provider 2 (the only one with room) already tried, 0 and 1 over the bound ⌈1.25 · 21 / 3⌉ = 9:
    // the call goes where the plain ring's exclusion walk sends it.
    let _held = hold(&bounded.providers()[1], 10);
    let tried = [Arc::clone(&bounded.providers()[2])];
    for k in 0..500 {
        let key = format!("user-{k}");
        let expected = pick_in(&plain, &key, &Pick::default().excluding(&tried));
        let chosen = pick_in(&bounded, &key, &Pick::default().excluding(&tried));
        assert_eq!(chosen, expected, "{key}");
    }
}

/// The bounded choice, against its definition built from the plain ring's exclusion walk: the distinct
/// providers clockwise from the owner are the plain picks excluding those found so far; the answer is
/// the first allowed one under the bound, else the plain pick. Random loads and exclusions, and a list
/// longer than the walk's bitset (1,100 providers) so the unmarked path is checked too.
#[test]
fn agrees_with_the_definition_on_random_loads_and_exclusions() {
    let mut rng = SmallRng::seed_from_u64(0xd1ce);
    for (providers, keys) in [(2, 300), (5, 300), (30, 200), (1100, 25)] {
        let statuses = StatusRegistry::default();
        let plain = view_of(&urls_many(providers, ""), &statuses);
        let bounded = view_of(
            &urls_many(providers, "&hash.balance-factor=1.25"),
            &statuses,
        );
        let c = BalanceFactor::read(bounded.providers()[0].url(), METHOD).unwrap();
        let mut held = Vec::new();
        for provider in plain.providers() {
            held.extend(hold(provider, rng.random_range(0..6)));
        }
        let bound = c.bound(held.len() as u64, providers);
        let load = |i: usize| plain.method_status(i).active() as u64;
        for k in 0..keys {
            let key = format!("user-{k}");
            let excluded: Vec<Arc<Provider>> = plain
                .providers()
                .iter()
                .filter(|_| rng.random_bool(0.2))
                .cloned()
                .collect();
            if excluded.len() == providers {
                continue;
            }
            let mut seen = excluded.clone();
            let mut expected = None;
            while seen.len() < providers {
                let next = pick_in(&plain, &key, &Pick::default().excluding(&seen));
                if load(next) < bound {
                    expected = Some(next);
                    break;
                }
                seen.push(Arc::clone(&plain.providers()[next]));
            }
            let expected = expected
                .unwrap_or_else(|| pick_in(&plain, &key, &Pick::default().excluding(&excluded)));
            let chosen = pick_in(&bounded, &key, &Pick::default().excluding(&excluded));
            assert_eq!(
                chosen, expected,
                "{providers} providers, {key}, bound {bound}"
            );
        }
    }
}

/// [`urls`] for any number of providers: 10.1.x.y.
fn urls_many(n: usize, params: &str) -> Vec<String> {
    (0..n)
        .map(|i| {
            format!(
                "dubbo://10.1.{}.{}:20880/com.acme.Cache?loadbalance=consistenthash{params}",
                i / 250,
                i % 250 + 1
            )
        })
        .collect()
}

/// Warnings logged while `f` runs on this thread.
fn warnings_of(f: impl FnOnce()) -> String {
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);
    impl Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    tracing::subscriber::with_default(subscriber, f);
    let bytes = captured.0.lock().unwrap().clone();
    String::from_utf8(bytes).unwrap()
}

#[test]
fn bad_values_are_warned_about_and_ignored() {
    let statuses = StatusRegistry::default();
    let plain = view_of(&urls(5, ""), &statuses);
    let _held = hold(&plain.providers()[2], 50);
    // Values no other test uses: each (parameter, value) is warned about once per process.
    for bad in [
        "1.0",
        "0.75",
        "100.5",
        "-3",
        "NaN",
        "inf",
        "1,25",
        "heavy",
        "1.00000001",
    ] {
        let view = view_of(&urls(5, &format!("&hash.balance-factor={bad}")), &statuses);
        let logged = warnings_of(|| {
            for k in 0..300 {
                let key = format!("user-{k}");
                assert_eq!(owner(&view, &key), owner(&plain, &key), "{bad}: {key}");
            }
        });
        assert!(
            logged.contains("WARN") && logged.contains(&format!("hash.balance-factor={bad:?}")),
            "{bad}: {logged:?}"
        );
        assert_eq!(
            logged.matches("WARN").count(),
            1,
            "{bad}: once, not per pick"
        );
    }
    // A bad method-level value falls back to the service-level one, with a warning.
    let view = view_of(
        &urls(5, "&get.hash.balance-factor=oops&hash.balance-factor=1.5"),
        &statuses,
    );
    let logged = warnings_of(|| {
        let moved = (0..300)
            .filter(|k| owner(&view, &format!("user-{k}")) != owner(&plain, &format!("user-{k}")))
            .count();
        assert!(
            moved > 20,
            "the service-level 1.5 applies to get: {moved} moved"
        );
    });
    assert!(
        logged.contains("get.hash.balance-factor=\"oops\""),
        "{logged:?}"
    );
    // A method-level value applies to its method only.
    let urls = urls(5, "&put.hash.balance-factor=1.5");
    assert!(BalanceFactor::read(view_of(&urls, &statuses).providers()[0].url(), "put").is_some());
    assert!(BalanceFactor::read(view_of(&urls, &statuses).providers()[0].url(), "get").is_none());
    let get = view_of(&urls, &statuses);
    for k in 0..300 {
        let key = format!("user-{k}");
        assert_eq!(owner(&get, &key), owner(&plain, &key), "{key}");
    }
}

/// What the calls in flight look like while the keys are probed.
#[derive(Debug, Clone, Copy)]
enum LoadPattern {
    /// Keys uniform over a million: every provider near the average.
    Uniform,
    /// Keys log-uniform over 10,000 (Zipf-like, s = 1): the hottest key alone is 7.5 % of the calls.
    Skewed,
}

impl LoadPattern {
    fn key(self, rng: &mut SmallRng) -> String {
        match self {
            LoadPattern::Uniform => format!("user-{}", rng.random_range(0..1_000_000)),
            LoadPattern::Skewed => {
                let k = (rng.random::<f64>() * 10_000f64.ln()).exp() as u64;
                format!("user-{k}")
            }
        }
    }
}

/// Where each probe key goes in `view`, by address.
fn addresses(view: &MethodView, probes: usize) -> Vec<String> {
    (0..probes)
        .map(|k| {
            view.providers()[owner(view, &format!("probe-{k}"))]
                .address()
                .to_owned()
        })
        .collect()
}

fn moved(before: &[String], after: &[String]) -> f64 {
    let n = before.iter().zip(after).filter(|(a, b)| a != b).count();
    n as f64 / before.len() as f64
}

/// Calls in flight while the probe keys are looked up.
const IN_FLIGHT: usize = 1000;

/// Places [`IN_FLIGHT`] calls of `pattern` (always the same keys) through `view` and holds them; also
/// gives how many went elsewhere than their ring owner.
fn place(view: &MethodView, pattern: LoadPattern) -> (Vec<ActiveCall>, usize) {
    let plain = view_of(&urls(view.len(), ""), &StatusRegistry::default());
    let mut rng = SmallRng::seed_from_u64(0x10ad);
    let mut off_owner = 0;
    let held = (0..IN_FLIGHT)
        .map(|_| {
            let key = pattern.key(&mut rng);
            let chosen = owner(view, &key);
            let provider = &view.providers()[chosen];
            off_owner +=
                usize::from(provider.address() != plain.providers()[owner(&plain, &key)].address());
            provider.status().begin(METHOD, 0).unwrap()
        })
        .collect();
    (held, off_owner)
}

/// Key movement when an 11th provider joins ten, or the first of the ten leaves, with 1,000 calls in
/// flight: the share of 100,000 probe keys whose next call goes to another provider, measured twice:
/// right after the change (the calls in flight stay where they are, and the newcomer has none), and
/// after they have turned over (the same calls placed again over the new provider list). Print the
/// table with `cargo test -p rudder-cluster --test cluster key_movement -- --nocapture`.
#[test]
fn key_movement_on_join_and_leave() {
    const PROBES: usize = 100_000;
    println!("| calls in flight | balancer | max load (bound) | calls off their ring owner | moved on join: at once / after turnover | moved on leave: at once / after turnover |");
    println!("|---|---|---|---|---|---|");
    for pattern in [LoadPattern::Uniform, LoadPattern::Skewed] {
        for factor in [None, Some("1.25")] {
            let params = factor.map_or(String::new(), |c| format!("&hash.balance-factor={c}"));
            let all = urls(11, &params);
            let statuses = StatusRegistry::default();
            let ten = view_of(&all[..10], &statuses);
            let (_held, off_owner) = place(&ten, pattern);
            let before = addresses(&ten, PROBES);
            let max = loads(&ten).into_iter().max().unwrap();
            // At once: the same counters, seen from the new provider lists.
            let joined = addresses(&view_of(&all, &statuses), PROBES);
            let left = addresses(&view_of(&all[1..10], &statuses), PROBES);
            let at_once = (moved(&before, &joined), moved(&before, &left));
            // After turnover: fresh counters, the same calls placed again.
            let settled = |urls: &[String]| {
                let view = view_of(urls, &StatusRegistry::default());
                let _held = place(&view, pattern);
                addresses(&view, PROBES)
            };
            let later = (
                moved(&before, &settled(&all)),
                moved(&before, &settled(&all[1..10])),
            );
            let bound = match factor {
                Some(_) => {
                    let c = BalanceFactor::read(ten.providers()[0].url(), METHOD).unwrap();
                    let bound = c.bound(IN_FLIGHT as u64 - 1, 10);
                    assert!(max <= bound, "{pattern:?}: {max} over {bound}");
                    bound.to_string()
                }
                None => {
                    // The plain ring moves exactly the keys the newcomer takes, or the leaver had.
                    let newcomer = all[10].split('/').nth(2).unwrap();
                    let leaver = ten.providers()[0].address().to_owned();
                    for ((b, j), l) in before.iter().zip(&joined).zip(&left) {
                        assert!(
                            b == j || *j == newcomer,
                            "join moved a key to {j}, not {newcomer}"
                        );
                        assert!(
                            b == l || *b == leaver,
                            "leave moved a key off {b}, not {leaver}"
                        );
                    }
                    assert_eq!(off_owner, 0);
                    assert_eq!(at_once, later, "the plain ring ignores load");
                    assert!(
                        (0.05..0.14).contains(&at_once.0),
                        "join moved {}",
                        at_once.0
                    );
                    assert!(
                        (0.05..0.16).contains(&at_once.1),
                        "leave moved {}",
                        at_once.1
                    );
                    "none".to_string()
                }
            };
            let pct = |x: f64| format!("{:.1} %", x * 100.0);
            println!(
                "| {pattern:?} | {} | {max} ({bound}) | {} | {} / {} | {} / {} |",
                factor.map_or("plain ring".to_string(), |c| format!("c = {c}")),
                pct(off_owner as f64 / IN_FLIGHT as f64),
                pct(at_once.0),
                pct(later.0),
                pct(at_once.1),
                pct(later.1),
            );
        }
    }
}
