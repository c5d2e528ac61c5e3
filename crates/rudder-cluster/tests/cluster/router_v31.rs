//! Dubbo's `ConditionStateRouterTestV31` vectors: v3.1 multi-destination condition rules.

use std::collections::BTreeMap;
use std::sync::Arc;

use rudder_cluster::balancer::Balancer;
use rudder_cluster::directory::Directory;
use rudder_cluster::router::condition::ConditionRule;
use rudder_cluster::router::{RouterChain, RuleKey};
use rudder_common::error::RpcErrorKind;
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;

/// The Java test's 40 providers; each gets its own port so that the directory keeps duplicates apart.
fn providers() -> Vec<String> {
    let params = [
        "",
        "",
        "?env=normal",
        "?env=normal",
        "?env=normal",
        "?region=beijing",
        "?region=beijing",
        "?region=beijing",
        "?region=beijing&env=gray",
        "?region=beijing&env=gray",
        "?region=beijing&env=gray",
        "?region=beijing&env=gray",
        "?region=beijing&env=normal",
        "?region=hangzhou",
        "?region=hangzhou",
        "?region=hangzhou&env=gray",
        "?region=hangzhou&env=gray",
        "?region=hangzhou&env=normal",
        "?region=hangzhou&env=normal",
        "?region=hangzhou&env=normal",
    ];
    let mut out = Vec::new();
    for host in ["127.0.0.1", "dubbo.apache.org"] {
        for (i, p) in params.iter().enumerate() {
            out.push(format!(
                "dubbo://{host}:{}/com.foo.BarService{p}",
                20000 + i
            ));
        }
    }
    out
}

fn setup(rule: &str, seed: u64) -> Balancer {
    let directory = Arc::new(Directory::default());
    directory.replace(providers().iter().map(|u| DubboUrl::parse(u).unwrap()));
    let consumer =
        DubboUrl::parse("consumer://127.0.0.1/com.foo.BarService?env=gray&region=beijing").unwrap();
    let chain = Arc::new(RouterChain::new(consumer));
    chain
        .set_rule(
            RuleKey::service_condition("com.foo.BarService", "", ""),
            Some(rule),
        )
        .unwrap();
    Balancer::builder(directory)
        .routers(chain)
        .seed(seed)
        .build()
}

fn routed(balancer: &Balancer) -> Vec<String> {
    let call = Invocation::new("getComment", vec![], vec![]);
    let snapshot = balancer.directory().snapshot();
    match balancer.with_routed_view(&snapshot, &call, |view| {
        Ok(view
            .providers()
            .iter()
            .map(|p| p.url().to_full_string())
            .collect())
    }) {
        Ok(urls) => urls,
        Err(e) if e.kind() == RpcErrorKind::NoProvider => Vec::new(),
        Err(e) => panic!("{e}"),
    }
}

fn count(predicate: impl Fn(&str) -> bool) -> usize {
    providers().iter().filter(|u| predicate(u)).count()
}

const HEAD: &str = "configVersion: v3.1\nscope: service\nkey: com.foo.BarService\nforce: false\nruntime: true\nenabled: true\nconditions:\n";

#[test]
fn parse_raw_rule() {
    let rule = ConditionRule::parse(concat!(
        "configVersion: v3.1\nscope: service\nforce: false\nruntime: true\nenabled: true\nkey: shop\nconditions:\n",
        "  - from:\n      match:\n    to:\n      - match: region=$region & version=v1\n",
        "      - match: region=$region & version=v2\n        weight: 200\n",
        "      - match: region=$region & version=v3\n        weight: 300\n",
        "  - from:\n      match: region=beijing & version=v1\n    to:\n      - match: env=$env & region=beijing\n",
    ))
    .unwrap();
    assert_eq!(rule.len(), 2);
}

