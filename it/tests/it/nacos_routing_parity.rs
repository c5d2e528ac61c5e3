//! Routing parity on Nacos config (issue 25, item 4): rules dubbo-admin writes into Nacos config
//! (data id = the rule key, group `dubbo`) route a Java Dubbo 3.3.6 consumer and rudder the same way,
//! and both read them from the same Nacos namespace.
//!
//! Three Java Dubbo 3.3.6 providers of `GreetingService` (two untagged, one statically tagged `gray`)
//! register into one rnacos at interface level with Dubbo's own `NacosRegistry`. The rules are the
//! YAML of [`routing_parity`](crate::routing_parity) (a condition rule of the service, one of the
//! consumer application, a tag rule of the providers' application) and a configurator of the consumer
//! application that disables one provider (`disabled: true`), written with [`ConfigAdmin`], which
//! reads each write back. Per scenario the Java side is a fresh `RoutingProbe` through
//! `nacos://127.0.0.1:PORT` (no `namespace`), which reads the rules once when its reference starts,
//! so it runs after they are written; the rudder side is one reference for the whole test, which must
//! show each rule before it is called. Both make the same calls and must reach the same providers,
//! those the spec expects.
//!
//! Where the rules are: with no `namespace` in the URL, Nacos's default namespace **`public`** (tenant
//! `""`), where Java 3.3.6 reads them (its Nacos client logs `[add-listener] ok, tenant=, dataId=...`):
//! Dubbo's config centre defaults its namespace to `dubbo`, but `NacosDynamicConfigurationFactory`
//! drops that value before it makes the Nacos client. The first scenario writes a configurator and a
//! condition rule into namespace `dubbo` only, before either consumer starts: both must ignore them.
//! rudder reads the configurators of a subscription before its first listing, so a reference built
//! after the write and listing all three providers has read them; the later scenarios write the same
//! rules into `public`, where both sides take them.
//!
//! Why the configurator is the consumer application's (`<app>.configurators`), not the service's: Java
//! 3.3.6 reads a service's configurators (`ReferenceConfigurationListener`) only after the first
//! provider listing (`RegistryDirectory.subscribe`), and applies a rule it read there only at the next
//! listing or rule change, so a pre-existing service-scope rule disables nothing until then (seen
//! here). The application's configurators are read when the directory is made, before the listing.
//!
//! Calls and why 64 per spec: see [`routing_parity`](crate::routing_parity); warm-up is off on the
//! providers, so both sides weigh them equally from the start. Java is required as there
//! (`RUDDER_SKIP_JAVA=1` skips, printing `nacos routing parity SKIPPED`), and rnacos as in the other
//! Nacos tests (`RUDDER_SKIP_NACOS=1`).

use std::time::{Duration, Instant};

use rudder::{Consumer, Reference};
use rudder_it::{Peer, PeerConfig, PeerKind, Rnacos};

use crate::common::nacos_config::ConfigAdmin;
use crate::nacos_discovery::props;
use crate::routing_parity::{
    app_condition, hello, in_force, run_probe, service_condition, skip_without_java, tag_rule,
    wait_for, who, CallSpec, Findings, Rule, Scenario, CONSUMER_APP, NO_PROVIDER, PROVIDER_APP,
    READY_WITHIN, SERVICE,
};

/// Where Dubbo's consumer reads rules with a registry URL that names no namespace: Nacos's default
/// namespace, `public` (its id is the empty string).
const RULE_NAMESPACE: &str = "";
/// The namespace Dubbo's config centre is configured with by default, and does not read on Nacos.
const DUBBO_NAMESPACE: &str = "dubbo";
/// The group of configurators and router rules (`GovernanceRuleRepository.DEFAULT_GROUP`).
const RULE_GROUP: &str = "dubbo";

/// The three providers: instance name and static `dubbo.tag`.
const PROVIDERS: [(&str, Option<&str>); 3] = [
    ("plain-1", None),
    ("plain-2", None),
    ("gray-1", Some("gray")),
];

/// A rule as dubbo-admin writes it into Nacos config.
#[derive(Debug, Clone)]
enum NacosRule {
    /// A tag or condition rule, in force for rudder when `explain` shows it.
    Router(Rule),
    /// A configurator disabling the provider at `address`, in force for rudder when its
    /// subscription lists that provider as disabled.
    Disables {
        data_id: String,
        yaml: String,
        address: String,
    },
}

