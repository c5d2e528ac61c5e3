//! Dubbo's `ConfigParserTest`, with its YAML fixtures (`dubbo-cluster/src/test/resources/*.yml`).

use super::*;

const SERVICE_NO_APP: &str = "---
configVersion: v2.7
scope: service
key: serviceKey
configs:
- addresses: ['127.0.0.1:20880', '0.0.0.0:20881']
  parameters:
    weight: 222
...
";

const SERVICE_GROUP_VERSION: &str = "---
configVersion: v2.7
scope: service
key: testgroup/servicekey:1.0.0
configs:
- addresses: ['127.0.0.1:20880']
  parameters:
    weight: 222
...
";

const SERVICE_MULTI_APPS: &str = "---
configVersion: v2.7
scope: service
key: serviceKey
configs:
- addresses: [127.0.0.1, 0.0.0.0]
  applications: [app1, app2]
  parameters:
    timeout: 6666
...
";

const SERVICE_NO_RULE: &str = "---
configVersion: v2.7
scope: service
key: serviceKey
configs:
- addresses: [127.0.0.1, 0.0.0.0]
  applications: [app1, app2]
...
";

const APP_MULTI_SERVICES: &str = "---
configVersion: v2.7
scope: application
key: demo-consumer
configs:
- addresses: [127.0.0.1, 0.0.0.0]
  services: ['service1', 'service2']
  parameters:
    loadbalance: random
    cluster: failfast
    timeout: 6666
...
";

const APP_ANY_SERVICES: &str = "---
configVersion: v2.7
scope: application
key: demo-consumer
configs:
- addresses: [127.0.0.1, 0.0.0.0]
  services: ['*']
  parameters:
    loadbalance: random
    cluster: failfast
    timeout: 6666
...
";

const APP_NO_SERVICE: &str = "---
configVersion: v2.7
scope: application
key: demo-consumer
configs:
- addresses:
  - 127.0.0.1
  parameters:
    loadbalance: random
    cluster: failfast
    timeout: 6666
...
";

const CONSUMER_SPECIFIC_PROVIDERS: &str = "---
configVersion: v2.7
scope: application
key: demo-consumer
configs:
- addresses:
  - 127.0.0.1
  providerAddresses: ['127.0.0.1:20880']
  parameters:
    loadbalance: random
    cluster: failfast
    timeout: 6666
    weight: 222
...
";

const CONFIGURATOR_V3: &str = r#"---
configVersion: v3.0
scope: application
key: demo-provider
configs:
  - match:
      address:
        wildcard: "10.0.0.1:20880"
      service:
        oneof:
          - exact: "DemoService"
          - exact: "DemoService2"
      param:
        - key: match_key1
          value:
            exact: value1
    side: provider
    parameters:
      weight: 200
...
"#;

const CONFIGURATOR_V3_COMPATIBILITY: &str = r#"---
configVersion: v3.0
scope: application
key: demo-provider
configs:
  - addresses:
      - "10.0.0.1:20880" # compatibility test
    services:
      - "DemoService" # compatibility test
    match:
      param:
        - key: match_key1
          value:
            exact: value1
    side: provider
    parameters:
      weight: 200
...
"#;

const CONFIGURATOR_V3_DUPLICATE: &str = r#"---
configVersion: v3.0
scope: application
key: demo-provider
configs:
  - addresses:
      - "10.0.0.1:20880" # duplicate test
    services: [ "DemoService" ] # duplicate test
    match:
      address:
        wildcard: "10.0.0.1:20880"
      service:
        oneof:
          - exact: "DemoService"
          - exact: "DemoService2"
      param:
        - key: match_key1
          value:
            exact: value1
    side: provider
    parameters:
      weight: 200
...
"#;

fn parse(text: &str) -> Vec<DubboUrl> {
    parse_configurators(text)
        .unwrap()
        .into_iter()
        .map(|r| r.url)
        .collect()
}

fn url(s: &str) -> DubboUrl {
    DubboUrl::parse(s).unwrap()
}

#[test]
fn snake_yaml_basic_test() {
    let urls = parse(SERVICE_NO_APP);
    assert_eq!(urls.len(), 2);
    assert_eq!(urls[0].address(), "127.0.0.1:20880");
    assert_eq!(urls[0].parameter("weight"), Some("222"));
    assert_eq!(urls[1].address(), "0.0.0.0:20881");
}

