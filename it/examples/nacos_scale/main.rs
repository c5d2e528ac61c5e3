//! Scale of Nacos discovery (issue 25 item 7), run by hand (loopback only; needs rnacos, see
//! `scripts/rnacos.sh install`):
//!
//! ```text
//! cargo run --release -p rudder-it --example nacos_scale [one|fifty|apps]
//! ```
//!
//! Against rnacos on loopback; at interface level the instances are written as Dubbo 3.3's
//! NacosRegistry writes them (service `providers:<interface>::`, the provider URL's parameters as
//! instance metadata):
//!
//! * `one`: 10,000 instances of one interface; the time from `connect` until the directory lists all
//!   10,000 (goal: 1 s), then [`ROUNDS`] times one instance added and removed by another client, each
//!   timed from the write until the directory has the change (goal: 100 ms);
//! * `fifty`: 50 interfaces of 1,000 instances each, 50 subscriptions on one registry: the time until
//!   all 50 directories list 1,000, then one instance added to one interface and removed;
//! * `apps`: application level, one application of 1,000 instances exporting the same 50
//!   interfaces ([`apps`] says how it is written), 50 subscriptions (`migration.step=FORCE_APPLICATION`):
//!   the time until all 50 directories list 1,000, then one instance added to the application and
//!   removed, timed until all 50 directories have it.
//!
//! Each scenario against a fresh rnacos (the tests' debug build, `scripts/rnacos.sh`); the
//! instances' ports are never called. Prints a Markdown table row per scenario, then where each
//! list's time went ([`relay`]): rudder talks to rnacos through a loopback relay
//! that notes when each byte reached rudder's socket, and each directory is wrapped in a sink that
//! notes when it applied an update, so a listing or a change splits into the server's time (request
//! sent, or change written, until the list's first byte reached rudder), the transfer (first to last
//! byte; HTTP/2 flow control makes it both sides' work) and rudder's own (last byte until the
//! directory has it: gRPC decode, JSON, catalog, directory). No rudder code is instrumented.
//! rnacos batches its pushes (a 500 ms timer), so a change takes 0.5 to 1 s to reach any client.
//! `NACOS_SCALE_TRACE=1` prints what the relay saw of the first listing of `one` (on stderr).

mod apps;
mod relay;
mod timing;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nacos_sdk::api::naming::{NamingService, NamingServiceBuilder, ServiceInstance};
use nacos_sdk::api::props::ClientProps;
use rudder_common::url::merge::ConsumerParams;
use rudder_common::url::DubboUrl;
use rudder_it::Rnacos;
use rudder_registry::{ConsumerSpec, RegistryOptions, Subscription};

use relay::{largest_burst, request_before, Relay};
use timing::{all_reached, cpu_used, split_cells, spread, Split, Timed, BURST_GAP};

const ROUNDS: usize = 5;
const WAIT: Duration = Duration::from_secs(300);

/// What a scenario writes and subscribes.
#[derive(Clone, Copy)]
struct Plan {
    name: &'static str,
    /// Interfaces subscribed.
    interfaces: usize,
    /// Instances per service.
    count: usize,
    /// Application level (one application exporting every interface).
    app: bool,
}

const PLANS: [Plan; 3] = [
    Plan {
        name: "one",
        interfaces: 1,
        count: 10_000,
        app: false,
    },
    Plan {
        name: "fifty",
        interfaces: 50,
        count: 1_000,
        app: false,
    },
    Plan {
        name: "apps",
        interfaces: 50,
        count: 1_000,
        app: true,
    },
];

impl Plan {
    /// The Nacos service the change goes to, and the instance added and removed.
    fn changed(&self) -> (String, ServiceInstance) {
        if self.app {
            (apps::APP.to_owned(), apps::instance("10.255.255.1"))
        } else {
            (service_name(0), instance(0, "10.255.255.1", 20880))
        }
    }

    fn spec(&self, j: usize) -> ConsumerSpec {
        let spec = ConsumerSpec::new(interface(j));
        if !self.app {
            return spec;
        }
        let settings = DubboUrl::parse(&format!(
            "consumer://0.0.0.0/{}?migration.step=FORCE_APPLICATION",
            interface(j)
        ))
        .expect("consumer settings");
        spec.parameters(ConsumerParams::new(&settings))
    }

    fn label(&self) -> String {
        let level = if self.app { "application" } else { "interface" };
        format!("{level}, {} × {}", self.interfaces, self.count)
    }
}

fn interface(j: usize) -> String {
    format!("com.acme.scale.Service{j:02}")
}

