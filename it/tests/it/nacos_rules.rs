//! The config centre on Nacos (issue 25, items 4 and 8): a weight configurator, a tag rule and a
//! condition rule published into rnacos's config as dubbo-admin publishes them (its Nacos client's
//! `publishConfig`: data id = the rule key, group `dubbo`, namespace `public` for a registry URL
//! without `namespace`, where Java 3.3.6 reads them too: `nacos_routing_parity`), reaching a reference's routing live and shown by `rudder providers
//! --explain` and `simulate`; and every CLI command on `nacos://` leaving the registry as it found
//! it (services, instances and rules read before and after, equal).

use std::collections::BTreeMap;
use std::time::Duration;

use rudder::{Consumer, Invocation, Reference};
use rudder_common::url::DubboUrl;
use rudder_it::{run_rudder, Rnacos};
use rudder_registry::{Registry, RegistryOptions};
use rudder_rpc::server::DubboServer;

use crate::common::changes::reference_reaches;
use crate::common::nacos_config::ConfigAdmin;
use crate::common::providers::{port_echo, ports_reached};
use crate::nacos_discovery::{naming, props};

const SERVICE: &str = "com.acme.NacosRouted";
const PROVIDER_APP: &str = "nacos-routed-provider";
/// Where a registry URL without `namespace` keeps its rules: `public`, whose id is `""` (see
/// docs/nacos.md).
const RULE_NAMESPACE: &str = "";
const WAIT: Duration = Duration::from_secs(30);

/// Three port-echo providers registered into Nacos as a Dubbo provider registers (rudder's own
/// `register_provider`, the instance Dubbo's `NacosRegistry` writes).
async fn providers(registry: &dyn Registry) -> (Vec<DubboServer>, Vec<i32>) {
    let mut servers = Vec::new();
    let mut ports = Vec::new();
    for _ in 0..3 {
        let server = port_echo().await;
        let url = DubboUrl::parse(&format!(
            "dubbo://{}/{SERVICE}?interface={SERVICE}&application={PROVIDER_APP}&side=provider&methods=whoAmI",
            server.local_addr()
        ))
        .unwrap();
        registry.register_provider(&url).await.expect("registered");
        ports.push(i32::from(server.local_addr().port()));
        servers.push(server);
    }
    (servers, ports)
}

/// Publishes (or, with `None`, removes) a rule as dubbo-admin does; returns once the server holds it.
async fn put_rule(admin: &ConfigAdmin, data_id: &str, text: Option<&str>) {
    admin.put(data_id, "dubbo", text).await;
}

async fn rule_applied(reference: &Reference, after: u64) {
    reference_reaches(reference, "the rule to reach the chain", WAIT, || {
        reference.rules().version() > after
    })
    .await;
}

