use super::*;

fn url(s: &str) -> DubboUrl {
    DubboUrl::parse(s).unwrap()
}

fn consumer() -> ConsumerSide {
    ConsumerSide {
        host: "10.0.0.9".into(),
        application: "shop".into(),
    }
}

fn weight_after(rules: &[&str], provider: &str) -> Option<String> {
    let rules = Configurators::from_urls(rules.iter().map(|r| url(r)));
    rules
        .apply(url(provider), &consumer())
        .parameter("weight")
        .map(str::to_owned)
}

const P1: &str = "dubbo://10.0.0.1:20880/S?application=prov&weight=100";

#[test]
fn address_specific_rule_hits_only_that_provider() {
    let rule = "override://10.0.0.1:20880/S?category=configurators&dynamic=false&weight=200";
    assert_eq!(weight_after(&[rule], P1).as_deref(), Some("200"));
    let other_port = "dubbo://10.0.0.1:20881/S?weight=100";
    assert_eq!(weight_after(&[rule], other_port).as_deref(), Some("100"));
    let other_host = "dubbo://10.0.0.2:20880/S?weight=100";
    assert_eq!(weight_after(&[rule], other_host).as_deref(), Some("100"));
}

#[test]
fn anyhost_rules_apply_to_every_provider_and_specific_ones_win() {
    let all = "override://0.0.0.0/S?category=configurators&weight=50";
    let one = "override://10.0.0.1:20880/S?category=configurators&weight=300";
    // Registry order does not matter: 0.0.0.0 sorts first, so the specific rule is applied last.
    assert_eq!(weight_after(&[one, all], P1).as_deref(), Some("300"));
    assert_eq!(
        weight_after(&[one, all], "dubbo://10.0.0.2:1/S").as_deref(),
        Some("50")
    );
}

#[test]
fn priority_orders_rules_of_the_same_host() {
    let high = "override://0.0.0.0/S?priority=5&weight=1";
    let low = "override://0.0.0.0/S?priority=1&weight=2";
    assert_eq!(weight_after(&[high, low], P1).as_deref(), Some("1"));
    assert_eq!(weight_after(&[low, high], P1).as_deref(), Some("1"));
}

#[test]
fn portless_rule_targets_this_consumer_host() {
    let mine = "override://10.0.0.9/S?weight=7";
    let theirs = "override://10.0.0.8/S?weight=7";
    assert_eq!(weight_after(&[mine], P1).as_deref(), Some("7"));
    assert_eq!(weight_after(&[theirs], P1).as_deref(), Some("100"));
}

#[test]
fn empty_clears_every_rule() {
    let rule = "override://0.0.0.0/S?weight=7";
    assert_eq!(
        weight_after(&[rule, "empty://0.0.0.0/S?category=configurators"], P1).as_deref(),
        Some("100")
    );
}

#[test]
fn disabled_rule_is_ignored_and_condition_keys_are_not_copied() {
    let off = "override://0.0.0.0/S?enabled=false&weight=7";
    assert_eq!(weight_after(&[off], P1).as_deref(), Some("100"));
    let rules = Configurators::from_urls([url(
        "override://0.0.0.0/S?category=configurators&dynamic=false&check=false&side=consumer&disabled=true&loadbalance=roundrobin",
    )]);
    let configured = rules.apply(url(P1), &consumer());
    assert_eq!(configured.parameter("disabled"), Some("true"));
    assert_eq!(configured.parameter("loadbalance"), Some("roundrobin"));
    for key in ["category", "dynamic", "check", "side"] {
        assert_eq!(configured.parameter(key), None, "{key} copied");
    }
    assert!(crate::matching::is_disabled(&configured));
}

#[test]
fn anyhost_only_rules_are_skipped() {
    assert!(Configurators::from_urls([url("override://0.0.0.0/S?anyhost=true")]).is_empty());
}

#[test]
fn service_key_and_application_must_match() {
    let versioned = "override://0.0.0.0/S?version=2.0&weight=7";
    assert_eq!(weight_after(&[versioned], P1).as_deref(), Some("100"));
    assert_eq!(
        weight_after(&[versioned], "dubbo://10.0.0.1:20880/S?version=2.0").as_deref(),
        Some("7")
    );
    let other_app = "override://0.0.0.0/S?application=billing&weight=7";
    assert_eq!(weight_after(&[other_app], P1).as_deref(), Some("100"));
    let star = "override://0.0.0.0/*?weight=7";
    assert_eq!(weight_after(&[star], P1).as_deref(), Some("7"));
}

#[test]
fn provider_addresses_and_tilde_conditions_select() {
    let listed = "override://0.0.0.0/S?providerAddresses=10.0.0.2:1,10.0.0.1:20880&weight=7";
    assert_eq!(weight_after(&[listed], P1).as_deref(), Some("7"));
    let unlisted = "override://0.0.0.0/S?providerAddresses=10.0.0.2:1&weight=7";
    assert_eq!(weight_after(&[unlisted], P1).as_deref(), Some("100"));
    let tilde_hit = "override://0.0.0.0/S?~application=prov&weight=7";
    assert_eq!(weight_after(&[tilde_hit], P1).as_deref(), Some("7"));
    let tilde_miss = "override://0.0.0.0/S?~application=other&weight=7";
    assert_eq!(weight_after(&[tilde_miss], P1).as_deref(), Some("100"));
}

#[test]
fn versioned_rules_need_side_consumer() {
    let provider_side = "override://0.0.0.0/S?configVersion=v2.7&side=provider&weight=7";
    assert_eq!(weight_after(&[provider_side], P1).as_deref(), Some("100"));
    let consumer_side = "override://0.0.0.0/S?configVersion=v2.7&side=consumer&weight=7";
    assert_eq!(weight_after(&[consumer_side], P1).as_deref(), Some("7"));
}

#[test]
fn absent_only_fills_gaps() {
    let rule = "absent://0.0.0.0/S?weight=7&loadbalance=leastactive";
    let rules = Configurators::from_urls([url(rule)]);
    let configured = rules.apply(url(P1), &consumer());
    assert_eq!(configured.parameter("weight"), Some("100"));
    assert_eq!(configured.parameter("loadbalance"), Some("leastactive"));
}

#[test]
fn method_scoped_weight_is_copied() {
    let rule = "override://0.0.0.0/S?sayHello.weight=9";
    let rules = Configurators::from_urls([url(rule)]);
    let configured = rules.apply(url(P1), &consumer());
    assert_eq!(configured.method_parameter("sayHello", "weight"), Some("9"));
    assert_eq!(configured.method_parameter("other", "weight"), Some("100"));
}
