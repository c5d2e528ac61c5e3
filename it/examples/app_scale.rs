//! Scale of application-level discovery against interface-level discovery (issue 16 item 7), run
//! by hand (loopback only; needs Docker and the local ZooKeeper image, see `scripts/it-setup.sh`):
//!
//! ```text
//! cargo run --release -p rudder-it --example app_scale
//! ```
//!
//! One application with 1,000 instances exporting 50 interfaces; 50 references (one per interface)
//! in one consumer. Three scenarios, each in a child process of its own (so one's freed memory does
//! not flatter the next), each against a fresh ZooKeeper:
//!
//! * `app1`: the instances under `/services/big/127.0.0.1:PORT`, one revision, the mapping of every
//!   interface to `big`, and one in-process MetadataService (rudder-rpc's `DubboServer`) that every
//!   instance's `dubbo.metadata-service.url-params` points at, answering `getMetadataInfo(revision)`
//!   with the 50 services and counting the calls;
//! * `app10`: the same with 10 revisions (instance `i` has revision `i % 10`);
//! * `interface`: the same providers as 1,000 x 50 = 50,000 nodes under `/dubbo/<interface>/providers`.
//!
//! Per scenario: the time until all 50 references list 1,000 providers, the watches ZooKeeper holds
//! for the consumer's session (`wchs`), the metadata fetches the MetadataService answered (must equal
//! the revisions), the consumer's resident memory growth, and the time one instance added (and then
//! removed) takes to reach all 50 directories. `--scenario NAME` runs one scenario in this process.
//! The instances' service ports are never called, so nothing listens there. `APP_SCALE_TRACE=1`
//! prints when each reference reached each count (on stderr).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rudder::{Consumer, DubboUrl, Invocation, Reference, Value};
use rudder_it::ZooKeeperContainer;
use rudder_rpc::server::DubboServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use zookeeper_client::{Acls, Client, CreateMode};

const INSTANCES: usize = 1_000;
const INTERFACES: usize = 50;
const APP: &str = "big";
const FIRST_PORT: usize = 40_000;
const WAIT: Duration = Duration::from_secs(300);

fn interface(j: usize) -> String {
    format!("com.acme.scale.Service{j:02}")
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == "--scenario") {
        Some(i) => {
            let scenario = args.get(i + 1).expect("--scenario NAME").clone();
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .expect("runtime");
            let line = runtime.block_on(run(&scenario));
            println!("{line}");
        }
        None => {
            println!(
                "{INSTANCES} instances x {INTERFACES} interfaces, {INTERFACES} references in one consumer"
            );
            println!(
                "| discovery | revisions | first providers, 50 refs | ZooKeeper watches | metadata fetches | RSS growth | +1 instance in every directory | -1 instance |"
            );
            println!("|---|---|---|---|---|---|---|---|");
            let exe = std::env::current_exe().expect("current exe");
            for scenario in ["app1", "app10", "interface"] {
                let out = std::process::Command::new(&exe)
                    .args(["--scenario", scenario])
                    .output()
                    .expect("run a scenario");
                let stdout = String::from_utf8_lossy(&out.stdout);
                match stdout.lines().last() {
                    Some(line) if out.status.success() => println!("{line}"),
                    _ => {
                        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
                        panic!("scenario {scenario} failed");
                    }
                }
            }
        }
    }
}

