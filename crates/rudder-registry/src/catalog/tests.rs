//! Unit tests of the catalog.
use super::*;
use crate::config_center::RuleSource;
use rudder_common::url::java_url_encode;
use rudder_common::url::merge::ConsumerParams;

#[test]
fn set_providers_reports_what_changed() {
    let url = |i: u32| DubboUrl::parse(&format!("dubbo://10.0.0.{i}:20880/S?weight={i}")).unwrap();
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
    // dubbo:// and tri:// are both callable (matching::CALLABLE_PROTOCOLS); rest:// is not.
    assert_eq!(addresses(&c), ["10.0.0.1:1", "10.0.0.2:1"]);
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
fn reweighted_names_the_rule_that_set_the_weight_last() {
    let mut c = Catalog::new(&ConsumerSpec::new("S"), side());
    c.set_providers(vec![
        node("dubbo://10.0.0.1:1/S?weight=100"),
        node("dubbo://10.0.0.2:1/S?weight=100"),
        node("dubbo://10.0.0.3:1/S"),
    ]);
    assert!(c.reweighted().is_empty(), "no rule, nothing reweighted");
    c.set_configurators(vec![
        node("override://10.0.0.1:1/S?category=configurators&weight=300"),
        node("override://10.0.0.3:1/S?category=configurators&disabled=true&weight=7"),
    ]);
    let rule = "configVersion: v2.7\nscope: service\nkey: S\nconfigs:\n\
                - side: consumer\n  addresses: ['0.0.0.0']\n  providerAddresses: [10.0.0.2:1]\n  parameters:\n    weight: 50\n";
    c.set_dynamic_rule(RuleSource::Service, Some(rule));
    let reweighted = c.reweighted();
    assert_eq!(
        reweighted,
        [
            ReweightedProvider {
                address: "10.0.0.1:1".into(),
                registered: Some("100".into()),
                weight: "300".into(),
                rule: "configurators".into(),
            },
            ReweightedProvider {
                address: "10.0.0.2:1".into(),
                registered: Some("100".into()),
                weight: "50".into(),
                rule: "S::.configurators".into(),
            },
        ],
        "the disabled provider is left out"
    );
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

#[test]
fn names_that_read_as_one_url_are_one_provider() {
    let plain = "dubbo://10.0.0.1:1/S?a=1&b=2";
    let encoded = node("dubbo://10.0.0.1:1/S?b=2&a=1");
    let lower = encoded.to_lowercase().replace("s%3fb", "S%3fb");
    let mut c = Catalog::new(&ConsumerSpec::new("S"), side());
    let first = c.set_providers(vec![lower.clone(), plain.to_owned(), encoded.clone()]);
    assert_eq!(first.added.len(), 1, "{first:?}");
    assert_eq!(addresses(&c), ["10.0.0.1:1"]);
    // The same URL whichever name is listed first: the output does not depend on the spelling.
    let only = c.provider_urls();
    assert_eq!(only[0].to_full_string(), "dubbo://10.0.0.1:1/S?a=1&b=2");
    // Dropping two of the three names keeps the provider; dropping the last removes it, once.
    assert!(c.set_providers(vec![encoded.clone()]).is_empty());
    assert_eq!(c.provider_urls(), only);
    let gone = c.set_providers(Vec::new());
    assert_eq!((gone.added.len(), gone.removed.len()), (0, 1));
    // Back under another spelling: one addition.
    let back = c.set_providers(vec![plain.to_owned()]);
    assert_eq!(back.added.len(), 1);
}

#[test]
fn junk_is_warned_about_and_counted_once_across_listings_and_categories() {
    let mut c = Catalog::new(&ConsumerSpec::new("S"), side());
    let junk = "dubbo%3A%2F%2F%3A99999%2FS".to_owned();
    c.set_providers(vec![junk.clone()]);
    c.set_providers(Vec::new());
    c.set_providers(vec![junk.clone()]);
    assert_eq!(
        c.malformed(),
        1,
        "a name that comes back is not counted again"
    );
    let bad_rule = "override%3A%2F%2Fh%3Aport%2FS".to_owned();
    for _ in 0..3 {
        c.set_configurators(vec![bad_rule.clone(), bad_rule.clone()]);
    }
    assert_eq!(
        c.malformed(),
        2,
        "configurators re-listed are not counted again"
    );
}

#[test]
fn junk_memory_is_bounded() {
    let mut c = Catalog::new(&ConsumerSpec::new("S"), side());
    let cap = crate::junk::REMEMBERED;
    for round in 0..3 {
        let names = (0..cap).map(|i| format!("%zz{round}-{i}")).collect();
        c.set_providers(names);
    }
    assert_eq!(c.malformed(), cap as u64);
    assert!(c.provider_urls().is_empty());
}

/// Dubbo 3.3's six layers (override m.k, consumer m.k, provider m.k, override k, consumer k,
/// provider k), each present or not, through the catalog: consumer parameters, then configurators.
#[test]
fn consumer_parameters_and_configurators_resolve_in_dubbo_order() {
    const LAYERS: [&str; 6] = [
        "override-m",
        "consumer-m",
        "provider-m",
        "override",
        "consumer",
        "provider",
    ];
    for mask in 0u8..64 {
        let has = |layer: usize| mask & (1 << layer) != 0;
        let mut provider = DubboUrl::parse("dubbo://10.0.0.1:1/S").unwrap();
        let mut consumer = DubboUrl::parse("consumer://10.0.0.9/S").unwrap();
        let mut rule = DubboUrl::parse("override://0.0.0.0/S?category=configurators").unwrap();
        for (layer, name) in LAYERS.iter().enumerate().filter(|(l, _)| has(*l)) {
            let key = if layer < 3 { "m.timeout" } else { "timeout" };
            match layer % 3 {
                0 => rule = rule.with_parameter(key, name),
                1 => consumer = consumer.with_parameter(key, name),
                _ => provider = provider.with_parameter(key, name),
            }
        }
        let spec = ConsumerSpec::new("S").parameters(ConsumerParams::new(&consumer));
        let mut c = Catalog::new(&spec, side());
        c.set_configurators(vec![rule.to_node_name()]);
        c.set_providers(vec![provider.to_node_name()]);
        let expected = (0..6).find(|l| has(*l)).map(|l| LAYERS[l]);
        let seen = c.provider_urls();
        assert_eq!(
            seen[0].method_parameter("m", "timeout"),
            expected,
            "mask {mask:06b}"
        );
    }
}

#[test]
fn a_removal_carries_the_url_its_insertion_carried() {
    let consumer =
        DubboUrl::parse("consumer://10.0.0.9/S?timeout=100&loadbalance=roundrobin").unwrap();
    let spec = ConsumerSpec::new("S").parameters(ConsumerParams::new(&consumer));
    let mut c = Catalog::new(&spec, side());
    c.set_configurators(vec![node("override://10.0.0.2:1/S?weight=7")]);
    c.set_providers(vec![node("dubbo://10.0.0.1:1/S?threads=9")]);
    let provider = node("dubbo://10.0.0.2:1/S?timeout=5&application=p");
    let added = c.set_providers(vec![node("dubbo://10.0.0.1:1/S?threads=9"), provider]);
    let inserted = match c.changes(&added).as_slice() {
        [Change::Insert(url)] => url.clone(),
        other => panic!("one insertion expected: {other:?}"),
    };
    assert_eq!(inserted.parameter("timeout"), Some("100"));
    assert_eq!(inserted.parameter("weight"), Some("7"));
    assert_eq!(inserted.parameter("remote.application"), Some("p"));
    let removed = c.set_providers(vec![node("dubbo://10.0.0.1:1/S?threads=9")]);
    assert_eq!(c.changes(&removed), vec![Change::Remove(inserted.clone())]);
    // The full list agrees with the delta, and drops what only a provider uses.
    let full = c.provider_urls();
    assert_eq!(full.len(), 1);
    assert_eq!(full[0].parameter("threads"), None);
    assert_eq!(full[0].parameter("loadbalance"), Some("roundrobin"));
}

#[test]
fn debug_shows_no_child_name() {
    let mut c = Catalog::new(&ConsumerSpec::new("S"), side());
    c.set_providers(vec![node("dubbo://admin:hunter2@10.0.0.1:1/S")]);
    assert_eq!(c.provider_urls().len(), 1);
    let shown = format!("{c:?} {:?}", c.provider_urls());
    assert!(!shown.contains("hunter2"), "{shown}");
}

/// Everything logged on this thread while `work` runs, as text.
///
/// One global subscriber for the whole test binary, writing to a per-thread buffer: a subscriber
/// scoped to one test would race with tests on other threads that cache their callsites as disabled.
fn logged(work: impl FnOnce()) -> String {
    use std::cell::RefCell;
    thread_local! {
        static CAPTURED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    struct ThisThread;
    impl std::io::Write for ThisThread {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            CAPTURED.with(|c| c.borrow_mut().extend_from_slice(bytes));
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_ansi(false)
            .with_writer(|| ThisThread)
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("one global subscriber");
        tracing::callsite::rebuild_interest_cache();
    });
    CAPTURED.with(|c| c.borrow_mut().clear());
    work();
    let bytes = CAPTURED.with(|c| std::mem::take(&mut *c.borrow_mut()));
    String::from_utf8(bytes).unwrap()
}

#[test]
fn junk_with_credentials_is_logged_once_and_without_them() {
    let mut c = Catalog::new(&ConsumerSpec::new("S"), side());
    let junk = vec![
        // A password with `/` makes the port unreadable: the error would quote part of it.
        java_url_encode("dubbo://admin:s3cr/et@10.0.0.1:1/S"),
        java_url_encode("dubbo://admin:s3cret@10.0.0.1:99999/S"),
        "dubbo%3A%2F%2Fadmin%3As3cret%40h%3A1%2F%zz".to_owned(),
    ];
    let rules = vec![java_url_encode("override://admin:s3cret@h:port/S?weight=1")];
    let log = logged(|| {
        for _ in 0..3 {
            c.set_providers(junk.clone());
            c.set_configurators(rules.clone());
        }
    });
    assert!(!log.contains("s3cr"), "{log}");
    assert_eq!(
        log.matches("skipping unreadable provider node").count(),
        3,
        "{log}"
    );
    assert_eq!(
        log.matches("skipping unreadable configurator node").count(),
        1,
        "{log}"
    );
    assert!(log.contains("dubbo://***@10.0.0.1:99999/S"), "{log}");
    assert_eq!(c.malformed(), 4);
}

#[test]
fn reweighted_with_a_second_rule_disabling_another_provider() {
    let spec = ConsumerSpec::new("I").version("1.0.0");
    let mut c = Catalog::new(&spec, side());
    c.set_providers(vec![
        // As a Java provider re-registers itself after the rule: with the rule's weight.
        node("dubbo://127.0.0.1:24001/I?version=1.0.0&weight=300"),
        node("dubbo://127.0.0.1:24003/I?version=1.0.0&weight=100"),
    ]);
    c.set_configurators(vec![
        node("override://127.0.0.1:24001/I?category=configurators&weight=300&version=1.0.0"),
        node("override://127.0.0.1:24003/I?category=configurators&disabled=true&version=1.0.0"),
    ]);
    assert_eq!(c.disabled().len(), 1);
    assert_eq!(
        c.reweighted(),
        [ReweightedProvider::new(
            "127.0.0.1:24001",
            Some("300"),
            "300",
            "configurators"
        )]
    );
}

/// The example once in the module's documentation (the module is private, so doctests cannot reach it).
#[test]
fn module_example() -> Result<(), Box<dyn std::error::Error>> {
    use crate::catalog::Catalog;
    use crate::configurator::ConsumerSide;
    use crate::ConsumerSpec;
    use rudder_common::url::DubboUrl;

    let side = ConsumerSide {
        host: "10.0.0.9".into(),
        application: "shop".into(),
    };
    let mut catalog = Catalog::new(&ConsumerSpec::new("S"), side);
    let good = DubboUrl::parse("dubbo://10.0.0.1:20880/S?weight=100")?.to_node_name();
    catalog.set_providers(vec![good, "%zz-not-a-url".to_owned()]);
    assert_eq!(catalog.provider_urls().len(), 1);
    assert_eq!(catalog.malformed(), 1);

    let rule = DubboUrl::parse("override://10.0.0.1:20880/S?weight=300")?.to_node_name();
    catalog.set_configurators(vec![rule]);
    assert_eq!(catalog.provider_urls()[0].parameter("weight"), Some("300"));
    Ok(())
}

/// The example once in the module's documentation (the module is private, so doctests cannot reach it).
#[test]
fn set_dynamic_rule_example() -> Result<(), Box<dyn std::error::Error>> {
    use crate::catalog::Catalog;
    use crate::config_center::{RuleOutcome, RuleSource};
    use crate::configurator::ConsumerSide;
    use crate::ConsumerSpec;
    use rudder_common::url::DubboUrl;

    let side = ConsumerSide {
        host: "10.0.0.9".into(),
        application: "shop".into(),
    };
    let mut catalog = Catalog::new(&ConsumerSpec::new("S"), side);
    catalog.set_providers(vec![DubboUrl::parse(
        "dubbo://10.0.0.1:20880/S?weight=100",
    )?
    .to_node_name()]);
    let rule = "configVersion: v2.7\nscope: service\nkey: S\nconfigs:\n\
                - side: consumer\n  parameters:\n    weight: 300\n";
    assert_eq!(
        catalog.set_dynamic_rule(RuleSource::Service, Some(rule)),
        RuleOutcome::Changed
    );
    assert_eq!(catalog.provider_urls()[0].parameter("weight"), Some("300"));
    assert!(matches!(
        catalog.set_dynamic_rule(RuleSource::Service, Some("{")),
        RuleOutcome::Rejected(_)
    ));
    assert_eq!(catalog.provider_urls()[0].parameter("weight"), Some("300"));
    catalog.set_dynamic_rule(RuleSource::Service, None);
    assert_eq!(catalog.provider_urls()[0].parameter("weight"), Some("100"));
    Ok(())
}
