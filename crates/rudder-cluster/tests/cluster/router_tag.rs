//! Dubbo's `TagStateRouterTest` vectors and the 3.3 tag algorithm's fallbacks, on the pick path.

use std::sync::Arc;

use rudder_cluster::balancer::Balancer;
use rudder_cluster::directory::Directory;
use rudder_cluster::router::tag::TagRule;
use rudder_cluster::router::{RouterChain, RuleKey};
use rudder_common::error::RpcErrorKind;
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;

fn setup(consumer: &str, providers: &[&str]) -> (Arc<RouterChain>, Balancer) {
    let directory = Arc::new(Directory::default());
    directory.replace(providers.iter().map(|u| DubboUrl::parse(u).unwrap()));
    let chain = Arc::new(RouterChain::new(DubboUrl::parse(consumer).unwrap()));
    let balancer = Balancer::builder(directory)
        .routers(Arc::clone(&chain))
        .build();
    (chain, balancer)
}

fn routed(balancer: &Balancer, call: &Invocation) -> Vec<String> {
    let snapshot = balancer.directory().snapshot();
    match balancer.with_routed_view(&snapshot, call, |view| {
        Ok(view
            .providers()
            .iter()
            .map(|p| p.address().to_owned())
            .collect())
    }) {
        Ok(addresses) => addresses,
        Err(e) if e.kind() == RpcErrorKind::NoProvider => Vec::new(),
        Err(e) => panic!("{e}"),
    }
}

fn tagged(tag: &str) -> Invocation {
    let mut call = Invocation::new("sayHello", vec![], vec![]);
    if !tag.is_empty() {
        call.set_attachment("dubbo.tag", tag);
    }
    call
}

const CONSUMER: &str = "consumer://127.0.0.1/DemoInterface?application=demo-consumer";

/// `testTagRoutePickInvokers`: static tags only.
#[test]
fn static_tags_pick_the_tagged_provider() {
    let (_, balancer) = setup(
        CONSUMER,
        &[
            "test://127.0.0.1:7777/DemoInterface?dubbo.tag=tag2",
            "test://127.0.0.1:7778/DemoInterface",
            "test://127.0.0.1:7779/DemoInterface",
        ],
    );
    assert_eq!(routed(&balancer, &tagged("tag2")), ["127.0.0.1:7777"]);
    // Untagged requests never reach tagged providers; an unknown tag falls back to untagged ones.
    assert_eq!(
        routed(&balancer, &tagged("")),
        ["127.0.0.1:7778", "127.0.0.1:7779"]
    );
    assert_eq!(
        routed(&balancer, &tagged("tag3")),
        ["127.0.0.1:7778", "127.0.0.1:7779"]
    );
    let mut forced = tagged("tag3");
    forced.set_attachment("dubbo.force.tag", "true");
    assert!(
        routed(&balancer, &forced).is_empty(),
        "dubbo.force.tag forbids the fallback"
    );
}

#[test]
fn the_consumer_tag_applies_when_the_call_has_none() {
    let consumer = "consumer://127.0.0.1/DemoInterface?dubbo.tag=tag2&dubbo.force.tag=true";
    let (_, balancer) = setup(
        consumer,
        &[
            "test://127.0.0.1:7777/DemoInterface?dubbo.tag=tag2",
            "test://127.0.0.1:7778/DemoInterface",
        ],
    );
    assert_eq!(routed(&balancer, &tagged("")), ["127.0.0.1:7777"]);
    assert!(
        routed(&balancer, &tagged("tag9")).is_empty(),
        "forced by the consumer URL"
    );
}

/// `testTagRouteWithDynamicRuleV3`: dynamic membership by `match` beats the static tag.
#[test]
fn v3_match_tags_cover_providers_by_their_parameters() {
    let (chain, balancer) = setup(
        CONSUMER,
        &[
            "test://127.0.0.1:7777/DemoInterface?application=foo&dubbo.tag=tag2&match_key=value",
            "test://127.0.0.1:7778/DemoInterface?application=foo&match_key=value",
            "test://127.0.0.1:7779/DemoInterface?application=foo",
        ],
    );
    let rule = "configVersion: v3.0\nforce: false\nruntime: true\nenabled: true\nkey: foo\ntags:\n  - name: tag2\n    match:\n      - key: match_key\n        value:\n          exact: value\n";
    chain.set_rule(RuleKey::tag("foo"), Some(rule)).unwrap();
    assert_eq!(
        routed(&balancer, &tagged("tag2")),
        ["127.0.0.1:7777", "127.0.0.1:7778"]
    );
    // Untagged traffic avoids every dynamically tagged address.
    assert_eq!(routed(&balancer, &tagged("")), ["127.0.0.1:7779"]);
}

