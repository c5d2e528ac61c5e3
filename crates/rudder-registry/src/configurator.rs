//! Configurators: the `override://` (and `absent://`) rules under `/dubbo/<interface>/configurators` that
//! change provider parameters (weight, loadbalance, disabled, ...) without touching the providers.
//!
//! This follows Dubbo 3.3's `Configurator.toConfigurators` and `AbstractConfigurator.configure`:
//!
//! * an `empty://` rule clears every rule; a rule with no parameter but `anyhost` is skipped;
//! * rules are sorted by host (so `0.0.0.0` rules come before address-specific ones), then by `priority`,
//!   and applied in that order, so the later one wins;
//! * a rule with `enabled=false` is switched off (it does not disable providers; `disabled=true` does);
//! * legacy rules (no `configVersion`) with a port apply to the provider at that `host:port` (or any host
//!   with `0.0.0.0`); without a port they apply when the host is this consumer's address or `0.0.0.0`;
//! * rules with `configVersion` (v2.7+, converted from YAML by [`crate::rule_parser`]) apply only with
//!   `side=consumer`; their conditions (`application`, `side`, `~key`, and the v3.0 `match`) are tested
//!   against the URL Dubbo 3.3 shows them on the consumer: the provider's address and path with only
//!   `application` (this consumer's), `side=consumer`, the provider's `group` and `version`, and what
//!   earlier rules set (so a v3.0 `param` condition on a provider parameter never matches there);
//! * `providerAddresses`, `application` (against this consumer's application) and the service key
//!   (`[group/]interface[:version]`, or `*`) must match; legacy rules also compare their `application`,
//!   `side` and `~key` conditions with the provider URL, as seen from the consumer (side `consumer`,
//!   `application` the provider's);
//! * the keys that only select (`category, check, dynamic, enabled, group, version, application, side,
//!   configVersion, compatible_config, interfaces`, `~key`) are never copied onto the provider.
//!
//! Example (a unit test, the module being private): `module_example` in its tests.

use std::sync::Arc;

use rudder_common::url::DubboUrl;

use crate::matching::java_boolean;
use crate::rule_parser::{ConditionMatch, MatchTarget, OverrideRule};

const ANYHOST: &str = "0.0.0.0";

/// Keys a rule selects with and never copies (`AbstractConfigurator.genConditionKeys`).
const CONDITION_KEYS: &[&str] = &[
    "category",
    "check",
    "dynamic",
    "enabled",
    "group",
    "version",
    "application",
    "side",
    "configVersion",
    "compatible_config",
    "interfaces",
];

/// What rules need to know about this consumer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerSide {
    /// The address the consumer registered with (Dubbo's `NetUtils.getLocalHost()`).
    pub host: String,
    /// The consumer's application name.
    pub application: String,
}

/// How a rule changes a provider URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `override://`: the rule's value replaces the provider's.
    Override,
    /// `absent://`: the rule's value is used only where the provider has none.
    Absent,
}

#[derive(Debug, Clone, PartialEq)]
struct Rule {
    url: DubboUrl,
    mode: Mode,
    priority: i32,
    /// The parameters copied onto a provider, condition keys removed.
    applied: Vec<(String, String)>,
    /// The v3.0 `match`.
    condition: Option<Arc<ConditionMatch>>,
}

/// The ordered rule set of one service.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Configurators {
    rules: Vec<Rule>,
}

impl Configurators {
    /// Builds the rule set from the configurator URLs, in registry order (ties in the sort keep it).
    ///
    /// URLs whose protocol is neither `override` nor `absent` are skipped with a warning.
    pub fn from_urls(urls: impl IntoIterator<Item = DubboUrl>) -> Configurators {
        Configurators::from_rules(urls.into_iter().map(OverrideRule::new))
    }

    /// Builds the rule set from parsed rules (URL and v3.0 `match`), as [`Configurators::from_urls`].
    pub fn from_rules(rules_in: impl IntoIterator<Item = OverrideRule>) -> Configurators {
        let mut rules = Vec::new();
        for OverrideRule { url, condition } in rules_in {
            let mode = match url.protocol() {
                "empty" => return Configurators::default(),
                "override" => Mode::Override,
                "absent" => Mode::Absent,
                other => {
                    tracing::warn!(protocol = other, url = %url, "skipping configurator with an unknown protocol");
                    continue;
                }
            };
            if url.parameters().all(|(k, _)| k == "anyhost") {
                continue;
            }
            let priority = match url.parameter_number::<i32>("priority") {
                Ok(p) => p.unwrap_or(0),
                Err(error) => {
                    tracing::warn!(url = %url, %error, "configurator priority unreadable, using 0");
                    0
                }
            };
            let applied = url
                .parameters()
                .filter(|(k, _)| !CONDITION_KEYS.contains(k) && !k.starts_with('~'))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
            rules.push(Rule {
                url,
                mode,
                priority,
                applied,
                condition,
            });
        }
        // Stable, as Java's Collections.sort: equal (host, priority) keep registry order.
        rules.sort_by(|a, b| {
            a.url
                .host()
                .cmp(b.url.host())
                .then(a.priority.cmp(&b.priority))
        });
        Configurators { rules }
    }