#[test]
fn parse_configurators_service_no_app_test() {
    let urls = parse(SERVICE_NO_APP);
    assert_eq!(urls.len(), 2);
    assert_eq!(urls[0].address(), "127.0.0.1:20880");
    assert_eq!(urls[0].parameter("weight"), Some("222"));
}

#[test]
fn parse_configurators_service_group_version_test() {
    let urls = parse(SERVICE_GROUP_VERSION);
    assert_eq!(urls.len(), 1);
    assert_eq!(urls[0].parameter("group"), Some("testgroup"));
    assert_eq!(urls[0].parameter("version"), Some("1.0.0"));
    assert_eq!(
        urls[0].to_full_string(),
        "override://127.0.0.1:20880/servicekey?category=dynamicconfigurators&configVersion=v2.7&\
         enabled=true&group=testgroup&version=1.0.0&weight=222"
    );
}

#[test]
fn parse_configurators_service_multi_apps_test() {
    let urls = parse(SERVICE_MULTI_APPS);
    assert_eq!(urls.len(), 4);
    assert_eq!(urls[0].address(), "127.0.0.1");
    assert_eq!(urls[0].parameter("timeout"), Some("6666"));
    assert_eq!(urls[0].parameter("application"), Some("app1"));
    assert_eq!(urls[1].parameter("application"), Some("app2"));
    assert_eq!(urls[2].address(), "0.0.0.0");
}

#[test]
fn parse_configurators_service_no_rule_test() {
    assert_eq!(
        parse_configurators(SERVICE_NO_RULE),
        Err(RuleParseError::NoParameters)
    );
}

#[test]
fn parse_configurators_app_multi_services_test() {
    let urls = parse(APP_MULTI_SERVICES);
    assert_eq!(urls.len(), 4);
    let first = &urls[0];
    assert_eq!(first.address(), "127.0.0.1");
    assert_eq!(first.service_interface(), "service1");
    assert_eq!(first.parameter("timeout"), Some("6666"));
    assert_eq!(first.parameter("loadbalance"), Some("random"));
    assert_eq!(first.parameter("application"), Some("demo-consumer"));
    // The second `category` wins.
    assert_eq!(first.parameter("category"), Some("appdynamicconfigurators"));
    assert_eq!(urls[1].service_interface(), "service2");
}

#[test]
fn parse_configurators_app_any_services_test() {
    let urls = parse(APP_ANY_SERVICES);
    assert_eq!(urls.len(), 2);
    assert_eq!(urls[0].service_interface(), "*");
    assert_eq!(urls[0].service_key(), "*");
}

#[test]
fn parse_configurators_app_no_service_test() {
    let urls = parse(APP_NO_SERVICE);
    assert_eq!(urls.len(), 1);
    assert_eq!(urls[0].service_interface(), "*");
    assert_eq!(urls[0].parameter("cluster"), Some("failfast"));
}

#[test]
fn parse_consumer_specific_providers_test() {
    let urls = parse(CONSUMER_SPECIFIC_PROVIDERS);
    assert_eq!(urls.len(), 1);
    assert_eq!(
        urls[0].parameter("providerAddresses"),
        Some("127.0.0.1:20880")
    );
    assert_eq!(urls[0].parameter("weight"), Some("222"));
}

fn provider(s: &str) -> DubboUrl {
    url(s)
}

fn matches(rule: &OverrideRule, host: &str, target: &DubboUrl) -> bool {
    let condition = rule.condition.as_ref().expect("a match");
    condition.is_match(MatchTarget {
        host,
        url: target,
        application: target.parameter("application"),
    })
}