fn service_name(j: usize) -> String {
    format!("providers:{}::", interface(j))
}

/// An instance as Dubbo 3.3.6's NacosRegistry registers one: the provider URL's parameters as
/// metadata (about 600 bytes, as a Java provider's).
fn instance(j: usize, ip: &str, port: u16) -> ServiceInstance {
    let iface = interface(j);
    let methods = "sayHello,add,echoUser,nothing,fail,whoAmI,sleep";
    let mut metadata = HashMap::new();
    for (k, v) in [
        ("anyhost", "true"),
        ("application", "scale-provider"),
        ("category", "providers"),
        ("deprecated", "false"),
        ("dubbo", "2.0.2"),
        ("dynamic", "true"),
        ("generic", "false"),
        ("interface", iface.as_str()),
        ("path", iface.as_str()),
        ("methods", methods),
        ("pid", "4242"),
        ("prefer.serialization", "hessian2,fastjson2"),
        ("protocol", "dubbo"),
        ("release", "3.3.6"),
        ("service-name-mapping", "true"),
        ("side", "provider"),
        ("timestamp", "1733300000000"),
        ("background", "false"),
    ] {
        metadata.insert(k.to_owned(), v.to_owned());
    }
    ServiceInstance {
        ip: ip.to_owned(),
        port: i32::from(port),
        metadata,
        ..ServiceInstance::default()
    }
}

