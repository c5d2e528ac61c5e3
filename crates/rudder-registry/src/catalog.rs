//! The catalog: what the registry's child lists mean for one consumer, without any I/O.
//!
//! The subscription task hands it the raw child names of `providers` and `configurators` after each
//! listing; the catalog decodes and parses only names it has not seen before (a re-list of 10,000 providers
//! with one change parses one URL), keeps those that match the consumer, and produces the provider list for
//! the directory: each provider with the consumer's parameters merged in ([`ConsumerSpec::parameters`]),
//! then the configurators applied on top: the legacy `/configurators` rules, then the config center's
//! application rule, then its service rule ([`Catalog::set_dynamic_rule`]), so the service rule wins. A child that cannot be decoded or parsed is skipped with a
//! warning and counted once (see [`crate::junk`]), and never disturbs the others; nothing logged of it
//! shows credentials.
//!
//! # One provider, one entry
//!
//! Two child names can read as the same provider URL: encoded with other escapes (`%3a` for `%3A`), in
//! plain and in encoded form, with the parameters in another order. They are one provider, named by
//! the parsed URL's [full string](DubboUrl::to_full_string) (parameters sorted): it is listed once, at
//! the place of its first name, appears with its first name and goes with its last.
//!
//! # Order
//!
//! ZooKeeper returns children in no defined order. The catalog sorts them by node name, so the provider
//! order (and with it the policy named by the first provider, which Dubbo reads for `loadbalance`) is the
//! same on every listing and on every consumer.
//!
//! Example (a unit test, the module being private): `module_example` in its tests.

use std::collections::{HashMap, HashSet};

use rudder_common::discovery::{Change, RuleKey};
use rudder_common::url::merge::ConsumerParams;
use rudder_common::url::DubboUrl;

use crate::config_center::{DynamicRules, RuleOutcome, RuleSource};
use crate::configurator::{Configurators, ConsumerSide};
use crate::consumer::ConsumerSpec;
use crate::junk::JunkLog;
use crate::matching::{is_disabled, Matcher};
use crate::redact;
use crate::subscription::{DisabledProvider, ReweightedProvider};

/// What one provider child name turned out to be.
#[derive(Debug, Clone)]
enum Entry {
    /// A provider this consumer can use (before the consumer's parameters and configurators), with its
    /// full string, which names it: two child names that read as the same URL are one provider.
    Usable { url: DubboUrl, key: String },
    /// A well-formed URL for someone else (other version, group, protocol, `empty://`, disabled).
    Ignored,
    /// Could not be read.
    Malformed,
}

/// Usable providers that appeared or disappeared in one listing (URLs as registered, before the
/// consumer's parameters and the rules).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProviderDelta {
    /// Newly listed.
    pub added: Vec<DubboUrl>,
    /// No longer listed.
    pub removed: Vec<DubboUrl>,
}

impl ProviderDelta {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty()
    }
}

/// The consumer's view of one service's registry nodes.
///
/// Its `Debug` shows counts, not child names: a name can hold credentials.
pub struct Catalog {
    matcher: Matcher,
    consumer: ConsumerSide,
    params: ConsumerParams,
    /// Sorted by node name.
    providers: Vec<(String, Entry)>,
    /// How many listed names read as each usable provider (by full string): a provider comes and goes
    /// when its first name comes and its last one goes.
    usable: HashMap<String, u32>,
    configurators: Configurators,
    /// The config center's application and service rules.
    dynamic: DynamicRules,
    /// The config-center keys of the application and service rules, for explanations.
    rule_keys: [String; 2],
    malformed: JunkLog,
    /// Well-formed configurator URLs that are not rules (`route://` under configurators, ...).
    odd_rules: JunkLog,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("matcher", &self.matcher)
            .field("consumer", &self.consumer)
            .field("children", &self.providers.len())
            .field("providers", &self.usable.len())
            .field("configurators", &self.configurators.len())
            .field("dynamic_rules", &self.dynamic.len())
            .field("malformed", &self.malformed.count())
            .finish_non_exhaustive()
    }
}

/// A usable provider touched by one listing: whether it was listed before.
struct Touched {
    url: DubboUrl,
    was_listed: bool,
}

