//! The catalog: what the registry's child lists mean for one consumer, without any I/O.
//!
//! The subscription task hands it the raw child names of `providers` and `configurators` after each
//! listing; the catalog decodes and parses only names it has not seen before (a re-list of 10,000 providers
//! with one change parses one URL), keeps those that match the consumer, and produces the provider list for
//! the directory with the configurators applied. A child that cannot be decoded or parsed is skipped with a
//! warning and counted once, and never disturbs the others.
//!
//! # Order
//!
//! ZooKeeper returns children in no defined order. The catalog sorts them by node name, so the provider
//! order (and with it the policy named by the first provider, which Dubbo reads for `loadbalance`) is the
//! same on every listing and on every consumer.
//!
//! ```
//! use rudder_common::url::DubboUrl;
//! use rudder_registry::catalog::Catalog;
//! use rudder_registry::configurator::ConsumerSide;
//! use rudder_registry::ConsumerSpec;
//!
//! let side = ConsumerSide { host: "10.0.0.9".into(), application: "shop".into() };
//! let mut catalog = Catalog::new(&ConsumerSpec::new("S"), side);
//! let good = DubboUrl::parse("dubbo://10.0.0.1:20880/S?weight=100")?.to_node_name();
//! catalog.set_providers(vec![good, "%zz-not-a-url".to_owned()]);
//! assert_eq!(catalog.provider_urls().len(), 1);
//! assert_eq!(catalog.malformed(), 1);
//!
//! let rule = DubboUrl::parse("override://10.0.0.1:20880/S?weight=300")?.to_node_name();
//! catalog.set_configurators(vec![rule]);
//! assert_eq!(catalog.provider_urls()[0].parameter("weight"), Some("300"));
//! # Ok::<(), rudder_common::url::UrlError>(())
//! ```

use rudder_common::discovery::Change;
use rudder_common::url::DubboUrl;

use crate::configurator::{Configurators, ConsumerSide};
use crate::consumer::ConsumerSpec;
use crate::matching::{is_disabled, Matcher};

/// What one provider child name turned out to be.
#[derive(Debug, Clone)]
enum Entry {
    /// A provider this consumer can use (before configurators).
    Usable(DubboUrl),
    /// A well-formed URL for someone else (other version, group, protocol, `empty://`, disabled).
    Ignored,
    /// Could not be read.
    Malformed,
}

/// Usable providers that appeared or disappeared in one listing (URLs as registered, before rules).
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
#[derive(Debug)]
pub struct Catalog {
    matcher: Matcher,
    consumer: ConsumerSide,
    /// Sorted by node name.
    providers: Vec<(String, Entry)>,
    configurators: Configurators,
    malformed: u64,
}

impl Catalog {
    /// An empty catalog for `spec`, whose address and application configurator rules are matched against.
    pub fn new(spec: &ConsumerSpec, consumer: ConsumerSide) -> Catalog {
        Catalog {
            matcher: Matcher::new(spec),
            consumer,
            providers: Vec::new(),
            configurators: Configurators::default(),
            malformed: 0,
        }
    }

    /// Child names seen so far that could not be read (each counted once).
    pub fn malformed(&self) -> u64 {
        self.malformed
    }

    /// The configurator rules in effect.
    pub fn configurators(&self) -> &Configurators {
        &self.configurators
    }

    /// Replaces the provider child list (an empty list means no provider), and returns what changed
    /// among the usable providers, before configurators.
    pub fn set_providers(&mut self, mut children: Vec<String>) -> ProviderDelta {
        children.sort_unstable();
        children.dedup();
        let old = std::mem::take(&mut self.providers);
        let mut old = old.into_iter().peekable();
        let mut merged = Vec::with_capacity(children.len());
        let mut delta = ProviderDelta::default();
        let gone = |entry: Entry, delta: &mut ProviderDelta| {
            if let Entry::Usable(url) = entry {
                delta.removed.push(url);
            }
        };
        for name in children {
            // Both lists are sorted: skip old names that are gone, reuse the entry of a name still there.
            while let Some((_, entry)) = old.next_if(|(seen, _)| *seen < name) {
                gone(entry, &mut delta);
            }
            let entry = match old.next_if(|(seen, _)| *seen == name) {
                Some((_, entry)) => entry,
                None => {
                    let entry = self.classify_provider(&name);
                    if let Entry::Usable(url) = &entry {
                        delta.added.push(url.clone());
                    }
                    entry
                }
            };
            merged.push((name, entry));
        }
        for (_, entry) in old {
            gone(entry, &mut delta);
        }
        self.providers = merged;
        delta
    }

