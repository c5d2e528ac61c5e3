//! The tag router: static `dubbo.tag` on providers, dynamic `<provider app>.tag-router` rules, the
//! request tag from the `dubbo.tag` attachment (else the consumer's), `dubbo.force.tag`, and Dubbo 3.3's
//! fallbacks.
//!
//! * An untagged request never reaches a tagged provider (static tag, or an address of a dynamic tag).
//! * A tagged request goes to the tag's providers; if there are none it falls back to the untagged
//!   ones, unless `dubbo.force.tag=true`. A rule's `force: true` makes "the dynamic tag has no live
//!   address" fail instead of trying the static tag.
//! * `beta|team1|partner1` looks up `beta|team1|partner1`, then `beta|team1`, then `beta` in the rule
//!   (not when forced).
//!
//! ```
//! use rudder_cluster::router::tag::TagRule;
//! let rule = TagRule::parse("force: false\ntags:\n  - name: gray\n    addresses: [\"10.0.0.1:20880\"]\n")?;
//! assert_eq!(rule.tag_names(), ["gray"]);
//! # Ok::<(), String>(())
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use rudder_common::invocation::Invocation;
use rudder_common::java_regex::WholeRegex;
use rudder_common::net::{match_ip_expression, IpPatternError};
use rudder_common::yaml::scalar_string;
use yaml_serde::Value;

use super::consumer::TAG_KEY;
use super::sample::raw_param;
use super::scoped::provider_application;
use super::yaml::{get, get_bool, get_list, get_text, parse_mapping};
use super::{filter, Consumer, Outcome, RouteContext, RouteKey, Routed, Router, RuleRef, RuleSlot};
use crate::provider::Provider;

/// A parsed `tag-router` rule.
#[derive(Debug, Clone, PartialEq)]
pub struct TagRule {
    force: bool,
    enabled: bool,
    version: String,
    tags: Vec<Tag>,
}

#[derive(Debug, Clone, PartialEq)]
struct Tag {
    name: String,
    addresses: Vec<String>,
    matches: Vec<ParamMatch>,
}

/// `match` entry of a v3.0 tag: a provider parameter and how its value must look.
#[derive(Debug, Clone, PartialEq)]
struct ParamMatch {
    key: String,
    value: StringMatch,
}

/// Dubbo's `StringMatch`, first set field wins.
#[derive(Debug, Clone, PartialEq)]
enum StringMatch {
    Exact(String),
    Prefix(String),
    Regex(WholeRegex),
    Wildcard(String),
    Empty,
    NoEmpty,
    Nothing,
}

impl StringMatch {
    fn parse(value: Option<&Value>) -> Result<StringMatch, String> {
        let Some(Value::Mapping(map)) = value else {
            return Ok(StringMatch::Nothing);
        };
        if let Some(exact) = get_text(map, "exact") {
            return Ok(StringMatch::Exact(exact));
        }
        if let Some(prefix) = get_text(map, "prefix") {
            return Ok(StringMatch::Prefix(prefix));
        }
        if let Some(regex) = get_text(map, "regex") {
            return Ok(StringMatch::Regex(WholeRegex::new(regex, "tag rule")));
        }
        if let Some(wildcard) = get_text(map, "wildcard") {
            return Ok(StringMatch::Wildcard(wildcard));
        }
        if get(map, "empty").is_some() {
            return Ok(StringMatch::Empty);
        }
        if get(map, "noempty").is_some() {
            return Ok(StringMatch::NoEmpty);
        }
        Ok(StringMatch::Nothing)
    }

    fn is_match(&self, input: Option<&str>) -> bool {
        match (self, input) {
            (StringMatch::Exact(e), Some(i)) => i == e,
            (StringMatch::Prefix(p), Some(i)) => i.starts_with(p.as_str()),
            (StringMatch::Regex(r), Some(i)) => r.is_match(i),
            (StringMatch::Wildcard(w), Some(i)) => i == w || w == "*",
            (StringMatch::Empty, i) => i.is_none_or(str::is_empty),
            (StringMatch::NoEmpty, i) => i.is_some_and(|i| !i.is_empty()),
            _ => false,
        }
    }
}

