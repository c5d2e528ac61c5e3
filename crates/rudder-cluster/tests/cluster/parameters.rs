//! URL parameters outside their documented ranges: clamped or ignored, never a crash or a lost provider.

use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::SeedableRng;
use rudder_cluster::cluster::ClusterMode;
use rudder_cluster::directory::Directory;
use rudder_cluster::loadbalance::consistent_hash::ConsistentHash;
use rudder_cluster::loadbalance::{select, Pick};
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_common::Value;

fn url(s: &str) -> DubboUrl {
    DubboUrl::parse(s).unwrap()
}

/// Regression: `hash.nodes=4294967295` (or 2^31) once made the first consistent-hash pick reserve 68 GB
/// and abort the process.
#[test]
fn huge_hash_nodes_are_clamped_not_allocated() {
    for nodes in ["4294967295", "2147483648", "99999999999999999999999", "-7"] {
        let directory = Directory::default();
        directory.replace((1..=3).map(|i| {
            url(&format!(
                "dubbo://10.0.0.{i}:20880/S?loadbalance=consistenthash&hash.nodes={nodes}"
            ))
        }));
        let view = directory.snapshot().view("get");
        let call = Invocation::new("get", vec![], vec![Value::from("user-42")]);
        let chosen = select(
            &ConsistentHash,
            &view,
            &call,
            &Pick::default(),
            &mut SmallRng::seed_from_u64(1),
        );
        assert!(chosen.is_some(), "hash.nodes={nodes}");
    }
}

#[test]
fn a_bad_method_level_weight_disables_only_itself() {
    let directory = Directory::default();
    let update = directory.replace([url(
        "dubbo://10.0.0.1:20880/S?weight=300&sayHello.weight=abc&bye.weight=-5&warmup=x&timestamp=soon",
    )]);
    assert_eq!((update.added, update.rejected), (1, 0));
    let provider = Arc::clone(&directory.snapshot().providers()[0]);
    assert_eq!(provider.configured_weight("sayHello"), 300);
    assert_eq!(provider.configured_weight("bye"), 0);
    assert_eq!(provider.configured_weight("other"), 300);
    assert_eq!(
        provider.timestamp(),
        0,
        "an unreadable timestamp turns warmup off"
    );
    assert_eq!(provider.warmup(), 600_000);
}

#[test]
fn retries_and_actives_stay_in_range() {
    let mode =
        |q: &str| ClusterMode::from_consumer(&url(&format!("consumer://h/S?{q}")), "m").unwrap();
    assert_eq!(mode("retries=1000"), ClusterMode::Failover { retries: 100 });
    assert_eq!(mode("retries=-1"), ClusterMode::Failover { retries: 0 });
    assert_eq!(mode("retries=lots"), ClusterMode::Failover { retries: 2 });
    assert_eq!(
        mode("retries=1&m.retries=x"),
        ClusterMode::Failover { retries: 1 }
    );

    let directory = Directory::default();
    directory.replace([
        url("dubbo://10.0.0.1:20880/S?m.actives=5"),
        url("dubbo://10.0.0.2:20880/S?actives=-3"),
        url("dubbo://10.0.0.3:20880/S?actives=9999999999"),
        url("dubbo://10.0.0.4:20880/S?m.actives=x&actives=2"),
    ]);
    let view = directory.snapshot().view("m");
    let limits: Vec<i32> = (0..4).map(|i| view.max_active(i)).collect();
    assert_eq!(limits, [5, 0, i32::MAX, 2]);
}
