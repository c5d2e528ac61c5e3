//! Governance rules in the config center against a real ZooKeeper: configurator rules written where and
//! how dubbo-admin writes them (`/dubbo/config/dubbo/<key>`, YAML v2.7), their life cycle and
//! precedence, and router rule texts handed to a sink.
//!
//! Needs Docker and the local image: run `scripts/it-setup.sh` first.

use crate::common;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rudder_cluster::balancer::Balancer;
use rudder_cluster::directory::Directory;
use rudder_common::discovery::{RuleKey, RuleSink};
use rudder_common::invocation::Invocation;
use rudder_it::ZooKeeperContainer;
use rudder_registry::{ConsumerSpec, RegistryOptions, Subscription, ZookeeperRegistry};
use tokio::sync::watch;
use zookeeper_client::{Acls, Client, CreateMode};

use crate::common::WAIT;

/// Where dubbo-admin writes the service rule of `com.acme.Greeter` (no version, no group).
const SERVICE_RULE: &str = "/dubbo/config/dubbo/com.acme.Greeter::.configurators";
/// Where it writes the application rule of the consumer application `shop`.
const APP_RULE: &str = "/dubbo/config/dubbo/shop.configurators";

fn options() -> RegistryOptions {
    RegistryOptions::default()
        .with_connect_timeout(Duration::from_secs(5))
        .with_retry(Duration::from_millis(100), Duration::from_secs(1))
}

async fn registry(zookeeper: &ZooKeeperContainer, query: &str) -> ZookeeperRegistry {
    let url = format!("zookeeper://{}{query}", zookeeper.connect_string());
    ZookeeperRegistry::connect(&url, options())
        .await
        .expect("registry connects")
}

/// Writes (creates or replaces) a rule node, as dubbo-admin's `publishConfig` does.
async fn publish(client: &Client, path: &str, text: &str) {
    let persistent = CreateMode::Persistent.with_acls(Acls::anyone_all());
    let parent = &path[..path.rfind('/').expect("a parent")];
    client.mkdir(parent, &persistent).await.expect("mkdir");
    match client.create(path, text.as_bytes(), &persistent).await {
        Ok(_) => {}
        Err(zookeeper_client::Error::NodeExists) => {
            client
                .set_data(path, text.as_bytes(), None)
                .await
                .expect("set rule");
        }
        Err(e) => panic!("create {path}: {e}"),
    }
}

/// A consumer-side weight for one provider address (spec-2 §1.9 A2).
fn weight_rule(scope_key: &str, address: &str, weight: u32) -> String {
    let scope = if scope_key.contains('.') {
        "service"
    } else {
        "application"
    };
    format!(
        "configVersion: v2.7\nscope: {scope}\nkey: {scope_key}\nenabled: true\nconfigs:\n\
         - side: consumer\n  addresses: [\"0.0.0.0\"]\n  providerAddresses: [\"{address}\"]\n  \
         parameters:\n    weight: {weight}\n"
    )
}

async fn two_providers(zk: &Client) {
    for port in [20880, 20881] {
        let url = format!("dubbo://127.0.0.1:{port}/com.acme.Greeter?loadbalance=roundrobin");
        let url = rudder_common::url::DubboUrl::parse(&url).unwrap();
        let persistent = CreateMode::Persistent.with_acls(Acls::anyone_all());
        zk.mkdir(common::PROVIDERS, &persistent)
            .await
            .expect("mkdir");
        let path = format!("{}/{}", common::PROVIDERS, url.to_node_name());
        zk.create(&path, b"", &persistent).await.expect("provider");
    }
}

async fn shop(registry: &ZookeeperRegistry) -> (Arc<Directory>, Subscription) {
    common::subscribe(
        registry,
        ConsumerSpec::new("com.acme.Greeter").application("shop"),
    )
    .await
}

/// Picks of `127.0.0.1:20880` among `n` round-robin picks.
fn first_picks(directory: &Arc<Directory>, n: usize) -> usize {
    let balancer = Balancer::builder(Arc::clone(directory)).seed(1).build();
    let call = Invocation::new("sayHello", vec![], vec![]);
    (0..n)
        .filter(|_| balancer.select(&call, &[]).expect("a pick").address() == "127.0.0.1:20880")
        .count()
}

