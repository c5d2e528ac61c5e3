//! Tag and provider-application condition rules when one interface is provided by several
//! applications (issue 14): each application's rule governs its own providers, whatever order the
//! providers are listed in and whatever order the config center delivers the rules (and their
//! absences) in.

use std::collections::BTreeSet;
use std::sync::Arc;

use rudder_cluster::balancer::Balancer;
use rudder_cluster::directory::Directory;
use rudder_cluster::router::{RouterChain, RuleKey};
use rudder_common::error::RpcErrorKind;
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;

const CONSUMER: &str = "consumer://10.9.9.9/DemoInterface?application=shop";

/// `alpha` has a tag rule; `beta` has none, and one of its providers is statically tagged `gray`.
const ALPHA: [&str; 2] = [
    "dubbo://10.0.0.1:20880/DemoInterface?application=alpha",
    "dubbo://10.0.0.2:20880/DemoInterface?application=alpha",
];
const BETA: [&str; 2] = [
    "dubbo://10.0.1.1:20880/DemoInterface?application=beta",
    "dubbo://10.0.1.2:20880/DemoInterface?application=beta&dubbo.tag=gray",
];
const ALPHA_RULE: &str =
    "force: false\ntags:\n  - name: gray\n    addresses: [\"10.0.0.1:20880\"]\n";

fn chain_over(providers: &[&str]) -> (Arc<RouterChain>, Balancer) {
    let directory = Arc::new(Directory::default());
    directory.replace(providers.iter().map(|u| DubboUrl::parse(u).unwrap()));
    let chain = Arc::new(RouterChain::new(DubboUrl::parse(CONSUMER).unwrap()));
    let balancer = Balancer::builder(directory)
        .routers(Arc::clone(&chain))
        .build();
    (chain, balancer)
}

/// The providers a call may reach, as a set (list order is the directory's, not the answer).
fn reached(balancer: &Balancer, tag: &str, force: bool) -> BTreeSet<String> {
    let mut call = Invocation::new("sayHello", vec![], vec![]);
    if !tag.is_empty() {
        call.set_attachment("dubbo.tag", tag);
    }
    if force {
        call.set_attachment("dubbo.force.tag", "true");
    }
    let snapshot = balancer.directory().snapshot();
    match balancer.with_routed_view(&snapshot, &call, |view| {
        Ok(view
            .providers()
            .iter()
            .map(|p| p.address().to_owned())
            .collect())
    }) {
        Ok(addresses) => addresses,
        Err(e) if e.kind() == RpcErrorKind::NoProvider => BTreeSet::new(),
        Err(e) => panic!("{e}"),
    }
}

fn set(addresses: &[&str]) -> BTreeSet<String> {
    addresses.iter().map(|a| (*a).to_owned()).collect()
}

/// Every permutation of `items` (Heap's algorithm), for the orders rules can arrive in.
fn permutations<T: Clone>(items: &[T]) -> Vec<Vec<T>> {
    fn heap<T: Clone>(k: usize, items: &mut Vec<T>, out: &mut Vec<Vec<T>>) {
        if k <= 1 {
            out.push(items.clone());
            return;
        }
        for i in 0..k {
            heap(k - 1, items, out);
            let j = if k & 1 == 0 { i } else { 0 };
            items.swap(j, k - 1);
        }
    }
    let mut out = Vec::new();
    heap(items.len(), &mut items.to_vec(), &mut out);
    out
}

#[test]
fn one_application_with_a_tag_rule_one_without_same_answer_in_every_order() {
    // What the config center delivers on the first pass: alpha's rule, and "no rule" for beta's
    // tag rule and both applications' condition rules (the watch reads keys in HashMap order).
    let events: Vec<(RuleKey, Option<&str>)> = vec![
        (RuleKey::tag("alpha"), Some(ALPHA_RULE)),
        (RuleKey::tag("beta"), None),
        (RuleKey::provider_app_condition("alpha"), None),
        (RuleKey::provider_app_condition("beta"), None),
    ];
    let orders = permutations(&events);
    assert_eq!(orders.len(), 24);
    let provider_orders: [Vec<&str>; 3] = [
        ALPHA.iter().chain(&BETA).copied().collect(),
        BETA.iter().chain(&ALPHA).copied().collect(),
        vec![BETA[1], ALPHA[0], BETA[0], ALPHA[1]],
    ];
    for providers in &provider_orders {
        for order in &orders {
            let (chain, balancer) = chain_over(providers);
            for (key, text) in order {
                chain.set_rule(key.clone(), *text).unwrap();
            }
            let context = format!("providers {providers:?}, rules {order:?}");
            assert_eq!(
                chain.rules(),
                [RuleKey::tag("alpha")],
                "alpha's rule stays: {context}"
            );
            // Untagged: neither alpha's dynamically tagged provider nor beta's statically tagged one.
            assert_eq!(
                reached(&balancer, "", false),
                set(&["10.0.0.2:20880", "10.0.1.1:20880"]),
                "{context}"
            );
            // gray: alpha's by its rule, beta's by its static tag.
            assert_eq!(
                reached(&balancer, "gray", false),
                set(&["10.0.0.1:20880", "10.0.1.2:20880"]),
                "{context}"
            );
            // A tag nobody has: the untagged providers of both applications.
            assert_eq!(
                reached(&balancer, "blue", false),
                set(&["10.0.0.2:20880", "10.0.1.1:20880"]),
                "{context}"
            );
            assert!(reached(&balancer, "blue", true).is_empty(), "{context}");
        }
    }
}