    /// Number of rules in effect.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether there is no rule.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Applies every rule, in order, to a provider URL (tests, fuzzing and tools; the registry applies
    /// several sets at once with [`Configurators::apply_all`]).
    #[cfg(test)]
    pub fn apply(&self, provider: DubboUrl, consumer: &ConsumerSide) -> DubboUrl {
        Configurators::apply_all([self], provider, consumer)
    }

    /// Applies several rule sets in turn (Dubbo: legacy, then application, then service rules), so a
    /// later set's rules win, and each rule's conditions see what the earlier ones set.
    pub fn apply_all<'a>(
        sources: impl IntoIterator<Item = &'a Configurators>,
        provider: DubboUrl,
        consumer: &ConsumerSide,
    ) -> DubboUrl {
        let mut written = Vec::new();
        sources
            .into_iter()
            .flat_map(|set| set.rules.iter())
            .fold(provider, |url, rule| {
                rule.configure(url, consumer, &mut written)
            })
    }
}

/// Dubbo 3.3's override URL for `url` on the consumer: the provider's address and path, this consumer's
/// `application`, `side=consumer`, the provider's `group` and `version`, and the keys earlier rules wrote.
fn override_view(url: &DubboUrl, consumer: &ConsumerSide, written: &[String]) -> DubboUrl {
    let mut view = DubboUrl::new(url.protocol(), url.host(), url.port(), url.path())
        .with_parameter("application", &consumer.application)
        .with_parameter("side", "consumer");
    for key in ["group", "version"]
        .iter()
        .copied()
        .chain(written.iter().map(String::as_str))
    {
        if let Some(value) = url.parameter(key) {
            view = view.with_parameter(key, value);
        }
    }
    view
}

impl Rule {
    fn configure(
        &self,
        url: DubboUrl,
        consumer: &ConsumerSide,
        written: &mut Vec<String>,
    ) -> DubboUrl {
        let rule = &self.url;
        if !java_boolean(rule.parameter("enabled"), true) || rule.host().is_empty() {
            return url;
        }
        let versioned = rule
            .parameter("configVersion")
            .is_some_and(|v| !v.is_empty());
        // A provider URL seen from the consumer has side=consumer (Dubbo's ServiceAddressURL).
        let host = if versioned {
            let rule_side = rule
                .parameter("side")
                .filter(|s| !s.is_empty())
                .unwrap_or("provider");
            if rule_side != "consumer" {
                return url;
            }
            consumer.host.clone()
        } else if rule.port() != 0 {
            if url.port() != rule.port() {
                return url;
            }
            url.host().to_owned()
        } else {
            consumer.host.clone()
        };
        if rule.host() != ANYHOST && rule.host() != host {
            return url;
        }
        if !self.targets(&url, consumer) {
            return url;
        }
        let conditions_hold = if !versioned {
            self.legacy_conditions_hold(&url)
        } else {
            let view = override_view(&url, consumer, written);
            let v3 = rule
                .parameter("configVersion")
                .is_some_and(|v| v.starts_with("v3.0"));
            if v3 {
                self.condition.as_ref().is_none_or(|c| {
                    c.is_match(MatchTarget {
                        host: &consumer.host,
                        url: &view,
                        application: Some(&consumer.application),
                    })
                })
            } else {
                self.legacy_conditions_hold(&view)
            }
        };
        if !conditions_hold {
            return url;
        }
        for (key, _) in &self.applied {
            if !written.contains(key) {
                written.push(key.clone());
            }
        }
        self.copy_onto(url)
    }

    /// `isV27ConditionMatchOrUnset`: provider addresses, application and service key.
    fn targets(&self, url: &DubboUrl, consumer: &ConsumerSide) -> bool {
        let rule = &self.url;
        if let Some(list) = rule
            .parameter("providerAddresses")
            .filter(|l| !l.is_empty())
        {
            let address = url.address();
            let any_port = format!("{ANYHOST}:*");
            let this_port = format!("{ANYHOST}:{}", url.port());
            let listed = list.split(',').any(|a| {
                a == address || a == ANYHOST || a == any_port || a == this_port || a == url.host()
            });
            if !listed {
                return false;
            }
        }
        let application = rule.parameter("application").or(rule.username());
        if application.is_some_and(|a| a != "*" && a != consumer.application) {
            return false;
        }
        let service_key = rule.service_key();
        service_key == "*" || service_key == url.service_key()
    }

    /// `isDeprecatedConditionMatch`: `application`, `side` and `~key` must equal the provider's view.
    fn legacy_conditions_hold(&self, url: &DubboUrl) -> bool {
        self.url.parameters().all(|(key, value)| {
            let looked_up = if let Some(stripped) = key.strip_prefix('~') {
                url.parameter(stripped)
            } else if key == "side" {
                Some("consumer")
            } else if key == "application" {
                url.parameter("application")
            } else {
                return true;
            };
            value == "*" || looked_up == Some(value)
        })
    }

    fn copy_onto(&self, mut url: DubboUrl) -> DubboUrl {
        for (key, value) in &self.applied {
            if self.mode == Mode::Override || url.parameter(key).is_none() {
                url = url.with_parameter(key, value);
            }
        }
        url
    }
}

#[cfg(test)]
mod tests;
