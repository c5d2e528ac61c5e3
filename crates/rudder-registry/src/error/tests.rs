//! Every public error of this crate, printed the ways users print errors, says each of its parts
//! exactly once: a cause is either in an error's `Display` or its `source()`, never both.

use std::error::Error;

use rudder_test_support::assert_each_once;
use std::time::Duration;

use crate::rule_parser::RuleParseError;
use crate::RegistryError;

#[test]
fn registry_errors_print_each_part_once() {
    let loss = zookeeper_client::Error::ConnectionLoss.to_string();
    let unreachable = RegistryError::Unreachable {
        hosts: "10.0.0.1:2181,10.0.0.2:2181".into(),
        waited: Duration::from_secs(3),
        source: Some(zookeeper_client::Error::ConnectionLoss),
    };
    assert!(unreachable.is_retryable());
    assert_each_once(
        unreachable,
        &[
            "ZooKeeper at 10.0.0.1:2181,10.0.0.2:2181 unreachable after 3s",
            &loss,
        ],
    );
    let silent = RegistryError::Unreachable {
        hosts: "10.0.0.1:2181".into(),
        waited: Duration::from_secs(3),
        source: None,
    };
    assert!(silent.source().is_none());
    assert_each_once(silent, &["unreachable after 3s", "no server answered"]);

    let no_node = zookeeper_client::Error::NoNode.to_string();
    let failed = RegistryError::ZooKeeper {
        operation: "list",
        path: "/dubbo/a.B/providers".into(),
        source: zookeeper_client::Error::NoNode,
    };
    // The status fields that keep an error as text keep its causes too.
    assert_eq!(
        failed.chain_text(),
        format!("ZooKeeper list /dubbo/a.B/providers failed: {no_node}")
    );
    assert_each_once(
        failed,
        &["ZooKeeper list /dubbo/a.B/providers failed", &no_node],
    );

    for (error, part) in [
        (
            RegistryError::BadRegistryUrl {
                reason: "unknown scheme nacos".into(),
            },
            "bad registry URL: unknown scheme nacos",
        ),
        (
            RegistryError::BadConsumer {
                reason: "application has a space".into(),
            },
            "application has a space",
        ),
        (
            RegistryError::AuthFailed {
                hosts: "10.0.0.1:2181".into(),
            },
            "10.0.0.1:2181 rejected the credentials",
        ),
        (RegistryError::Closed, "the registry is closed"),
    ] {
        assert!(error.source().is_none(), "{error}");
        assert_each_once(error, &[part]);
    }
}

#[test]
fn rule_parse_errors_print_their_message_once() {
    for (error, part) in [
        (
            RuleParseError::Yaml("bad indent".into()),
            "not YAML: bad indent",
        ),
        (RuleParseError::Shape("no configs".into()), "no configs"),
        (RuleParseError::NoService, "service field"),
        (RuleParseError::NoParameters, "at least one parameter"),
        (
            RuleParseError::BadUrl {
                index: 2,
                reason: "empty URL".into(),
            },
            "rule URL 2 unreadable: empty URL",
        ),
    ] {
        assert!(error.source().is_none(), "{error}");
        assert_each_once(error, &[part]);
    }
}