impl TagRule {
    /// Parses the YAML of a `tag-router` rule.
    ///
    /// # Errors
    /// Text that is not a YAML mapping, a `tags` that is not a list of mappings, or a tag without a
    /// name.
    pub fn parse(text: &str) -> Result<TagRule, String> {
        let map = parse_mapping(text)?;
        let mut tags = Vec::new();
        for item in get_list(&map, "tags")? {
            let Value::Mapping(tag) = item else {
                return Err("each entry of `tags` must be a mapping".into());
            };
            let name = get_text(tag, "name").ok_or("a tag has no `name`")?;
            let addresses = get_list(tag, "addresses")?
                .iter()
                .filter(|a| !a.is_null())
                .filter_map(scalar_string)
                .collect();
            let mut matches = Vec::new();
            for m in get_list(tag, "match")? {
                let Value::Mapping(m) = m else {
                    return Err(format!("tag {name}: each `match` entry must be a mapping"));
                };
                matches.push(ParamMatch {
                    key: get_text(m, "key").unwrap_or_default(),
                    value: StringMatch::parse(get(m, "value"))?,
                });
            }
            tags.push(Tag {
                name,
                addresses,
                matches,
            });
        }
        Ok(TagRule {
            force: get_bool(&map, "force", false),
            enabled: get_bool(&map, "enabled", true),
            version: get_text(&map, "configVersion").unwrap_or_default(),
            tags,
        })
    }

    /// The names of the rule's tags, in order.
    pub fn tag_names(&self) -> Vec<&str> {
        self.tags.iter().map(|t| t.name.as_str()).collect()
    }

    /// Whether the rule takes part in routing: it has tags and is enabled (else only static tags count).
    pub fn is_active(&self) -> bool {
        !self.tags.is_empty() && self.enabled
    }

    /// Each tag's addresses over `providers`: the listed `addresses`, or for a v3.0 rule the providers
    /// whose own parameters pass every `match` entry. Tags with no address are left out.
    pub fn addresses_by_tag(&self, providers: &[Arc<Provider>]) -> HashMap<String, Vec<String>> {
        let mut by_tag: HashMap<String, Vec<String>> = HashMap::new();
        for tag in &self.tags {
            if !tag.addresses.is_empty() {
                by_tag.insert(tag.name.clone(), tag.addresses.clone());
            }
        }
        if self.version.starts_with("v3.0") {
            for tag in self.tags.iter().filter(|t| t.addresses.is_empty()) {
                let addresses: Vec<String> = providers
                    .iter()
                    .filter(|p| {
                        tag.matches
                            .iter()
                            .all(|m| m.value.is_match(raw_param(p.url(), &m.key)))
                    })
                    .map(|p| p.address().to_owned())
                    .collect();
                if !addresses.is_empty() {
                    by_tag.insert(tag.name.clone(), addresses);
                }
            }
        }
        by_tag
    }
}

/// Dubbo's `selectAddressByTagLevel`: the exact tag when forced or single-level, else the longest
/// `|`-prefix of the tag that the rule has addresses for.
pub fn select_by_tag_level<'m>(
    by_tag: &'m HashMap<String, Vec<String>>,
    tag: &str,
    force: bool,
) -> Option<&'m Vec<String>> {
    if force || !tag.contains('|') {
        return by_tag.get(tag);
    }
    let parts: Vec<&str> = tag.split('|').collect();
    (1..=parts.len())
        .rev()
        .map(|n| parts[..n].join("|"))
        .find_map(|prefix| by_tag.get(&prefix).filter(|a| !a.is_empty()))
}