async fn run(scenario: &str) -> String {
    let zookeeper = ZooKeeperContainer::start()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // The writer's session outlives a busy moment of the two cores it shares with the consumer.
    let zk = Client::connector()
        .with_session_timeout(Duration::from_secs(60))
        .connect(&zookeeper.connect_string())
        .await
        .expect("connect");
    let fetches = Arc::new(AtomicU64::new(0));
    let (server, revisions, step) = match scenario {
        "app1" | "app10" => {
            let revisions = if scenario == "app1" { 1 } else { 10 };
            let server = metadata_service(Arc::clone(&fetches)).await;
            let port = server.local_addr().port();
            write_instances(&zk, revisions, port).await;
            (Some(server), revisions, "FORCE_APPLICATION")
        }
        "interface" => {
            write_providers(&zk).await;
            (None, 0, "FORCE_INTERFACE")
        }
        other => panic!("unknown scenario {other}"),
    };

    // A build deadline (registry `timeout`) long enough for a slow machine: what is measured is
    // the time the listing takes, not whether it beats the default 10 s.
    let registry = format!("zookeeper://{}?timeout=120000", zookeeper.connect_string());
    let consumer = Consumer::builder().application("scale-consumer").build();
    let before = resident_bytes();
    let started = Instant::now();
    let mut builds = Vec::with_capacity(INTERFACES);
    for j in 0..INTERFACES {
        let builder = consumer
            .reference(&interface(j))
            .registry(&registry)
            .parameter("migration.step", step);
        builds.push(tokio::spawn(builder.build()));
    }
    let mut references = Vec::with_capacity(INTERFACES);
    for build in builds {
        references.push(build.await.expect("task").expect("reference"));
    }
    all_reach(&references, INSTANCES).await;
    let first = started.elapsed();
    let grown = resident_bytes().saturating_sub(before);
    let watches = watches(zookeeper.port()).await;
    let fetched = fetches.load(Ordering::Relaxed);
    if server.is_some() {
        assert_eq!(fetched, revisions, "one metadata fetch per revision");
    }

    // One more instance (port FIRST_PORT + INSTANCES), then gone again.
    let extra = INSTANCES;
    let started = Instant::now();
    let added = match server.as_ref() {
        Some(server) => {
            let path = instance_path(extra);
            put(
                &zk,
                &path,
                &instance_json(extra, 0, server.local_addr().port()),
            )
            .await;
            vec![path]
        }
        None => {
            let paths: Vec<(String, String)> =
                (0..INTERFACES).map(|j| provider_node(extra, j)).collect();
            create_all(&zk, &paths).await;
            paths.into_iter().map(|(p, _)| p).collect()
        }
    };
    all_reach(&references, INSTANCES + 1).await;
    let add = started.elapsed();
    let started = Instant::now();
    for path in &added {
        zk.delete(path, None).await.expect("delete");
    }

    all_reach(&references, INSTANCES).await;
    let remove = started.elapsed();
    if server.is_some() {
        assert_eq!(
            fetches.load(Ordering::Relaxed),
            revisions,
            "a new instance of a known revision costs no fetch"
        );
    }

    drop(references);
    consumer.shutdown().await;
    let (discovery, revisions_text, fetched_text) = match server {
        Some(_) => ("application", revisions.to_string(), fetched.to_string()),
        None => ("interface", "-".to_owned(), "-".to_owned()),
    };
    format!(
        "| {discovery} | {revisions_text} | {} ms | {watches} | {fetched_text} | {} MiB | {} ms | {} ms |",
        first.as_millis(),
        grown / (1024 * 1024),
        add.as_millis(),
        remove.as_millis()
    )
}

/// Waits until every reference lists `count` providers, each woken by its directory's changes.
async fn all_reach(references: &[Reference], count: usize) {
    let wait = async {
        let started = Instant::now();
        for (i, reference) in references.iter().enumerate() {
            loop {
                let mut changes = reference.changes();
                if reference.snapshot().providers().len() == count {
                    break;
                }
                assert!(changes.changed().await, "reference alive");
            }
            if std::env::var_os("APP_SCALE_TRACE").is_some() {
                eprintln!(
                    "reference {i} at {count} providers after {:?}",
                    started.elapsed()
                );
            }
        }
    };
    tokio::time::timeout(WAIT, wait)
        .await
        .unwrap_or_else(|_| panic!("not every reference reached {count} providers in {WAIT:?}"));
}

/// The MetadataService of every instance: `getMetadataInfo(revision)` answers the 50 services,
/// counting the calls.
async fn metadata_service(fetches: Arc<AtomicU64>) -> DubboServer {
    DubboServer::bind(0, move |call: Invocation| {
        let fetches = Arc::clone(&fetches);
        async move {
            let revision = call
                .arguments()
                .first()
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            fetches.fetch_add(1, Ordering::Relaxed);
            Ok(metadata_info(&revision))
        }
    })
    .await
    .expect("bind the MetadataService")
}

fn object(class: &str, fields: Vec<(&str, Value)>) -> Value {
    Value::Object {
        class: Arc::from(class),
        fields: fields.into_iter().map(|(k, v)| (Arc::from(k), v)).collect(),
    }
}

fn map(entries: Vec<(String, Value)>) -> Value {
    Value::Map {
        type_name: None,
        entries: entries
            .into_iter()
            .map(|(k, v)| (Value::from(k.as_str()), v))
            .collect(),
    }
}

/// Java's `MetadataInfo` of `revision`: the 50 services over dubbo, as a Java provider gives it.
fn metadata_info(revision: &str) -> Value {
    let services = (0..INTERFACES)
        .map(|j| {
            let name = interface(j);
            let params = map(vec![
                ("application".to_owned(), Value::from(APP)),
                ("methods".to_owned(), Value::from("ping,pong")),
                ("side".to_owned(), Value::from("provider")),
                ("revision.tag".to_owned(), Value::from(revision)),
            ]);
            let service = object(
                "org.apache.dubbo.metadata.MetadataInfo$ServiceInfo",
                vec![
                    ("name", Value::from(name.as_str())),
                    ("group", Value::Null),
                    ("version", Value::Null),
                    ("protocol", Value::from("dubbo")),
                    ("port", Value::Int(-1)),
                    ("path", Value::from(name.as_str())),
                    ("params", params),
                ],
            );
            (format!("{name}:dubbo"), service)
        })
        .collect();
    object(
        "org.apache.dubbo.metadata.MetadataInfo",
        vec![
            ("app", Value::from(APP)),
            ("revision", Value::from(revision)),
            ("services", map(services)),
        ],
    )
}

