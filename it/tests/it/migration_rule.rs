//! The live migration rule (issue 16 item 5): `/dubbo/config/DUBBO_SERVICEDISCOVERY_MIGRATION/<consumer
//! app>.migration`, changed in ZooKeeper while calls go on. One provider is registered at interface
//! level only, another as an application instance only (remote metadata), both in-process servers
//! answering with their port: which view a call went through is its answer.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rudder::{Reference, SubscriptionStatus};
use rudder_cluster::directory::Directory;
use rudder_common::url::merge::ConsumerParams;
use rudder_common::url::DubboUrl;
use rudder_it::{run_rudder, ZooKeeperContainer};
use rudder_registry::{ConsumerSpec, Subscription};
use zookeeper_client::Client;

use crate::app_discovery::{put_instance, put_remote_metadata};
use crate::common::changes::reference_reaches;
use crate::common::providers::{port_echo, ports_reached, put_node, registered_port_echo};

pub(crate) const SERVICE: &str = "com.acme.Migrating";
pub(crate) const CONSUMER_APP: &str = "mig-consumer";
pub(crate) const RULE: &str =
    "/dubbo/config/DUBBO_SERVICEDISCOVERY_MIGRATION/mig-consumer.migration";
const WAIT: Duration = Duration::from_secs(30);

/// One interface-level provider (app `legacy`) and one instance (app `modern`, mapped to the
/// interface): the servers (keep them) and their ports.
pub(crate) async fn two_views(zk: &Client) -> (Vec<rudder_rpc::server::DubboServer>, i32, i32) {
    let (legacy, interface_port) = registered_port_echo(zk, SERVICE, "legacy").await;
    let modern = port_echo().await;
    let instance_port = modern.local_addr().port();
    put_remote_metadata(zk, "modern", "r1", &[SERVICE]).await;
    put_node(zk, &format!("/dubbo/mapping/{SERVICE}"), "modern").await;
    put_instance(zk, "modern", instance_port, "r1").await;
    (
        vec![legacy, modern],
        interface_port,
        i32::from(instance_port),
    )
}

fn ports(directory: &Directory) -> Vec<i32> {
    directory
        .snapshot()
        .providers()
        .iter()
        .map(|p| i32::from(p.url().port()))
        .collect()
}

/// The ports of the providers `reference` routes over now.
fn reference_ports(reference: &Reference) -> Vec<i32> {
    reference
        .snapshot()
        .providers()
        .iter()
        .map(|p| i32::from(p.url().port()))
        .collect()
}

fn status(reference: &Reference) -> SubscriptionStatus {
    reference.registry_status()[0].clone().expect("subscribed")
}

#[tokio::test]
async fn a_step_changed_live_switches_the_providers_calls_reach_without_a_failed_call() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let zk = Client::connect(&zookeeper.connect_string()).await.unwrap();
    let (_servers, interface_port, instance_port) = two_views(&zk).await;
    let reference = Arc::new(
        Reference::builder(SERVICE)
            .registry(&format!("zookeeper://{}", zookeeper.connect_string()))
            .application(CONSUMER_APP)
            .timeout(Duration::from_secs(5))
            .build()
            .await
            .unwrap(),
    );
    // No rule: APPLICATION_FIRST (the default), and the instance wins the comparison.
    assert_eq!(
        ports_reached(&reference, None).await,
        [instance_port].into()
    );
    let seen = status(&reference);
    assert!(
        seen.migration_decision
            .starts_with("APPLICATION_FIRST (default): application view"),
        "{seen:?}"
    );

    // Calls go on through every switch below; none may fail.
    let stop = Arc::new(AtomicBool::new(false));
    let failed = Arc::new(AtomicU64::new(0));
    let made = Arc::new(AtomicU64::new(0));
    let caller = tokio::spawn({
        let (reference, stop, failed, made) = (
            Arc::clone(&reference),
            Arc::clone(&stop),
            Arc::clone(&failed),
            Arc::clone(&made),
        );
        async move {
            while !stop.load(Ordering::Relaxed) {
                if reference
                    .call::<rudder::Value, _>("whoAmI", &[], vec![])
                    .await
                    .is_err()
                {
                    failed.fetch_add(1, Ordering::Relaxed);
                }
                made.fetch_add(1, Ordering::Relaxed);
            }
        }
    });

    // The rule's top level: FORCE_INTERFACE (interface 1 / application 1 >= threshold 0: the
    // comparator lets it switch).
    put_node(&zk, RULE, "key: mig-consumer\nstep: FORCE_INTERFACE\n").await;
    reference_reaches(&reference, "the interface view", WAIT, || {
        reference_ports(&reference) == [interface_port]
    })
    .await;
    assert_eq!(
        ports_reached(&reference, None).await,
        [interface_port].into()
    );
    let seen = status(&reference);
    assert_eq!(seen.migration_step, "FORCE_INTERFACE");
    assert_eq!(
        seen.application_providers, 0,
        "the instance view is dropped"
    );

    // An `interfaces` entry for this reference beats the top level.
    put_node(
        &zk,
        RULE,
        &format!(
            "step: FORCE_INTERFACE\ninterfaces:\n  - serviceKey: {SERVICE}\n    step: FORCE_APPLICATION\n"
        ),
    )
    .await;
    reference_reaches(&reference, "the application view", WAIT, || {
        reference_ports(&reference) == [instance_port]
    })
    .await;
    assert_eq!(
        ports_reached(&reference, None).await,
        [instance_port].into()
    );
    let seen = status(&reference);
    assert_eq!(seen.migration_step, "FORCE_APPLICATION");
    assert!(
        seen.migration_decision.starts_with(&format!(
            "FORCE_APPLICATION (rule entry interfaces[{SERVICE}])"
        )),
        "{seen:?}"
    );
    assert_eq!(seen.interface_providers, 0, "the interface view is dropped");

    // The rule deleted: the initial rule, so the default step again, both views followed.
    zk.delete(RULE, None).await.unwrap();
    reference_reaches(&reference, "both views again", WAIT, || {
        let s = status(&reference);
        s.migration_step == "APPLICATION_FIRST" && s.interface_providers == 1
    })
    .await;
    assert_eq!(
        ports_reached(&reference, None).await,
        [instance_port].into()
    );

    stop.store(true, Ordering::Relaxed);
    caller.await.unwrap();
    assert!(made.load(Ordering::Relaxed) > 0);
    assert_eq!(
        failed.load(Ordering::Relaxed),
        0,
        "a call failed during a switch"
    );
}