impl NacosRule {
    fn data_id(&self) -> &str {
        match self {
            NacosRule::Router(rule) => &rule.key.name,
            NacosRule::Disables { data_id, .. } => data_id,
        }
    }

    fn yaml(&self) -> &str {
        match self {
            NacosRule::Router(rule) => &rule.yaml,
            NacosRule::Disables { yaml, .. } => yaml,
        }
    }

    fn in_force(&self, rudder: &Reference) -> bool {
        match self {
            NacosRule::Router(rule) => in_force(rudder, rule),
            NacosRule::Disables { address, .. } => rudder.registry_status()[0]
                .as_ref()
                .is_some_and(|status| status.disabled.iter().any(|d| d.address == *address)),
        }
    }
}

/// dubbo-admin's override of the consumer application that takes the provider on `port` out for it,
/// as SnakeYAML dumps it; data id `<consumer app>.configurators`.
fn disabling(port: u16) -> NacosRule {
    let address = format!("127.0.0.1:{port}");
    NacosRule::Disables {
        data_id: format!("{CONSUMER_APP}.configurators"),
        yaml: format!(
            "configVersion: v2.7\nconfigs:\n- addresses:\n  - 0.0.0.0\n  parameters:\n    disabled: true\n  \
             providerAddresses:\n  - {address}\n  side: consumer\nenabled: true\nkey: {CONSUMER_APP}\n\
             scope: application\n"
        ),
        address,
    }
}

/// The scenarios with rules in namespace `public`, for providers on `ports` (in [`PROVIDERS`] order).
fn scenarios(ports: [u16; 3]) -> Vec<Scenario<NacosRule>> {
    let [plain_1, plain_2, gray_1] = ports;
    let gray = ("dubbo.tag", "gray");
    let north = ("region", "north");
    let plain: &[&str] = &["plain-1", "plain-2"];
    vec![
        Scenario {
            name: "service condition",
            rules: vec![NacosRule::Router(service_condition(
                true,
                &[
                    &format!("method = sayHello => port = {plain_1},{gray_1}"),
                    &format!("method = whoAmI & attachments[region] = north => port = {plain_2},{gray_1}"),
                ],
            ))],
            specs: vec![
                hello("hello", &[], &["plain-1"]),
                hello("hello-gray", &[gray], &["gray-1"]),
                who("who", &[], plain),
                who("who-north", &[north], &["plain-2"]),
                who("who-north-gray", &[north, gray], &["gray-1"]),
            ],
        },
        Scenario {
            name: "app condition",
            rules: vec![NacosRule::Router(app_condition(
                true,
                &[&format!("method = whoAmI => port = {gray_1}")],
            ))],
            specs: vec![
                who("who", &[], &[NO_PROVIDER]),
                who("who-gray", &[gray], &["gray-1"]),
                hello("hello", &[], plain),
            ],
        },
        Scenario {
            // A CIDR block: the one dynamic tag address Dubbo matches on loopback (see
            // routing_parity's `loopback_quirk`). Every provider carries the dynamic tag `local`.
            name: "tag rule",
            rules: vec![NacosRule::Router(tag_rule(
                false,
                "- addresses:\n  - 127.0.0.1/32\n  name: local\n",
            ))],
            specs: vec![
                who("untagged", &[], &[NO_PROVIDER]),
                who("local", &[("dubbo.tag", "local")], &["gray-1", "plain-1", "plain-2"]),
                who("gray-static", &[gray], &["gray-1"]),
                who("blue-failover", &[("dubbo.tag", "blue")], &[NO_PROVIDER]),
            ],
        },
        Scenario {
            name: "configurator",
            rules: vec![disabling(plain_2)],
            specs: untouched_specs(&["plain-1"]),
        },
    ]
}