impl Catalog {
    /// An empty catalog for `spec`, whose address and application configurator rules are matched against.
    pub fn new(spec: &ConsumerSpec, consumer: ConsumerSide) -> Catalog {
        Catalog {
            matcher: Matcher::new(spec),
            consumer,
            params: spec.parameters.clone(),
            providers: Vec::new(),
            usable: HashMap::new(),
            configurators: Configurators::default(),
            dynamic: DynamicRules::default(),
            rule_keys: [
                format!("{}.configurators", spec.application),
                RuleKey::service(
                    spec.interface.trim(),
                    spec.version.as_deref(),
                    spec.group.as_deref(),
                    ".configurators",
                )
                .as_str()
                .to_owned(),
            ],
            malformed: JunkLog::default(),
            odd_rules: JunkLog::default(),
        }
    }

    /// Distinct child names seen so far that could not be read, each counted once (up to
    /// [`junk::REMEMBERED`](crate::junk::REMEMBERED) of them).
    pub fn malformed(&self) -> u64 {
        self.malformed.count()
    }

    /// Distinct usable providers listed (before the rules: Dubbo's migration comparator counts the
    /// addresses of each view).
    pub fn usable_count(&self) -> usize {
        self.usable.len()
    }

    /// The configurator rules in effect.
    pub fn configurators(&self) -> &Configurators {
        &self.configurators
    }

    /// Rules in effect from the config center (application and service rules).
    pub fn dynamic_rules(&self) -> usize {
        self.dynamic.len()
    }

    /// Takes the current text of a config-center rule (`None`: the node is gone) and says what it did:
    /// a deleted rule is undone; a text that cannot be read keeps the last good rules
    /// ([`RuleOutcome::Rejected`]), as does one that yields no rule.
    ///
    /// Example (a unit test, the module being private): `set_dynamic_rule_example` in its tests.
    pub fn set_dynamic_rule(&mut self, source: RuleSource, text: Option<&str>) -> RuleOutcome {
        self.dynamic.update(source, text)
    }

    /// Replaces the provider child list (an empty list means no provider), and returns what changed
    /// among the usable providers, before the consumer's parameters and the configurators.
    pub fn set_providers(&mut self, mut children: Vec<String>) -> ProviderDelta {
        children.sort_unstable();
        children.dedup();
        let old = std::mem::take(&mut self.providers);
        let mut old = old.into_iter().peekable();
        let mut merged = Vec::with_capacity(children.len());
        // In listing order, so the delta is the same whatever order ZooKeeper listed in.
        let mut touched: Vec<(String, Touched)> = Vec::new();
        let mut touched_at: HashSet<String> = HashSet::new();
        for name in children {
            // Both lists are sorted: drop old names that are gone, reuse the entry of a name still there.
            while let Some((_, entry)) = old.next_if(|(seen, _)| *seen < name) {
                self.release(entry, &mut touched, &mut touched_at);
            }
            let entry = match old.next_if(|(seen, _)| *seen == name) {
                Some((_, entry)) => entry,
                None => {
                    let entry = self.classify_provider(&name);
                    if let Entry::Usable { url, key } = &entry {
                        touch(&self.usable, key, url, &mut touched, &mut touched_at);
                        *self.usable.entry(key.clone()).or_insert(0) += 1;
                    }
                    entry
                }
            };
            merged.push((name, entry));
        }
        for (_, entry) in old {
            self.release(entry, &mut touched, &mut touched_at);
        }
        self.providers = merged;
        let mut delta = ProviderDelta::default();
        for (key, touched) in touched {
            match (touched.was_listed, self.usable.contains_key(&key)) {
                (true, false) => delta.removed.push(touched.url),
                (false, true) => delta.added.push(touched.url),
                _ => {}
            }
        }
        delta
    }

    fn release(
        &mut self,
        entry: Entry,
        touched: &mut Vec<(String, Touched)>,
        touched_at: &mut HashSet<String>,
    ) {
        let Entry::Usable { url, key } = entry else {
            return;
        };
        touch(&self.usable, &key, &url, touched, touched_at);
        if let Some(count) = self.usable.get_mut(&key) {
            *count -= 1;
            if *count == 0 {
                self.usable.remove(&key);
            }
        }
    }

