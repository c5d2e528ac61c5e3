//! Router rules from the config center reach a reference's routing live: a tag rule and a condition
//! rule written into a real ZooKeeper where (and as) dubbo-admin writes them, changed and deleted while
//! calls go on, each decision explained.

use std::time::Duration;

use rudder::{Consumer, Invocation, Reference};
use rudder_it::{run_rudder, ZooKeeperContainer};
use rudder_rpc::server::DubboServer;
use zookeeper_client::Client;

use crate::common::changes::reference_reaches;
use crate::common::providers::{ports_reached, put_node as put, registered_port_echo};

const SERVICE: &str = "com.acme.Routed";
const PROVIDER_APP: &str = "routed-provider";
const WAIT: Duration = Duration::from_secs(30);

/// Starts `n` providers of `PROVIDER_APP` and registers them in ZooKeeper: the servers (the caller
/// keeps them alive) and their ports, in start order.
async fn registered_providers(zk: &Client, n: usize) -> (Vec<DubboServer>, Vec<i32>) {
    let mut servers = Vec::with_capacity(n);
    let mut ports = Vec::with_capacity(n);
    for _ in 0..n {
        let (server, port) = registered_port_echo(zk, SERVICE, PROVIDER_APP).await;
        servers.push(server);
        ports.push(port);
    }
    (servers, ports)
}

/// The ports the calls tagged `tag` reach, in port order (see `ports_reached`).
async fn reached(reference: &Reference, tag: Option<&str>) -> Vec<i32> {
    ports_reached(reference, tag).await.into_iter().collect()
}

