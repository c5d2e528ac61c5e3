//! Dubbo's `ConditionStateRouterTest` and `ProviderAppConditionStateRouterTest` vectors, through a real
//! directory, chain and balancer (the cached pick path) and through `explain` (the uncached one).

use std::sync::Arc;

use rudder_cluster::balancer::Balancer;
use rudder_cluster::directory::Directory;
use rudder_cluster::router::{RouterChain, RuleKey};
use rudder_common::error::RpcErrorKind;
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_common::Value;

/// The three providers of the Java test (the two local ones differ by port: a directory keeps one
/// provider per URL).
const PROVIDERS: [&str; 3] = [
    "dubbo://10.20.3.3:20880/com.foo.BarService?serialization=fastjson",
    "dubbo://127.0.0.1:20880/com.foo.BarService",
    "dubbo://127.0.0.1:20881/com.foo.BarService",
];

struct Fixture {
    chain: Arc<RouterChain>,
    balancer: Balancer,
}

fn fixture(consumer: &str, providers: &[&str]) -> Fixture {
    let directory = Arc::new(Directory::default());
    directory.replace(providers.iter().map(|u| DubboUrl::parse(u).unwrap()));
    let chain = Arc::new(RouterChain::new(DubboUrl::parse(consumer).unwrap()));
    let balancer = Balancer::builder(directory)
        .routers(Arc::clone(&chain))
        .build();
    Fixture { chain, balancer }
}

impl Fixture {
    fn rule(&self, force: bool, line: &str) {
        let yaml = format!("force: {force}\nconditions:\n  - {line:?}\n");
        self.chain
            .set_rule(
                RuleKey::service_condition("com.foo.BarService", "", ""),
                Some(&yaml),
            )
            .unwrap();
    }

    /// The addresses the call may go to, read on the pick path and checked against `explain`.
    fn routed(&self, call: &Invocation) -> Vec<String> {
        let snapshot = self.balancer.directory().snapshot();
        let picked = self.balancer.with_routed_view(&snapshot, call, |view| {
            Ok(view
                .providers()
                .iter()
                .map(|p| p.address().to_owned())
                .collect::<Vec<_>>())
        });
        let picked = match picked {
            Ok(addresses) => addresses,
            Err(e) if e.kind() == RpcErrorKind::NoProvider => Vec::new(),
            Err(e) => panic!("{e}"),
        };
        let explained: Vec<String> = self
            .chain
            .explain(&snapshot, call)
            .providers
            .iter()
            .filter(|f| f.kept)
            .map(|f| f.provider.address().to_owned())
            .collect();
        assert_eq!(picked, explained, "the cached path and explain agree");
        picked
    }

    fn count(&self, force: bool, line: &str, call: &Invocation) -> usize {
        self.rule(force, line);
        self.routed(call).len()
    }
}

fn call(method: &str) -> Invocation {
    Invocation::new(method, vec![], vec![])
}

/// `testRoute_matchWhen`: a when part matches iff `WHEN => host = 1.2.3.4` (force) leaves nothing.
#[test]
fn when_parts_match_as_in_dubbo() {
    let f = fixture("consumer://1.1.1.1/com.foo.BarService", &PROVIDERS);
    let cases = [
        (" => host = 1.2.3.4", true),
        ("host = 2.2.2.2,1.1.1.1,3.3.3.3 => host = 1.2.3.4", true),
        (
            "host = 2.2.2.2,1.1.1.1,3.3.3.3 & host !=1.1.1.1 => host = 1.2.3.4",
            false,
        ),
        (
            "host !=4.4.4.4 & host = 2.2.2.2,1.1.1.1,3.3.3.3 => host = 1.2.3.4",
            true,
        ),
        (
            "host !=4.4.4.* & host = 2.2.2.2,1.1.1.1,3.3.3.3 => host = 1.2.3.4",
            true,
        ),
        (
            "host = 2.2.2.2,1.1.1.*,3.3.3.3 & host != 1.1.1.1 => host = 1.2.3.4",
            false,
        ),
        (
            "host = 2.2.2.2,1.1.1.*,3.3.3.3 & host != 1.1.1.2 => host = 1.2.3.4",
            true,
        ),
    ];
    for (line, matches) in cases {
        let kept = f.count(true, line, &call("getFoo"));
        assert_eq!(kept == 0, matches, "{line}");
    }
}

/// `testRoute_matchFilter`: then parts, force=true, consumer on 127.0.0.1.
#[test]
fn then_parts_filter_as_in_dubbo() {
    let f = fixture("consumer://127.0.0.1/com.foo.BarService", &PROVIDERS);
    let cases = [
        ("host = 10.20.3.3", 1),
        ("host = 10.20.3.* & host != 10.20.3.3", 0),
        ("host = 10.20.3.3 & host != 10.20.3.3", 0),
        ("host = 10.20.3.2,10.20.3.3,10.20.3.4", 1),
        ("host != 10.20.3.3", 2),
        ("serialization = fastjson", 1),
    ];
    for (then, expected) in cases {
        let line = format!("host = 127.0.0.1 => {then}");
        assert_eq!(f.count(true, &line, &call("getFoo")), expected, "{line}");
    }
}

