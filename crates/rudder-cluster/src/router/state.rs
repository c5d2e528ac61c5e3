//! What picks and explanations read: the consumer and the routers built from the rules in force,
//! immutable, swapped whole by the chain on every rule or consumer change.

use std::sync::Arc;

use super::condition::ConditionRule;
use super::rule_key::{RuleKey, RuleSlot};
use super::scoped::ProviderAppScope;
use super::tag::{TagRouter, TagRule};
use super::{Consumer, Router};

/// A parsed rule.
#[derive(Debug, Clone)]
pub(crate) enum Parsed {
    Tag(Arc<TagRule>),
    Condition(Arc<ConditionRule>),
}

/// One version of the chain: the consumer rules read, and the routers in Dubbo's order.
#[derive(Debug)]
pub(crate) struct ChainState {
    pub(crate) version: u64,
    pub(crate) consumer: Consumer,
    pub(crate) routers: Vec<Arc<dyn Router>>,
    /// No rule and no consumer `dubbo.tag`: only the tag router's static tags can route, so a call
    /// without a tag over providers without one keeps every provider.
    pub(crate) ruleless_untagged: bool,
}

impl ChainState {
    /// The routers of `rules` (sorted by slot, then key): one tag router holding every provider
    /// application's tag rule, then one router per condition line. A provider application's rules
    /// apply to that application's providers only; the consumer's own application's
    /// `<app>.condition-router` applies once, as the application rule (Dubbo's
    /// `ProviderAppStateRouter` skips the consumer's application).
    pub(crate) fn build(
        version: u64,
        consumer: Consumer,
        rules: &[(RuleKey, Parsed)],
    ) -> ChainState {
        let ruleless_untagged = rules.is_empty() && consumer.request_tag_of_consumer().is_empty();
        let tag_rules: Vec<(&RuleKey, Arc<TagRule>)> = rules
            .iter()
            .filter_map(|(key, parsed)| match parsed {
                Parsed::Tag(rule) => Some((key, Arc::clone(rule))),
                Parsed::Condition(_) => None,
            })
            .collect();
        let mut routers: Vec<Arc<dyn Router>> = vec![Arc::new(TagRouter::by_application(
            tag_rules
                .into_iter()
                .map(|(key, rule)| {
                    (
                        key.provider_application().to_owned(),
                        key.name.clone(),
                        rule,
                    )
                })
                .collect(),
        ))];
        let own_application = consumer.url().parameter("application").unwrap_or("");
        for (key, parsed) in rules {
            let Parsed::Condition(rule) = parsed else {
                continue;
            };
            let lines = rule.routers(key.slot, &key.name);
            if key.slot != RuleSlot::ProviderAppCondition {
                routers.extend(lines);
                continue;
            }
            let application = key.provider_application();
            if application == own_application {
                continue;
            }
            let application: Arc<str> = application.into();
            routers.extend(lines.into_iter().map(|line| {
                Arc::new(ProviderAppScope::new(Arc::clone(&application), line)) as Arc<dyn Router>
            }));
        }
        ChainState {
            version,
            consumer,
            routers,
            ruleless_untagged,
        }
    }
}
