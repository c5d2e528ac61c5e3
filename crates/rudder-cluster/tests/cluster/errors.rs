//! Every public error of the cluster crate, printed the ways users print errors (a walk over
//! `source()`, anyhow's `{:#}` and `{:?}`), says its message once: each is a leaf, with no cause.

use std::error::Error;

use rudder_cluster::cluster::UnsupportedClusterMode;
use rudder_cluster::loadbalance::UnknownLoadBalance;
use rudder_cluster::router::{RuleError, RuleKey};
use rudder_cluster::zone_aware::BadRegistryParameter;

/// A leaf error (no cause) that says `part` once however it is printed.
fn assert_said_once(error: impl Error + Send + Sync + 'static, part: &str) {
    assert!(error.source().is_none(), "{error}");
    rudder_test_support::assert_each_once(error, &[part]);
}

#[test]
fn each_cluster_error_says_its_message_once() {
    let unknown = UnknownLoadBalance {
        name: "nosuch".into(),
        registered: vec!["random".into(), "roundrobin".into()],
    };
    assert_said_once(
        unknown,
        "unknown load balancer \"nosuch\"; registered: random, roundrobin",
    );
    assert_said_once(
        UnsupportedClusterMode("zone-aware".into()),
        "unsupported cluster mode \"zone-aware\"",
    );
    let rule = RuleError {
        key: RuleKey::tag("demo-provider"),
        message: "tags is not a list".into(),
    };
    assert_said_once(rule, "tags is not a list");
    let parameter = BadRegistryParameter {
        registry: "zk1".into(),
        key: "registry.weight".into(),
        value: "heavy".into(),
        expected: "an integer",
    };
    assert_said_once(
        parameter,
        "parameter registry.weight=\"heavy\" is not an integer",
    );
}
