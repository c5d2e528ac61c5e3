//! The condition router: `when => then` rules from `<service>.condition-router` and
//! `<application>.condition-router`, in the v3.0 list form and the v3.1 multi-destination form.
//!
//! A v3.0 line `method = find* & host = 10.0.0.* => region = hangzhou` keeps, for calls whose `when`
//! part matches, the providers whose `then` part matches. When none does, `force: false` (the default)
//! ignores the line for that call and `force: true` leaves no provider. An empty `then` (or `false`)
//! blocks matching calls. Lines apply in sequence, each to what the previous one kept.
//!
//! A v3.1 condition has a `from.match` and a list of `to` destinations with weights; each call draws one
//! non-empty destination by weight.
//!
//! ```
//! use rudder_cluster::router::condition::ConditionRule;
//! let rule = ConditionRule::parse("force: true\nconditions:\n  - host = 10.0.0.9 => region = hz\n")?;
//! assert_eq!(rule.len(), 1);
//! assert!(ConditionRule::parse("conditions:\n  - a == b\n").is_err());
//! # Ok::<(), String>(())
//! ```

mod grammar;
mod matcher;

use std::sync::Arc;

use rudder_common::invocation::Invocation;
use yaml_serde::Value;

pub use grammar::{parse_condition, Condition};
pub use matcher::NOT_FOUND;
use matcher::{describe, Side};

use rudder_common::yaml::scalar_string;

use super::yaml::{get, get_bool, get_list, get_text, parse_mapping};
use super::{filter, Consumer, Outcome, RouteContext, RouteKey, Routed, Router, RuleRef, RuleSlot};

/// Weight of a v3.1 destination without one (or with one ≤ 0).
pub const DEFAULT_DESTINATION_WEIGHT: u64 = 100;

/// What a line does with calls its `when` part matches.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Then {
    /// v3.0 `=> false` or an empty then part: no provider.
    Block,
    /// v3.0: the providers matching (an empty condition would match none).
    Filter(Condition),
    /// v3.1: one of the non-empty destinations, by weight (an empty condition matches all).
    Destinations(Vec<(u64, Condition)>),
}

/// One line of a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConditionLine {
    text: String,
    when: Condition,
    then: Then,
}

impl ConditionLine {
    /// Parses a v3.0 line (`when => then`).
    ///
    /// # Errors
    /// A blank line or a side the grammar rejects.
    pub fn parse(line: &str) -> Result<ConditionLine, String> {
        if line.trim().is_empty() {
            return Err("illegal route rule: empty condition".into());
        }
        let rule = line.replace("consumer.", "").replace("provider.", "");
        let (when, then) = match rule.find("=>") {
            Some(i) => (rule[..i].trim(), rule[i + 2..].trim()),
            None => ("", rule.trim()),
        };
        let when = if when.is_empty() || when == "true" {
            Condition::default()
        } else {
            parse_condition(when)?
        };
        let then = if then.is_empty() || then == "false" {
            Then::Block
        } else {
            Then::Filter(parse_condition(then)?)
        };
        Ok(ConditionLine {
            text: line.to_owned(),
            when,
            then,
        })
    }

    fn parse_v31(item: &Value) -> Result<ConditionLine, String> {
        let Value::Mapping(map) = item else {
            return Err("each v3.1 condition must be a mapping with `from` and `to`".into());
        };
        let side = |v: Option<&Value>| -> Result<String, String> {
            match v {
                None => Ok(String::new()),
                Some(Value::Mapping(m)) => Ok(get_text(m, "match").unwrap_or_default()),
                Some(_) => Err("`from` and `to` entries must be mappings".into()),
            }
        };
        let from = side(get(map, "from"))?;
        let when = if from.trim().is_empty() || from == "true" {
            Condition::default()
        } else {
            parse_condition(&from)?
        };
        let mut destinations = Vec::new();
        let mut shown = Vec::new();
        for to in get_list(map, "to")? {
            let text = side(Some(to))?;
            let condition = if text.trim().is_empty() || text == "false" {
                Condition::default()
            } else {
                parse_condition(&text)?
            };
            let weight = match to {
                Value::Mapping(m) => match get(m, "weight").and_then(scalar_string) {
                    Some(w) => w
                        .trim()
                        .parse::<i64>()
                        .map_err(|_| format!("bad weight {w:?}"))?,
                    None => DEFAULT_DESTINATION_WEIGHT as i64,
                },
                _ => DEFAULT_DESTINATION_WEIGHT as i64,
            };
            let weight = if weight <= 0 {
                DEFAULT_DESTINATION_WEIGHT
            } else {
                weight as u64
            };
            shown.push(format!("{text} (weight {weight})"));
            destinations.push((weight, condition));
        }
        let then = if destinations.is_empty() {
            Then::Block
        } else {
            Then::Destinations(destinations)
        };
        Ok(ConditionLine {
            text: format!("from {from} => to {}", shown.join(" | ")),
            when,
            then,
        })
    }

    /// The line as written (v3.0) or summarised (v3.1).
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// A parsed `condition-router` rule: its lines and flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConditionRule {
    force: bool,
    enabled: bool,
    lines: Vec<ConditionLine>,
}