fn instance_path(i: usize) -> String {
    format!("/services/{APP}/127.0.0.1:{}", FIRST_PORT + i)
}

/// A Curator instance node as a Java 3.3 provider writes it, with local metadata served at
/// `metadata_port`.
fn instance_json(i: usize, revision: usize, metadata_port: u16) -> String {
    let port = FIRST_PORT + i;
    format!(
        r#"{{"name":"{APP}","id":"127.0.0.1:{port}","address":"127.0.0.1","port":{port},"sslPort":null,
           "payload":{{"@class":"org.apache.dubbo.registry.zookeeper.ZookeeperInstance","metadata":{{
             "dubbo.endpoints":"[{{\"port\":{port},\"protocol\":\"dubbo\"}}]",
             "dubbo.metadata-service.url-params":"{{\"version\":\"1.0.0\",\"port\":\"{metadata_port}\",\"protocol\":\"dubbo\"}}",
             "dubbo.metadata.revision":"rev{revision}","dubbo.metadata.storage-type":"local",
             "meta-v":"1.0.0","timestamp":"1700000000000"}}}},"serviceType":"DYNAMIC"}}"#
    )
}

async fn write_instances(zk: &Client, revisions: u64, metadata_port: u16) {
    for j in 0..INTERFACES {
        put(zk, &format!("/dubbo/mapping/{}", interface(j)), APP).await;
    }
    let nodes: Vec<(String, String)> = (0..INSTANCES)
        .map(|i| {
            let revision = i % usize::try_from(revisions).expect("few revisions");
            (instance_path(i), instance_json(i, revision, metadata_port))
        })
        .collect();
    create_all(zk, &nodes).await;
}

fn provider_node(i: usize, j: usize) -> (String, String) {
    let name = interface(j);
    let url = DubboUrl::parse(&format!(
        "dubbo://127.0.0.1:{}/{name}?interface={name}&application={APP}&methods=ping,pong&side=provider&timestamp=1700000000000",
        FIRST_PORT + i
    ))
    .expect("provider URL");
    (
        format!("/dubbo/{name}/providers/{}", url.to_node_name()),
        String::new(),
    )
}

async fn write_providers(zk: &Client) {
    let nodes: Vec<(String, String)> = (0..INSTANCES)
        .flat_map(|i| (0..INTERFACES).map(move |j| provider_node(i, j)))
        .collect();
    create_all(zk, &nodes).await;
}

/// Creates the nodes (parents made once each), pipelined 1,000 at a time.
async fn create_all(zk: &Client, nodes: &[(String, String)]) {
    let persistent = CreateMode::Persistent.with_acls(Acls::anyone_all());
    let mut parents: Vec<&str> = nodes
        .iter()
        .map(|(p, _)| &p[..p.rfind('/').expect("absolute")])
        .collect();
    parents.sort_unstable();
    parents.dedup();
    for parent in parents {
        zk.mkdir(parent, &persistent).await.expect("mkdir");
    }
    for chunk in nodes.chunks(1_000) {
        let pending: Vec<_> = chunk
            .iter()
            .map(|(path, data)| zk.create(path, data.as_bytes(), &persistent))
            .collect();
        for created in pending {
            created.await.expect("create");
        }
    }
}

async fn put(zk: &Client, path: &str, data: &str) {
    create_all(zk, &[(path.to_owned(), data.to_owned())]).await;
}

/// The watches ZooKeeper holds (`wchs`: "N connections watching M paths / Total watches:W").
async fn watches(port: u16) -> String {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("wchs connect");
    stream.write_all(b"wchs").await.expect("wchs");
    let mut reply = String::new();
    (&mut stream)
        .take(4096)
        .read_to_string(&mut reply)
        .await
        .expect("wchs reply");
    let paths = reply
        .lines()
        .next()
        .and_then(|l| l.split("watching ").nth(1))
        .and_then(|l| l.split(' ').next())
        .unwrap_or("?");
    let total = reply
        .lines()
        .find_map(|l| l.strip_prefix("Total watches:"))
        .unwrap_or("?");
    format!("{} ({paths} paths)", total.trim())
}

fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}
