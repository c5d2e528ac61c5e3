//! The directory's pick-path lookups: per-method views and the per-thread snapshot cache.

use std::sync::Arc;

use rudder_cluster::balancer::Balancer;
use rudder_cluster::directory::Directory;
use rudder_common::invocation::Invocation;
use rudder_common::status::record::RecordCall;
use rudder_common::url::DubboUrl;

fn url(host: u8) -> DubboUrl {
    DubboUrl::parse(&format!("dubbo://10.0.0.{host}:20880/com.acme.Greeter")).unwrap()
}

fn call(method: &str) -> Invocation {
    Invocation::new(method, vec![], vec![])
}

#[test]
fn every_method_gets_one_view_per_snapshot_beyond_the_fixed_slots() {
    let directory = Directory::default();
    directory.replace([url(1), url(2)]);
    let snapshot = directory.snapshot();
    // More methods than the snapshot's fixed slots, so some views live in the overflow list.
    let methods: Vec<String> = (0..40).map(|i| format!("method{i}")).collect();
    let first: Vec<_> = methods.iter().map(|m| snapshot.view(m)).collect();
    for (method, view) in methods.iter().zip(&first) {
        assert_eq!(view.method(), method);
        assert!(
            Arc::ptr_eq(view, &snapshot.view(method)),
            "{method} built twice"
        );
    }
    // A new snapshot builds new views.
    directory.replace([url(1), url(2), url(3)]);
    let newer = directory.snapshot().view("method39");
    assert_eq!(newer.len(), 3);
    assert!(!Arc::ptr_eq(&newer, &first[39]));
}

#[test]
fn picks_see_a_new_snapshot_as_soon_as_it_is_published() {
    let directory = Arc::new(Directory::default());
    let balancer = Balancer::builder(Arc::clone(&directory)).seed(1).build();
    directory.replace([url(1)]);
    assert_eq!(
        balancer.select(&call("m"), &[]).unwrap().address(),
        "10.0.0.1:20880"
    );
    directory.replace([url(2)]);
    assert_eq!(
        balancer.select(&call("m"), &[]).unwrap().address(),
        "10.0.0.2:20880"
    );
    // And from another thread, whose cache started empty.
    let other = std::thread::scope(|s| {
        s.spawn(|| {
            balancer
                .select(&call("m"), &[])
                .unwrap()
                .address()
                .to_owned()
        })
        .join()
        .unwrap()
    });
    assert_eq!(other, "10.0.0.2:20880");
    directory.replace([]);
    assert!(balancer.select(&call("m"), &[]).is_err());
}

#[test]
fn one_thread_picking_from_many_directories_never_mixes_them_up() {
    // More directories than a thread caches, picked from in turn, each updated now and then.
    let directories: Vec<Arc<Directory>> =
        (0..20).map(|_| Arc::new(Directory::default())).collect();
    let balancers: Vec<Balancer> = directories
        .iter()
        .map(|d| Balancer::builder(Arc::clone(d)).seed(2).build())
        .collect();
    for round in 0..5u8 {
        for (i, directory) in directories.iter().enumerate() {
            if (i + usize::from(round)) % 3 == 0 {
                directory.replace([url(100 + i as u8 + round)]);
            }
        }
        for (i, (directory, balancer)) in directories.iter().zip(&balancers).enumerate() {
            let expected = directory
                .snapshot()
                .providers()
                .first()
                .map(|p| p.address().to_owned());
            let picked = balancer
                .select(&call("m"), &[])
                .ok()
                .map(|p| p.address().to_owned());
            assert_eq!(picked, expected, "directory {i}, round {round}");
        }
    }
}

#[test]
fn counters_stay_shared_and_readable_when_providers_come_and_go() {
    let directory = Arc::new(Directory::default());
    let balancer = Balancer::builder(Arc::clone(&directory))
        .force_policy("leastactive")
        .unwrap()
        .seed(3)
        .build();
    directory.replace([url(1), url(2), url(3)]);
    let first = directory.snapshot().view("m");
    // The first view of a method allocates its counters together.
    assert!(first.adjacent_statuses().is_some());
    // A provider joins in the middle: the next view reads the old block around a new one.
    directory.replace([url(1), url(4), url(2), url(3)]);
    let second = directory.snapshot().view("m");
    assert!(second.adjacent_statuses().is_none());
    assert_eq!(
        second.status_runs().map(<[_]>::len).collect::<Vec<_>>(),
        [1, 1, 2]
    );
    assert!(second.method_status(0).same(first.method_status(0)));
    assert!(second.method_status(3).same(first.method_status(2)));
    // Calls in flight on every provider but 10.0.0.2: leastactive reads them through the runs.
    let busy: Vec<_> = second
        .providers()
        .iter()
        .filter(|p| p.address() != "10.0.0.2:20880")
        .map(|p| p.status().begin("m", 0).unwrap())
        .collect();
    for _ in 0..20 {
        let picked = balancer.select(&call("m"), &[]).unwrap();
        assert_eq!(picked.address(), "10.0.0.2:20880");
    }
    drop(busy);
}
