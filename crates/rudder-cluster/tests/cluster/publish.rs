//! Picking state is built when a snapshot is published, not on the first pick after it.

use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;

use crate::support::Probe;
use rudder_cluster::balancer::Balancer;
use rudder_cluster::directory::{Change, Directory};
use rudder_cluster::loadbalance::{LoadBalance, LoadBalanceRegistry};
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;

fn url(host: u8) -> DubboUrl {
    DubboUrl::parse(&format!("dubbo://10.0.0.{host}:20880/S?loadbalance=probe")).unwrap()
}

fn setup() -> (Arc<Directory>, Arc<Probe>, Balancer) {
    let probe = Arc::new(Probe::new());
    let mut policies = LoadBalanceRegistry::with_builtins();
    policies.register("probe", Arc::clone(&probe) as Arc<dyn LoadBalance>);
    let directory = Arc::new(Directory::default());
    directory.replace([url(1), url(2)]);
    let balancer = Balancer::builder(Arc::clone(&directory))
        .policies(policies)
        .build();
    (directory, probe, balancer)
}

#[test]
fn after_a_registry_change_the_first_pick_finds_its_state_ready() {
    let (directory, probe, balancer) = setup();
    let call = Invocation::new("sayHello", vec![], vec![]);
    // A method never called before is built by its first call: nothing could know of it earlier.
    balancer.select(&call, &[]).unwrap();
    assert_eq!(probe.built_on_pick.load(SeqCst), 1);
    for host in 3..10 {
        directory.apply([Change::Insert(url(host))]);
        balancer.select(&call, &[]).unwrap();
    }
    directory.replace([url(1)]);
    directory.replace([url(1), url(2)]);
    balancer.select(&call, &[]).unwrap();
    assert_eq!(
        probe.built_on_pick.load(SeqCst),
        1,
        "no snapshot built state on a pick"
    );
    assert_eq!(
        probe.prepared.load(SeqCst),
        9,
        "one preparation per published snapshot"
    );
    // The view was built at publish time too: the snapshot a pick sees already has it.
    assert_eq!(
        directory.snapshot().methods(),
        vec![Box::<str>::from("sayHello")]
    );
}

#[test]
fn a_dropped_balancer_no_longer_prepares_snapshots() {
    let (directory, probe, balancer) = setup();
    balancer
        .select(&Invocation::new("m", vec![], vec![]), &[])
        .unwrap();
    directory.apply([Change::Insert(url(3))]);
    assert_eq!(probe.prepared.load(SeqCst), 1);
    drop(balancer);
    directory.apply([Change::Insert(url(4))]);
    assert_eq!(probe.prepared.load(SeqCst), 1);
}
