//! Dynamic configuration rules (YAML, as dubbo-admin writes them) to override rules: Dubbo 3.3's
//! `ConfigParser.parseConfigurators`, string for string.
//!
//! A rule node such as `/dubbo/config/dubbo/com.acme.Greeter::.configurators` holds
//!
//! ```yaml
//! configVersion: v2.7
//! scope: service            # or application (key is then the application name)
//! key: com.acme.Greeter     # [group/]interface[:version]
//! enabled: true
//! configs:
//! - side: consumer
//!   addresses: ["0.0.0.0"]              # whose rule: the consumer's IP, or 0.0.0.0 for all
//!   providerAddresses: ["10.0.0.1:20880"] # which providers
//!   parameters:
//!     weight: 200
//! ```
//!
//! Each item becomes one `override://` URL per address (and per application, or per service for
//! application scope), built as Dubbo builds it: `override://<address>/<interface>?group=..&version=..&
//! category=dynamicconfigurators&side=..&<parameters>&providerAddresses=..&enabled=..&configVersion=..`.
//! The Dubbo quirks are kept, because they decide whether a rule applies (spec-2 §1.3–1.4, §6):
//!
//! * a missing `configVersion` becomes the literal `configVersion=null`, which counts as versioned;
//! * an item whose `type` is not `general` takes its own `enabled`, and a missing one is `enabled=null`,
//!   which switches the rule off;
//! * values are not escaped: a parameter holding `&` splits into more parameters;
//! * a repeated key keeps its last value (application-scope URLs end up `category=appdynamicconfigurators`);
//! * a side-`provider` item without `providerAddresses` gets its addresses as `providerAddresses`;
//! * a v3.0 `match` of the wrong shape is ignored with a warning (the item then has no `match`).
//!
//! A node holding a list of URL strings (the 2.6 JSON form `["override://0.0.0.0/S?timeout=6666"]`)
//! is read as those URLs.
//!
//! Differences from Java, all on input Java reads oddly: YAML 1.2 scalars (`yes`/`on` stay strings where
//! SnakeYAML's YAML 1.1 makes them `true`), duplicate mapping keys are an error (SnakeYAML keeps the
//! last), and the JSON form must be a list of strings.
//!
//! Example (a unit test, the module being private): `module_example` in its tests.

mod condition;

use std::sync::Arc;

use rudder_common::url::DubboUrl;
use rudder_common::yaml::{java_boolean, java_string, scalar_string};
use yaml_serde::{Mapping, Value};

pub use condition::{ConditionMatch, MatchTarget};

/// One override rule: the URL Dubbo's parser builds, and the item's v3.0 `match`, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct OverrideRule {
    /// The `override://` (or `absent://`) URL.
    pub url: DubboUrl,
    /// The v3.0 `match` (Dubbo's `MATCH_CONDITION` attribute); only used when `configVersion` starts
    /// with `v3.0`.
    pub condition: Option<Arc<ConditionMatch>>,
}

impl OverrideRule {
    /// A rule with no `match`.
    pub fn new(url: DubboUrl) -> OverrideRule {
        OverrideRule {
            url,
            condition: None,
        }
    }
}

/// Why a rule text could not be read; Dubbo keeps the previous rules then, and so does rudder.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RuleParseError {
    /// Not YAML.
    #[error("not YAML: {0}")]
    Yaml(String),
    /// YAML of the wrong shape (a field of the wrong type, no `configs`, ...).
    #[error("not a configurator rule: {0}")]
    Shape(String),
    /// `key` (or an application-scope `services` entry) is missing or empty.
    #[error("service field in configuration is null")]
    NoService,
    /// An item has no `parameters`.
    #[error("invalid configurator rule, please specify at least one parameter you want to change in the rule")]
    NoParameters,
    /// A built URL (or a URL of the JSON list form) could not be read.
    #[error("rule URL {index} unreadable: {reason}")]
    BadUrl {
        /// Position of the URL among those the text gives.
        index: usize,
        /// Why.
        reason: String,
    },
}

/// Keys a dynamic rule may not set (Dubbo's `AbstractConfiguratorListener` security keys): removed from
/// every parsed rule before use.
pub const SECURITY_KEYS: &[&str] = &["accesslog.fixed.path", "router", "rule", "runtime", "type"];