#[test]
fn multiply_condition_route_excludes_providers_without_the_key() {
    let rule = format!("{HEAD}  - from:\n      match: env=gray\n    to:\n      - match: env!=gray\n        weight: 100");
    let expected = count(|u| u.contains("env") && !u.contains("gray"));
    assert_eq!(routed(&setup(&rule, 1)).len(), expected);
    // A duplicated condition changes nothing.
    let twice = format!("{rule}\n  - from:\n      match: env=gray\n    to:\n      - match: env!=gray\n        weight: 100");
    assert_eq!(routed(&setup(&twice, 1)).len(), expected);
}

#[test]
fn consequent_conditions_apply_in_sequence() {
    let rule = format!(
        "{HEAD}  - from:\n      match: env=gray\n    to:\n      - match: env!=gray\n        weight: 100\n  - from:\n      match: region=beijing\n    to:\n      - match: region=beijing\n        weight: 100\n  - from:\n    to:\n      - match: host!=127.0.0.1"
    );
    let expected = count(|u| {
        u.contains("env")
            && !u.contains("gray")
            && u.contains("region=beijing")
            && !u.contains("127.0.0.1")
    });
    assert_eq!(routed(&setup(&rule, 1)).len(), expected);
}

#[test]
fn unmatched_conditions_pass() {
    let rule = format!(
        "{HEAD}  - from:\n      match: env!=gray\n    to:\n      - match: env=gray\n        weight: 100\n  - from:\n      match: region!=beijing\n    to:\n      - match: region=beijing\n        weight: 100\n  - from:\n    to:\n      - match: host!=127.0.0.1"
    );
    assert_eq!(
        routed(&setup(&rule, 1)).len(),
        count(|u| !u.contains("127.0.0.1"))
    );
}

#[test]
fn match_and_route_zero_with_force() {
    let forced = HEAD.replace("force: false", "force: true");
    let rule = format!(
        "{forced}  - from:\n      match: env=gray\n    to:\n      - match: env=ErrTag\n        weight: 100\n  - from:\n      match: region!=beijing\n    to:\n      - match: region=beijing\n        weight: 100\n  - from:\n    to:\n      - match: host!=127.0.0.1"
    );
    assert!(routed(&setup(&rule, 1)).is_empty());
}

#[test]
fn no_to_blocks_matching_calls() {
    let rule = format!("{HEAD}  - from:\n      match: env=gray\n");
    assert!(routed(&setup(&rule, 1)).is_empty());
}

/// `testMultiplyDestination`: four subset sizes appear over 1,000 draws, in proportion to the weights.
#[test]
fn multiple_destinations_are_drawn_by_weight() {
    let rule = format!(
        "{HEAD}  - from:\n      match: env=gray\n    to:\n      - match: env!=gray\n        weight: 100\n      - match: env=gray\n        weight: 900\n  - from:\n      match: region=beijing\n    to:\n      - match: region!=beijing\n        weight: 100\n      - match: region=beijing\n        weight: 200"
    );
    let balancer = setup(&rule, 42);
    let mut sizes: BTreeMap<usize, u32> = BTreeMap::new();
    for _ in 0..1000 {
        *sizes.entry(routed(&balancer).len()).or_default() += 1;
    }
    assert_eq!(
        sizes.keys().copied().collect::<Vec<_>>(),
        [2, 4, 6, 8],
        "{sizes:?}"
    );
    assert_eq!(sizes.values().sum::<u32>(), 1000);
    // env=gray (weight 900) then region=beijing (200 of 300): 8 gray in beijing... see the sizes:
    // gray∧beijing = 8, gray∧¬beijing = 4, normal∧beijing = 2, normal∧¬beijing = 6.
    let gray = sizes[&8] + sizes[&4];
    assert!(
        (850..=950).contains(&gray),
        "gray drawn {gray} of 1000 at weight 0.9"
    );
    let beijing = sizes[&8] + sizes[&2];
    assert!(
        (600..=730).contains(&beijing),
        "beijing drawn {beijing} of 1000 at weight 2/3"
    );
}
