//! Reading each mode and its parameters from consumer URLs, as Dubbo reads them.

use std::sync::Arc;

use super::*;

fn mode(query: &str, method: &str) -> ClusterMode {
    let url = DubboUrl::parse(&format!("consumer://h/S?{query}")).unwrap();
    ClusterMode::from_consumer(&url, method).unwrap()
}

#[test]
fn failback_parameters_and_their_defaults() {
    let failback = |retries, tasks, period_millis| ClusterMode::Failback {
        retries,
        tasks,
        period_millis,
    };
    assert_eq!(mode("cluster=failback", "m"), failback(3, 100, 5_000));
    assert_eq!(
        mode(
            "cluster=failback&retries=2&failbacktasks=2&retry.period=200",
            "m"
        ),
        failback(2, 2, 200)
    );
    // Negative values are Dubbo's defaults; retries is read at service level only.
    assert_eq!(
        mode(
            "cluster=failback&retries=-100&failbacktasks=-1&m.retries=9",
            "m"
        ),
        failback(3, 100, 5_000)
    );
    assert_eq!(
        mode("cluster=failback&retries=0", "m"),
        failback(0, 100, 5_000)
    );
    assert_eq!(
        mode("cluster=failback&failbacktasks=99999999", "m"),
        failback(3, 10_000, 5_000)
    );
}

#[test]
fn forking_reads_forks_and_the_method_timeout() {
    let forking = |forks, timeout_millis| ClusterMode::Forking {
        forks,
        timeout_millis,
    };
    assert_eq!(mode("cluster=forking", "m"), forking(2, 1_000));
    assert_eq!(mode("cluster=forking&forks=-1", "m"), forking(0, 1_000));
    assert_eq!(
        mode("cluster=forking&forks=3&timeout=300&m.timeout=50", "m"),
        forking(3, 50)
    );
    assert_eq!(
        mode("cluster=forking&forks=3&timeout=300&m.timeout=50", "other"),
        forking(3, 300)
    );
}

#[test]
fn broadcast_percent_outside_the_range_is_100() {
    let broadcast = |fail_percent| ClusterMode::Broadcast { fail_percent };
    assert_eq!(mode("cluster=broadcast", "m"), broadcast(100));
    assert_eq!(
        mode("cluster=broadcast&broadcast.fail.percent=75", "m"),
        broadcast(75)
    );
    assert_eq!(
        mode("cluster=broadcast&broadcast.fail.percent=0", "m"),
        broadcast(0)
    );
    assert_eq!(
        mode("cluster=broadcast&broadcast.fail.percent=101", "m"),
        broadcast(100)
    );
    assert_eq!(
        mode("cluster=broadcast&broadcast.fail.percent=-5", "m"),
        broadcast(100)
    );
}

#[test]
fn a_multi_group_reference_is_mergeable_whatever_cluster_says() {
    let merged = |merger: Option<&str>, groups| ClusterMode::Mergeable {
        merger: merger.map(Arc::from),
        groups,
        retries: 2,
    };
    assert_eq!(
        mode("group=a,b&cluster=failfast&merger=list", "m"),
        merged(Some("list"), Groups::Listed("a,b".into()))
    );
    assert_eq!(mode("group=*", "m"), merged(None, Groups::Any));
    // Dubbo's "empty" merger values, and the method-level one.
    for empty in ["false", "0", "null", "N/A", ""] {
        assert_eq!(
            mode(&format!("group=*&merger={empty}"), "m"),
            merged(None, Groups::Any)
        );
    }
    assert_eq!(
        mode("group=*&merger=false&m.merger=map", "m"),
        merged(Some("map"), Groups::Any)
    );
    assert_eq!(
        mode("group=a&cluster=mergeable&merger=true", "m"),
        merged(Some("true"), Groups::EachProvider)
    );
    // A single group is not multi-group.
    assert_eq!(mode("group=a", "m"), ClusterMode::Failover { retries: 2 });
    assert_eq!(Groups::Listed(" b, a,b,,".into()).names(), ["b", "a"]);
}

#[test]
fn names_and_display() {
    assert_eq!(mode("cluster=forking", "m").name(), "forking");
    assert_eq!(
        mode("cluster=failback", "m").to_string(),
        "failback (retries=3, failbacktasks=100, retry.period=5000)"
    );
    let err = ClusterMode::from_consumer(
        &DubboUrl::parse("consumer://h/S?cluster=zone-aware").unwrap(),
        "m",
    )
    .unwrap_err();
    assert!(err.to_string().contains("broadcast"), "{err}");
}