/// A Nacos naming client once its connection is up.
async fn naming(nacos: &Rnacos) -> NamingService {
    let connected = async {
        loop {
            let props = ClientProps::new()
                .server_addr(nacos.address())
                .env_first(false);
            if let Ok(naming) = NamingServiceBuilder::new(props).build().await {
                if naming.get_service_list(1, 1, None).await.is_ok() {
                    return naming;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(WAIT, connected)
        .await
        .expect("a Nacos client connects")
}

/// `count` distinct addresses (10.x.y.z).
fn ips(count: usize) -> impl Iterator<Item = String> {
    (0..count).map(|i| format!("10.{}.{}.{}", 1 + i / 65_536, (i / 256) % 256, i % 256))
}

/// Writes the plan's instances (one batch per service) and waits until rnacos lists them all.
async fn fill(nacos: &Rnacos, writer: &NamingService, plan: Plan) {
    let services: Vec<String> = if plan.app {
        let instances = ips(plan.count).map(|ip| apps::instance(&ip)).collect();
        apps::fill(nacos, writer, instances, plan.interfaces).await;
        vec![apps::APP.to_owned()]
    } else {
        for j in 0..plan.interfaces {
            let instances = ips(plan.count).map(|ip| instance(j, &ip, 20880)).collect();
            writer
                .batch_register_instance(service_name(j), None, instances)
                .await
                .expect("batch register");
        }
        (0..plan.interfaces).map(service_name).collect()
    };
    // nacos-sdk cannot read a list this large back (its 4 MiB message limit, see docs/nacos.md):
    // rnacos has stored a batch when it answers it, and the subscriptions below read it.
    if plan.count > 5_000 {
        return;
    }
    let listed = async {
        for service in &services {
            loop {
                let all = match writer
                    .get_all_instances(service.clone(), None, Vec::new(), false)
                    .await
                {
                    Ok(listed) => listed.len(),
                    Err(e) => {
                        eprintln!("listing {service}: {e}");
                        0
                    }
                };
                if all == plan.count {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    tokio::time::timeout(WAIT, listed)
        .await
        .expect("rnacos lists every instance");
}

/// One instance added by another client and removed, `ROUNDS` times: the times until every one of
/// `directories` has each change, and their splits.
async fn changes(
    nacos: &Rnacos,
    relay: &Relay,
    plan: Plan,
    directories: &[Arc<Timed>],
) -> (Vec<Duration>, Vec<Duration>, Vec<Split>) {
    let other = naming(nacos).await;
    let (service, extra) = plan.changed();
    let (mut added, mut removed, mut splits) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let (start, cpu) = (Instant::now(), cpu_used());
        other
            .register_instance(service.clone(), None, extra.clone())
            .await
            .expect("register");
        let applied = all_reached(directories, plan.count + 1).await;
        added.push(applied - start);
        let mut split = Split::of_change(relay, start, applied);
        split.cpu = cpu_used().saturating_sub(cpu);
        splits.push(split);
        let (start, cpu) = (Instant::now(), cpu_used());
        other
            .deregister_instance(service.clone(), None, extra.clone())
            .await
            .expect("deregister");
        let applied = all_reached(directories, plan.count).await;
        removed.push(applied - start);
        let mut split = Split::of_change(relay, start, applied);
        split.cpu = cpu_used().saturating_sub(cpu);
        splits.push(split);
    }
    (added, removed, splits)
}

/// A scenario's rows: the table row, and the split rows (first listing, changes).
struct Rows {
    row: String,
    splits: Vec<String>,
}

async fn scenario(plan: Plan) -> Rows {
    let nacos = Rnacos::start()
        .await
        .expect("rnacos (RUDDER_SKIP_NACOS is set)");
    let upstream: u16 = nacos
        .address()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("rnacos's port");
    let relay = Relay::start(upstream).await;
    let writer = naming(&nacos).await;
    let filled = Instant::now();
    fill(&nacos, &writer, plan).await;
    let filled = filled.elapsed();

    let (start, cpu) = (Instant::now(), cpu_used());
    // A deadline (registry `timeout`) long enough for a slow machine: what is measured is the time
    // the listing takes, not whether it beats the default 10 s.
    let url = format!("{}?timeout=120000", relay.url());
    let registry = rudder_registry::connect(&url, RegistryOptions::default(), None)
        .await
        .expect("connect");
    let directories: Vec<Arc<Timed>> = (0..plan.interfaces).map(|_| Timed::new()).collect();
    let mut subscriptions = Vec::new();
    for (j, directory) in directories.iter().enumerate() {
        let directory = Arc::clone(directory);
        let registry = Arc::clone(&registry);
        subscriptions.push(tokio::spawn(async move {
            registry
                .subscribe(plan.spec(j), directory as _, None)
                .await
                .expect("subscribe")
        }));
    }
    let mut subs: Vec<Subscription> = Vec::new();
    for s in subscriptions {
        subs.push(s.await.expect("subscribe task"));
    }
    let listed = all_reached(&directories, plan.count).await;
    let listing_cpu = cpu_used().saturating_sub(cpu);
    let first = listed - start;
    let label = plan.label();
    let mut splits = Vec::new();
    if plan.interfaces == 1 {
        // The first listing: connect and set-up, then the answer to the subscription.
        let chunks = relay.between(start, listed);
        let burst = largest_burst(&chunks, BURST_GAP).expect("the answer reached rudder");
        let sent = request_before(&chunks, &burst).expect("the request");
        if std::env::var_os("NACOS_SCALE_TRACE").is_some() {
            for c in chunks.iter().filter(|c| c.at >= sent) {
                eprintln!(
                    "{:>8.1} ms conn {} {} {} bytes",
                    (c.at - start).as_secs_f64() * 1e3,
                    c.conn,
                    if c.to_client { "<-" } else { "->" },
                    c.bytes
                );
            }
            eprintln!("listed at {} ms", (listed - start).as_millis());
        }
        let mut split = Split::new(sent, &burst, listed);
        split.cpu = listing_cpu;
        splits.push(format!(
            "| {label} | first listing (set-up before the request: {} ms) | {}",
            (sent - start).as_millis(),
            split_cells(&[split])
        ));
    }
    // At interface level the change is to interface 0 alone; at application level, to all 50.
    let changing = if plan.app {
        &directories[..]
    } else {
        &directories[..1]
    };
    let (added, removed, changed) = changes(&nacos, &relay, plan, changing).await;
    splits.push(format!(
        "| {label} | one change ({ROUNDS} added, {ROUNDS} removed) | {}",
        split_cells(&changed)
    ));
    for subscription in subs {
        subscription.close().await;
    }
    registry.close().await;
    Rows {
        row: format!(
            "| {label} | {} ms | {} ms | {} | {} |",
            filled.as_millis(),
            first.as_millis(),
            spread(added),
            spread(removed)
        ),
        splits,
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    // A scenario's name alone: that scenario.
    let only = std::env::args().nth(1);
    let mut rows = Vec::new();
    for plan in PLANS {
        if only.as_deref().is_some_and(|o| o != plan.name) {
            continue;
        }
        rows.push(runtime.block_on(scenario(plan)));
    }
    println!("| discovery, services × instances | written into rnacos | first listing, every directory | +1 instance in every directory, median (min–max) of {ROUNDS} | -1 instance |");
    println!("|---|---|---|---|---|");
    for r in &rows {
        println!("{}", r.row);
    }
    println!();
    println!("| discovery, services × instances | list | lists | bytes each | server: request sent or change written → first byte at rudder | transfer: first → last byte | rudder: last byte → in every directory | this process's CPU time over the list or change |");
    println!("|---|---|---|---|---|---|---|---|");
    for r in &rows {
        for line in &r.splits {
            println!("{line}");
        }
    }
}