#[test]
fn methods_key_reads_the_call() {
    let f = fixture(
        "consumer://1.1.1.1/com.foo.BarService?methods=setFoo,getFoo,findFoo",
        &PROVIDERS,
    );
    assert_eq!(
        f.count(true, "methods=getFoo => host = 1.2.3.4", &call("getFoo")),
        0
    );
    assert_eq!(
        f.count(true, "methods=getFoo => host = 1.2.3.4", &call("setFoo")),
        3
    );
    assert_eq!(
        f.count(
            true,
            "methods=getFoo & host!=1.1.1.1 => host = 1.2.3.4",
            &call("getFoo")
        ),
        3
    );
}

/// `testRoute_False`, `testRoute_Empty`, `testRoute_Placeholder`, `testRoute_NoForce`, `testRoute_Force`.
#[test]
fn blacklists_placeholders_and_force() {
    let f = fixture("consumer://127.0.0.1/com.foo.BarService", &PROVIDERS);
    let local = ["127.0.0.1:20880", "127.0.0.1:20881"];
    assert_eq!(f.count(false, "host = 127.0.0.1 => false", &call("m")), 0);
    assert_eq!(f.count(false, "host = 127.0.0.1 => ", &call("m")), 0);
    for line in [
        "host = 127.0.0.1 => host = 127.0.0.1",
        " => host = 127.0.0.1",
        "true => host = 127.0.0.1",
        "host = 127.0.0.1 => host = $host",
    ] {
        f.rule(false, line);
        assert_eq!(f.routed(&call("m")), local, "{line}");
    }
    assert_eq!(
        f.count(false, " => host = 1.2.3.4", &call("m")),
        3,
        "force=false ignores the line"
    );
    assert_eq!(
        f.count(true, " => host = 1.2.3.4", &call("m")),
        0,
        "force=true keeps nothing"
    );
}

#[test]
fn arguments_as_in_dubbo() {
    let f = fixture("consumer://127.0.0.1/com.foo.BarService", &PROVIDERS);
    let with = |args: Vec<Value>| Invocation::new("getFoo", vec![], args);
    assert_eq!(
        f.count(
            true,
            "arguments[0] = a => host = 1.2.3.4",
            &with(vec![Value::Null])
        ),
        3
    );
    assert_eq!(
        f.count(
            true,
            "arguments[0] = a => host = 1.2.3.4",
            &with(vec!["a".into()])
        ),
        0
    );
    assert_eq!(
        f.count(
            true,
            "arguments = b => host = 1.2.3.4",
            &with(vec!["a".into()])
        ),
        3
    );
    assert_eq!(
        f.count(
            true,
            "arguments[10].inner = a => host = 1.2.3.4",
            &with(vec!["a".into()])
        ),
        3
    );
    assert_eq!(
        f.count(
            true,
            "arguments[0].inner = 1 => host = 1.2.3.4",
            &with(vec![Value::Int(1)])
        ),
        0
    );
    // A missing argument reads Dubbo's sentinel: `!=` matches it (quirk kept).
    assert_eq!(
        f.count(true, "arguments[9] != x => host = 1.2.3.4", &with(vec![])),
        0
    );
}

#[test]
fn attachments_and_ranges_as_in_dubbo() {
    let f = fixture(
        "consumer://127.0.0.1/com.foo.BarService",
        &[
            "dubbo://10.20.3.3:20880/com.foo.BarService?region=hangzhou",
            PROVIDERS[1],
            PROVIDERS[2],
        ],
    );
    let mut foo = call("getFoo");
    assert_eq!(
        f.count(true, "attachments[foo] = a => host = 1.2.3.4", &foo),
        3
    );
    foo.set_attachment("foo", "a");
    assert_eq!(
        f.count(true, "attachments[foo] = a => host = 1.2.3.4", &foo),
        0
    );
    assert_eq!(
        f.count(true, "attachments[foo] = a => region = hangzhou", &foo),
        1
    );
    let user = |id: Option<&str>| {
        let mut c = call("getFoo");
        if let Some(id) = id {
            c.set_attachment("user_id", id);
        }
        c
    };
    let range = "attachments[user_id] = 1~100 => region=hangzhou";
    assert_eq!(f.count(true, range, &user(None)), 3);
    assert_eq!(f.count(true, range, &user(Some("80"))), 1);
    assert_eq!(f.count(true, range, &user(Some("101"))), 3);
    let upto = "attachments[user_id] = ~100 => region=hangzhou";
    assert_eq!(f.count(true, upto, &user(Some("1"))), 1);
    assert_eq!(f.count(true, upto, &user(Some("101"))), 3);
    assert_eq!(f.count(true, upto, &user(None)), 3);
}