#[test]
fn a_rule_tags_only_its_own_applications_providers() {
    // alpha's rule names a beta address and a CIDR block covering beta too: Dubbo 3.3, following
    // alpha, would tag beta's providers with it; here they stay beta's (untagged).
    let rule = "tags:\n  - name: gray\n    addresses: [\"10.0.1.1:20880\", \"10.0.0.0/16\"]\n";
    let (chain, balancer) = chain_over(&[ALPHA[0], ALPHA[1], BETA[0]]);
    chain.set_rule(RuleKey::tag("alpha"), Some(rule)).unwrap();
    assert_eq!(
        reached(&balancer, "gray", false),
        set(&["10.0.0.1:20880", "10.0.0.2:20880"])
    );
    assert_eq!(reached(&balancer, "", false), set(&["10.0.1.1:20880"]));
    // Both applications with rules: each tags its own.
    chain
        .set_rule(
            RuleKey::tag("beta"),
            Some("tags:\n  - name: blue\n    addresses: [\"10.0.1.1:20880\"]\n"),
        )
        .unwrap();
    assert_eq!(reached(&balancer, "blue", false), set(&["10.0.1.1:20880"]));
    assert!(
        reached(&balancer, "", false).is_empty(),
        "every provider is tagged"
    );
    // Deleting beta's rule leaves alpha's.
    chain.set_rule(RuleKey::tag("beta"), None).unwrap();
    assert_eq!(chain.rules(), [RuleKey::tag("alpha")]);
    assert_eq!(reached(&balancer, "", false), set(&["10.0.1.1:20880"]));
}

#[test]
fn a_forced_rule_fails_only_when_no_application_has_the_tag() {
    let forced = "force: true\ntags:\n  - name: gray\n    addresses: [\"10.0.0.9:20880\"]\n";
    let (chain, balancer) = chain_over(&[ALPHA[0], BETA[0], BETA[1]]);
    chain.set_rule(RuleKey::tag("alpha"), Some(forced)).unwrap();
    // beta's static gray provider answers the tag.
    assert_eq!(reached(&balancer, "gray", false), set(&["10.0.1.2:20880"]));
    let (chain, balancer) = chain_over(&[ALPHA[0], BETA[0]]);
    chain.set_rule(RuleKey::tag("alpha"), Some(forced)).unwrap();
    assert!(
        reached(&balancer, "gray", false).is_empty(),
        "alpha's rule names gray, nobody has it, force: true"
    );
}

#[test]
fn provider_application_condition_rules_filter_their_own_providers() {
    let providers: Vec<&str> = ALPHA.iter().chain(&BETA).copied().collect();
    let (chain, balancer) = chain_over(&providers);
    for (app, line) in [
        ("alpha", "=> host != 10.0.0.2"),
        ("beta", "=> host = 10.0.1.2"),
    ] {
        chain
            .set_rule(
                RuleKey::provider_app_condition(app),
                Some(&format!("conditions:\n  - {line}\n")),
            )
            .unwrap();
    }
    // Untagged: the tag router drops beta's gray 10.0.1.2 first; alpha's rule then removes 10.0.0.2
    // only, and beta's, left with no match among beta's providers (10.0.1.1), is ignored for them
    // (`force: false`), as Dubbo ignores a rule that matches nothing.
    assert_eq!(
        reached(&balancer, "", false),
        set(&["10.0.0.1:20880", "10.0.1.1:20880"]),
        "untagged"
    );
    assert_eq!(
        reached(&balancer, "gray", false),
        set(&["10.0.1.2:20880"]),
        "gray reaches beta's static gray provider"
    );
}

#[test]
fn the_consumers_own_application_rule_applies_once_as_the_application_rule() {
    let (chain, balancer) = chain_over(&[
        "dubbo://10.0.0.1:20880/DemoInterface?application=shop",
        "dubbo://10.0.0.2:20880/DemoInterface?application=shop",
    ]);
    let rule = "conditions:\n  - => host = 10.0.0.1\n";
    chain
        .set_rule(RuleKey::provider_app_condition("shop"), Some(rule))
        .unwrap();
    chain
        .set_rule(RuleKey::app_condition("shop"), Some(rule))
        .unwrap();
    let snapshot = balancer.directory().snapshot();
    let why = chain.explain(&snapshot, &Invocation::new("sayHello", vec![], vec![]));
    let condition_steps = why
        .steps
        .iter()
        .filter(|s| s.rule.rule.as_ref() == "shop.condition-router")
        .count();
    assert_eq!(condition_steps, 1, "{why}");
    assert_eq!(reached(&balancer, "", false), set(&["10.0.0.1:20880"]));
}