async fn wait(
    subscription: &Subscription,
    what: &str,
    condition: impl FnMut(&SubscriptionStatus) -> bool,
) -> SubscriptionStatus {
    match subscription.wait_for(WAIT, condition).await {
        Some(status) => status,
        None => panic!("{what}: {:?}", subscription.status().borrow()),
    }
}

#[tokio::test]
async fn refusals_force_delay_application_entries_and_broken_rules_act_as_in_dubbo() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let zk = Client::connect(&zookeeper.connect_string()).await.unwrap();
    let (_servers, interface_port, instance_port) = two_views(&zk).await;
    // A rule present before the subscription decides its first step, with no comparison.
    put_node(&zk, RULE, "step: FORCE_APPLICATION\n").await;
    let registry = crate::common::registry(&zookeeper).await;
    // The consumer says FORCE_INTERFACE; the rule wins.
    let settings = DubboUrl::parse(&format!(
        "consumer://0.0.0.0/{SERVICE}?migration.step=FORCE_INTERFACE"
    ))
    .unwrap();
    let directory = Arc::new(Directory::default());
    let subscription = registry
        .subscribe(
            ConsumerSpec::new(SERVICE)
                .application(CONSUMER_APP)
                .parameters(ConsumerParams::new(&settings)),
            Arc::clone(&directory),
        )
        .await
        .unwrap();
    let seen = wait(&subscription, "the rule's first step", |s| s.providers == 1).await;
    assert_eq!(seen.migration_step, "FORCE_APPLICATION");
    assert_eq!(ports(&directory), [instance_port]);

    // A broken rule keeps the last good one: one error, nothing moves.
    put_node(&zk, RULE, "step: force_interface\n").await;
    let seen = wait(&subscription, "the broken rule", |s| {
        s.migration_rule_errors == 1
    })
    .await;
    assert_eq!(seen.migration_step, "FORCE_APPLICATION");
    assert!(
        seen.last_migration_rule_error
            .as_deref()
            .is_some_and(|e| e.contains("mig-consumer.migration") && e.contains("upper case")),
        "{seen:?}"
    );
    assert_eq!(ports(&directory), [instance_port]);

    // FORCE_INTERFACE with a threshold the interface view misses (1 / 1 < 5): refused, the step
    // stays and the interface view started for the attempt is dropped again.
    put_node(&zk, RULE, "step: FORCE_INTERFACE\nthreshold: 5\n").await;
    let seen = wait(&subscription, "the refusal", |s| {
        s.migration_decision.contains("refused")
    })
    .await;
    assert_eq!(seen.migration_step, "FORCE_APPLICATION");
    assert_eq!(seen.interface_providers, 0);
    assert_eq!(ports(&directory), [instance_port]);

    // The same with force: switched without comparing.
    put_node(
        &zk,
        RULE,
        "step: FORCE_INTERFACE\nthreshold: 5\nforce: true\n",
    )
    .await;
    let seen = wait(&subscription, "the forced switch", |s| {
        s.migration_step == "FORCE_INTERFACE"
    })
    .await;
    assert_eq!(seen.application_providers, 0);
    assert_eq!(ports(&directory), [interface_port]);

    // A delayed FORCE_APPLICATION: announced first, made once the delay has passed.
    put_node(&zk, RULE, "step: FORCE_APPLICATION\ndelay: 1\n").await;
    let seen = wait(&subscription, "the announced switch", |s| {
        s.migration_decision
            .contains("switching to FORCE_APPLICATION")
    })
    .await;
    assert_eq!(seen.migration_step, "FORCE_INTERFACE");
    assert_eq!(
        seen.application_providers, 1,
        "the new view is followed meanwhile"
    );
    assert_eq!(ports(&directory), [interface_port]);
    wait(&subscription, "the delayed switch", |s| {
        s.migration_step == "FORCE_APPLICATION"
    })
    .await;
    assert_eq!(ports(&directory), [instance_port]);

    // An `applications` entry of the provider application (from the mapping) beats the top level.
    put_node(
        &zk,
        RULE,
        "step: FORCE_APPLICATION\napplications:\n  - serviceKey: modern\n    step: APPLICATION_FIRST\n    threshold: 2\n",
    )
    .await;
    let seen = wait(&subscription, "the application entry", |s| {
        s.migration_step == "APPLICATION_FIRST" && s.interface_providers == 1
    })
    .await;
    // 1 instance / 1 provider < threshold 2: the interface view is used.
    assert!(
        seen.migration_decision.starts_with(
            "APPLICATION_FIRST (rule entry applications[modern]): interface view, 1 application-level / 1 interface-level providers < threshold 2"
        ),
        "{seen:?}"
    );
    assert_eq!(ports(&directory), [interface_port]);
    assert_eq!(seen.migration_rule_errors, 1);

    subscription.close().await;
    registry.close().await;
}