#[test]
fn missing_keys_never_match() {
    let f = fixture(
        "consumer://127.0.0.1/com.foo.BarService?when_key=a",
        &PROVIDERS,
    );
    assert_eq!(
        f.count(
            true,
            "when_key=a => not_exist_then_key = any_value",
            &call("m")
        ),
        0
    );
    assert_eq!(
        f.count(true, "not_exist_when_key=a => then_key = a", &call("m")),
        3
    );
    // 3.3 semantics: an absent key fails `!=` too.
    assert_eq!(f.count(true, " => region != beijing", &call("m")), 0);
}

#[test]
fn multiple_conditions_in_one_when() {
    let line = "application=consumer_app&arguments[0]=a => host = 127.0.0.1";
    let a = Invocation::new("getFoo", vec![], vec!["a".into()]);
    let f = fixture(
        "consumer://127.0.0.1/com.foo.BarService?application=consumer_app",
        &PROVIDERS,
    );
    assert_eq!(f.count(true, line, &a), 2);
    let f = fixture(
        "consumer://127.0.0.1/com.foo.BarService?application=another_consumer_app",
        &PROVIDERS,
    );
    assert_eq!(f.count(true, line, &a), 3);
}

/// `ProviderAppConditionStateRouterTest`.
#[test]
fn provider_application_rule() {
    let f = fixture("consumer://127.0.0.1/com.foo.BarService?application=demo-consumer", &[
        "dubbo://127.0.0.1:20880/com.foo.BarService?remote.application=demo-provider&region=hangzhou",
        "dubbo://127.0.0.1:20881/com.foo.BarService?remote.application=demo-provider",
        "dubbo://127.0.0.1:20882/com.foo.BarService?remote.application=demo-provider",
    ]);
    let yaml = "scope: application\nforce: true\nruntime: false\nenabled: true\npriority: 1\nkey: demo-provider\nconditions:\n  - method=sayHello => region=hangzhou\n";
    f.chain
        .set_rule(RuleKey::provider_app_condition("demo-provider"), Some(yaml))
        .unwrap();
    assert_eq!(f.routed(&call("sayHello")).len(), 1);
    assert_eq!(f.routed(&call("sayHi")).len(), 3);
}

#[test]
fn lines_apply_in_sequence_and_disabled_rules_do_nothing() {
    let f = fixture("consumer://127.0.0.1/com.foo.BarService", &PROVIDERS);
    let yaml = "conditions:\n  - => host = 127.0.0.1\n  - => port = 20881\n";
    f.chain
        .set_rule(RuleKey::app_condition("c"), Some(yaml))
        .unwrap();
    assert_eq!(f.routed(&call("m")), ["127.0.0.1:20881"]);
    let disabled = "enabled: false\nconditions:\n  - => host = 127.0.0.1\n";
    f.chain
        .set_rule(RuleKey::app_condition("c"), Some(disabled))
        .unwrap();
    assert_eq!(f.routed(&call("m")).len(), 3);
}

#[test]
fn a_bad_rule_keeps_the_last_good_one_and_a_deleted_rule_routes_nothing() {
    let f = fixture("consumer://127.0.0.1/com.foo.BarService", &PROVIDERS);
    let key = RuleKey::app_condition("c");
    f.chain
        .set_rule(key.clone(), Some("conditions:\n  - => host = 10.20.3.3\n"))
        .unwrap();
    let error = f
        .chain
        .set_rule(key.clone(), Some("conditions:\n  - a == b\n"))
        .unwrap_err();
    assert!(error.message.contains("=="), "{error}");
    assert_eq!(f.chain.errors().len(), 1);
    assert_eq!(f.routed(&call("m")), ["10.20.3.3:20880"]);
    assert!(f
        .chain
        .set_rule(key.clone(), Some("configVersion: v3.2\nconditions: []\n"))
        .is_err());
    assert!(f.chain.set_rule(key.clone(), Some(": [")).is_err());
    f.chain.set_rule(key, None).unwrap();
    assert!(f.chain.errors().is_empty());
    assert_eq!(f.routed(&call("m")).len(), 3);
}

#[test]
fn an_empty_route_fails_the_pick_with_no_provider() {
    let f = fixture("consumer://127.0.0.1/com.foo.BarService", &PROVIDERS);
    f.rule(true, " => host = 1.2.3.4");
    let error = f.balancer.select(&call("m"), &[]).unwrap_err();
    assert_eq!(error.kind(), RpcErrorKind::NoProvider);
    assert!(error.message().contains("after routing"), "{error}");
}
