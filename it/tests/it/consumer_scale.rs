//! The consumer runtime against a real ZooKeeper: what it holds open at scale, and that it lets go.
//!
//! * 1,000 providers come and go: their connections, connection tasks and statistics all end.
//! * 200 references to 200 interfaces of 20 providers each (the same 20 provider processes exporting
//!   every interface, as Dubbo applications do): one ZooKeeper session, one connection per provider
//!   address, and the time and memory it takes. Run with `--nocapture` to see the figures:
//!   `cargo test --release -p rudder-it --test it consumer_scale -- --nocapture`.

use std::time::{Duration, Instant};

use rudder::{Consumer, DubboUrl, Invocation, Reference, Value};
use rudder_it::ZooKeeperContainer;
use rudder_rpc::server::DubboServer;
use zookeeper_client::{Acls, Client, CreateMode};

use crate::common::changes::reference_reaches;

const WAIT: Duration = Duration::from_secs(60);

async fn zookeeper() -> ZooKeeperContainer {
    ZooKeeperContainer::start()
        .await
        .unwrap_or_else(|err| panic!("{err}"))
}

/// Provider processes that answer any interface.
async fn servers(n: usize) -> Vec<DubboServer> {
    let mut servers = Vec::with_capacity(n);
    for _ in 0..n {
        servers.push(
            DubboServer::bind(0, |_call: Invocation| async { Ok(Value::Int(1)) })
                .await
                .expect("bind"),
        );
    }
    servers
}

fn provider_url(server: &DubboServer, interface: &str) -> DubboUrl {
    DubboUrl::parse(&format!(
        "dubbo://{}/{interface}?interface={interface}&side=provider",
        server.local_addr()
    ))
    .expect("provider URL")
}

/// Registers `url` as a provider node (persistent, so the test decides when it goes).
async fn register(zk: &Client, url: &DubboUrl) -> String {
    let persistent = CreateMode::Persistent.with_acls(Acls::anyone_all());
    let parent = format!("/dubbo/{}/providers", url.service_interface());
    zk.mkdir(&parent, &persistent).await.expect("mkdir");
    let path = format!("{parent}/{}", url.to_node_name());
    zk.create(&path, b"", &persistent).await.expect("create");
    path
}

/// Waits for a condition the consumer must reach by itself, checked on each directory change,
/// bounded by [`WAIT`].
async fn until(reference: &Reference, what: &str, condition: impl FnMut() -> bool) {
    reference_reaches(reference, what, WAIT, condition).await;
}

fn providers_of(reference: &Reference) -> usize {
    reference.snapshot().providers().len()
}

/// Resident memory of this process, from /proc (Linux), in bytes.
fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_providers_come_and_go_and_leave_nothing_behind() {
    const N: usize = 1000;
    const SERVICE: &str = "com.acme.Churn";
    let zookeeper = zookeeper().await;
    let zk = Client::connect(&zookeeper.connect_string())
        .await
        .expect("writer");
    let servers = servers(N).await;
    let consumer = Consumer::builder().application("churn").build();
    let reference = consumer
        .reference(SERVICE)
        .registry(&format!("zookeeper://{}", zookeeper.connect_string()))
        .loadbalance("roundrobin")
        .timeout(std::time::Duration::from_millis(5000))
        .build()
        .await
        .expect("reference");
    let mut paths = Vec::with_capacity(N);
    for server in &servers {
        paths.push(register(&zk, &provider_url(server, SERVICE)).await);
    }
    until(&reference, "1,000 providers", || {
        providers_of(&reference) == N
    })
    .await;
    // Equal weights under round robin: one call to each provider, so one connection to each.
    for _ in 0..N {
        reference
            .call::<Value, _>("ping", &[], vec![])
            .await
            .expect("call");
    }
    assert_eq!(consumer.diagnostics().open_connections(), N);
    assert_eq!(consumer.statuses().len(), N);
    assert!(servers.iter().all(|s| s.open_connections() == 1));

    for path in &paths {
        zk.delete(path, None).await.expect("delete");
    }
    until(&reference, "the providers to leave", || {
        providers_of(&reference) == 0
    })
    .await;
    tokio::time::timeout(WAIT, consumer.diagnostics().wait_until_idle())
        .await
        .expect("every connection of the departed providers closes");
    assert_eq!(consumer.diagnostics().open_connections(), 0);
    assert_eq!(consumer.diagnostics().live_tasks(), 0);
    assert_eq!(consumer.statuses().len(), 0, "statistics pruned");
    for server in &servers {
        tokio::time::timeout(WAIT, server.wait_for_open_connections(0))
            .await
            .expect("each provider sees its socket closed");
    }
    assert_eq!(consumer.diagnostics().registry_sessions(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_references_share_one_session_and_one_connection_per_address() {
    const INTERFACES: usize = 200;
    const PROVIDERS: usize = 20;
    let zookeeper = zookeeper().await;
    let zk = Client::connect(&zookeeper.connect_string())
        .await
        .expect("writer");
    let servers = servers(PROVIDERS).await;
    let interfaces: Vec<String> = (0..INTERFACES)
        .map(|i| format!("com.acme.scale.Service{i:03}"))
        .collect();
    for interface in &interfaces {
        for server in &servers {
            register(&zk, &provider_url(server, interface)).await;
        }
    }
    let registry = format!("zookeeper://{}", zookeeper.connect_string());
    let consumer = Consumer::builder().application("scale").build();
    let before = resident_bytes();
    let started = Instant::now();
    let mut builds = Vec::with_capacity(INTERFACES);
    for interface in &interfaces {
        let builder = consumer
            .reference(interface)
            .registry(&registry)
            .loadbalance("roundrobin");
        builds.push(tokio::spawn(builder.build()));
    }
    let mut references = Vec::with_capacity(INTERFACES);
    for build in builds {
        references.push(build.await.expect("task").expect("reference"));
    }
    let ready = started.elapsed();
    assert!(references.iter().all(|r| providers_of(r) == PROVIDERS));
    let after_build = resident_bytes();
    assert_eq!(
        consumer.diagnostics().registry_sessions(),
        1,
        "one session for every reference"
    );

    for reference in &references {
        for _ in 0..PROVIDERS {
            reference
                .call::<Value, _>("ping", &[], vec![])
                .await
                .expect("call");
        }
    }
    assert_eq!(
        consumer.diagnostics().open_connections(),
        PROVIDERS,
        "one connection per provider address, shared by all 200 references"
    );
    let after_calls = resident_bytes();
    let per_reference = after_build.saturating_sub(before) / INTERFACES as u64;
    let per_provider = after_calls.saturating_sub(before) / (INTERFACES * PROVIDERS) as u64;
    println!(
        "scale: {INTERFACES} references x {PROVIDERS} providers: all listed in {} ms; \
         ZooKeeper sessions {}; TCP connections {}; resident memory +{} KiB per reference \
         (after listing), +{} B per provider entry (after one call to each)",
        ready.as_millis(),
        consumer.diagnostics().registry_sessions(),
        consumer.diagnostics().open_connections(),
        per_reference / 1024,
        per_provider
    );
    drop(references);
    tokio::time::timeout(WAIT, consumer.diagnostics().wait_until_idle())
        .await
        .expect("dropping every reference closes every connection");
}