/// Whether `provider` is at one of `addresses` (`matchIpExpression`, or `0.0.0.0:<port>`).
fn at_any(provider: &Provider, addresses: &[String]) -> bool {
    let url = provider.url();
    addresses.iter().any(|a| {
        // Java's `checkAddressMatch` logs what `matchIpExpression` throws and tries the next address.
        let any_host = || a.strip_prefix("0.0.0.0:") == Some(&*url.port().to_string());
        match match_ip_expression(a, url.host(), url.port()) {
            Ok(matched) => matched || any_host(),
            Err(error @ IpPatternError::Malformed(_)) => {
                tracing::warn!(address = %a, %error, "tag rule: invalid address, ignored");
                false
            }
            // A provider registered by host name: Java would resolve it; `0.0.0.0:<port>` needs no
            // address, so it still matches.
            Err(IpPatternError::Unresolvable(_)) => any_host(),
        }
    })
}

pub(crate) fn static_tag(provider: &Provider) -> &str {
    raw_param(provider.url(), TAG_KEY).unwrap_or("")
}

/// One provider application's tag rule.
#[derive(Debug)]
struct AppRule {
    application: String,
    rule: Arc<TagRule>,
}

/// The tag router of a chain, with the tag rules of the provider applications, if any.
///
/// Each provider is governed by the rule of its own application (`remote.application`, else
/// `application`); a provider of an application without a rule, or naming none, by its static
/// `dubbo.tag` only. A tagged request goes to every provider its application tags with the request's
/// tag (dynamically, or statically where that application's rule does not name the tag); when there is
/// none, a rule with `force: true` naming the tag, or `dubbo.force.tag`, fails the call, and otherwise it
/// falls back to the providers no application tags. With one provider application this is Dubbo 3.3's
/// `TagStateRouter` exactly; with several, Dubbo applies the rule of whichever application its first
/// provider (in hash order) belongs to, to every provider (see the README's differences from Dubbo).
#[derive(Debug)]
pub struct TagRouter {
    rules: Vec<AppRule>,
    rule_ref: RuleRef,
}

impl TagRouter {
    /// A tag router applying `rules`: `(provider application, rule key, rule)`, in key order.
    pub(crate) fn by_application(rules: Vec<(String, String, Arc<TagRule>)>) -> TagRouter {
        let keys: Vec<&str> = rules.iter().map(|(_, key, _)| key.as_str()).collect();
        let detail = if rules.is_empty() {
            "static dubbo.tag"
        } else {
            "dynamic tags"
        };
        let rule_ref = RuleRef {
            slot: RuleSlot::Tag,
            rule: keys.join(",").into(),
            detail: detail.into(),
        };
        TagRouter {
            rules: rules
                .into_iter()
                .map(|(application, _, rule)| AppRule { application, rule })
                .collect(),
            rule_ref,
        }
    }

    fn route_static(ctx: &RouteContext<'_>, tag: &str, force: bool, input: &[u32]) -> Routed {
        if tag.is_empty() {
            return Routed::kept(
                filter(ctx, input, |p| static_tag(p).is_empty()),
                "untagged request: untagged providers",
            );
        }
        let tagged = filter(ctx, input, |p| static_tag(p) == tag);
        if !tagged.is_empty() || force {
            return Routed::kept(tagged, format!("providers with static tag {tag}"));
        }
        let untagged = filter(ctx, input, |p| static_tag(p).is_empty());
        Routed::kept(
            untagged,
            format!("no provider tagged {tag}: fell back to untagged providers"),
        )
    }
}

/// An active rule of a route, with its tags' addresses over its own application's providers.
struct GoverningRule<'r> {
    rule: &'r AppRule,
    by_tag: HashMap<String, Vec<String>>,
    /// Every address of every tag.
    all: Vec<String>,
}

/// The active rules of a route.
struct Governing<'r> {
    rules: Vec<GoverningRule<'r>>,
}