    /// The directory changes for `delta` under the current rules: removals first, then additions.
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

    /// A usable provider URL with the configurators applied; `None` when a rule disables it.
    pub fn configured(&self, url: &DubboUrl) -> Option<DubboUrl> {
        Some(self.configurators.apply(url.clone(), &self.consumer)).filter(|u| !is_disabled(u))
    }

    /// Replaces the configurator child list (an empty list means no rule); whether the rules changed.
    pub fn set_configurators(&mut self, mut children: Vec<String>) -> bool {
        children.sort_unstable();
        let mut rules = Vec::with_capacity(children.len());
        for name in children {
            // Dubbo 3.x ignores configurator children that are not encoded URLs.
            if !name.contains("%3A%2F%2F") && !name.contains("://") {
                continue;
            }
            match DubboUrl::from_node_name(&name) {
                Ok(url) if self.matcher.is_match(&url) => rules.push(url),
                Ok(_) => {}
                Err(error) => {
                    self.malformed += 1;
                    tracing::warn!(node = %name, %error, "skipping unreadable configurator node");
                }
            }
        }
        let rules = Configurators::from_urls(rules);
        let changed = rules != self.configurators;
        self.configurators = rules;
        changed
    }

    /// The usable providers with the configurators applied, in node-name order, disabled ones left out.
    pub fn provider_urls(&self) -> Vec<DubboUrl> {
        self.providers
            .iter()
            .filter_map(|(_, entry)| match entry {
                Entry::Usable(url) => Some(url),
                _ => None,
            })
            .map(|url| self.configurators.apply(url.clone(), &self.consumer))
            .filter(|url| !is_disabled(url))
            .collect()
    }

