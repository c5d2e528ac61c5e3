//! An rnacos cluster of three in its Raft mode, two Java Dubbo 3.3.6 providers registering into it
//! through all three addresses (Dubbo's `backup` list), rudder calling them under load through the
//! same three; one server killed (SIGKILL) under load: no call fails, and the subscription goes on
//! on the servers left (a provider leaving afterwards is seen). Skipped only with
//! `RUDDER_SKIP_NACOS=1`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rudder::Reference;
use rudder_it::Rnacos;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common;
use crate::nacos_faults::{java_in, must_reach, status_of, Load, SERVICE};

const STEP: usize = 1_500;

/// One HTTP/1.0 GET on loopback; the body, or `None` when nothing answers within 5 s.
async fn get(port: u16, path: &str) -> Option<String> {
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .ok()?;
        let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.ok()?;
        answer
            .split_once("\r\n\r\n")
            .map(|(_, body)| body.to_owned())
    };
    tokio::time::timeout(Duration::from_secs(5), exchange)
        .await
        .ok()
        .flatten()
}

fn port_of(server: &Rnacos) -> u16 {
    server
        .address()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("a port")
}

/// Waits until every member's Raft metrics name the same leader and list three voters.
async fn raft_formed(members: &[Rnacos]) -> String {
    let last = std::sync::Mutex::new(Vec::new());
    let formed = async {
        let mut ticks = tokio::time::interval(Duration::from_millis(200));
        loop {
            ticks.tick().await;
            let mut leaders = Vec::new();
            last.lock().unwrap().clear();
            for member in members {
                let body = get(port_of(member), "/nacos/v1/raft/metrics").await;
                last.lock().unwrap().push(body.clone());
                let Some(body) = body else {
                    break;
                };
                let Ok(metrics) = serde_json::from_str::<serde_json::Value>(&body) else {
                    break;
                };
                let voters = metrics
                    .pointer("/membership_config/members")
                    .and_then(|v| v.as_array())
                    .map_or(0, Vec::len);
                match metrics.get("current_leader") {
                    Some(leader) if !leader.is_null() && voters == members.len() => {
                        leaders.push(leader.to_string());
                    }
                    _ => break,
                }
            }
            if leaders.len() == members.len() && leaders.iter().all(|l| *l == leaders[0]) {
                return leaders[0].clone();
            }
        }
    };
    match tokio::time::timeout(common::WAIT, formed).await {
        Ok(leader) => leader,
        Err(_) => panic!(
            "the Raft cluster forms: one leader, three voters; last metrics {:?}",
            last.lock().unwrap()
        ),
    }
}

// Ignored in the default run: the three members formed their Raft cluster within 60 s in two of four
// runs on a busy 2-core host (the other two never showed three voters; cause not found yet: each
// member's gRPC/Raft port is its HTTP port + 1000, which nothing reserves). Run it by hand:
// `cargo test -p rudder-it --test it nacos_cluster:: -- --ignored`.
#[ignore = "flaky: the rnacos Raft cluster does not always form on a busy host (see the comment)"]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_of_an_rnacos_cluster_killed_under_load_loses_no_call() {
    let Some(mut members) = Rnacos::cluster(3).await else {
        return;
    };
    let leader = raft_formed(&members).await;
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

    // The first server: the Raft leader that formed the cluster, and the first address of every
    // client's list.
    let killed = Instant::now();
    members[0].kill().await;
    load.run_for(STEP).await;
    let left = raft_formed_without(&members[1..]).await;
    let reelected = killed.elapsed();
    load.run_for(STEP).await;

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
        "nacos_cluster: leader {leader} killed, {left} leads {reelected:?} later; {} calls, {} \
         failed, answered {:?}",
        tally.total(),
        tally.failed.len(),
        tally.answered
    );
    tally.failed.assert_none();
}

/// Waits until the members left agree on a leader among themselves.
async fn raft_formed_without(left: &[Rnacos]) -> String {
    let agreed = async {
        let mut ticks = tokio::time::interval(Duration::from_millis(200));
        loop {
            ticks.tick().await;
            let mut leaders = Vec::new();
            for member in left {
                let leader = get(port_of(member), "/nacos/v1/raft/metrics")
                    .await
                    .and_then(|b| serde_json::from_str::<serde_json::Value>(&b).ok())
                    .and_then(|m| m.get("current_leader").cloned())
                    .filter(|l| !l.is_null() && l.as_u64() != Some(1));
                leaders.extend(leader.map(|l| l.to_string()));
            }
            if leaders.len() == left.len() && leaders.iter().all(|l| *l == leaders[0]) {
                return leaders[0].clone();
            }
        }
    };
    tokio::time::timeout(common::WAIT, agreed)
        .await
        .expect("the servers left elect a leader")
}