impl<'r> Governing<'r> {
    fn new(rules: &'r [AppRule], providers: &[Arc<Provider>]) -> Governing<'r> {
        let rules = rules
            .iter()
            .filter(|r| r.rule.is_active())
            .map(|rule| {
                let own: Vec<Arc<Provider>> = providers
                    .iter()
                    .filter(|p| provider_application(p) == rule.application)
                    .cloned()
                    .collect();
                let by_tag = rule.rule.addresses_by_tag(&own);
                let all = by_tag.values().flatten().cloned().collect();
                GoverningRule { rule, by_tag, all }
            })
            .collect();
        Governing { rules }
    }

    /// The index of the rule governing `provider`.
    fn of(&self, provider: &Provider) -> Option<usize> {
        let application = provider_application(provider);
        self.rules
            .iter()
            .position(|g| g.rule.application == application)
    }

    /// Whether `provider` is at an address of any tag of its application's rule.
    fn dynamically_tagged(&self, provider: &Provider) -> bool {
        self.of(provider)
            .is_some_and(|r| at_any(provider, &self.rules[r].all))
    }
}

impl Router for TagRouter {
    fn rule(&self) -> &RuleRef {
        &self.rule_ref
    }

    fn reads_call(&self) -> bool {
        true
    }

    fn key<'a>(&self, consumer: &'a Consumer, invocation: &'a Invocation) -> RouteKey<'a> {
        RouteKey::Tag {
            tag: consumer.request_tag(invocation).into(),
            force: consumer.force_tag(invocation),
        }
    }

    fn route(&self, ctx: &RouteContext<'_>, key: &RouteKey<'_>, input: &[u32]) -> Routed {
        let (tag, force_tag) = match key {
            RouteKey::Tag { tag, force } => (&**tag, *force),
            _ => ("", false),
        };
        if input.is_empty() {
            return Routed::unchanged(input, "nothing to route");
        }
        let governing = Governing::new(&self.rules, ctx.providers);
        if governing.rules.is_empty() {
            return TagRouter::route_static(ctx, tag, force_tag, input);
        }
        if tag.is_empty() {
            let kept = filter(ctx, input, |p| !governing.dynamically_tagged(p));
            if kept.is_empty() {
                return Routed::kept(kept, "untagged request, every provider has a dynamic tag");
            }
            let kept = filter(ctx, &kept, |p| static_tag(p).is_empty());
            return Routed::kept(
                kept,
                "untagged request: providers with no dynamic or static tag",
            );
        }
        // Per rule: the addresses of the requested tag (longest `|`-prefix), `None` when it has none.
        let selected: Vec<Option<&Vec<String>>> = governing
            .rules
            .iter()
            .map(|g| select_by_tag_level(&g.by_tag, tag, force_tag))
            .collect();
        let result = filter(ctx, input, |p| {
            match governing.of(p).and_then(|r| selected[r]) {
                Some(addresses) => at_any(p, addresses),
                None => static_tag(p) == tag,
            }
        });
        if !result.is_empty() {
            let reason = if selected.iter().any(Option::is_some) {
                format!("providers at the addresses of dynamic tag {tag}")
            } else {
                format!("providers tagged {tag}")
            };
            return Routed::kept(result, reason);
        }
        let forced_by_rule = governing
            .rules
            .iter()
            .zip(&selected)
            .any(|(g, s)| s.is_some() && g.rule.rule.force);
        if forced_by_rule {
            return Routed::kept(
                result,
                format!("dynamic tag {tag} has no live provider and its rule has force: true"),
            );
        }
        if force_tag {
            return Routed::kept(result, format!("no provider tagged {tag}, dubbo.force.tag"));
        }
        let kept = filter(ctx, input, |p| {
            !governing.dynamically_tagged(p) && static_tag(p).is_empty()
        });
        Routed {
            outcome: Outcome::Kept(kept),
            reason: format!("no provider tagged {tag}: fell back to untagged providers").into(),
        }
    }
}

#[cfg(test)]
mod tests;
