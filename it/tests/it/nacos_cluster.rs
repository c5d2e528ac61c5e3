//! An rnacos cluster of three in its Raft mode, two Java Dubbo 3.3.6 providers registering into it
//! through all three addresses (Dubbo's `backup` list), rudder calling them under load through the
//! same three; one server killed (SIGKILL) under load: no call fails, and the subscription goes on
//! on the servers left (a provider leaving afterwards is seen). Skipped only with
//! `RUDDER_SKIP_NACOS=1`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rudder::Reference;
use rudder_it::Rnacos;

use crate::common;
use crate::nacos_faults::{java_in, must_reach, status_of, Load, SERVICE};

const STEP: usize = 1_500;

// `Rnacos::cluster` returns once the Raft cluster has formed (node 1 leads, three voters), starting
// it again when rnacos 0.8.8's start-up loses it (it/src/rnacos/cluster.rs says how and why).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_of_an_rnacos_cluster_killed_under_load_loses_no_call() {
    let Some(mut members) = Rnacos::cluster(3).await else {
        return;
    };
    // Dubbo's form: the first server, the others as `backup`.
    let url = format!(
        "{}?backup={},{}",
        members[0].url(),
        members[1].address(),
        members[2].address()
    );
    let (_a, mut b) = tokio::join!(java_in(&url, "java-a"), java_in(&url, "java-b"));
    let reference = Reference::builder(SERVICE)
        .registry(&url)
        .build()
        .await
        .unwrap();
    let mut status = status_of(&reference);
    must_reach(&mut status, "both providers listed", |s| s.providers == 2).await;
    let reference = Arc::new(reference);
    let mut load = Load::start(&reference);
    load.run_for(STEP).await;

    // The first server: the Raft leader that formed the cluster (unless the load made it lose an
    // election since), and the first address of every client's list.
    let leader = leader_of(&members[0]).await;
    let killed = Instant::now();
    members[0].kill().await;
    // The callers go on meanwhile (their own tasks).
    let left = leader_among(&members[1..]).await;
    let reelected = killed.elapsed();
    load.run_for(2 * STEP).await;

    // The subscription lives on the servers left: a provider leaving now is seen.
    let before = status.borrow().generation;
    b.terminate().await.unwrap();
    must_reach(&mut status, "a provider leaving after the kill", |s| {
        s.providers == 1 && s.generation > before
    })
    .await;
    load.run_for(STEP).await;
    let tally = load.stop().await;
    println!(
        "nacos_cluster: node 1 killed (leader then: node {leader}), node {left} leads {reelected:?} \
         later; {} calls, {} failed, answered {:?}",
        tally.total(),
        tally.failed.len(),
        tally.answered
    );
    tally.failed.assert_none();
}

/// The leader `member` knows of.
async fn leader_of(member: &Rnacos) -> u64 {
    member
        .raft_metrics()
        .await
        .and_then(|m| m.current_leader)
        .expect("the first server knows its leader")
}

/// Waits until the members left agree on a leader among themselves.
async fn leader_among(left: &[Rnacos]) -> u64 {
    let agreed = async {
        let mut ticks = tokio::time::interval(Duration::from_millis(200));
        loop {
            ticks.tick().await;
            let mut leaders = Vec::new();
            for member in left {
                leaders.extend(member.raft_metrics().await.and_then(|m| m.current_leader));
            }
            let ids: Vec<u64> = (2..=3).collect();
            if leaders.len() == left.len()
                && leaders.iter().all(|l| *l == leaders[0] && ids.contains(l))
            {
                return leaders[0];
            }
        }
    };
    tokio::time::timeout(common::WAIT, agreed)
        .await
        .expect("the servers left elect a leader among themselves")
}