async fn reached(reference: &Reference, tag: Option<&str>) -> Vec<i32> {
    ports_reached(reference, tag).await.into_iter().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_in_nacos_config_route_live_and_the_cli_explains_them() {
    let Some(nacos) = Rnacos::start().await else {
        return;
    };
    let registry = nacos.url();
    let writer = rudder_registry::connect(&registry, RegistryOptions::default(), None)
        .await
        .expect("a registry to register in");
    let (_servers, ports) = providers(writer.as_ref()).await;
    let admin = ConfigAdmin::new(props(&nacos, RULE_NAMESPACE)).await;
    let consumer = Consumer::builder()
        .application("nacos-routed-consumer")
        .build();
    let reference = consumer
        .reference(SERVICE)
        .registry(&registry)
        .build()
        .await
        .expect("reference");
    reference_reaches(&reference, "three providers", WAIT, || {
        reference.snapshot().providers().len() == 3
    })
    .await;

    // A dynamic tag rule: the first provider is `gray`.
    let version = reference.rules().version();
    let tag_rule = format!(
        "configVersion: v3.0\nforce: false\nenabled: true\nkey: {PROVIDER_APP}\ntags:\n  - name: gray\n    addresses: [\"127.0.0.1:{}\"]\n",
        ports[0]
    );
    put_rule(
        &admin,
        &format!("{PROVIDER_APP}.tag-router"),
        Some(&tag_rule),
    )
    .await;
    rule_applied(&reference, version).await;
    assert_eq!(reached(&reference, Some("gray")).await, [ports[0]]);
    let mut untagged = vec![ports[1], ports[2]];
    untagged.sort_unstable();
    assert_eq!(reached(&reference, None).await, untagged);
    let explanation = reference.explain(&Invocation::new("whoAmI", vec![], vec![]));
    assert_eq!(explanation.kept(), 2, "{explanation}");
    let explained = run_rudder(&[
        "providers",
        "--registry",
        &registry,
        "--interface",
        SERVICE,
        "--method",
        "whoAmI",
        "--attachment",
        "dubbo.tag=gray",
        "--explain",
    ])
    .await;
    assert_eq!(explained.code, 0, "{}", explained.stderr);
    assert!(
        explained
            .stdout
            .contains(&format!("in  127.0.0.1:{}", ports[0]))
            && explained.stdout.contains("1 of 3 providers kept"),
        "{}",
        explained.stdout
    );

    // A weight configurator (dubbo-admin's "weight" page): the CLI shows the rule's weight.
    let weight = format!(
        "configVersion: v2.7\nscope: service\nkey: {SERVICE}\nenabled: true\nconfigs:\n- side: consumer\n  addresses: [\"0.0.0.0\"]\n  providerAddresses: [\"127.0.0.1:{}\"]\n  parameters:\n    weight: 300\n",
        ports[1]
    );
    let weight_key = format!("{SERVICE}::.configurators");
    put_rule(&admin, &weight_key, Some(&weight)).await;
    let weighed = |r: &Reference| {
        r.snapshot().providers().iter().any(|p| {
            i32::from(p.url().port()) == ports[1] && p.url().parameter("weight") == Some("300")
        })
    };
    reference_reaches(&reference, "the configurator to apply", WAIT, || {
        weighed(&reference)
    })
    .await;
    let shown = run_rudder(&["providers", "--registry", &registry, SERVICE]).await;
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert!(
        shown
            .stdout
            .lines()
            .any(|l| l.contains(&format!("127.0.0.1:{}", ports[1])) && l.contains("300")),
        "{}",
        shown.stdout
    );

    // A service condition rule: whoAmI only to the third provider; deleted, the tag rule alone.
    let version = reference.rules().version();
    let condition = format!(
        "configVersion: v3.0\nscope: service\nforce: true\nenabled: true\nkey: {SERVICE}\nconditions:\n  - method = whoAmI => port = {}\n",
        ports[2]
    );
    let condition_key = format!("{SERVICE}::.condition-router");
    put_rule(&admin, &condition_key, Some(&condition)).await;
    rule_applied(&reference, version).await;
    assert_eq!(reached(&reference, None).await, [ports[2]]);
    let simulated = run_rudder(&[
        "simulate",
        "--registry",
        &registry,
        "--interface",
        SERVICE,
        "--method",
        "whoAmI",
        "--summary",
        "--calls",
        "100",
        "--seed",
        "1",
    ])
    .await;
    assert_eq!(simulated.code, 0, "{}", simulated.stderr);
    assert!(
        simulated
            .stdout
            .contains(&format!("127.0.0.1:{} 100", ports[2])),
        "{}",
        simulated.stdout
    );
    let version = reference.rules().version();
    put_rule(&admin, &condition_key, None).await;
    rule_applied(&reference, version).await;
    assert_eq!(reached(&reference, None).await, untagged);

    // Every command reads only: the registry is the same before and after.
    let before = snapshot(&nacos, &admin).await;
    for args in [
        vec!["list", "--registry", &registry],
        vec!["list", "--registry", &registry, SERVICE],
        vec!["providers", "--registry", &registry, SERVICE],
        vec![
            "simulate",
            "--registry",
            &registry,
            "--interface",
            SERVICE,
            "--method",
            "whoAmI",
            "--calls",
            "10",
        ],
        vec![
            "invoke",
            "--registry",
            &registry,
            SERVICE,
            "--method",
            "whoAmI",
        ],
        vec![
            "bench",
            "--registry",
            &registry,
            "--interface",
            SERVICE,
            "--method",
            "whoAmI",
            "--calls",
            "20",
        ],
    ] {
        let out = run_rudder(&args).await;
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    }
    assert_eq!(
        snapshot(&nacos, &admin).await,
        before,
        "a command changed the registry"
    );
    drop(reference);
    consumer.shutdown().await;
    writer.close().await;
}

/// Every service of the default group with its instances (address and metadata), and the rules
/// this test writes: what a command must not change.
async fn snapshot(nacos: &Rnacos, admin: &ConfigAdmin) -> BTreeMap<String, String> {
    let naming = naming(nacos).await;
    let group = Some("DEFAULT_GROUP".to_owned());
    let (services, _) = naming
        .get_service_list(1, 1000, group.clone())
        .await
        .expect("the services");
    let mut seen = BTreeMap::new();
    for service in services {
        let mut instances: Vec<String> = naming
            .get_all_instances(service.clone(), group.clone(), Vec::new(), false)
            .await
            .expect("the instances")
            .iter()
            .map(|i| {
                let metadata: BTreeMap<_, _> = i.metadata.iter().collect();
                format!("{}:{} {metadata:?}", i.ip, i.port)
            })
            .collect();
        instances.sort_unstable();
        seen.insert(format!("service {service}"), instances.join("\n"));
    }
    for key in [
        format!("{PROVIDER_APP}.tag-router"),
        format!("{SERVICE}::.configurators"),
        format!("{SERVICE}::.condition-router"),
    ] {
        let text = admin.read(&key, "dubbo").await.unwrap_or_default();
        seen.insert(format!("config {key}"), text);
    }
    seen
}