impl ConditionRule {
    /// Parses the YAML of a condition rule (`configVersion` v2.7/v3.0 list of lines, or v3.1).
    ///
    /// # Errors
    /// Text that is not a YAML mapping, a `configVersion` newer than v3.1, or any line the grammar
    /// rejects: the whole rule is refused, as Dubbo refuses it.
    pub fn parse(text: &str) -> Result<ConditionRule, String> {
        let map = parse_mapping(text)?;
        let version = get_text(&map, "configVersion");
        let v31 = version
            .as_deref()
            .is_some_and(|v| v.to_lowercase().starts_with("v3.1"));
        if let Some(v) = version.as_deref().filter(|_| !v31) {
            if v.to_lowercase().as_str() > "v3.1" {
                return Err(format!(
                    "configVersion {v} is not supported (v3.1 and older are)"
                ));
            }
        }
        let items = get_list(&map, "conditions")?;
        let lines = if v31 {
            items
                .iter()
                .map(ConditionLine::parse_v31)
                .collect::<Result<_, _>>()?
        } else {
            items
                .iter()
                .map(|item| {
                    let line = (!item.is_null())
                        .then(|| scalar_string(item))
                        .flatten()
                        .ok_or("each condition must be a string")?;
                    ConditionLine::parse(&line)
                })
                .collect::<Result<_, _>>()?
        };
        Ok(ConditionRule {
            force: get_bool(&map, "force", false),
            enabled: get_bool(&map, "enabled", true),
            lines,
        })
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether the rule has no line (it then routes nothing).
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// One router per line, in order, for the rule stored under `key` in `slot`.
    pub fn routers(&self, slot: RuleSlot, key: &str) -> Vec<Arc<dyn Router>> {
        let key: Arc<str> = key.into();
        self.lines
            .iter()
            .map(|line| {
                Arc::new(ConditionRouter {
                    reads_call: self.enabled && line.when.reads_call(),
                    line: line.clone(),
                    force: self.force,
                    enabled: self.enabled,
                    rule_ref: RuleRef {
                        slot,
                        rule: Arc::clone(&key),
                        detail: line.text.as_str().into(),
                    },
                }) as Arc<dyn Router>
            })
            .collect()
    }
}

/// One line of a condition rule, as a chain step.
#[derive(Debug)]
pub struct ConditionRouter {
    line: ConditionLine,
    force: bool,
    enabled: bool,
    reads_call: bool,
    rule_ref: RuleRef,
}

impl ConditionRouter {
    fn when_matches(
        &self,
        consumer: &Consumer,
        method: &str,
        invocation: Option<&Invocation>,
    ) -> bool {
        let side = Side::When {
            consumer,
            method,
            invocation,
        };
        self.line.when.matchers.iter().all(|m| m.is_match(&side))
    }

    fn then_filter(ctx: &RouteContext<'_>, condition: &Condition, input: &[u32]) -> Vec<u32> {
        let consumer = ctx.consumer.url();
        filter(ctx, input, |p| {
            let side = Side::Then {
                provider: p.url(),
                consumer,
            };
            condition.matchers.iter().all(|m| m.is_match(&side))
        })
    }
}

impl Router for ConditionRouter {
    fn rule(&self) -> &RuleRef {
        &self.rule_ref
    }

    fn reads_call(&self) -> bool {
        self.reads_call
    }

    fn key<'a>(&self, consumer: &'a Consumer, invocation: &'a Invocation) -> RouteKey<'a> {
        RouteKey::When(self.when_matches(consumer, invocation.method_name(), Some(invocation)))
    }

    fn route(&self, ctx: &RouteContext<'_>, key: &RouteKey<'_>, input: &[u32]) -> Routed {
        if !self.enabled {
            return Routed::unchanged(input, "rule disabled");
        }
        if input.is_empty() {
            return Routed::unchanged(input, "nothing to route");
        }
        let matched = match key {
            RouteKey::When(matched) => *matched,
            _ => self.when_matches(ctx.consumer, ctx.method, None),
        };
        if !matched {
            return Routed::unchanged(input, "when part does not match the call");
        }
        match &self.line.then {
            Then::Block => Routed::kept(Vec::new(), "matching calls are blocked (empty then)"),
            Then::Filter(condition) => {
                let kept = if condition.is_empty() {
                    Vec::new()
                } else {
                    ConditionRouter::then_filter(ctx, condition, input)
                };
                if !kept.is_empty() {
                    Routed::kept(kept, "providers matching the then part")
                } else if self.force {
                    Routed::kept(kept, "no provider matches the then part, force=true")
                } else {
                    Routed::unchanged(
                        input,
                        "no provider matches the then part, force=false: line ignored",
                    )
                }
            }
            Then::Destinations(destinations) => {
                let choices: Vec<(u64, Vec<u32>)> = destinations
                    .iter()
                    .map(|(w, c)| (*w, ConditionRouter::then_filter(ctx, c, input)))
                    .filter(|(_, kept)| !kept.is_empty())
                    .collect();
                match choices.len() {
                    0 if self.force => {
                        Routed::kept(Vec::new(), "no destination has a provider, force=true")
                    }
                    0 => Routed::unchanged(
                        input,
                        "no destination has a provider, force=false: ignored",
                    ),
                    1 => {
                        let (_, kept) = choices.into_iter().next().expect("one choice");
                        Routed::kept(kept, "the one destination with providers")
                    }
                    _ => Routed {
                        outcome: Outcome::Weighted(choices),
                        reason: "one destination per call, drawn by weight".into(),
                    },
                }
            }
        }
    }
}

/// Renders a condition for explanations.
pub fn describe_condition(condition: &Condition) -> String {
    condition
        .matchers
        .iter()
        .map(describe)
        .collect::<Vec<_>>()
        .join(" & ")
}