/// `tagRouterRuleParseTest` and `tagRouterRuleParseTestV3`.
#[test]
fn rule_parsing_matches_dubbo() {
    let rule = TagRule::parse(
        "force: false\nruntime: true\nenabled: false\npriority: 1\nkey: demo-provider\ntags:\n  - name: tag1\n    addresses: null\n  - name: tag2\n    addresses: [\"30.5.120.37:20880\"]\n  - name: tag3\n    addresses: []\n  - name: tag4\n    addresses: ~\n",
    )
    .unwrap();
    let by_tag = rule.addresses_by_tag(&[]);
    assert_eq!(by_tag.len(), 1);
    assert_eq!(by_tag["tag2"], ["30.5.120.37:20880"]);
    assert!(!rule.is_active(), "enabled: false");

    let directory = Directory::default();
    directory.replace([
        DubboUrl::parse(
            "dubbo://10.20.3.3:20880/com.foo.BarService?match_key1=value1&match_key2=value2",
        )
        .unwrap(),
        DubboUrl::parse("dubbo://10.20.3.4:20880/com.foo.BarService?match_key1=value1").unwrap(),
    ]);
    let v3 = TagRule::parse(concat!(
        "configVersion: v3.0\nforce: false\nruntime: true\nenabled: true\nkey: demo-provider\ntags:\n",
        "  - name: tag1\n    match:\n    - key: match_key1\n      value:\n        exact: value1\n",
        "  - name: tag2\n    addresses:\n      - \"10.20.3.3:20880\"\n      - \"10.20.3.4:20880\"\n    match:\n    - key: match_key1\n      value:\n        exact: value1\n",
        "  - name: tag3\n    match:\n    - key: match_key2\n      value:\n        exact: value2\n",
        "  - name: tag4\n    match:\n    - key: not_exist\n      value:\n        exact: not_exist\n",
        "  - name: tag5\n    match:\n    - key: match_key2\n      value:\n        wildcard: \"*\"\n",
    ))
    .unwrap();
    let by_tag = v3.addresses_by_tag(directory.snapshot().providers());
    assert_eq!(by_tag["tag1"].len(), 2);
    assert_eq!(by_tag["tag2"].len(), 2);
    assert_eq!(by_tag["tag3"].len(), 1);
    assert!(!by_tag.contains_key("tag4"));
    assert_eq!(by_tag["tag5"].len(), 1);
    let all: std::collections::HashSet<&String> = by_tag.values().flatten().collect();
    assert_eq!(all.len(), 2);
}

#[test]
fn dynamic_addresses_force_and_fallback() {
    let (chain, balancer) = setup(
        CONSUMER,
        &[
            "dubbo://30.5.120.16:20880/DemoInterface?application=demo-provider",
            "dubbo://30.5.120.16:20881/DemoInterface?application=demo-provider",
            "dubbo://30.5.120.17:20880/DemoInterface?application=demo-provider",
        ],
    );
    let rule = |force: bool| {
        format!("force: {force}\ntags:\n  - name: gray\n    addresses: [\"30.5.120.16:20880\"]\n  - name: beta\n    addresses: [\"30.5.120.99:20880\"]\n  - name: all16\n    addresses: [\"30.5.120.16:*\"]\n")
    };
    chain
        .set_rule(RuleKey::tag("demo-provider"), Some(&rule(false)))
        .unwrap();
    assert_eq!(routed(&balancer, &tagged("gray")), ["30.5.120.16:20880"]);
    // `30.5.120.16:*` is compared as a port and matches nothing; the address list has no live
    // provider for `beta` either: both fall back to untagged providers, i.e. neither gray's address.
    assert_eq!(
        routed(&balancer, &tagged("beta")),
        ["30.5.120.16:20881", "30.5.120.17:20880"]
    );
    assert_eq!(
        routed(&balancer, &tagged("")),
        ["30.5.120.16:20881", "30.5.120.17:20880"]
    );
    chain
        .set_rule(RuleKey::tag("demo-provider"), Some(&rule(true)))
        .unwrap();
    assert!(
        routed(&balancer, &tagged("beta")).is_empty(),
        "force: no live address fails"
    );
    // A deleted rule leaves the static tags only.
    chain.set_rule(RuleKey::tag("demo-provider"), None).unwrap();
    assert_eq!(routed(&balancer, &tagged("gray")).len(), 3);
}

#[test]
fn untagged_requests_fail_when_every_provider_is_tagged() {
    let (chain, balancer) = setup(
        CONSUMER,
        &["dubbo://10.0.0.1:20880/DemoInterface?application=p"],
    );
    chain
        .set_rule(
            RuleKey::tag("p"),
            Some("tags:\n  - name: gray\n    addresses: [\"10.0.0.1\"]\n"),
        )
        .unwrap();
    let error = balancer.select(&tagged(""), &[]).unwrap_err();
    assert_eq!(error.kind(), RpcErrorKind::NoProvider);
    assert_eq!(
        balancer.select(&tagged("gray"), &[]).unwrap().address(),
        "10.0.0.1:20880"
    );
}
