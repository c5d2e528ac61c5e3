//! The v3.0 `match` of a configurator item (Dubbo's `ConditionMatch` and the mesh matchers it uses).
//!
//! Read the way Dubbo's `PojoUtils.mapToPojo` reads it: known fields are taken, unknown ones ignored
//! (so the documented `match.application` does nothing: the field is `app`), and anything of the wrong
//! shape makes the whole `match` unreadable, which Dubbo logs and then treats as no `match` at all.

use rudder_common::url::DubboUrl;
use yaml_serde::Value;

use rudder_common::java_regex::WholeRegex;
use rudder_common::net::{match_ip_address, IpPatternError};
use rudder_common::url::is_match_glob_pattern;
use rudder_common::yaml::scalar_string;

/// A `match:` block: every condition that is present must hold.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConditionMatch {
    address: Option<AddressMatch>,
    provider_address: Option<AddressMatch>,
    service: Option<ListStringMatch>,
    app: Option<ListStringMatch>,
    param: Option<Vec<ParamMatch>>,
}

/// What a `match` is tested against (Dubbo's `isMatch(host, url)`, with the URL's parts spelled out).
#[derive(Debug, Clone, Copy)]
pub struct MatchTarget<'a> {
    /// The host the rule's address is compared with: the consumer's IP for consumer-side rules.
    pub host: &'a str,
    /// The target URL (Dubbo's override URL on the consumer): `providerAddress`, `service` and `param`
    /// look at it.
    pub url: &'a DubboUrl,
    /// The target's `application` parameter.
    pub application: Option<&'a str>,
}

impl ConditionMatch {
    /// Reads a `match` mapping.
    ///
    /// # Errors
    /// A description of the first part of the wrong shape.
    pub(crate) fn from_yaml(value: &Value) -> Result<ConditionMatch, String> {
        let map = value.as_mapping().ok_or("match is not a mapping")?;
        let field = |name: &str| map.get(name).filter(|v| !v.is_null());
        let param = match field("param") {
            None => None,
            Some(Value::Sequence(items)) => Some(
                items
                    .iter()
                    .map(ParamMatch::from_yaml)
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            Some(_) => return Err("match.param is not a list".to_owned()),
        };
        Ok(ConditionMatch {
            address: field("address").map(AddressMatch::from_yaml).transpose()?,
            provider_address: field("providerAddress")
                .map(AddressMatch::from_yaml)
                .transpose()?,
            service: field("service")
                .map(ListStringMatch::from_yaml)
                .transpose()?,
            app: field("app").map(ListStringMatch::from_yaml).transpose()?,
            param,
        })
    }

    /// Whether `target` meets every condition present.
    pub fn is_match(&self, target: MatchTarget<'_>) -> bool {
        if self
            .address
            .as_ref()
            .is_some_and(|m| !m.is_match(Some(target.host)))
        {
            return false;
        }
        let address = target.url.address();
        if self
            .provider_address
            .as_ref()
            .is_some_and(|m| !m.is_match(Some(&address)))
        {
            return false;
        }
        if self
            .service
            .as_ref()
            .is_some_and(|m| !m.is_match(Some(&target.url.service_key())))
        {
            return false;
        }
        if self
            .app
            .as_ref()
            .is_some_and(|m| !m.is_match(target.application))
        {
            return false;
        }
        self.param
            .iter()
            .flatten()
            .all(|p| match (&p.key, &p.value) {
                (Some(key), Some(value)) => value.is_match(target.url.parameter(key)),
                _ => false,
            })
    }
}

/// `StringMatch`: the first field set decides, in Dubbo's order.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct StringMatch {
    exact: Option<String>,
    prefix: Option<String>,
    regex: Option<WholeRegex>,
    wildcard: Option<String>,
    empty: Option<String>,
    noempty: Option<String>,
}

impl StringMatch {
    fn from_yaml(value: &Value) -> Result<StringMatch, String> {
        let map = value
            .as_mapping()
            .ok_or("a string match is not a mapping")?;
        let field = |name: &str| -> Result<Option<String>, String> {
            match map.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => scalar_string(v)
                    .map(Some)
                    .ok_or_else(|| format!("{name} is not a scalar")),
            }
        };
        Ok(StringMatch {
            exact: field("exact")?,
            prefix: field("prefix")?,
            regex: field("regex")?.map(|r| WholeRegex::new(r, "configurator condition")),
            wildcard: field("wildcard")?,
            empty: field("empty")?,
            noempty: field("noempty")?,
        })
    }

    /// Dubbo's `StringMatch.isMatch`; `input` is `None` for a missing parameter.
    pub(crate) fn is_match(&self, input: Option<&str>) -> bool {
        match input {
            Some(input) if self.exact.is_some() => Some(input) == self.exact.as_deref(),
            Some(input) if self.prefix.is_some() => {
                self.prefix.as_deref().is_some_and(|p| input.starts_with(p))
            }
            Some(input) if self.regex.is_some() => {
                self.regex.as_ref().is_some_and(|r| r.is_match(input))
            }
            Some(input) if self.wildcard.is_some() => self
                .wildcard
                .as_deref()
                .is_some_and(|w| w == input || w == "*"),
            _ if self.empty.is_some() => input.is_none_or(str::is_empty),
            _ if self.noempty.is_some() => input.is_some_and(|i| !i.is_empty()),
            _ => false,
        }
    }
}

/// `ListStringMatch`: any `oneof` entry matches.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct ListStringMatch {
    oneof: Vec<StringMatch>,
}

