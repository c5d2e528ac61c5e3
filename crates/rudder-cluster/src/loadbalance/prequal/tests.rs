//! Deterministic picks on a fixed time and seeded RNG.

use std::sync::Arc;

use rand::{rngs::SmallRng, SeedableRng};
use rudder_common::invocation::Invocation;
use rudder_common::status::record::RecordCall;
use rudder_common::status::{ActiveCall, StatusRegistry};
use rudder_common::url::DubboUrl;

use super::*;
use crate::provider::Provider;

const NOW: i64 = 1_800_000_000_000;

fn view(n: usize) -> MethodView {
    let statuses = StatusRegistry::default();
    let providers: Arc<[Arc<Provider>]> = (1..=n)
        .map(|i| {
            let url = DubboUrl::parse(&format!("dubbo://10.0.0.{i}:1/S")).unwrap();
            Arc::new(Provider::new(url, &statuses).unwrap())
        })
        .collect();
    MethodView::new(providers, "m")
}

/// Records `calls` completed calls of `elapsed` ms on provider `index`.
fn completed(view: &MethodView, index: usize, calls: usize, elapsed: i64) {
    for _ in 0..calls {
        view.providers()[index]
            .status()
            .begin("m", 0)
            .unwrap()
            .finish(elapsed, true);
    }
}

/// Holds `n` calls in flight on provider `index`.
fn in_flight(view: &MethodView, index: usize, n: usize) -> Vec<ActiveCall> {
    (0..n)
        .map(|_| view.providers()[index].status().begin("m", 0).unwrap())
        .collect()
}

/// How many of `picks` went to each provider.
fn picks(policy: &Prequal, view: &MethodView, picks: usize) -> Vec<usize> {
    picks_at(policy, view, picks, NOW)
}

/// How many of `picks` at `at` went to each provider.
fn picks_at(policy: &Prequal, view: &MethodView, picks: usize, at: i64) -> Vec<usize> {
    let mut rng = SmallRng::seed_from_u64(5);
    let call = Invocation::new("m", vec![], vec![]);
    let mut counts = vec![0; view.len()];
    for _ in 0..picks {
        let pick = Pick::at(at);
        counts[policy.pick(view, &call, &pick, &mut rng).unwrap()] += 1;
    }
    counts
}

/// Four providers, the first 10 × slower; the policy has observed each once.
fn slow_first() -> (Prequal, MethodView) {
    let policy = Prequal::default();
    let view = view(4);
    policy.prepare(&view);
    completed(&view, 0, 1, 20);
    for i in 1..4 {
        completed(&view, i, 1, 2);
    }
    (policy, view)
}

#[test]
fn a_slow_provider_is_not_picked_while_the_fast_ones_keep_up() {
    let (policy, view) = slow_first();
    // The fast ones have a few calls in flight each, the slow one none: nobody is above the 75th
    // percentile, so latency decides. (peakewma's cost, latency × (in flight + 1), would pick the
    // slow one against a fast one with 10 or more in flight.)
    let _held: Vec<_> = (1..4).flat_map(|i| in_flight(&view, i, 3)).collect();
    let counts = picks(&policy, &view, 300);
    assert_eq!(counts[0], 0, "{counts:?}");
    assert!(counts[1..].iter().all(|&c| c > 60), "{counts:?}");
}

#[test]
fn a_hot_provider_is_never_picked_while_a_cold_one_is_drawn() {
    let (policy, view) = slow_first();
    // Provider 1 queues (12 in flight, above the 75th percentile of [0, 12, 1, 1]); 2 and 3 keep up.
    let _held: Vec<_> = in_flight(&view, 1, 12)
        .into_iter()
        .chain(in_flight(&view, 2, 1))
        .chain(in_flight(&view, 3, 1))
        .collect();
    let counts = picks(&policy, &view, 300);
    assert_eq!(counts[1], 0, "the hot provider is never picked: {counts:?}");
    // Every draw of three of four holds 2 or 3, cold and faster than the slow 0.
    assert_eq!(counts[0], 0, "{counts:?}");
}

#[test]
fn a_cold_slow_provider_takes_the_overflow_of_a_hot_fast_one() {
    let policy = Prequal::default();
    let view = view(2);
    policy.prepare(&view);
    completed(&view, 0, 1, 20);
    completed(&view, 1, 1, 2);
    // The fast one has 12 in flight, the slow one none: the fast one is hot.
    let _held = in_flight(&view, 1, 12);
    assert_eq!(picks(&policy, &view, 50), [50, 0]);
}