#[test]
fn parse_url_v3_test() {
    let rules = parse_configurators(CONFIGURATOR_V3).unwrap();
    assert_eq!(rules.len(), 1);
    let rule = &rules[0];
    assert_eq!(rule.url.address(), "0.0.0.0");
    assert_eq!(rule.url.service_interface(), "*");
    assert_eq!(rule.url.parameter("weight"), Some("200"));
    assert_eq!(rule.url.parameter("application"), Some("demo-provider"));
    assert_eq!(
        rule.url.to_full_string(),
        "override://0.0.0.0/*?application=demo-provider&category=appdynamicconfigurators&\
         configVersion=v3.0&enabled=true&providerAddresses=0.0.0.0&side=provider&weight=200"
    );
    let hit = provider("dubbo://10.0.0.1:20880/DemoService?match_key1=value1");
    assert!(matches(rule, "10.0.0.1:20880", &hit));
    let second = provider("dubbo://10.0.0.1:20880/DemoService2?match_key1=value1");
    assert!(matches(rule, "10.0.0.1:20880", &second));
    let other_host = provider("dubbo://10.0.0.2:20880/DemoService?match_key1=value1");
    assert!(!matches(rule, "10.0.0.2:20880", &other_host));
    let other_service = provider("dubbo://10.0.0.1:20880/DemoServiceNotMatch?match_key1=value1");
    assert!(!matches(rule, "10.0.0.1:20880", &other_service));
    let other_param = provider("dubbo://10.0.0.1:20880/DemoService?match_key1=value_not_match");
    assert!(!matches(rule, "10.0.0.1:20880", &other_param));
}

#[test]
fn parse_url_v3_compatibility_test() {
    let rules = parse_configurators(CONFIGURATOR_V3_COMPATIBILITY).unwrap();
    assert_eq!(rules.len(), 1);
    let rule = &rules[0];
    assert_eq!(rule.url.address(), "10.0.0.1:20880");
    assert_eq!(rule.url.service_interface(), "DemoService");
    let hit = provider("dubbo://10.0.0.1:20880/DemoService?match_key1=value1");
    assert!(matches(rule, "10.0.0.1:20880", &hit));
    let miss = provider("dubbo://10.0.0.1:20880/DemoService?match_key1=value_not_match");
    assert!(!matches(rule, "10.0.0.1:20880", &miss));
}

#[test]
fn parse_url_v3_duplicate_test() {
    let rules = parse_configurators(CONFIGURATOR_V3_DUPLICATE).unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].url.address(), "10.0.0.1:20880");
    assert_eq!(rules[0].url.service_interface(), "DemoService");
    let hit = provider("dubbo://10.0.0.1:20880/DemoService?match_key1=value1");
    assert!(matches(&rules[0], "10.0.0.1:20880", &hit));
}

#[test]
fn parse_json_array_test() {
    let text = r#"["override://0.0.0.0/com.xx.Service?category=configurators&timeout=6666&disabled=true&dynamic=false&enabled=true&group=dubbo&priority=1&version=1.0"]"#;
    let urls = parse(text);
    assert_eq!(urls.len(), 1);
    assert_eq!(urls[0].address(), "0.0.0.0");
    assert_eq!(urls[0].service_interface(), "com.xx.Service");
    assert_eq!(urls[0].parameter("timeout"), Some("6666"));
}

#[test]
fn spec_examples_build_the_urls_dubbo_builds() {
    // spec-2 §1.9 A1: dubbo-admin's weight page.
    let weight = "configVersion: v2.7\nscope: service\nkey: org.apache.dubbo.demo.DemoService\n\
                  enabled: true\nconfigs:\n- type: weight\n  enabled: true\n  side: provider\n  \
                  addresses: [\"192.168.1.9:20880\"]\n  parameters:\n    weight: 200\n";
    assert_eq!(
        parse(weight)[0].to_full_string(),
        "override://192.168.1.9:20880/org.apache.dubbo.demo.DemoService?category=dynamicconfigurators&\
         configVersion=v2.7&enabled=true&providerAddresses=192.168.1.9:20880&side=provider&weight=200"
    );
    // §1.9 B: the application-scope disable.
    let disable = "configVersion: v2.7\nscope: application\nkey: demo-provider\nenabled: true\nconfigs:\n\
                   - addresses: [\"10.20.153.10:20880\"]\n  side: provider\n  parameters:\n    disabled: true\n";
    assert_eq!(
        parse(disable)[0].to_full_string(),
        "override://10.20.153.10:20880/*?application=demo-provider&category=appdynamicconfigurators&\
         configVersion=v2.7&disabled=true&enabled=true&providerAddresses=10.20.153.10:20880&side=provider"
    );
}