    fn classify_provider(&mut self, name: &str) -> Entry {
        let url = match DubboUrl::from_node_name(name) {
            Ok(url) if !url.protocol().is_empty() && !url.host().is_empty() => url,
            Ok(_) => {
                self.malformed += 1;
                tracing::warn!(node = %name, "skipping provider node without protocol or host");
                return Entry::Malformed;
            }
            Err(error) => {
                self.malformed += 1;
                tracing::warn!(node = %name, %error, "skipping unreadable provider node");
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
        Entry::Usable(url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_providers_reports_what_changed() {
        let url =
            |i: u32| DubboUrl::parse(&format!("dubbo://10.0.0.{i}:20880/S?weight={i}")).unwrap();
        let side = ConsumerSide {
            host: "10.0.0.9".into(),
            application: "app".into(),
        };
        let mut catalog = Catalog::new(&ConsumerSpec::new("S"), side);
        let first = catalog.set_providers(vec![url(1).to_node_name(), url(2).to_node_name()]);
        assert_eq!((first.added.len(), first.removed.len()), (2, 0));
        let unchanged = catalog.set_providers(vec![url(2).to_node_name(), url(1).to_node_name()]);
        assert!(unchanged.is_empty());
        let other = DubboUrl::parse("dubbo://10.0.0.5:1/Other")
            .unwrap()
            .to_node_name();
        let next = catalog.set_providers(vec![url(1).to_node_name(), url(3).to_node_name(), other]);
        assert_eq!(
            next.added,
            vec![url(3)],
            "a provider of another service is not usable"
        );
        assert_eq!(next.removed, vec![url(2)]);
    }

    fn side() -> ConsumerSide {
        ConsumerSide {
            host: "10.0.0.9".into(),
            application: "shop".into(),
        }
    }

    fn node(s: &str) -> String {
        DubboUrl::parse(s).unwrap().to_node_name()
    }

    fn addresses(catalog: &Catalog) -> Vec<String> {
        catalog
            .provider_urls()
            .iter()
            .map(DubboUrl::address)
            .collect()
    }

    #[test]
    fn providers_come_out_in_node_name_order_whatever_the_listing_order() {
        let mut c = Catalog::new(&ConsumerSpec::new("S"), side());
        let a = node("dubbo://10.0.0.1:1/S");
        let b = node("dubbo://10.0.0.2:1/S");
        c.set_providers(vec![b.clone(), a.clone()]);
        assert_eq!(addresses(&c), ["10.0.0.1:1", "10.0.0.2:1"]);
        c.set_providers(vec![a, b]);
        assert_eq!(addresses(&c), ["10.0.0.1:1", "10.0.0.2:1"]);
    }

    #[test]
    fn filters_version_group_protocol_and_empty() {
        let spec = ConsumerSpec::new("S").version("1.0").group("g");
        let mut c = Catalog::new(&spec, side());
        c.set_providers(vec![
            node("dubbo://10.0.0.1:1/S?version=1.0&group=g"),
            node("tri://10.0.0.2:1/S?version=1.0&group=g"),
            node("rest://10.0.0.3:1/S?version=1.0&group=g"),
            node("dubbo://10.0.0.4:1/S?version=2.0&group=g"),
            node("dubbo://10.0.0.5:1/S?version=1.0"),
            node("dubbo://10.0.0.6:1/S?version=1.0&group=g&enabled=false"),
            node("empty://10.0.0.7/S?version=1.0&group=g"),
        ]);
        // tri:// is left out too while rudder cannot call it (see matching::CALLABLE_PROTOCOLS).
        assert_eq!(addresses(&c), ["10.0.0.1:1"]);
        assert_eq!(c.malformed(), 0);
    }

    #[test]
    fn malformed_children_are_counted_once_and_do_not_hide_good_ones() {
        let mut c = Catalog::new(&ConsumerSpec::new("S"), side());
        let good = node("dubbo://10.0.0.1:1/S");
        let bad = vec![
            "%E0%A4%A".to_owned(),
            "dubbo%3A%2F%2F%3A99999%2FS".to_owned(),
        ];
        let mut children = bad.clone();
        children.push(good.clone());
        c.set_providers(children.clone());
        c.set_providers(children);
        assert_eq!(addresses(&c), ["10.0.0.1:1"]);
        assert_eq!(c.malformed(), 2);
    }

    #[test]
    fn an_empty_listing_empties_the_catalog() {
        let mut c = Catalog::new(&ConsumerSpec::new("S"), side());
        c.set_providers(vec![node("dubbo://10.0.0.1:1/S")]);
        c.set_providers(Vec::new());
        assert!(c.provider_urls().is_empty());
    }

    #[test]
    fn configurator_can_disable_a_provider_and_empty_clears_rules() {
        let mut c = Catalog::new(&ConsumerSpec::new("S"), side());
        c.set_providers(vec![
            node("dubbo://10.0.0.1:1/S"),
            node("dubbo://10.0.0.2:1/S"),
        ]);
        let disable = node("override://10.0.0.1:1/S?category=configurators&disabled=true");
        c.set_configurators(vec![disable.clone()]);
        assert_eq!(addresses(&c), ["10.0.0.2:1"]);
        c.set_configurators(vec![
            disable,
            node("empty://0.0.0.0/S?category=configurators"),
        ]);
        assert_eq!(addresses(&c).len(), 2);
        c.set_configurators(vec!["not-a-url".to_owned()]);
        assert_eq!(c.configurators().len(), 0);
    }

    #[test]
    fn configurators_for_another_version_are_ignored() {
        let mut c = Catalog::new(&ConsumerSpec::new("S").version("1"), side());
        c.set_providers(vec![node("dubbo://10.0.0.1:1/S?version=1")]);
        c.set_configurators(vec![node("override://0.0.0.0/S?version=2&weight=5")]);
        assert_eq!(c.provider_urls()[0].parameter("weight"), None);
        c.set_configurators(vec![node("override://0.0.0.0/S?version=1&weight=5")]);
        assert_eq!(c.provider_urls()[0].parameter("weight"), Some("5"));
    }
}
