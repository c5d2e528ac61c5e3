//! Outlier ejection through the cluster invoker, on a fixed clock: who is ejected, for how long, and
//! the share that may be out at once.

use std::sync::Arc;

use rudder_cluster::balancer::Balancer;
use rudder_cluster::cluster::{ClusterInvoker, ClusterMode};
use rudder_cluster::directory::Directory;
use rudder_cluster::loadbalance::outlier;
use rudder_cluster::router::RouterChain;
use rudder_common::clock::ManualClock;
use rudder_common::error::RpcErrorKind;
use rudder_common::invocation::Invocation;
use rudder_common::status::record::RecordOutcome;
use rudder_common::url::DubboUrl;
use rudder_test_support::scripted::{block_on, Scripted};

const START: i64 = 1_800_000_000_000;

struct Fixture {
    clock: Arc<ManualClock>,
    directory: Arc<Directory>,
    invoker: ClusterInvoker<Scripted>,
    call: Invocation,
}

fn fixture(params: &str, failing: &[u16]) -> Fixture {
    let directory = Arc::new(Directory::default());
    directory.replace(
        (1..=4).map(|i| DubboUrl::parse(&format!("dubbo://127.0.0.1:{i}/S?{params}")).unwrap()),
    );
    let clock = Arc::new(ManualClock::new(START));
    let balancer = Balancer::builder(Arc::clone(&directory))
        .clock(clock.clone())
        .seed(3)
        .build();
    let caller = Scripted::default();
    for port in failing {
        caller.fail(&format!("127.0.0.1:{port}"), RpcErrorKind::Network);
    }
    Fixture {
        clock,
        directory,
        invoker: ClusterInvoker::new(Arc::new(balancer), caller, ClusterMode::Failfast),
        call: Invocation::new("m", vec![], vec![]),
    }
}

impl Fixture {
    /// Makes `n` calls; returns the calls each port received during them.
    fn calls(&self, n: usize) -> [u32; 5] {
        let before = self.invoker.caller().calls().len();
        for _ in 0..n {
            let _ = block_on(self.invoker.invoke(&self.call));
        }
        let mut counts = [0; 5];
        for address in &self.invoker.caller().calls()[before..] {
            let port: usize = address.rsplit(':').next().unwrap().parse().unwrap();
            counts[port] += 1;
        }
        counts
    }
}

#[test]
fn consecutive_errors_eject_for_a_growing_interval() {
    let f = fixture(
        "outlier.consecutive-errors=3&outlier.base-ejection-ms=1000",
        &[1],
    );
    // The clock stands still: port 1 gets exactly the three calls that eject it.
    assert_eq!(f.calls(400)[1], 3);
    let view = f.directory.snapshot().view("m");
    let out = outlier::ejections(&view, START);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].0.url().port(), out[0].1), (1, START + 1000));
    // Let back in after its interval: three more errors, now ejected for two intervals.
    f.clock.advance(1000);
    assert_eq!(f.calls(400)[1], 3);
    f.clock.advance(1999);
    assert_eq!(
        f.calls(200)[1],
        0,
        "still out 1999 ms into a 2000 ms ejection"
    );
    f.clock.advance(1);
    assert_eq!(f.calls(400)[1], 3);
}

#[test]
fn successes_reset_the_count_every_policy_ejects_and_off_means_off() {
    let state = rudder_common::status::RpcStatus::default();
    let outcomes = [false, false, true, false, false];
    let ejected = outcomes
        .iter()
        .any(|&ok| state.outlier().record(ok, 3, 1000, START));
    assert!(!ejected, "a success between errors starts the count again");

    let f = fixture("loadbalance=roundrobin&outlier.consecutive-errors=3", &[1]);
    assert_eq!(f.calls(40)[1], 3);

    let off = fixture("", &[1]);
    let counts = off.calls(400);
    assert!(
        counts[1] > 60,
        "no ejection without the parameter: {counts:?}"
    );
}

#[test]
fn at_most_the_maximum_share_is_out_and_an_outage_still_reaches_someone() {
    let params = "outlier.consecutive-errors=2&outlier.max-ejection-percent=25";
    let f = fixture(params, &[1, 2]);
    let counts = f.calls(600);
    // One of four may be out: the first ejected stays out, the other keeps failing its share.
    let (one, two) = (counts[1], counts[2]);
    assert!(one.min(two) == 2 && one.max(two) > 100, "{counts:?}");

    let all_down = fixture(
        "outlier.consecutive-errors=1&outlier.max-ejection-percent=100",
        &[1, 2, 3, 4],
    );
    let counts = all_down.calls(100);
    assert_eq!(
        counts.iter().sum::<u32>(),
        100,
        "every call still reaches a provider: {counts:?}"
    );
}

#[test]
fn the_explanation_names_the_ejected_and_those_picked_anyway() {
    let params = "outlier.consecutive-errors=2&outlier.max-ejection-percent=25";
    let f = fixture(params, &[1, 2]);
    f.calls(600);
    let chain = RouterChain::new(DubboUrl::parse("consumer://127.0.0.1/S").unwrap());
    let routed = chain.explain(&f.directory.snapshot(), &f.call);
    assert!(
        routed.providers.iter().all(|p| p.ejected.is_none()),
        "the routers alone know of no ejection"
    );
    let why = routed.with_ejections(START);
    // (port, (left out, times ejected, ms left)).
    type Seen = (u16, Option<(bool, u32, i64)>);
    let ejected: Vec<Seen> = why
        .providers
        .iter()
        .map(|p| {
            let e = p.ejected.map(|e| (e.left_out, e.times, e.remaining_millis));
            (p.provider.url().port(), e)
        })
        .collect();
    // Both failing providers are ejected; a quarter of four may be out, the first in list order.
    assert_eq!(
        ejected,
        [
            (1, Some((true, 1, 30_000))),
            (2, Some((false, 1, 30_000))),
            (3, None),
            (4, None)
        ]
    );
    assert_eq!((why.kept(), why.ejected()), (4, 1));
    let text = why.to_string();
    assert!(
        text.contains("4 of 4 providers kept, 1 of them ejected"),
        "{text}"
    );
    assert!(
        text.contains("out 127.0.0.1:1  ejected (outlier, ejection 1) for 30.0 s more\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "in  127.0.0.1:2  ejected (outlier, ejection 1) for 30.0 s more, picked anyway"
        ),
        "{text}"
    );

    // Once the ejections end, nothing is reported.
    let later = chain
        .explain(&f.directory.snapshot(), &f.call)
        .with_ejections(START + 30_000);
    assert_eq!(later.ejected(), 0);
    assert!(later.providers.iter().all(|p| p.ejected.is_none()));

    // With the settings gone (a configurator or a new registration), no ejection is reported, as
    // picks leave nobody out, though the counters still hold one.
    f.directory
        .replace((1..=4).map(|i| DubboUrl::parse(&format!("dubbo://127.0.0.1:{i}/S")).unwrap()));
    let snapshot = f.directory.snapshot();
    let counters = snapshot.providers()[0].status().find_method("m").unwrap();
    assert!(counters.outlier().is_ejected(START));
    let why = chain.explain(&snapshot, &f.call).with_ejections(START);
    assert_eq!(why.ejected(), 0);
    assert!(why.providers.iter().all(|p| p.ejected.is_none()));
}
