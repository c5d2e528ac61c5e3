//! Scale of Nacos discovery (issue 25 item 7), run by hand (loopback only; needs rnacos, see
//! `scripts/rnacos.sh install`):
//!
//! ```text
//! cargo run --release -p rudder-it --example nacos_scale
//! ```
//!
//! Against one rnacos on loopback, with instances written as Dubbo 3.3's NacosRegistry writes them
//! (service `providers:<interface>::`, the provider URL's parameters as instance metadata):
//!
//! * `one`: 10,000 instances of one interface; the time from `connect` until the directory lists all
//!   10,000 (goal: 1 s), then [`ROUNDS`] times one instance added and removed by another client, each
//!   timed from the write until the directory has the change (goal: 100 ms);
//! * `fifty`: 50 interfaces of 1,000 instances each, 50 subscriptions on one registry: the time until
//!   all 50 directories list 1,000, then one instance added to one interface and removed.
//!
//! Interface level. The instances' ports are never called. Prints a Markdown table row per scenario.
//! rnacos batches its pushes (a 500 ms timer), so a change takes 0.5 to 1 s to reach any client.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nacos_sdk::api::naming::{NamingService, NamingServiceBuilder, ServiceInstance};
use nacos_sdk::api::props::ClientProps;
use rudder_cluster::directory::Directory;
use rudder_it::Rnacos;
use rudder_registry::{ConsumerSpec, RegistryOptions, Subscription};

const ROUNDS: usize = 5;
const WAIT: Duration = Duration::from_secs(300);

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

/// `count` distinct instances (ip 10.x.y.z, port 20880).
fn instances(j: usize, count: usize) -> Vec<ServiceInstance> {
    (0..count)
        .map(|i| {
            let ip = format!("10.{}.{}.{}", 1 + i / 65_536, (i / 256) % 256, i % 256);
            instance(j, &ip, 20880)
        })
        .collect()
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

/// Registers `count` instances of each of `services` (one batch per service) and waits until rnacos
/// lists them all.
async fn fill(writer: &NamingService, services: usize, count: usize) {
    for j in 0..services {
        writer
            .batch_register_instance(service_name(j), None, instances(j, count))
            .await
            .expect("batch register");
    }
    // nacos-sdk cannot read a list this large back (its 4 MiB message limit, see docs/nacos.md):
    // rnacos has stored a batch when it answers it, and the subscriptions below read it.
    if count > 5_000 {
        return;
    }
    let listed = async {
        for j in 0..services {
            loop {
                let all = match writer
                    .get_all_instances(service_name(j), None, Vec::new(), false)
                    .await
                {
                    Ok(listed) => listed.len(),
                    Err(e) => {
                        eprintln!("listing {}: {e}", service_name(j));
                        0
                    }
                };
                if all == count {
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

async fn must_reach(subscription: &Subscription, providers: usize) {
    subscription
        .wait_for(WAIT, |s| s.providers == providers)
        .await
        .unwrap_or_else(|| panic!("never {providers} providers"));
}

/// One instance added to interface 0 by another client and removed, `ROUNDS` times: the times until
/// the subscription of interface 0 has each change.
async fn changes(
    nacos: &Rnacos,
    subscription: &Subscription,
    count: usize,
) -> (Vec<Duration>, Vec<Duration>) {
    let other = naming(nacos).await;
    let extra = instance(0, "10.255.255.1", 20880);
    let (mut added, mut removed) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let start = Instant::now();
        other
            .register_instance(service_name(0), None, extra.clone())
            .await
            .expect("register");
        must_reach(subscription, count + 1).await;
        added.push(start.elapsed());
        let start = Instant::now();
        other
            .deregister_instance(service_name(0), None, extra.clone())
            .await
            .expect("deregister");
        must_reach(subscription, count).await;
        removed.push(start.elapsed());
    }
    (added, removed)
}

fn spread(mut times: Vec<Duration>) -> String {
    times.sort_unstable();
    format!(
        "{} ms (min {}, max {})",
        times[times.len() / 2].as_millis(),
        times[0].as_millis(),
        times[times.len() - 1].as_millis()
    )
}

async fn scenario(services: usize, count: usize) -> String {
    let nacos = Rnacos::start()
        .await
        .expect("rnacos (RUDDER_SKIP_NACOS is set)");
    let writer = naming(&nacos).await;
    let filled = Instant::now();
    fill(&writer, services, count).await;
    let filled = filled.elapsed();

    let start = Instant::now();
    let registry = rudder_registry::connect(&nacos.url(), RegistryOptions::default(), None)
        .await
        .expect("connect");
    let mut subscriptions = Vec::new();
    for j in 0..services {
        let directory = Arc::new(Directory::default());
        let registry = Arc::clone(&registry);
        subscriptions.push(tokio::spawn(async move {
            registry
                .subscribe(ConsumerSpec::new(interface(j)), directory as _, None)
                .await
                .expect("subscribe")
        }));
    }
    let mut subs = Vec::new();
    for s in subscriptions {
        let subscription = s.await.expect("subscribe task");
        must_reach(&subscription, count).await;
        subs.push(subscription);
    }
    let first = start.elapsed();
    let (added, removed) = changes(&nacos, &subs[0], count).await;
    for subscription in subs {
        subscription.close().await;
    }
    registry.close().await;
    format!(
        "| {services} × {count} | {} ms | {} ms | {} | {} |",
        filled.as_millis(),
        first.as_millis(),
        spread(added),
        spread(removed)
    )
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!("| services × instances | written into rnacos | first listing, every subscription | +1 instance in the directory ({ROUNDS} rounds) | -1 instance |");
    println!("|---|---|---|---|---|");
    // `fifty` or `one` alone: one scenario.
    let only = std::env::args().nth(1);
    for (name, services, count) in [("one", 1, 10_000), ("fifty", 50, 1_000)] {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        println!("{}", runtime.block_on(scenario(services, count)));
    }
}