/// Waits until the chain has applied a new rule version (the rule arrived from ZooKeeper).
async fn rule_applied(reference: &Reference, after: u64) {
    reference_reaches(reference, "the rule to reach the chain", WAIT, || {
        reference.rules().version() > after
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tag_and_condition_rules_from_zookeeper_route_live() {
    let zookeeper = ZooKeeperContainer::start()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let zk = Client::connect(&zookeeper.connect_string())
        .await
        .expect("writer");
    let (_servers, ports) = registered_providers(&zk, 3).await;
    let consumer = Consumer::builder().application("routed-consumer").build();
    let reference = consumer
        .reference(SERVICE)
        .registry(&format!("zookeeper://{}", zookeeper.connect_string()))
        .build()
        .await
        .expect("reference");
    let mut all = ports.clone();
    all.sort_unstable();
    assert_eq!(reached(&reference, None).await, all);

    // A dynamic tag rule, as dubbo-admin writes it: the first provider is `gray`.
    let version = reference.rules().version();
    let tag_rule = format!(
        "configVersion: v3.0\nforce: false\nenabled: true\nkey: {PROVIDER_APP}\ntags:\n  - name: gray\n    addresses: [\"127.0.0.1:{}\"]\n",
        ports[0]
    );
    put(
        &zk,
        &format!("/dubbo/config/dubbo/{PROVIDER_APP}.tag-router"),
        &tag_rule,
    )
    .await;
    rule_applied(&reference, version).await;
    assert_eq!(reached(&reference, Some("gray")).await, [ports[0]]);
    let mut untagged = vec![ports[1], ports[2]];
    untagged.sort_unstable();
    assert_eq!(reached(&reference, None).await, untagged);
    let explanation = reference.explain(&Invocation::new("whoAmI", vec![], vec![]));
    assert_eq!(explanation.kept(), 2, "{explanation}");

    // The CLI reads the same rules: `providers --explain` names the rule, `simulate` splits by it.
    let registry = format!("zookeeper://{}", zookeeper.connect_string());
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
    let kept_line = format!("in  127.0.0.1:{}", ports[0]);
    assert!(
        explained.stdout.contains(&kept_line),
        "{}",
        explained.stdout
    );
    assert!(
        explained.stdout.contains("1 of 3 providers kept"),
        "{}",
        explained.stdout
    );
    let simulated = run_rudder(&[
        "simulate",
        "--registry",
        &registry,
        "--interface",
        SERVICE,
        "--method",
        "whoAmI",
        "--attachment",
        "dubbo.tag=gray",
        "--summary",
        "--calls",
        "100",
        "--seed",
        "1",
    ])
    .await;
    assert_eq!(simulated.code, 0, "{}", simulated.stderr);
    let gray_line = format!("127.0.0.1:{} 100", ports[0]);
    assert!(
        simulated.stdout.contains(&gray_line),
        "{}",
        simulated.stdout
    );

    // A configurator rule (dubbo-admin's "disable"): the explanation names it for the provider it
    // takes out, and lifting it brings the provider back.
    let disable = format!(
        "configVersion: v2.7\nscope: service\nkey: {SERVICE}\nenabled: true\nconfigs:\n- side: consumer\n  providerAddresses: [\"127.0.0.1:{}\"]\n  parameters:\n    disabled: true\n",
        ports[1]
    );
    let disable_path = format!("/dubbo/config/dubbo/{SERVICE}::.configurators");
    put(&zk, &disable_path, &disable).await;
    reference_reaches(&reference, "the configurator to apply", WAIT, || {
        reference.snapshot().providers().len() == 2
    })
    .await;
    let explained = run_rudder(&[
        "providers",
        "--registry",
        &registry,
        "--interface",
        SERVICE,
        "--method",
        "whoAmI",
        "--explain",
    ])
    .await;
    assert_eq!(explained.code, 0, "{}", explained.stderr);
    let disabled_line = format!(
        "out 127.0.0.1:{}  by configurator {SERVICE}::.configurators (disabled)",
        ports[1]
    );
    assert!(
        explained.stdout.contains(&disabled_line),
        "{}",
        explained.stdout
    );
    zk.delete(&disable_path, None).await.expect("delete");
    reference_reaches(&reference, "the provider to come back", WAIT, || {
        reference.snapshot().providers().len() == 3
    })
    .await;

    // A service condition rule: whoAmI only to the third provider.
    let version = reference.rules().version();
    let condition_rule = format!(
        "configVersion: v3.0\nscope: service\nforce: true\nenabled: true\nkey: {SERVICE}\nconditions:\n  - method = whoAmI => port = {}\n",
        ports[2]
    );
    let condition_path = format!("/dubbo/config/dubbo/{SERVICE}::.condition-router");
    put(&zk, &condition_path, &condition_rule).await;
    rule_applied(&reference, version).await;
    assert_eq!(reached(&reference, None).await, [ports[2]]);

    // Deleted: the tag rule alone routes again.
    let version = reference.rules().version();
    zk.delete(&condition_path, None).await.expect("delete");
    rule_applied(&reference, version).await;
    assert_eq!(reached(&reference, None).await, untagged);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_separate_config_center_is_where_rules_are_read() {
    let zookeeper = ZooKeeperContainer::start()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let zk = Client::connect(&zookeeper.connect_string())
        .await
        .expect("writer");
    let (_servers, ports) = registered_providers(&zk, 2).await;
    // The same rule in two namespaces: the registry's own (ignored) and the config center's.
    let rule = |port: i32| {
        format!(
            "configVersion: v3.0\nscope: service\nforce: true\nenabled: true\nkey: {SERVICE}\nconditions:\n  - => port = {port}\n"
        )
    };
    put(
        &zk,
        &format!("/dubbo/config/dubbo/{SERVICE}::.condition-router"),
        &rule(ports[0]),
    )
    .await;
    put(
        &zk,
        &format!("/governance/config/dubbo/{SERVICE}::.condition-router"),
        &rule(ports[1]),
    )
    .await;
    let consumer = Consumer::builder()
        .application("routed-consumer")
        .config_center(&format!(
            "zookeeper://{}?group=governance",
            zookeeper.connect_string()
        ))
        .build();
    let reference = consumer
        .reference(SERVICE)
        .registry(&format!("zookeeper://{}", zookeeper.connect_string()))
        .build()
        .await
        .expect("reference");
    assert_eq!(reached(&reference, None).await, [ports[1]]);
}
