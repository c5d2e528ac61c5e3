//! Routed subsets and their picking state are built once per (snapshot, rule version, route), not per
//! call, and rebuilt at publish time when the snapshot changes.

use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;

use crate::support::Probe;
use rudder_cluster::balancer::Balancer;
use rudder_cluster::directory::{Change, Directory};
use rudder_cluster::loadbalance::{LoadBalance, LoadBalanceRegistry};
use rudder_cluster::router::{RouterChain, RuleKey};
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;

fn url(host: u8, region: &str) -> DubboUrl {
    DubboUrl::parse(&format!(
        "dubbo://10.0.0.{host}:20880/S?loadbalance=probe&region={region}"
    ))
    .unwrap()
}

#[test]
fn routed_views_are_built_once_per_route_and_prepared_at_publish() {
    let probe = Arc::new(Probe::new());
    let mut policies = LoadBalanceRegistry::with_builtins();
    policies.register("probe", Arc::clone(&probe) as Arc<dyn LoadBalance>);
    let directory = Arc::new(Directory::default());
    directory.replace([url(1, "hz"), url(2, "hz"), url(3, "bj"), url(4, "bj")]);
    let chain = Arc::new(RouterChain::new(
        DubboUrl::parse("consumer://10.0.9.9/S").unwrap(),
    ));
    // One line reads only the method (cached per method), one reads an attachment (cached per value).
    let rule = "conditions:\n  - method = a => region = hz\n  - attachments[zone] = z1 => host = 10.0.0.1,10.0.0.3\n";
    chain
        .set_rule(RuleKey::app_condition("c"), Some(rule))
        .unwrap();
    let balancer = Balancer::builder(Arc::clone(&directory))
        .policies(policies)
        .routers(Arc::clone(&chain))
        .build();

    let a = Invocation::new("a", vec![], vec![]);
    let mut a_z1 = a.clone();
    a_z1.set_attachment("zone", "z1");
    let b = Invocation::new("b", vec![], vec![]);
    for _ in 0..100 {
        assert_eq!(
            balancer.select(&a, &[]).unwrap().address(),
            "10.0.0.1:20880"
        );
        assert_eq!(
            balancer.select(&a_z1, &[]).unwrap().address(),
            "10.0.0.1:20880"
        );
        assert_eq!(
            balancer.select(&b, &[]).unwrap().address(),
            "10.0.0.1:20880"
        );
    }
    // Routes: a → {1,2}; a+z1 → {1} (one provider: picked without the policy); b → all four (the
    // snapshot's own view). One picking state for each subset the policy picks in.
    assert_eq!(
        probe.built_on_pick.load(SeqCst),
        2,
        "one picking state per routed subset"
    );
    let cached = chain.cached_routes();
    assert!(cached > 0 && cached <= 12, "{cached} nodes");

    // A registry change: the new snapshot's routed views are rebuilt and prepared before publication.
    directory.apply([Change::Insert(url(5, "hz"))]);
    let prepared = probe.prepared.load(SeqCst);
    assert!(
        prepared >= 2,
        "routed views prepared at publish: {prepared}"
    );
    for call in [&a, &a_z1, &b] {
        balancer.select(call, &[]).unwrap();
    }
    assert_eq!(
        probe.built_on_pick.load(SeqCst),
        2,
        "no state built on a pick after the change"
    );
    let snapshot = directory.snapshot();
    let routed = balancer
        .with_routed_view(&snapshot, &a, |view| Ok(view.len()))
        .unwrap();
    assert_eq!(routed, 3, "the new hz provider is routed to");

    // A rule change reaches the next pick.
    chain
        .set_rule(
            RuleKey::app_condition("c"),
            Some("conditions:\n  - => region = bj\n"),
        )
        .unwrap();
    assert_eq!(
        balancer.select(&a, &[]).unwrap().address(),
        "10.0.0.3:20880"
    );
}

#[test]
fn the_cache_is_bounded_whatever_the_callers_send() {
    let directory = Arc::new(Directory::default());
    directory.replace(
        ["dubbo://10.0.0.1:20880/S", "dubbo://10.0.0.2:20880/S"]
            .map(|u| DubboUrl::parse(u).unwrap()),
    );
    let chain = Arc::new(RouterChain::new(
        DubboUrl::parse("consumer://10.0.9.9/S").unwrap(),
    ));
    let balancer = Balancer::builder(directory)
        .routers(Arc::clone(&chain))
        .build();
    for i in 0..3000 {
        let mut call = Invocation::new("m", vec![], vec![]);
        call.set_attachment("dubbo.tag", &format!("tag{i}"));
        balancer.select(&call, &[]).unwrap();
    }
    assert!(chain.cached_routes() <= rudder_cluster::router::MAX_CACHED_ROUTES);
}

/// With no rule and no tag anywhere, a call without a tag walks no route (the snapshot's own view);
/// a provider or consumer tag, or a tagged call, takes the routed path and routes as before.
#[test]
fn untagged_calls_over_untagged_providers_without_rules_walk_no_route() {
    let plain = Invocation::new("m", vec![], vec![]);
    let mut tagged = plain.clone();
    tagged.set_attachment("dubbo.tag", "gray");
    let select = |providers: &[&str], consumer: &str, call: &Invocation| {
        let directory = Arc::new(Directory::default());
        directory.replace(providers.iter().map(|p| DubboUrl::parse(p).unwrap()));
        let chain = Arc::new(RouterChain::new(DubboUrl::parse(consumer).unwrap()));
        let balancer = Balancer::builder(directory)
            .routers(Arc::clone(&chain))
            .seed(3)
            .build();
        let picked: std::collections::BTreeSet<String> = (0..64)
            .map(|_| balancer.select(call, &[]).unwrap().address().to_owned())
            .collect();
        (picked, chain.cached_routes())
    };
    let two = ["dubbo://10.0.0.1:20880/S", "dubbo://10.0.0.2:20880/S"];
    let (picked, routes) = select(&two, "consumer://10.0.9.9/S", &plain);
    assert_eq!((picked.len(), routes), (2, 0), "no route walked");
    // A tagged call with no provider of the tag falls back to the untagged ones, through a route.
    let (picked, routes) = select(&two, "consumer://10.0.9.9/S", &tagged);
    assert_eq!(picked.len(), 2);
    assert!(routes > 0);
    let mixed = [
        "dubbo://10.0.0.1:20880/S?dubbo.tag=gray",
        "dubbo://10.0.0.2:20880/S",
    ];
    let (picked, routes) = select(&mixed, "consumer://10.0.9.9/S", &plain);
    assert_eq!(picked.into_iter().collect::<Vec<_>>(), ["10.0.0.2:20880"]);
    assert!(
        routes > 0,
        "a provider tag routes untagged calls away from it"
    );
    let (picked, _) = select(&mixed, "consumer://10.0.9.9/S?dubbo.tag=gray", &plain);
    assert_eq!(
        picked.into_iter().collect::<Vec<_>>(),
        ["10.0.0.1:20880"],
        "the consumer's tag"
    );
}