/// Parses a rule text into override rules, in Dubbo's order (items, then addresses, then applications
/// or services).
///
/// # Errors
/// [`RuleParseError`]: whatever makes Dubbo's `parseConfigurators` throw.
pub fn parse_configurators(text: &str) -> Result<Vec<OverrideRule>, RuleParseError> {
    let value: Value =
        yaml_serde::from_str(text).map_err(|e| RuleParseError::Yaml(e.to_string()))?;
    let map = match &value {
        Value::Sequence(items) if !items.is_empty() && items.iter().all(Value::is_string) => {
            return items
                .iter()
                .enumerate()
                .map(|(index, item)| {
                    let text = item.as_str().unwrap_or_default();
                    DubboUrl::parse(text).map(OverrideRule::new).map_err(|e| {
                        RuleParseError::BadUrl {
                            index,
                            reason: e.to_string(),
                        }
                    })
                })
                .collect();
        }
        Value::Mapping(map) => map,
        _ => {
            return Err(RuleParseError::Shape(
                "the top level is not a mapping".to_owned(),
            ))
        }
    };
    let config = Config::read(map)?;
    let mut urls = Vec::new();
    for item in &config.items {
        if config.scope.as_deref() == Some("application") {
            app_item_urls(item, &config, &mut urls)?;
        } else {
            service_item_urls(item, &config, &mut urls)?;
        }
    }
    Ok(urls)
}

/// Removes [`SECURITY_KEYS`] from a parsed rule.
pub fn strip_security_keys(mut rule: OverrideRule) -> OverrideRule {
    for key in SECURITY_KEYS {
        rule.url = rule.url.without_parameter(key);
    }
    rule
}

/// The top level (`ConfiguratorConfig`).
struct Config {
    config_version: String,
    scope: Option<String>,
    key: Option<String>,
    enabled: bool,
    items: Vec<Item>,
}

/// One `configs` entry (`ConfigItem`).
struct Item {
    kind: Option<String>,
    enabled: Option<bool>,
    addresses: Option<Vec<String>>,
    provider_addresses: Option<Vec<String>>,
    services: Option<Vec<String>>,
    applications: Option<Vec<String>>,
    parameters: Option<Vec<(String, String)>>,
    condition: Option<Arc<ConditionMatch>>,
    side: Option<String>,
}

impl Config {
    fn read(map: &Mapping) -> Result<Config, RuleParseError> {
        let configs = match map.get("configs") {
            Some(Value::Sequence(items)) => items
                .iter()
                .map(|item| match item {
                    Value::Mapping(item) => Item::read(item),
                    _ => Err(RuleParseError::Shape(
                        "a configs entry is not a mapping".to_owned(),
                    )),
                })
                .collect::<Result<Vec<_>, _>>()?,
            _ => {
                return Err(RuleParseError::Shape(
                    "configs is missing or not a list".to_owned(),
                ))
            }
        };
        Ok(Config {
            config_version: string_field(map, "configVersion")?
                .unwrap_or_else(|| "null".to_owned()),
            scope: string_field(map, "scope")?,
            key: string_field(map, "key")?,
            enabled: java_parse_boolean(map.get("enabled")).unwrap_or(true),
            items: configs,
        })
    }
}