    /// The directory changes for `delta` under the current rules: removals first, then additions.
    ///
    /// Each URL goes through [`Catalog::configured`], so a `Remove` carries exactly the URL the `Insert`
    /// of the same provider carried (rules changing in between cause a full list, not a delta).
    pub fn changes(&self, delta: &ProviderDelta) -> Vec<Change> {
        let removed = delta
            .removed
            .iter()
            .filter_map(|u| self.configured(u))
            .map(Change::Remove);
        let added = delta
            .added
            .iter()
            .filter_map(|u| self.configured(u))
            .map(Change::Insert);
        removed.chain(added).collect()
    }

    /// A usable provider URL as this consumer uses it: the consumer's parameters merged in (Dubbo 3.3's
    /// lookup order, see [`ConsumerParams`]), then the configurators applied on top; `None` when a rule
    /// disables it.
    pub fn configured(&self, url: &DubboUrl) -> Option<DubboUrl> {
        let merged = self.params.merge(url);
        let [application, service] = self.dynamic.in_order();
        let sources = [&self.configurators, application, service];
        Some(Configurators::apply_all(sources, merged, &self.consumer)).filter(|u| !is_disabled(u))
    }

    /// The listed providers a configurator rule disables, each with the rule that did: the first source
    /// (legacy category, application rule, service rule, in Dubbo's order) after which it is disabled.
    pub fn disabled(&self) -> Vec<DisabledProvider> {
        let mut out = Vec::new();
        self.each_ruled_provider(|url, merged, sources, labels| {
            let decided = (1..=sources.len()).find(|&n| {
                is_disabled(&Configurators::apply_all(
                    sources[..n].iter().copied(),
                    merged.clone(),
                    &self.consumer,
                ))
            });
            if let Some(n) = decided {
                out.push(DisabledProvider {
                    address: url.address(),
                    rule: labels[n - 1].to_owned(),
                });
            }
        });
        out
    }

    /// The listed providers whose `weight` a configurator rule sets, each with its weight before and
    /// after and the rule that set it last (labels as in [`Catalog::disabled`]): what `rudder providers`
    /// shows as `weight 300 (rule KEY)`. A rule that sets the weight a provider registered counts too.
    /// Disabled providers are left out.
    pub fn reweighted(&self) -> Vec<ReweightedProvider> {
        let mut out = Vec::new();
        self.each_ruled_provider(|url, merged, sources, labels| {
            let before = merged.parameter("weight").map(str::to_owned);
            // Applied to the URL without its weight, a rule that sets the weight shows even when it
            // sets the registered value (a Dubbo provider re-registers with the rule applied).
            let bare = merged.clone().without_parameter("weight");
            let mut current = None;
            let mut decided = None;
            for n in 1..=sources.len() {
                let applied = Configurators::apply_all(
                    sources[..n].iter().copied(),
                    bare.clone(),
                    &self.consumer,
                );
                let weight = applied.parameter("weight").map(str::to_owned);
                if weight != current {
                    decided = Some(n);
                    current = weight;
                }
            }
            let all = Configurators::apply_all(*sources, merged, &self.consumer);
            if is_disabled(&all) {
                return;
            }
            if let (Some(n), Some(weight)) = (decided, current) {
                out.push(ReweightedProvider {
                    address: url.address(),
                    registered: before,
                    weight,
                    rule: labels[n - 1].to_owned(),
                });
            }
        });
        out
    }

    /// Calls `f` once per usable provider (by identity) while a configurator rule is in force, with
    /// its URL, that URL merged with the consumer's parameters, the rule sources in Dubbo's order
    /// (legacy category, application rule, service rule) and their labels: the walk
    /// [`Catalog::disabled`] and [`Catalog::reweighted`] share.
    fn each_ruled_provider(
        &self,
        mut f: impl FnMut(&DubboUrl, DubboUrl, &[&Configurators; 3], &[&str; 3]),
    ) {
        if self.configurators.is_empty() && self.dynamic.len() == 0 {
            return;
        }
        let [application, service] = self.dynamic.in_order();
        let sources = [&self.configurators, application, service];
        let labels = [
            "configurators",
            self.rule_keys[0].as_str(),
            self.rule_keys[1].as_str(),
        ];
        let mut seen = HashSet::new();
        for (_, entry) in &self.providers {
            let Entry::Usable { url, key } = entry else {
                continue;
            };
            if seen.insert(key.as_str()) {
                f(url, self.params.merge(url), &sources, &labels);
            }
        }
    }

