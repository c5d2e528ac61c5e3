//! Nacos (rnacos on loopback) as the registry: Java Dubbo 3.3.6 providers register into it with
//! Dubbo's own NacosRegistry, rudder finds and calls them, filters by version, group and namespace,
//! applies a configurator written to Nacos config as dubbo-admin writes it, and guards empty pushes
//! as Dubbo does. Skipped only with `RUDDER_SKIP_NACOS=1`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use nacos_sdk::api::naming::{NamingService, NamingServiceBuilder, ServiceInstance};
use nacos_sdk::api::props::ClientProps;
use rudder::{Reference, Value};
use rudder_cluster::directory::Directory;
use rudder_it::{Peer, PeerConfig, PeerKind, Rnacos};
use rudder_registry::{ConsumerSpec, Registry, RegistryOptions, Subscription};

use crate::common;
use crate::common::nacos_config::ConfigAdmin;

const SERVICE: &str = "org.rudder.it.GreetingService";
const READY_WITHIN: Duration = Duration::from_secs(120);

async fn java(
    nacos: &Rnacos,
    query: &str,
    instance: &str,
    tweak: impl FnOnce(&mut PeerConfig),
) -> Peer {
    // The ZooKeeper address is not used: the registry URL wins.
    let mut config = PeerConfig::new(PeerKind::Java, "127.0.0.1:1", instance);
    config.registry = Some(format!("{}{query}", nacos.url()));
    config.register_mode = Some("interface".to_owned());
    config.warmup_ms = Some(0);
    tweak(&mut config);
    Peer::start(config, READY_WITHIN).await.unwrap()
}

pub(super) fn props(nacos: &Rnacos, namespace: &str) -> ClientProps {
    ClientProps::new()
        .server_addr(nacos.address())
        .namespace(namespace)
        .env_first(false)
}

/// A Nacos naming client, as a provider has, once its connection is up (nacos-sdk's `build`
/// returns before: its first requests fail with "the connection is not connected").
pub(super) async fn naming(nacos: &Rnacos) -> NamingService {
    let connected = async {
        let mut ticks = tokio::time::interval(Duration::from_millis(50));
        loop {
            ticks.tick().await;
            let Ok(naming) = NamingServiceBuilder::new(props(nacos, "")).build().await else {
                continue;
            };
            if naming.get_service_list(1, 1, None).await.is_ok() {
                return naming;
            }
        }
    };
    tokio::time::timeout(common::WAIT, connected)
        .await
        .expect("the Nacos client connects")
}

async fn subscribe(
    registry: &Arc<dyn Registry>,
    spec: ConsumerSpec,
) -> (Arc<Directory>, Subscription) {
    let directory = Arc::new(Directory::default());
    let subscription = registry
        .subscribe(spec, Arc::clone(&directory) as _, None)
        .await
        .unwrap();
    (directory, subscription)
}

async fn answers(reference: &Reference, calls: usize) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for _ in 0..calls {
        let answer = reference
            .call::<Value, _>("sayHello", &["java.lang.String"], vec![Value::from("rust")])
            .await
            .unwrap();
        let who = answer
            .as_str()
            .and_then(|s| s.rsplit(' ').next())
            .unwrap_or("?");
        *counts.entry(who.to_owned()).or_default() += 1;
    }
    counts
}

#[tokio::test]
async fn java_providers_registered_in_nacos_are_found_filtered_and_called() {
    let Some(nacos) = Rnacos::start().await else {
        return;
    };
    let (v1, _v2, _dev) = tokio::join!(
        java(&nacos, "", "java-v1", |c| c.version = Some("1.0.0".into())),
        java(&nacos, "", "java-v2", |c| c.version = Some("2.0.0".into())),
        java(&nacos, "?namespace=dev", "java-dev", |c| c.version =
            Some("1.0.0".into())),
    );

    // The whole interface through the facade, every call answered by the 1.0.0 provider of `public`.
    let reference = Reference::builder(SERVICE)
        .registry(&nacos.url())
        .version("1.0.0")
        .build()
        .await
        .unwrap();
    common::java_greeter::assert_greets_as(&reference, "java-v1").await;
    assert_eq!(answers(&reference, 20).await.get("java-v1"), Some(&20));

    // Browsing: the service, and its three providers... of `public` only.
    let registry = rudder_registry::connect(&nacos.url(), RegistryOptions::default(), None)
        .await
        .unwrap();
    let services = registry.services().await.unwrap();
    assert!(services.iter().any(|s| s == SERVICE), "{services:?}");
    let mut ports: Vec<u16> = registry
        .provider_urls(SERVICE)
        .await
        .unwrap()
        .iter()
        .map(|u| u.port())
        .collect();
    ports.sort_unstable();
    assert_eq!(ports.len(), 2, "{ports:?}");
    assert!(ports.contains(&v1.port()));

    // The namespace `dev` has its own provider, and only it.
    let dev = rudder_registry::connect(
        &format!("{}?namespace=dev", nacos.url()),
        RegistryOptions::default(),
        None,
    )
    .await
    .unwrap();
    let (directory, subscription) =
        subscribe(&dev, ConsumerSpec::new(SERVICE).version("1.0.0")).await;
    assert_eq!(common::addresses(&directory).len(), 1);
    let (other_group, other) = subscribe(
        &dev,
        ConsumerSpec::new(SERVICE).version("1.0.0").group("g1"),
    )
    .await;
    assert!(common::addresses(&other_group).is_empty());
    subscription.close().await;
    other.close().await;
    dev.close().await;
    registry.close().await;
}