fn weight_of(directory: &Directory, address: &str) -> Option<String> {
    directory
        .snapshot()
        .providers()
        .iter()
        .find(|p| p.address() == address)
        .and_then(|p| p.url().parameter("weight").map(str::to_owned))
}

/// Waits until the directory got a new list after `before`.
async fn next_generation(subscription: &Subscription, before: u64, what: &str) {
    common::must_reach(subscription, what, |s| s.generation > before).await;
}

#[tokio::test]
async fn a_service_rule_changes_weights_for_the_next_picks_and_its_deletion_restores_them() {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    two_providers(&zk).await;
    let registry = registry(&zookeeper, "").await;
    let (directory, subscription) = shop(&registry).await;
    assert_eq!(first_picks(&directory, 400), 200);

    // The node does not exist yet: created under the exists-watch.
    let before = subscription.status().borrow().generation;
    publish(
        &zk,
        SERVICE_RULE,
        &weight_rule("com.acme.Greeter", "127.0.0.1:20880", 300),
    )
    .await;
    next_generation(&subscription, before, "the new rule reaches the directory").await;
    assert_eq!(subscription.status().borrow().dynamic_rules, 1);
    assert_eq!(first_picks(&directory, 400), 300);

    // Changed in place.
    let before = subscription.status().borrow().generation;
    publish(
        &zk,
        SERVICE_RULE,
        &weight_rule("com.acme.Greeter", "127.0.0.1:20880", 200),
    )
    .await;
    next_generation(
        &subscription,
        before,
        "the changed rule reaches the directory",
    )
    .await;
    assert_eq!(first_picks(&directory, 300), 200);

    // Deleted: the registered weights are back.
    let before = subscription.status().borrow().generation;
    zk.delete(SERVICE_RULE, None).await.expect("delete rule");
    next_generation(&subscription, before, "the deletion reaches the directory").await;
    assert_eq!(first_picks(&directory, 400), 200);
    assert_eq!(subscription.status().borrow().dynamic_rules, 0);
    registry.close().await;
}

#[tokio::test]
async fn a_rule_present_at_subscription_applies_to_the_first_list_and_disables_an_instance() {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    two_providers(&zk).await;
    // spec-2 §1.9 B, consumer side.
    let disable = "configVersion: v2.7\nscope: service\nkey: com.acme.Greeter\nenabled: true\nconfigs:\n\
                   - side: consumer\n  providerAddresses: [\"127.0.0.1:20881\"]\n  parameters:\n    disabled: true\n";
    publish(&zk, SERVICE_RULE, disable).await;
    let registry = registry(&zookeeper, "").await;
    let (directory, subscription) = shop(&registry).await;
    assert_eq!(common::addresses(&directory), ["127.0.0.1:20880"]);

    // Deleting the rule restores the instance.
    zk.delete(SERVICE_RULE, None).await.expect("delete rule");
    common::must_reach(&subscription, "the instance comes back", |s| {
        s.providers == 2
    })
    .await;
    assert_eq!(
        common::addresses(&directory),
        ["127.0.0.1:20880", "127.0.0.1:20881"]
    );
    registry.close().await;
}

#[tokio::test]
async fn a_broken_rule_keeps_the_last_good_one() {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    two_providers(&zk).await;
    publish(
        &zk,
        SERVICE_RULE,
        &weight_rule("com.acme.Greeter", "127.0.0.1:20880", 300),
    )
    .await;
    let registry = registry(&zookeeper, "").await;
    let (directory, subscription) = shop(&registry).await;
    assert_eq!(
        weight_of(&directory, "127.0.0.1:20880").as_deref(),
        Some("300")
    );

    // A typo (no `parameters`), then YAML that does not parse: each is counted, the rule stays.
    let no_parameters = "configVersion: v2.7\nscope: service\nkey: com.acme.Greeter\nconfigs:\n- side: consumer\n  paramters:\n    weight: 1\n";
    publish(&zk, SERVICE_RULE, no_parameters).await;
    common::must_reach(&subscription, "the typo is counted", |s| s.rule_errors == 1).await;
    publish(&zk, SERVICE_RULE, "configs: [unclosed").await;
    let status = common::must_reach(&subscription, "the bad YAML is counted", |s| {
        s.rule_errors == 2
    })
    .await;
    let last = status.last_rule_error.expect("the last error is kept");
    assert!(
        last.starts_with("com.acme.Greeter::.configurators: not YAML"),
        "{last}"
    );
    assert_eq!(
        weight_of(&directory, "127.0.0.1:20880").as_deref(),
        Some("300")
    );
    assert_eq!(first_picks(&directory, 400), 300);

    // Fixed: applied.
    let before = subscription.status().borrow().generation;
    publish(
        &zk,
        SERVICE_RULE,
        &weight_rule("com.acme.Greeter", "127.0.0.1:20880", 100),
    )
    .await;
    next_generation(&subscription, before, "the fixed rule applies").await;
    assert_eq!(
        weight_of(&directory, "127.0.0.1:20880").as_deref(),
        Some("100")
    );
    registry.close().await;
}

