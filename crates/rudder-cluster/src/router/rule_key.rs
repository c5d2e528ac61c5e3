//! Which rule is which: a rule's slot in the chain and its config-center key, and the error for a
//! rule that could not be used. Below the chain and the routers, which all name rules by them.

use std::fmt;

/// Where a rule sits in the chain, in Dubbo 3.3's order (`@Activate(order)`): tag (100), service
/// conditions (140), provider-application conditions (145), consumer-application conditions (150).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuleSlot {
    /// `<provider app>.tag-router`.
    Tag,
    /// `<interface>:<version>:<group>.condition-router`.
    ServiceCondition,
    /// `<provider app>.condition-router`.
    ProviderAppCondition,
    /// `<consumer app>.condition-router`.
    AppCondition,
}

impl fmt::Display for RuleSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RuleSlot::Tag => "tag",
            RuleSlot::ServiceCondition => "service-condition",
            RuleSlot::ProviderAppCondition => "provider-app-condition",
            RuleSlot::AppCondition => "app-condition",
        })
    }
}

/// A rule's slot and its key in the config center (the node name under `/dubbo/config/dubbo/`).
///
/// ```
/// use rudder_cluster::router::{RuleKey, RuleSlot};
/// let key = RuleKey::service_condition("com.acme.Greeter", "1.0", "");
/// assert_eq!(key.name, "com.acme.Greeter:1.0:.condition-router");
/// assert_eq!(RuleKey::tag("demo-provider").slot, RuleSlot::Tag);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RuleKey {
    /// Where the rule applies in the chain.
    pub slot: RuleSlot,
    /// The config-center key, e.g. `demo-provider.tag-router`.
    pub name: String,
}

impl RuleKey {
    /// `<provider_app>.tag-router`.
    pub fn tag(provider_app: &str) -> RuleKey {
        RuleKey {
            slot: RuleSlot::Tag,
            name: format!("{provider_app}.tag-router"),
        }
    }

    /// `<interface>:<version>:<group>.condition-router` (empty version and group stay empty).
    pub fn service_condition(interface: &str, version: &str, group: &str) -> RuleKey {
        RuleKey {
            slot: RuleSlot::ServiceCondition,
            name: format!("{interface}:{version}:{group}.condition-router"),
        }
    }

    /// `<provider_app>.condition-router`, read by the provider-application router.
    pub fn provider_app_condition(provider_app: &str) -> RuleKey {
        RuleKey {
            slot: RuleSlot::ProviderAppCondition,
            name: format!("{provider_app}.condition-router"),
        }
    }

    /// `<consumer_app>.condition-router`, read by the application router.
    pub fn app_condition(consumer_app: &str) -> RuleKey {
        RuleKey {
            slot: RuleSlot::AppCondition,
            name: format!("{consumer_app}.condition-router"),
        }
    }

    /// For a tag or provider-application rule, the provider application whose providers it governs:
    /// the name without its `.tag-router` / `.condition-router` suffix (the whole name when it has
    /// none). Empty for the other slots.
    ///
    /// ```
    /// use rudder_cluster::router::RuleKey;
    /// assert_eq!(RuleKey::tag("demo-provider").provider_application(), "demo-provider");
    /// assert_eq!(RuleKey::app_condition("shop").provider_application(), "");
    /// ```
    pub fn provider_application(&self) -> &str {
        let suffix = match self.slot {
            RuleSlot::Tag => ".tag-router",
            RuleSlot::ProviderAppCondition => ".condition-router",
            RuleSlot::ServiceCondition | RuleSlot::AppCondition => return "",
        };
        self.name.strip_suffix(suffix).unwrap_or(&self.name)
    }
}

/// A rule that could not be used; the chain keeps applying the last good rule of that key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rule {} ({}) not applied, the previous one stays: {message}", key.name, key.slot)]
pub struct RuleError {
    /// The rule.
    pub key: RuleKey,
    /// What is wrong with it.
    pub message: String,
}