#[tokio::test]
async fn the_cli_honours_migration_step_and_says_which_view_and_why() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let zk = Client::connect(&zookeeper.connect_string()).await.unwrap();
    let (_servers, interface_port, instance_port) = two_views(&zk).await;
    let registry = format!("zookeeper://{}", zookeeper.connect_string());
    let base = ["--registry", registry.as_str(), "--interface", SERVICE];
    let rudder = |extra: &[&str]| {
        let args: Vec<String> = extra.iter().chain(&base).map(|a| a.to_string()).collect();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run_rudder(&args).await
        }
    };

    // The default step: the instance wins; the listing says so and lists it.
    let out = rudder(&["providers"]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(
            "# migration: APPLICATION_FIRST (default): application view, 1 application-level / 1 \
             interface-level providers >= threshold 0\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!("127.0.0.1:{instance_port}")),
        "{}",
        out.stdout
    );
    assert!(
        !out.stdout.contains(&format!("127.0.0.1:{interface_port}")),
        "{}",
        out.stdout
    );

    // --param migration.step: the consumer setting decides.
    let out = rudder(&["providers", "--param", "migration.step=FORCE_INTERFACE"]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("# migration: FORCE_INTERFACE (consumer setting): interface view\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!("127.0.0.1:{interface_port}")),
        "{}",
        out.stdout
    );

    // JSON: each provider's view.
    let out = rudder(&["providers", "--format", "json"]).await;
    let rows: serde_json::Value = serde_json::from_str(out.stdout.trim()).expect("json");
    assert_eq!(rows[0]["view"], "application", "{rows}");
    assert_eq!(rows[0]["address"], format!("127.0.0.1:{instance_port}"));
    let out = rudder(&[
        "providers",
        "--format",
        "json",
        "--param",
        "migration.step=FORCE_INTERFACE",
    ])
    .await;
    let rows: serde_json::Value = serde_json::from_str(out.stdout.trim()).expect("json");
    assert_eq!(rows[0]["view"], "interface", "{rows}");

    // --explain names the migration decision, once (the listing above it says it already).
    let out = rudder(&["providers", "--method", "whoAmI", "--explain"]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout.matches("# migration:").count(),
        1,
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("# migration: APPLICATION_FIRST (default): application view"),
        "{}",
        out.stdout
    );

    // simulate and invoke honour the step too (the note on stderr; invoke's with -v).
    let out = rudder(&[
        "simulate",
        "--param",
        "migration.step=FORCE_INTERFACE",
        "--calls",
        "10",
        "--summary",
    ])
    .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(&format!("127.0.0.1:{interface_port}")),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr
            .contains("# migration: FORCE_INTERFACE (consumer setting)"),
        "{}",
        out.stderr
    );
    let out = rudder(&[
        "invoke",
        "--method",
        "whoAmI",
        "--args",
        "[]",
        "-v",
        "--param",
        "migration.step=FORCE_APPLICATION",
    ])
    .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), instance_port.to_string());
    assert!(
        out.stderr
            .contains("# migration: FORCE_APPLICATION (consumer setting): application view"),
        "{}",
        out.stderr
    );

    // A live rule names itself.
    put_node(
        &zk,
        "/dubbo/config/DUBBO_SERVICEDISCOVERY_MIGRATION/rudder-cli.migration",
        "step: FORCE_INTERFACE\n",
    )
    .await;
    let out = rudder(&["providers"]).await;
    assert!(
        out.stdout
            .contains("# migration: FORCE_INTERFACE (rule): interface view\n"),
        "{}",
        out.stdout
    );
}