impl Item {
    fn read(map: &Mapping) -> Result<Item, RuleParseError> {
        let parameters = match map.get("parameters") {
            Some(Value::Mapping(params)) => Some(
                params
                    .iter()
                    .map(|(k, v)| {
                        let key = scalar_string(k).ok_or_else(|| {
                            RuleParseError::Shape("a parameter key is not a scalar".to_owned())
                        })?;
                        if v.is_null() {
                            return Err(RuleParseError::Shape(format!(
                                "parameter {key} has no value"
                            )));
                        }
                        Ok((key, java_string(v)))
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            _ => None,
        };
        let condition = match map.get("match") {
            Some(m @ Value::Mapping(_)) => match ConditionMatch::from_yaml(m) {
                Ok(condition) => Some(Arc::new(condition)),
                Err(reason) => {
                    tracing::warn!(%reason, "ignoring an unreadable configurator match");
                    None
                }
            },
            _ => None,
        };
        Ok(Item {
            kind: string_field(map, "type")?,
            enabled: java_parse_boolean(map.get("enabled")),
            addresses: string_list(map, "addresses"),
            provider_addresses: string_list(map, "providerAddresses"),
            services: string_list(map, "services"),
            applications: string_list(map, "applications"),
            parameters,
            condition,
            side: string_field(map, "side")?,
        })
    }

    /// `parseAddresses`: the addresses, `0.0.0.0` when there are none.
    fn addresses(&self) -> Vec<String> {
        match &self.addresses {
            Some(list) if !list.is_empty() => list.clone(),
            _ => vec!["0.0.0.0".to_owned()],
        }
    }

    /// `toParameterString`.
    fn parameter_string(&self) -> Result<String, RuleParseError> {
        let mut s = String::from("category=dynamicconfigurators");
        if let Some(side) = &self.side {
            s.push_str("&side=");
            s.push_str(side);
        }
        let params = self
            .parameters
            .as_ref()
            .filter(|p| !p.is_empty())
            .ok_or(RuleParseError::NoParameters)?;
        for (key, value) in params {
            s.push('&');
            s.push_str(key);
            s.push('=');
            s.push_str(value);
        }
        match &self.provider_addresses {
            Some(list) if !list.is_empty() => {
                s.push_str("&providerAddresses=");
                s.push_str(&list.join(","));
            }
            _ if self.side.as_deref() == Some("provider") => {
                s.push_str("&providerAddresses=");
                s.push_str(&self.addresses().join(","));
            }
            _ => {}
        }
        Ok(s)
    }

    /// `parseEnabled`: the rule's `enabled` for general items, the item's own otherwise.
    fn enabled(&self, config: &Config) -> String {
        match self.kind.as_deref() {
            None | Some("general") => config.enabled.to_string(),
            Some(_) => self
                .enabled
                .map_or_else(|| "null".to_owned(), |e| e.to_string()),
        }
    }

    fn rule(&self, text: &str, index: usize) -> Result<OverrideRule, RuleParseError> {
        let url = DubboUrl::parse(text).map_err(|e| RuleParseError::BadUrl {
            index,
            reason: e.to_string(),
        })?;
        Ok(OverrideRule {
            url,
            condition: self.condition.clone(),
        })
    }
}

/// `serviceItemToUrls`.
fn service_item_urls(
    item: &Item,
    config: &Config,
    out: &mut Vec<OverrideRule>,
) -> Result<(), RuleParseError> {
    for address in item.addresses() {
        let mut s = format!("override://{address}/");
        s.push_str(&append_service(config.key.as_deref())?);
        s.push_str(&item.parameter_string()?);
        s.push_str("&enabled=");
        s.push_str(&item.enabled(config));
        s.push_str("&configVersion=");
        s.push_str(&config.config_version);
        match &item.applications {
            Some(apps) if !apps.is_empty() => {
                for app in apps {
                    out.push(item.rule(&format!("{s}&application={app}"), out.len())?);
                }
            }
            _ => out.push(item.rule(&s, out.len())?),
        }
    }
    Ok(())
}

/// `appItemToUrls`.
fn app_item_urls(
    item: &Item,
    config: &Config,
    out: &mut Vec<OverrideRule>,
) -> Result<(), RuleParseError> {
    let services = match &item.services {
        Some(list) if !list.is_empty() => list.clone(),
        _ => vec!["*".to_owned()],
    };
    for address in item.addresses() {
        for service in &services {
            let mut s = format!("override://{address}/");
            s.push_str(&append_service(Some(service))?);
            s.push_str(&item.parameter_string()?);
            s.push_str("&application=");
            s.push_str(config.key.as_deref().unwrap_or("null"));
            s.push_str("&enabled=");
            s.push_str(&item.enabled(config));
            s.push_str("&category=appdynamicconfigurators&configVersion=");
            s.push_str(&config.config_version);
            out.push(item.rule(&s, out.len())?);
        }
    }
    Ok(())
}

/// `appendService("g/i:v")` = `i?group=g&version=v&` (a leading `/` or `:` is part of the name).
fn append_service(key: Option<&str>) -> Result<String, RuleParseError> {
    let key = key
        .filter(|k| !k.is_empty())
        .ok_or(RuleParseError::NoService)?;
    let mut query = String::new();
    let mut interface = key;
    if let Some(i) = interface.find('/').filter(|&i| i > 0) {
        query.push_str("group=");
        query.push_str(&interface[..i]);
        query.push('&');
        interface = &interface[i + 1..];
    }
    if let Some(j) = interface.find(':').filter(|&j| j > 0) {
        query.push_str("version=");
        query.push_str(&interface[j + 1..]);
        query.push('&');
        interface = &interface[..j];
    }
    Ok(format!("{interface}?{query}"))
}

/// A field Java casts to `String`: absent or null is `None`, anything but a string is an error.
fn string_field(map: &Mapping, name: &str) -> Result<Option<String>, RuleParseError> {
    match map.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(RuleParseError::Shape(format!("{name} is not a string"))),
    }
}

/// A list field: `String.valueOf` of each entry; not a list reads as absent (Java ignores it).
fn string_list(map: &Mapping, name: &str) -> Option<Vec<String>> {
    match map.get(name) {
        Some(Value::Sequence(items)) => Some(items.iter().map(java_string).collect()),
        _ => None,
    }
}

/// `Boolean.parseBoolean(String.valueOf(v))` for a present, non-null value.
fn java_parse_boolean(value: Option<&Value>) -> Option<bool> {
    value.filter(|v| !v.is_null()).map(java_boolean)
}

#[cfg(test)]
mod tests;