#[test]
fn when_every_candidate_is_hot_the_fewest_in_flight_wins() {
    let policy = Prequal::default();
    let view = view(3);
    policy.prepare(&view);
    for i in 0..3 {
        completed(&view, i, 1, 2);
    }
    // Three candidates of three, in flight [9, 5, 9]: the 75th percentile is 9, so nobody is hot
    // and latency ties: fewer in flight decides.
    let _held: Vec<_> = in_flight(&view, 0, 9)
        .into_iter()
        .chain(in_flight(&view, 1, 5))
        .chain(in_flight(&view, 2, 9))
        .collect();
    assert_eq!(picks(&policy, &view, 50), [0, 50, 0]);
}

#[test]
fn excluded_and_zero_weight_providers_are_not_picked() {
    let policy = Prequal::default();
    let view = view(4);
    policy.prepare(&view);
    let excluded = [Arc::clone(&view.providers()[2])];
    let mut rng = SmallRng::seed_from_u64(9);
    let call = Invocation::new("m", vec![], vec![]);
    for _ in 0..200 {
        let pick = Pick::at(NOW).excluding(&excluded);
        assert_ne!(policy.pick(&view, &call, &pick, &mut rng), Some(2));
    }
}

/// Four providers under load: the first steadily 10 × slower (20 ms), the fast ones mostly 4 ms but
/// each with one 30 ms call a moment ago (a busy host); then how `picks` spread.
fn after_a_busy_moment(smoothing: Smoothing) -> Vec<usize> {
    let policy = Prequal::with_smoothing(smoothing);
    let view = view(4);
    policy.prepare(&view);
    let call = Invocation::new("m", vec![], vec![]);
    let mut rng = SmallRng::seed_from_u64(3);
    // Enough picks at `at` that every provider is drawn, and so observed, at that time.
    let mut observe = |at: i64| {
        for _ in 0..12 {
            policy.pick(&view, &call, &Pick::at(at), &mut rng).unwrap();
        }
    };
    completed(&view, 0, 1, 20);
    (1..4).for_each(|i| completed(&view, i, 1, 4));
    observe(NOW);
    (1..4).for_each(|i| completed(&view, i, 1, 30));
    observe(NOW + 10);
    for k in 0..20 {
        (1..4).for_each(|i| completed(&view, i, 1, 4));
        observe(NOW + 20 + k);
    }
    let mut counts = vec![0; 4];
    for _ in 0..300 {
        let pick = Pick::at(NOW + 50);
        counts[policy.pick(&view, &call, &pick, &mut rng).unwrap()] += 1;
    }
    counts
}

#[test]
fn a_fast_providers_worst_call_does_not_make_the_slow_one_look_faster() {
    // Peaks: each fast provider is held at its 30 ms call for seconds, above the slow one's 20 ms, so
    // the slow one wins every draw it is in (about 3 of 4): what happens under load, when the fast
    // providers' worst calls pass the slow one's typical time.
    let peaks = after_a_busy_moment(Smoothing::Peak);
    assert!(peaks[0] > 150, "{peaks:?}");
    // Means over the last calls: the fast ones are back near 4 ms after twenty calls.
    let means = after_a_busy_moment(Smoothing::Mean);
    assert_eq!(means[0], 0, "{means:?}");
}

#[test]
fn a_provider_that_stops_answering_is_left_alone_before_it_is_hot() {
    let policy = Prequal::default();
    let view = view(4);
    policy.prepare(&view);
    let call = Invocation::new("m", vec![], vec![]);
    let mut rng = SmallRng::seed_from_u64(11);
    let mut observe = |at: i64| {
        for _ in 0..12 {
            policy.pick(&view, &call, &Pick::at(at), &mut rng).unwrap();
        }
    };
    (0..4).for_each(|i| completed(&view, i, 2, 4));
    observe(NOW);
    // Each provider has one call in flight (nobody is hot); provider 0 stalls: from NOW it answers
    // nothing, while the others keep answering in 4 ms.
    let _held: Vec<_> = (0..4).flat_map(|i| in_flight(&view, i, 1)).collect();
    for at in 1..=20 {
        (1..4).for_each(|i| completed(&view, i, 1, 4));
        observe(NOW + at);
    }
    let counts = picks_at(&policy, &view, 300, NOW + 20);
    assert_eq!(counts[0], 0, "{counts:?}");
    // Once it answers again (in 3 ms, a little faster than the others' 4), it is picked again.
    completed(&view, 0, 1, 3);
    let counts = picks_at(&policy, &view, 300, NOW + 21);
    assert!(counts[0] > 30, "{counts:?}");
}
