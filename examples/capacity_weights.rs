//! Weights from capacity: a consumer that sets each provider's weight from the CPU cores and free memory
//! a monitoring system reports, instead of the `weight` the provider registered.
//!
//! The monitoring data changes while calls are being made, so it is held in an [`ArcSwap`]: the poller
//! publishes a new table, and each pick reads the current one without locking.

use std::collections::HashMap;
use std::sync::Arc;

use arc_swap::ArcSwap;
use rudder_cluster::balancer::Balancer;
use rudder_cluster::directory::Directory;
use rudder_cluster::loadbalance::weight::WeightSource;
use rudder_cluster::provider::Provider;
use rudder_common::clock::ManualClock;
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;

/// What the monitoring system reports for one host.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Capacity {
    /// CPU cores.
    pub cores: u32,
    /// Free memory, in GiB.
    pub free_memory_gib: f64,
}

impl Capacity {
    /// Ten weight points per core, scaled down when free memory drops under 4 GiB.
    pub fn weight(&self) -> i32 {
        let memory_factor = (self.free_memory_gib / 4.0).min(1.0);
        (f64::from(self.cores) * 10.0 * memory_factor).round() as i32
    }
}

/// A [`WeightSource`] backed by the latest monitoring table, keyed by `host:port`.
///
/// Providers the table does not know keep the weight Dubbo's rules gave them, so a monitoring gap never
/// takes a provider out of rotation.
#[derive(Debug, Default)]
pub struct CapacityWeights {
    table: ArcSwap<HashMap<String, Capacity>>,
}

impl CapacityWeights {
    /// Publishes a new monitoring table; the next pick sees it.
    pub fn update(&self, table: HashMap<String, Capacity>) {
        self.table.store(Arc::new(table));
    }
}

impl WeightSource for CapacityWeights {
    fn weight(&self, provider: &Provider, _method: &str, computed: i32) -> i32 {
        match self.table.load().get(provider.address()) {
            Some(capacity) => capacity.weight(),
            None => computed,
        }
    }
}

/// Calls per provider address, in directory order.
pub type Split = Vec<(String, usize)>;

/// Runs 10,000 random picks over three providers registered with equal weights, with and without the
/// capacity table, and returns the calls per provider address for each run.
pub fn run() -> (Split, Split) {
    let directory = Arc::new(Directory::default());
    directory.replace(
        ["10.0.0.1:20880", "10.0.0.2:20880", "10.0.0.3:20880"]
            .iter()
            .map(|address| {
                DubboUrl::parse(&format!("dubbo://{address}/com.acme.Greeter?weight=100"))
                    .expect("valid URL")
            }),
    );
    let weights = Arc::new(CapacityWeights::default());
    let balancer = Balancer::builder(Arc::clone(&directory))
        .clock(Arc::new(ManualClock::new(1_800_000_000_000)))
        .seed(42)
        .weight_source(Arc::clone(&weights) as Arc<dyn WeightSource>)
        .build();
    let before = split(&balancer, &directory);
    weights.update(HashMap::from([
        (
            "10.0.0.1:20880".to_owned(),
            Capacity {
                cores: 4,
                free_memory_gib: 8.0,
            },
        ),
        (
            "10.0.0.2:20880".to_owned(),
            Capacity {
                cores: 16,
                free_memory_gib: 32.0,
            },
        ),
        (
            "10.0.0.3:20880".to_owned(),
            Capacity {
                cores: 16,
                free_memory_gib: 1.0,
            },
        ),
    ]));
    (before, split(&balancer, &directory))
}

fn split(balancer: &Balancer, directory: &Directory) -> Split {
    let call = Invocation::new("sayHello", vec![], vec![]);
    let mut counts: HashMap<String, usize> = HashMap::new();
    for _ in 0..10_000 {
        let provider = balancer
            .select(&call, &[])
            .expect("providers are registered");
        *counts.entry(provider.address().to_owned()).or_default() += 1;
    }
    let snapshot = directory.snapshot();
    snapshot
        .providers()
        .iter()
        .map(|p| {
            (
                p.address().to_owned(),
                counts.get(p.address()).copied().unwrap_or(0),
            )
        })
        .collect()
}
