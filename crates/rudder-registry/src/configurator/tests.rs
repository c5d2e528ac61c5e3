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

// Dubbo's OverrideConfiguratorTest, AbsentConfiguratorTest and ConfiguratorTest vectors.

fn side(host: &str, application: &str) -> ConsumerSide {
    ConsumerSide {
        host: host.into(),
        application: application.into(),
    }
}

fn timeout_after(rule: &str, target: &str, consumer: &ConsumerSide) -> Option<String> {
    Configurators::from_urls([url(rule)])
        .apply(url(target), consumer)
        .parameter("timeout")
        .map(str::to_owned)
}

#[test]
fn override_application_from_the_username() {
    let rule = "override://foo@0.0.0.0/com.foo.BarService?timeout=200";
    let foo = side("10.20.153.9", "foo");
    let bar = side("10.20.153.9", "bar");
    let plain = "dubbo://10.20.153.10:20880/com.foo.BarService?application=foo&side=consumer";
    let with_timeout =
        "dubbo://10.20.153.10:20880/com.foo.BarService?application=foo&timeout=1000&side=consumer";
    assert_eq!(timeout_after(rule, plain, &foo).as_deref(), Some("200"));
    assert_eq!(
        timeout_after(rule, with_timeout, &foo).as_deref(),
        Some("200")
    );
    let other = "dubbo://10.20.153.11:20880/com.foo.BarService?application=bar&side=consumer";
    assert_eq!(timeout_after(rule, other, &bar), None);
    let other_timeout =
        "dubbo://10.20.153.11:20880/com.foo.BarService?application=bar&timeout=1000&side=consumer";
    assert_eq!(
        timeout_after(rule, other_timeout, &bar).as_deref(),
        Some("1000")
    );
}

#[test]
fn override_and_absent_for_this_host_only() {
    let me = side("10.20.153.9", "foo");
    let target = "dubbo://10.20.153.10:20880/com.foo.BarService?application=foo&side=consumer";
    let local = "override://10.20.153.9/com.foo.BarService?timeout=200";
    assert_eq!(timeout_after(local, target, &me).as_deref(), Some("200"));
    let elsewhere = "absent://10.20.153.10/com.foo.BarService?timeout=200";
    assert_eq!(timeout_after(elsewhere, target, &me), None);
}

#[test]
fn v27_consumer_rule_applies_and_provider_rule_is_the_providers() {
    let foo = side("172.24.160.1", "foo");
    let consumer_rule =
        "override://0.0.0.0/com.foo.BarService?side=consumer&configVersion=2.7&application=foo&timeout=10000";
    let target =
        "dubbo://172.24.160.179/com.foo.BarService?application=foo&side=consumer&timeout=100";
    assert_eq!(
        timeout_after(consumer_rule, target, &foo).as_deref(),
        Some("10000")
    );
    // Dubbo's provider-side vector: on a consumer the target's side is `consumer`, so nothing changes.
    let provider_rule = "override://172.24.160.179:21880/com.foo.BarService?side=provider&configVersion=2.7&application=foo&weight=200";
    let provider =
        "dubbo://172.24.160.179:21880/com.foo.BarService?application=foo&side=provider&weight=100";
    let configured = Configurators::from_urls([url(provider_rule)]).apply(url(provider), &foo);
    assert_eq!(configured.parameter("weight"), Some("100"));
}

fn v3_rule(match_value: &str) -> String {
    format!(
        "configVersion: v3.0\nscope: service\nkey: com.foo.BarService\nconfigs:\n- side: consumer\n  \
         match:\n    param:\n      - key: match_key\n        value: {{exact: {match_value}}}\n  \
         parameters:\n    timeout: 10000\n"
    )
}

#[test]
fn v30_param_match_sees_what_earlier_rules_set_not_the_providers_parameters() {
    use crate::rule_parser::parse_configurators;
    let foo = side("172.24.160.1", "foo");
    let target = "dubbo://172.24.160.179:20880/com.foo.BarService?match_key=value&application=foo&timeout=100";
    let v3 = |value: &str| Configurators::from_rules(parse_configurators(&v3_rule(value)).unwrap());
    // The provider's own `match_key` is not on Dubbo 3.3's override URL: no match on the consumer.
    let alone = v3("value").apply(url(target), &foo);
    assert_eq!(alone.parameter("timeout"), Some("100"));
    // Set by an earlier rule, it is: Dubbo's vector (timeout 100 -> 10000), and `not_match_value` keeps 100.
    let earlier = Configurators::from_urls([url(
        "override://0.0.0.0/com.foo.BarService?category=configurators&match_key=value",
    )]);
    let hit = Configurators::apply_all([&earlier, &v3("value")], url(target), &foo);
    assert_eq!(hit.parameter("timeout"), Some("10000"));
    let miss = Configurators::apply_all([&earlier, &v3("not_match_value")], url(target), &foo);
    assert_eq!(miss.parameter("timeout"), Some("100"));
}

#[test]
fn v30_app_match_is_the_consumers_application() {
    use crate::rule_parser::parse_configurators;
    let rule =
        "configVersion: v3.0\nscope: service\nkey: S\nconfigs:\n- side: consumer\n  match:\n    \
                app:\n      oneof:\n        - exact: shop\n  parameters:\n    weight: 7\n";
    let rules = Configurators::from_rules(parse_configurators(rule).unwrap());
    assert_eq!(
        rules.apply(url(P1), &consumer()).parameter("weight"),
        Some("7")
    );
    assert_eq!(
        rules
            .apply(url(P1), &side("10.0.0.9", "billing"))
            .parameter("weight"),
        Some("100")
    );
}

#[test]
fn absent_sorts_before_override_by_priority() {
    let rules = Configurators::from_urls([
        url("override://0.0.0.0/com.xx.Service?timeout=6666&priority=2"),
        url("absent://0.0.0.0/com.xx.Service?timeout=6666&priority=1"),
    ]);
    let modes: Vec<Mode> = rules.rules.iter().map(|r| r.mode).collect();
    assert_eq!(modes, [Mode::Absent, Mode::Override]);
}

/// The example once in the module's documentation (the module is private, so doctests cannot reach it).
#[test]
fn module_example() -> Result<(), Box<dyn std::error::Error>> {
    use crate::configurator::{Configurators, ConsumerSide};
    use rudder_common::url::DubboUrl;

    let rules = Configurators::from_urls([DubboUrl::parse(
        "override://10.0.0.1:20880/S?category=configurators&dynamic=false&weight=200",
    )?]);
    let provider = DubboUrl::parse("dubbo://10.0.0.1:20880/S?weight=100")?;
    let consumer = ConsumerSide {
        host: "10.0.0.9".into(),
        application: "shop".into(),
    };
    let configured = rules.apply(provider, &consumer);
    assert_eq!(configured.parameter("weight"), Some("200"));
    assert_eq!(configured.parameter("category"), None);
    Ok(())
}