    /// Replaces the configurator child list (an empty list means no rule); whether the rules changed.
    pub fn set_configurators(&mut self, mut children: Vec<String>) -> bool {
        children.sort_unstable();
        children.dedup();
        let mut rules = Vec::with_capacity(children.len());
        for name in children {
            // Dubbo 3.x ignores configurator children that are not encoded URLs.
            if !name.contains("%3A%2F%2F") && !name.contains("://") {
                continue;
            }
            match DubboUrl::from_node_name(&name) {
                Ok(url) if !matches!(url.protocol(), "override" | "absent" | "empty") => {
                    if self.odd_rules.first_sighting(&name) {
                        tracing::warn!(url = %url, "skipping configurator with an unknown protocol");
                    }
                }
                Ok(url) if self.matcher.is_match(&url) => rules.push(url),
                Ok(_) => {}
                Err(error) => {
                    if self.malformed.first_sighting(&name) {
                        tracing::warn!(
                            node = %redact::node_name(&name),
                            error = redact::url_error(&error),
                            "skipping unreadable configurator node"
                        );
                    }
                }
            }
        }
        let rules = Configurators::from_urls(rules);
        let changed = rules != self.configurators;
        self.configurators = rules;
        changed
    }

    /// The child names listed now, in name order (what [`Catalog::set_providers`] was last given,
    /// deduplicated): empty-push protection restores them.
    pub(crate) fn child_names(&self) -> Vec<String> {
        self.providers
            .iter()
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// The usable providers as this consumer uses them ([`Catalog::configured`]), in node-name order,
    /// each once, disabled ones left out.
    pub fn provider_urls(&self) -> Vec<DubboUrl> {
        let mut emitted = HashSet::with_capacity(self.usable.len());
        self.providers
            .iter()
            .filter_map(|(_, entry)| match entry {
                Entry::Usable { url, key } if emitted.insert(key.as_str()) => Some(url),
                _ => None,
            })
            .filter_map(|url| self.configured(url))
            .collect()
    }

    fn classify_provider(&mut self, name: &str) -> Entry {
        let url = match DubboUrl::from_node_name(name) {
            Ok(url) if !url.protocol().is_empty() && !url.host().is_empty() => url,
            Ok(_) => {
                if self.malformed.first_sighting(name) {
                    tracing::warn!(
                        node = %redact::node_name(name),
                        "skipping provider node without protocol or host"
                    );
                }
                return Entry::Malformed;
            }
            Err(error) => {
                if self.malformed.first_sighting(name) {
                    tracing::warn!(
                        node = %redact::node_name(name),
                        error = redact::url_error(&error),
                        "skipping unreadable provider node"
                    );
                }
                return Entry::Malformed;
            }
        };
        // `empty://` (no provider) is simply not a provider; Dubbo reaches the same empty list.
        if url.protocol() == "empty" || !self.matcher.is_match(&url) {
            return Entry::Ignored;
        }
        if !self.matcher.accepts_protocol(url.protocol()) {
            tracing::debug!(url = %url, "skipping provider with a protocol this consumer does not use");
            return Entry::Ignored;
        }
        let key = url.to_full_string();
        Entry::Usable { url, key }
    }
}

/// Notes that the provider named `key` is touched by this listing, remembering whether it was listed.
fn touch(
    usable: &HashMap<String, u32>,
    key: &str,
    url: &DubboUrl,
    touched: &mut Vec<(String, Touched)>,
    touched_at: &mut HashSet<String>,
) {
    if !touched_at.insert(key.to_owned()) {
        return;
    }
    touched.push((
        key.to_owned(),
        Touched {
            url: url.clone(),
            was_listed: usable.contains_key(key),
        },
    ));
}

#[cfg(test)]
mod bench;
#[cfg(test)]
mod tests;