#[test]
fn dubbo_quirks_are_kept() {
    // No configVersion: the literal "null".
    let unversioned = "key: S\nconfigs:\n- side: consumer\n  parameters: {timeout: 1}\n";
    assert_eq!(
        parse(unversioned)[0].parameter("configVersion"),
        Some("null")
    );
    // A typed item without `enabled` is `enabled=null`, which switches the rule off.
    let typed = "configVersion: v2.7\nkey: S\nconfigs:\n- type: weight\n  side: consumer\n  parameters: {weight: 1}\n";
    assert_eq!(parse(typed)[0].parameter("enabled"), Some("null"));
    // Values are not escaped: `&` splits.
    let split = "configVersion: v2.7\nkey: S\nconfigs:\n- parameters: {tag: 'a&b=c'}\n";
    assert_eq!(parse(split)[0].parameter("b"), Some("c"));
    // Java's number and boolean strings.
    let numbers = "configVersion: v2.7\nkey: S\nconfigs:\n- parameters: {a: 200.0, b: 1.5, c: true, d: 1e7}\n";
    let url = &parse(numbers)[0];
    assert_eq!(url.parameter("a"), Some("200.0"));
    assert_eq!(url.parameter("b"), Some("1.5"));
    assert_eq!(url.parameter("c"), Some("true"));
    assert_eq!(url.parameter("d"), Some("1.0E7"));
    // A leading '/' is not a group separator.
    assert_eq!(append_service(Some("/S:1")).unwrap(), "/S?version=1&");
}

#[test]
fn bad_texts_are_errors() {
    assert!(matches!(
        parse_configurators("a: [unclosed"),
        Err(RuleParseError::Yaml(_))
    ));
    assert!(matches!(
        parse_configurators(""),
        Err(RuleParseError::Shape(_))
    ));
    assert!(matches!(
        parse_configurators("[]"),
        Err(RuleParseError::Shape(_))
    ));
    assert!(matches!(
        parse_configurators("key: S\n"),
        Err(RuleParseError::Shape(_))
    ));
    assert_eq!(
        parse_configurators("configs:\n- parameters: {a: 1}\n"),
        Err(RuleParseError::NoService)
    );
    assert!(matches!(
        parse_configurators("configVersion: 2.7\nkey: S\nconfigs: []\n"),
        Err(RuleParseError::Shape(_))
    ));
    // `configs: []` is not an error: it yields no rule (and keeps the old ones, see dynamic rules).
    assert_eq!(parse_configurators("key: S\nconfigs: []\n"), Ok(Vec::new()));
    // An unreadable match is dropped, the rule stays.
    let bad_match = "configVersion: v3.0\nkey: S\nconfigs:\n- side: consumer\n  match: {param: x}\n  parameters: {a: 1}\n";
    let rules = parse_configurators(bad_match).unwrap();
    assert!(rules[0].condition.is_none());
}

#[test]
fn security_keys_are_stripped() {
    let text = "configVersion: v2.7\nkey: S\nconfigs:\n- parameters: {router: x, rule: y, runtime: z, timeout: 5}\n";
    let rule = strip_security_keys(parse_configurators(text).unwrap().remove(0));
    assert_eq!(rule.url.parameter("router"), None);
    assert_eq!(rule.url.parameter("rule"), None);
    assert_eq!(rule.url.parameter("runtime"), None);
    assert_eq!(rule.url.parameter("timeout"), Some("5"));
}

/// The example once in the module's documentation (the module is private, so doctests cannot reach it).
#[test]
fn module_example() -> Result<(), Box<dyn std::error::Error>> {
    use crate::rule_parser::parse_configurators;

    let rules = parse_configurators(
        "configVersion: v2.7\nscope: service\nkey: testgroup/servicekey:1.0.0\nconfigs:\n\
         - addresses: ['127.0.0.1:20880']\n  parameters:\n    weight: 222\n",
    )?;
    assert_eq!(rules.len(), 1);
    assert_eq!(
        rules[0].url.to_full_string(),
        "override://127.0.0.1:20880/servicekey?category=dynamicconfigurators&configVersion=v2.7&\
         enabled=true&group=testgroup&version=1.0.0&weight=222"
    );
    Ok(())
}