#[tokio::test]
async fn the_service_rule_wins_over_the_application_rule() {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    two_providers(&zk).await;
    let registry = registry(&zookeeper, "").await;
    let (directory, subscription) = shop(&registry).await;

    let before = subscription.status().borrow().generation;
    publish(&zk, APP_RULE, &weight_rule("shop", "127.0.0.1:20880", 300)).await;
    next_generation(&subscription, before, "the application rule applies").await;
    assert_eq!(
        weight_of(&directory, "127.0.0.1:20880").as_deref(),
        Some("300")
    );

    let before = subscription.status().borrow().generation;
    publish(
        &zk,
        SERVICE_RULE,
        &weight_rule("com.acme.Greeter", "127.0.0.1:20880", 50),
    )
    .await;
    next_generation(&subscription, before, "the service rule applies").await;
    assert_eq!(
        weight_of(&directory, "127.0.0.1:20880").as_deref(),
        Some("50")
    );
    assert_eq!(subscription.status().borrow().dynamic_rules, 2);

    // Without the service rule, the application rule is in effect again.
    let before = subscription.status().borrow().generation;
    zk.delete(SERVICE_RULE, None).await.expect("delete");
    next_generation(&subscription, before, "the service rule is gone").await;
    assert_eq!(
        weight_of(&directory, "127.0.0.1:20880").as_deref(),
        Some("300")
    );
    registry.close().await;
}

#[tokio::test]
async fn dubbo_admins_provider_side_weight_rule_is_left_to_the_provider() {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    two_providers(&zk).await;
    let registry = registry(&zookeeper, "").await;
    let (directory, subscription) = shop(&registry).await;
    // What dubbo-admin's weight page writes (spec-2 §1.9 A1): the provider applies it and
    // re-registers; a consumer, Java or rudder, does not apply it itself.
    let admin_weight = "configVersion: v2.7\nscope: service\nkey: com.acme.Greeter\nenabled: true\nconfigs:\n\
                        - type: weight\n  enabled: true\n  side: provider\n  addresses: [\"127.0.0.1:20880\"]\n  \
                        parameters:\n    weight: 200\n";
    let updates = subscription.status().borrow().rule_updates;
    publish(&zk, SERVICE_RULE, admin_weight).await;
    common::must_reach(&subscription, "the rule is read", |s| {
        s.rule_updates > updates && s.dynamic_rules == 1
    })
    .await;
    assert_eq!(weight_of(&directory, "127.0.0.1:20880"), None);
    assert_eq!(first_picks(&directory, 400), 200);
    registry.close().await;
}

#[tokio::test]
async fn the_registry_group_is_the_namespace_and_a_separate_config_center_can_be_named() {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    two_providers(&zk).await;
    let governance = registry(&zookeeper, "?group=governance").await;
    assert_eq!(governance.rule_path(), "/governance/config/dubbo");
    let registry = registry(&zookeeper, "")
        .await
        .with_config_center(&governance);
    assert_eq!(registry.rule_path(), "/governance/config/dubbo");
    // A rule in the default namespace is not read; the one in the config center's is.
    publish(
        &zk,
        SERVICE_RULE,
        &weight_rule("com.acme.Greeter", "127.0.0.1:20880", 300),
    )
    .await;
    let elsewhere = "/governance/config/dubbo/com.acme.Greeter::.configurators";
    publish(
        &zk,
        elsewhere,
        &weight_rule("com.acme.Greeter", "127.0.0.1:20880", 40),
    )
    .await;
    let (directory, _subscription) = shop(&registry).await;
    assert_eq!(
        weight_of(&directory, "127.0.0.1:20880").as_deref(),
        Some("40")
    );

    // Dynamic configuration off: only the registered weight.
    let plain = registry.without_dynamic_configuration();
    let (directory, subscription) = shop(&plain).await;
    assert_eq!(weight_of(&directory, "127.0.0.1:20880"), None);
    assert_eq!(subscription.status().borrow().rule_updates, 0);
    registry.close().await;
    governance.close().await;
}

