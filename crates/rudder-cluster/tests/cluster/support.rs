//! Fixtures shared by the balancer tests: provider views built from URL strings, seeded picking.

#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;

use rand::{rngs::SmallRng, SeedableRng};
use rudder_cluster::loadbalance::{select, LoadBalance, MethodView, Pick};
use rudder_cluster::provider::Provider;
use rudder_common::invocation::Invocation;
use rudder_common::status::StatusRegistry;
use rudder_common::url::DubboUrl;
use rudder_common::Value;

/// Dubbo's `LoadBalanceBaseTest.invokers`: five equal providers 127.0.0.1:1..5.
pub const FIVE: [&str; 5] = [
    "test://127.0.0.1:1/DemoService",
    "test://127.0.0.1:2/DemoService",
    "test://127.0.0.1:3/DemoService",
    "test://127.0.0.1:4/DemoService",
    "test://127.0.0.1:5/DemoService",
];

/// Dubbo's `weightInvokers` (w1, w2, w3).
pub const WEIGHTED: [&str; 3] = [
    "test1://127.0.0.1:11/DemoService?weight=1&active=0",
    "test2://127.0.0.1:12/DemoService?weight=9&active=0",
    "test3://127.0.0.1:13/DemoService?weight=6&active=1",
];

/// Dubbo's `weightInvokersSR` (w1, w2, w5).
pub const WEIGHTED_SR: [&str; 3] = [
    "test1://127.0.0.1:11/DemoService?weight=1&active=0",
    "test2://127.0.0.1:12/DemoService?weight=9&active=0",
    "test5://127.0.0.1:15/DemoService?weight=15&active=0",
];

pub fn providers(urls: &[&str], statuses: &StatusRegistry) -> Arc<[Arc<Provider>]> {
    urls.iter()
        .map(|u| Arc::new(Provider::new(DubboUrl::parse(u).unwrap(), statuses).unwrap()))
        .collect()
}

pub fn view(urls: &[&str], method: &str, statuses: &StatusRegistry) -> MethodView {
    MethodView::new(providers(urls, statuses), method)
}

pub fn call(method: &str) -> Invocation {
    Invocation::new(
        method,
        vec!["java.lang.String".into(); 3],
        vec![
            Value::from("arg1"),
            Value::from("arg2"),
            Value::from("arg3"),
        ],
    )
}

/// Picks `runs` times at time `now` and counts picks per provider index.
pub fn counts(
    policy: &dyn LoadBalance,
    view: &MethodView,
    call: &Invocation,
    runs: usize,
    seed: u64,
) -> Vec<usize> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut counts = vec![0; view.len()];
    let pick = Pick::default();
    for _ in 0..runs {
        counts[select(policy, view, call, &pick, &mut rng).unwrap()] += 1;
    }
    counts
}

/// Pearson's chi-square statistic of `observed` against `weights`.
pub fn chi_square(observed: &[usize], weights: &[f64]) -> f64 {
    let n: usize = observed.iter().sum();
    let total: f64 = weights.iter().sum();
    observed
        .iter()
        .zip(weights)
        .filter(|(_, &w)| w > 0.0)
        .map(|(&o, &w)| {
            let expected = n as f64 * w / total;
            (o as f64 - expected).powi(2) / expected
        })
        .sum()
}

/// Chi-square critical values at p = 0.001 for 1..=10 degrees of freedom.
pub const CHI2_P001: [f64; 10] = [
    10.83, 13.82, 16.27, 18.47, 20.52, 22.46, 24.32, 26.12, 27.88, 29.59,
];

/// A policy that counts where its per-view state is built: at publish (`prepare`) or on a pick; it
/// always picks the first provider.
#[derive(Debug)]
pub struct Probe {
    pub key: rudder_cluster::loadbalance::StateKey,
    pub prepared: std::sync::atomic::AtomicUsize,
    pub built_on_pick: std::sync::atomic::AtomicUsize,
}

impl Probe {
    pub fn new() -> Probe {
        Probe {
            key: rudder_cluster::loadbalance::StateKey::unique(),
            prepared: Default::default(),
            built_on_pick: Default::default(),
        }
    }
}

impl LoadBalance for Probe {
    fn pick(
        &self,
        view: &MethodView,
        _: &Invocation,
        _: &Pick<'_>,
        _: &mut dyn rudder_cluster::loadbalance::PickRng,
    ) -> Option<usize> {
        use std::sync::atomic::Ordering::SeqCst;
        view.with_state(
            self.key,
            |_| self.built_on_pick.fetch_add(1, SeqCst),
            |_: &usize| Some(0),
        )
    }

    fn prepare(&self, view: &MethodView) {
        use std::sync::atomic::Ordering::SeqCst;
        view.with_state(
            self.key,
            |_| self.prepared.fetch_add(1, SeqCst),
            |_: &usize| (),
        );
    }
}