#[tokio::test]
async fn a_configurator_in_nacos_config_reweighs_and_a_provider_leaving_is_pushed() {
    let Some(nacos) = Rnacos::start().await else {
        return;
    };
    let (a, mut b) = tokio::join!(
        java(&nacos, "", "java-a", |_| {}),
        java(&nacos, "", "java-b", |_| {}),
    );
    let registry = rudder_registry::connect(&nacos.url(), RegistryOptions::default(), None)
        .await
        .unwrap();
    let (directory, subscription) =
        subscribe(&registry, ConsumerSpec::new(SERVICE).application("shop")).await;
    assert_eq!(common::addresses(&directory).len(), 2);

    // As dubbo-admin writes it: data id `<interface>::.configurators`, group `dubbo`, in the config
    // centre's namespace, which for a registry URL without `namespace` is `public` (id `""`).
    let rule = format!(
        "configVersion: v2.7\nscope: service\nkey: {SERVICE}\nenabled: true\nconfigs:\n\
         - side: consumer\n  addresses: [\"0.0.0.0\"]\n  providerAddresses: [\"127.0.0.1:{}\"]\n  \
         parameters:\n    weight: 300\n",
        a.port()
    );
    ConfigAdmin::new(props(&nacos, ""))
        .await
        .put(&format!("{SERVICE}::.configurators"), "dubbo", Some(&rule))
        .await;
    let status = common::must_reach(&subscription, "the configurator applies", |s| {
        s.reweighted.len() == 1
    })
    .await;
    assert_eq!(status.reweighted[0].weight, "300");
    assert_eq!(
        status.reweighted[0].address,
        format!("127.0.0.1:{}", a.port())
    );

    // A provider that stops deregisters: the push removes it, as a delta.
    let before = subscription.status().borrow().generation;
    b.terminate().await.unwrap();
    common::must_reach(&subscription, "the provider leaves", |s| {
        s.providers == 1 && s.generation > before
    })
    .await;
    assert_eq!(
        common::addresses(&directory),
        [format!("127.0.0.1:{}", a.port())]
    );
    subscription.close().await;
    registry.close().await;
}

fn instance(port: u16) -> ServiceInstance {
    let mut metadata = HashMap::new();
    for (k, v) in [
        ("protocol", "dubbo"),
        ("path", "com.acme.Greeter"),
        ("interface", "com.acme.Greeter"),
        ("side", "provider"),
        ("category", "providers"),
    ] {
        metadata.insert(k.to_owned(), v.to_owned());
    }
    ServiceInstance {
        ip: "127.0.0.1".into(),
        port: i32::from(port),
        metadata,
        ..ServiceInstance::default()
    }
}

/// One provider registered, then deregistered: what a consumer with and without
/// `enable-empty-protection` makes of the empty push.
async fn empty_push(
    nacos: &Rnacos,
    query: &str,
    settled: impl FnMut(&rudder_registry::SubscriptionStatus) -> bool,
) -> (usize, Subscription) {
    const NAME: &str = "providers:com.acme.Greeter::";
    let provider = naming(nacos).await;
    provider
        .register_instance(NAME.into(), None, instance(20880))
        .await
        .unwrap();
    let registry = rudder_registry::connect(
        &format!("{}{query}", nacos.url()),
        RegistryOptions::default(),
        None,
    )
    .await
    .unwrap();
    let (directory, subscription) =
        subscribe(&registry, ConsumerSpec::new("com.acme.Greeter")).await;
    assert_eq!(common::addresses(&directory), ["127.0.0.1:20880"]);
    provider
        .deregister_instance(NAME.into(), None, instance(20880))
        .await
        .unwrap();
    common::must_reach(&subscription, "the empty push arrives", settled).await;
    let left = common::addresses(&directory).len();
    registry.close().await;
    (left, subscription)
}