impl ListStringMatch {
    fn from_yaml(value: &Value) -> Result<ListStringMatch, String> {
        let map = value.as_mapping().ok_or("a list match is not a mapping")?;
        let oneof = match map.get("oneof") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Sequence(items)) => items
                .iter()
                .map(StringMatch::from_yaml)
                .collect::<Result<_, _>>()?,
            Some(_) => return Err("oneof is not a list".to_owned()),
        };
        Ok(ListStringMatch { oneof })
    }

    fn is_match(&self, input: Option<&str>) -> bool {
        self.oneof.iter().any(|m| m.is_match(input))
    }
}

/// `AddressMatch`: `cird` (CIDR or Dubbo IP pattern), then `wildcard` (glob), then `exact`.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct AddressMatch {
    wildcard: Option<String>,
    cird: Option<String>,
    exact: Option<String>,
}

impl AddressMatch {
    fn from_yaml(value: &Value) -> Result<AddressMatch, String> {
        let map = value
            .as_mapping()
            .ok_or("an address match is not a mapping")?;
        let field = |name: &str| match map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => scalar_string(v)
                .map(Some)
                .ok_or_else(|| format!("{name} is not a scalar")),
        };
        Ok(AddressMatch {
            wildcard: field("wildcard")?,
            cird: field("cird")?,
            exact: field("exact")?,
        })
    }

    fn is_match(&self, input: Option<&str>) -> bool {
        let Some(input) = input else { return false };
        if let Some(cird) = &self.cird {
            // `input.equals(cird) || matchIpExpression(cird, input)`: Dubbo returns here unless the
            // address could not be resolved (UnknownHostException), then tries the others. A
            // malformed pattern throws past Java's catch; here it matches nothing.
            if input == cird {
                return true;
            }
            match match_ip_address(cird, input) {
                Ok(matched) => return matched,
                Err(IpPatternError::Malformed(_)) => return false,
                Err(IpPatternError::Unresolvable(_)) => {}
            }
        }
        if let Some(wildcard) = &self.wildcard {
            return wildcard == "0.0.0.0"
                || wildcard == "*"
                || is_match_glob_pattern(wildcard, input);
        }
        self.exact.as_deref() == Some(input)
    }
}

/// `ParamMatch`: the target URL's parameter `key` must meet `value`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ParamMatch {
    key: Option<String>,
    value: Option<StringMatch>,
}

impl ParamMatch {
    fn from_yaml(value: &Value) -> Result<ParamMatch, String> {
        let map = value.as_mapping().ok_or("a param match is not a mapping")?;
        let key = match map.get("key") {
            None | Some(Value::Null) => None,
            Some(v) => Some(scalar_string(v).ok_or("param key is not a scalar")?),
        };
        let value = match map.get("value") {
            None | Some(Value::Null) => None,
            Some(v) => Some(StringMatch::from_yaml(v)?),
        };
        Ok(ParamMatch { key, value })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string_match(yaml: &str) -> StringMatch {
        StringMatch::from_yaml(&yaml_serde::from_str(yaml).unwrap()).unwrap()
    }

    #[test]
    fn string_match_uses_the_first_field_set() {
        assert!(string_match("{exact: a}").is_match(Some("a")));
        assert!(!string_match("{exact: a}").is_match(None));
        assert!(string_match("{prefix: ab}").is_match(Some("abc")));
        assert!(string_match("{regex: 'a.*c'}").is_match(Some("abbc")));
        assert!(!string_match("{regex: 'a.*c'}").is_match(Some("abbcd")));
        assert!(string_match("{regex: 'x|y'}").is_match(Some("y")));
        assert!(string_match("{wildcard: '*'}").is_match(Some("anything")));
        assert!(!string_match("{wildcard: 'a*'}").is_match(Some("ab")));
        assert!(string_match("{empty: x}").is_match(None));
        assert!(string_match("{empty: x}").is_match(Some("")));
        assert!(string_match("{noempty: x}").is_match(Some("v")));
        assert!(!string_match("{noempty: x}").is_match(None));
        // exact is set, so prefix is never looked at.
        assert!(!string_match("{exact: a, prefix: b}").is_match(Some("b")));
        assert!(!string_match("{}").is_match(Some("a")));
    }

    #[test]
    fn address_match_tries_cird_then_wildcard_then_exact() {
        let cidr =
            AddressMatch::from_yaml(&yaml_serde::from_str("{cird: 10.0.0.0/24}").unwrap()).unwrap();
        assert!(cidr.is_match(Some("10.0.0.9")));
        assert!(!cidr.is_match(Some("10.0.1.9")));
        // Dubbo's quirk: "host:port" cannot be resolved, so only string equality is left.
        let exact_port =
            AddressMatch::from_yaml(&yaml_serde::from_str("{cird: '10.0.0.1:20880'}").unwrap())
                .unwrap();
        assert!(exact_port.is_match(Some("10.0.0.1:20880")));
        assert!(!cidr.is_match(Some("10.0.0.9:20880")));
        let any = AddressMatch::from_yaml(&yaml_serde::from_str("{wildcard: '0.0.0.0'}").unwrap())
            .unwrap();
        assert!(any.is_match(Some("1.2.3.4")));
        assert!(!any.is_match(None));
    }

    #[test]
    fn unknown_fields_are_ignored_and_bad_shapes_rejected() {
        let ignored: Value = yaml_serde::from_str("{application: {oneof: [{exact: a}]}}").unwrap();
        assert_eq!(
            ConditionMatch::from_yaml(&ignored).unwrap(),
            ConditionMatch::default()
        );
        let bad: Value = yaml_serde::from_str("{param: notalist}").unwrap();
        assert!(ConditionMatch::from_yaml(&bad).is_err());
    }
}