/// Calls whose providers no rule changes but a disabled provider: `untagged` reaches `untagged`.
fn untouched_specs(untagged: &[&'static str]) -> Vec<CallSpec> {
    vec![
        who("who", &[], untagged),
        who("who-gray", &[("dubbo.tag", "gray")], &["gray-1"]),
        hello("hello", &[], untagged),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_dubbo_and_rudder_route_the_same_by_rules_in_nacos_config() {
    if skip_without_java("nacos routing parity") {
        return;
    }
    let Some(nacos) = Rnacos::start().await else {
        return;
    };
    let started = Instant::now();
    let registry = nacos.url();
    let (p1, p2, p3) = tokio::join!(
        provider(&registry, PROVIDERS[0]),
        provider(&registry, PROVIDERS[1]),
        provider(&registry, PROVIDERS[2]),
    );
    let ports = [p1.port(), p2.port(), p3.port()];
    eprintln!(
        "providers ready in {:?}: ports {ports:?}",
        started.elapsed()
    );
    let rules = ConfigAdmin::new(props(&nacos, RULE_NAMESPACE)).await;
    let dubbo = ConfigAdmin::new(props(&nacos, DUBBO_NAMESPACE)).await;

    let mut findings = Findings::default();

    // Rules in namespace `dubbo` only, written before either consumer starts: both must ignore them.
    let begun = Instant::now();
    let in_dubbo = [
        disabling(ports[1]),
        NacosRule::Router(app_condition(
            true,
            &[&format!("method = whoAmI => port = {}", ports[2])],
        )),
    ];
    for rule in &in_dubbo {
        dubbo
            .put(rule.data_id(), RULE_GROUP, Some(rule.yaml()))
            .await;
        assert_eq!(
            rules.read(rule.data_id(), RULE_GROUP).await,
            None,
            "{} is in namespace dubbo only",
            rule.data_id()
        );
    }
    let consumer = Consumer::builder()
        .application(CONSUMER_APP)
        .seed(11)
        .build();
    let rudder = consumer
        .reference(SERVICE)
        .registry(&registry)
        // As RoutingProbe: interface-level discovery; the routers are the same in both views.
        .parameter("migration.step", "FORCE_INTERFACE")
        .loadbalance("random")
        .retries(0)
        .timeout(Duration::from_millis(5000))
        .build()
        .await
        .expect("rudder reference");
    wait_for(&rudder, "rudder to list the three providers", || {
        rudder.snapshot().providers().len() == 3
    })
    .await;
    let specs = untouched_specs(&["plain-1", "plain-2"]);
    let java = run_probe("127.0.0.1:1", Some(&registry), &specs).await;
    findings
        .compare("in dubbo only", &specs, &java, &rudder)
        .await;
    for rule in &in_dubbo {
        assert!(
            !rule.in_force(&rudder),
            "rudder took {} from namespace dubbo",
            rule.data_id()
        );
        dubbo.put(rule.data_id(), RULE_GROUP, None).await;
    }
    eprintln!("scenario in dubbo only took {:?}", begun.elapsed());

    for scenario in scenarios(ports) {
        findings
            .run(
                &scenario,
                &rudder,
                async |rule| publish(&rules, &rudder, rule).await,
                async |specs| run_probe("127.0.0.1:1", Some(&registry), specs).await,
                async |rule| withdraw(&rules, &rudder, rule).await,
            )
            .await;
    }
    findings.assert_none("nacos routing parity", started);
    drop(rudder);
    consumer.shutdown().await;
    drop((p1, p2, p3));
}

/// A Java provider registering into `registry` at interface level, warm-up off.
async fn provider(registry: &str, (instance, tag): (&str, Option<&str>)) -> Peer {
    // The ZooKeeper address is not used: the peer gets the Nacos URL.
    let mut config = PeerConfig::new(PeerKind::Java, "127.0.0.1:1", instance);
    config.registry = Some(registry.to_owned());
    config.register_mode = Some("interface".to_owned());
    config.warmup_ms = Some(0);
    config.tag = tag.map(str::to_owned);
    config.application = Some(PROVIDER_APP.to_owned());
    Peer::start(config, READY_WITHIN)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Writes `rule` into namespace `public` as dubbo-admin does (returns once rnacos reads it back), and
/// waits until the rudder side routes by it.
async fn publish(admin: &ConfigAdmin, rudder: &Reference, rule: &NacosRule) {
    admin
        .put(rule.data_id(), RULE_GROUP, Some(rule.yaml()))
        .await;
    wait_for(
        rudder,
        &format!("rudder to route by {}", rule.data_id()),
        || rule.in_force(rudder),
    )
    .await;
}

/// Removes `rule` and waits until the rudder side no longer routes by it.
async fn withdraw(admin: &ConfigAdmin, rudder: &Reference, rule: &NacosRule) {
    admin.put(rule.data_id(), RULE_GROUP, None).await;
    wait_for(
        rudder,
        &format!("rudder to drop {}", rule.data_id()),
        || !rule.in_force(rudder),
    )
    .await;
}