#[tokio::test]
async fn an_empty_push_clears_by_default_and_keeps_the_last_providers_with_protection() {
    let Some(nacos) = Rnacos::start().await else {
        return;
    };
    let (left, subscription) = empty_push(&nacos, "", |s| s.providers == 0).await;
    assert_eq!(
        left, 0,
        "Dubbo's default: enable-empty-protection=false clears"
    );
    assert_eq!(subscription.status().borrow().empty_pushes_kept, 0);

    let (left, subscription) = empty_push(&nacos, "?enable-empty-protection=true", |s| {
        s.empty_pushes_kept == 1
    })
    .await;
    assert_eq!(left, 1, "the last provider is kept");
    let status = subscription.status().borrow().clone();
    assert!(status.empty_protected);
    assert_eq!(status.empty_pushes_kept, 1);
}

#[tokio::test]
async fn the_cli_lists_shows_and_invokes_through_nacos() {
    let Some(nacos) = Rnacos::start().await else {
        return;
    };
    let provider = java(&nacos, "", "java-cli", |_| {}).await;
    let registry = nacos.url();

    let list = rudder_it::run_rudder(&["list", "--registry", &registry]).await;
    assert_eq!(list.code, 0, "{}", list.stderr);
    assert!(list.stdout.contains(SERVICE), "{}", list.stdout);

    let providers = rudder_it::run_rudder(&["providers", "--registry", &registry, SERVICE]).await;
    assert_eq!(providers.code, 0, "{}", providers.stderr);
    assert!(
        providers
            .stdout
            .contains(&format!("127.0.0.1:{}", provider.port())),
        "{}",
        providers.stdout
    );

    let invoke = rudder_it::run_rudder(&[
        "invoke",
        "--registry",
        &registry,
        SERVICE,
        "--method",
        "add",
        "--args",
        "[20, 22]",
    ])
    .await;
    assert_eq!(
        (invoke.code, invoke.stdout.as_str()),
        (0, "42\n"),
        "{}",
        invoke.stderr
    );
}

/// A Java provider's service definitions come from the metadata report in Nacos config, where
/// Dubbo 3.3 writes them with its default settings (the registry doubling as the metadata report:
/// data id `<interface>:<version>:<group>:provider:<application>`, group `dubbo`), and `rudder
/// list` types the methods with them as on ZooKeeper.
#[tokio::test]
async fn service_definitions_come_from_the_metadata_report_in_nacos_config() {
    let Some(nacos) = Rnacos::start().await else {
        return;
    };
    let _provider = java(&nacos, "", "java-definitions", |c| {
        c.version = Some("1.0.0".into());
    })
    .await;
    let registry = rudder_registry::connect(&nacos.url(), RegistryOptions::default(), None)
        .await
        .unwrap();
    // The provider writes its definition from a background task after registering: wait for it.
    let written = async {
        let mut ticks = tokio::time::interval(Duration::from_millis(100));
        loop {
            ticks.tick().await;
            let found = registry.service_definitions(SERVICE).await.unwrap();
            if !found.is_empty() {
                return found;
            }
        }
    };
    let data_id = "org.rudder.it.GreetingService:1.0.0::provider:rudder-it-java-provider";
    let Ok(definitions) = tokio::time::timeout(common::WAIT, written).await else {
        // Whether the provider wrote nothing or rudder did not find what it wrote.
        let stored = ConfigAdmin::new(props(&nacos, ""))
            .await
            .read(data_id, "dubbo")
            .await;
        panic!(
            "no service definition found in {:?}; Nacos holds {data_id} (dubbo): {:?} bytes",
            common::WAIT,
            stored.map(|c| c.len())
        );
    };
    assert_eq!(definitions.len(), 1, "{definitions:?}");
    let definition = &definitions[0];
    assert_eq!(
        (
            definition.path.as_str(),
            definition.version.as_deref(),
            definition.group.as_deref(),
            definition.application.as_str()
        ),
        (
            format!("dubbo/{data_id}").as_str(),
            Some("1.0.0"),
            None,
            "rudder-it-java-provider"
        )
    );
    assert!(
        registry
            .service_definitions("org.rudder.it.Unknown")
            .await
            .unwrap()
            .is_empty(),
        "another interface has none"
    );
    registry.close().await;

    let list =
        rudder_it::run_rudder(&["list", "--registry", &nacos.url(), "--interface", SERVICE]).await;
    assert_eq!(list.code, 0, "{}", list.stderr);
    assert!(
        list.stdout.contains("\nadd(int, int) -> int\n"),
        "{}",
        list.stdout
    );
    assert!(
        list.stdout
            .contains("\nechoUser(org.rudder.it.User) -> org.rudder.it.User\n"),
        "{}",
        list.stdout
    );
    assert!(
        list.stdout.contains("\nclass org.rudder.it.User {\n"),
        "{}",
        list.stdout
    );
}