/// Records every rule text it is told, and publishes how many it has.
struct Recorder {
    seen: Mutex<Vec<(RuleKey, Option<String>)>>,
    count: watch::Sender<usize>,
}

impl RuleSink for Recorder {
    fn rule(&self, key: &RuleKey, text: Option<&str>) {
        let mut seen = self.seen.lock().unwrap();
        seen.push((key.clone(), text.map(str::to_owned)));
        self.count.send_replace(seen.len());
    }
}

async fn wait_count(recorder: &Recorder, n: usize) -> Vec<(RuleKey, Option<String>)> {
    let mut count = recorder.count.subscribe();
    let reached = tokio::time::timeout(WAIT, count.wait_for(|c| *c >= n)).await;
    assert!(
        matches!(reached, Ok(Ok(_))),
        "never saw {n} rule events: {:?}",
        recorder.seen.lock().unwrap()
    );
    recorder.seen.lock().unwrap().clone()
}

#[tokio::test]
async fn router_rule_texts_reach_the_sink_on_create_change_and_delete() {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    let condition =
        "configVersion: v3.0\nscope: service\nkey: com.acme.Greeter\nforce: false\nenabled: true\n\
                     conditions:\n  - method=sayHello => host=127.0.0.1\n";
    let condition_path = "/dubbo/config/dubbo/com.acme.Greeter:1.0.0:.condition-router";
    publish(&zk, condition_path, condition).await;
    let registry = registry(&zookeeper, "").await;
    let (count, _) = watch::channel(0);
    let recorder = Arc::new(Recorder {
        seen: Mutex::new(Vec::new()),
        count,
    });
    let tag = RuleKey::tag_router("demo-provider");
    let service = RuleKey::service_condition_router("com.acme.Greeter", Some("1.0.0"), None);
    let rules = registry
        .watch_rules([tag.clone(), service.clone()], Arc::clone(&recorder))
        .await
        .expect("watch rules");
    // The current texts, before watch_rules returned.
    assert_eq!(
        recorder.seen.lock().unwrap().clone(),
        [
            (tag.clone(), None),
            (service.clone(), Some(condition.to_owned()))
        ]
    );

    let tag_path = "/dubbo/config/dubbo/demo-provider.tag-router";
    let gray = "configVersion: v3.0\nforce: false\nenabled: true\nkey: demo-provider\ntags:\n  - name: gray\n    addresses: [\"127.0.0.1:20880\"]\n";
    publish(&zk, tag_path, gray).await;
    let seen = wait_count(&recorder, 3).await;
    assert_eq!(seen[2], (tag.clone(), Some(gray.to_owned())));

    let beta = gray.replace("gray", "beta");
    publish(&zk, tag_path, &beta).await;
    let seen = wait_count(&recorder, 4).await;
    assert_eq!(seen[3], (tag.clone(), Some(beta.clone())));

    zk.delete(tag_path, None).await.expect("delete");
    let seen = wait_count(&recorder, 5).await;
    assert_eq!(seen[4], (tag.clone(), None));

    // Re-created after the delete: the exists-watch is armed again.
    publish(&zk, tag_path, gray).await;
    let seen = wait_count(&recorder, 6).await;
    assert_eq!(seen[5], (tag, Some(gray.to_owned())));
    zk.delete(condition_path, None).await.expect("delete");
    let seen = wait_count(&recorder, 7).await;
    assert_eq!(seen[6], (service, None));
    assert_eq!(seen.len(), 7, "one event per change");
    rules.close().await;
    registry.close().await;
}
