//! The config center: where Dubbo governance rules live, and how rudder follows them.
//!
//! dubbo-admin (or a person, or `publishConfig`) writes each rule as one persistent ZooKeeper node
//! `/<namespace>/config/dubbo/<key>` holding the rule text in UTF-8 (spec-2 §1.1). By default the
//! registry doubles as config center, as in Dubbo: the namespace is the registry's `group` (`dubbo`), so
//! with `zookeeper://127.0.0.1:2181` rules are under `/dubbo/config/dubbo/`, with `?group=g` under
//! `/g/config/dubbo/`, and a chroot comes first. A separate config center is another
//! [`ZookeeperRegistry`](crate::ZookeeperRegistry) handed to
//! [`ZookeeperRegistry::with_config_center`](crate::ZookeeperRegistry::with_config_center); its `group`
//! is the namespace.
//!
//! Two kinds of rule are read here:
//!
//! * **configurators**, which every subscription follows and applies itself: `<application>.configurators`
//!   and `<interface>:<version>:<group>.configurators` (see the `rule_parser` module and
//!   [`RuleSource`]);
//! * **router rules** (`<application>.tag-router`, `<interface>:<version>:<group>.condition-router`,
//!   `<application>.condition-router`), whose raw texts
//!   [`ZookeeperRegistry::watch_rules`](crate::ZookeeperRegistry::watch_rules) hands to a
//!   [`RuleSink`](rudder_common::discovery::RuleSink) without reading them.

mod dynamic;
mod inbox;
mod watcher;

pub use dynamic::{RuleOutcome, RuleSource};
pub use watcher::RuleWatch;

pub(crate) use dynamic::DynamicRules;
pub(crate) use inbox::RuleInbox;
pub(crate) use watcher::RuleWatcher;

/// The group every governance rule is written under (Dubbo's `GovernanceRuleRepository.DEFAULT_GROUP`).
pub const RULE_GROUP: &str = "dubbo";

/// The node holding the rules of `group` in a config center whose root (chroot and namespace) is
/// `root`: `<root>/config/<group>` (`<root>/config/dubbo` for configurators and router rules).
pub(crate) fn group_path(root: &str, group: &str) -> String {
    format!("{root}/config/{group}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_live_under_the_namespace_config_and_group() {
        assert_eq!(group_path("/dubbo", RULE_GROUP), "/dubbo/config/dubbo");
        assert_eq!(group_path("/prod/g", RULE_GROUP), "/prod/g/config/dubbo");
        assert_eq!(
            group_path("/dubbo", "DUBBO_SERVICEDISCOVERY_MIGRATION"),
            "/dubbo/config/DUBBO_SERVICEDISCOVERY_MIGRATION"
        );
    }
}
