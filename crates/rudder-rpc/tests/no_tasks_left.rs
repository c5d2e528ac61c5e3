//! 1,000 provider addresses called, then all retired: every connection closes (as both sides see
//! it) and no connection task is left in the process. The only test of this binary, so the
//! crate-wide task count is this test's alone.

#[path = "rpc/support.rs"]
mod support;

use std::time::{Duration, Instant};

use rudder_rpc::DubboProtocol;
use support::*;

const ADDRESSES: usize = 1000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_retired_addresses_leave_no_connection_and_no_task() {
    bounded(async {
        let mut servers = Vec::with_capacity(ADDRESSES);
        for _ in 0..ADDRESSES {
            servers.push(start(0).await);
        }
        let urls: Vec<_> = servers
            .iter()
            .map(|(server, _)| url(server, "heartbeat=1000&timeout=15000"))
            .collect();
        let protocol = DubboProtocol::new();
        let started = Instant::now();
        let calls: Vec<_> = urls
            .iter()
            .map(|url| {
                let (protocol, url) = (protocol.clone(), url.clone());
                tokio::spawn(async move { protocol.invoke(&url, &say_hello("x")).await })
            })
            .collect();
        for call in calls {
            call.await.unwrap().expect("every provider answers");
        }
        let called = started.elapsed();
        assert_eq!(protocol.open_connections(), ADDRESSES);
        assert!(rudder_rpc::live_connection_tasks() >= 2 * ADDRESSES);

        let started = Instant::now();
        assert_eq!(protocol.retain_addresses(|_| false), ADDRESSES);
        protocol.wait_until_idle().await;
        for (server, _) in &servers {
            server.wait_for_open_connections(0).await;
        }
        let closed = started.elapsed();
        assert_eq!((protocol.open_connections(), protocol.live_tasks()), (0, 0));
        assert_eq!(rudder_rpc::live_connection_tasks(), 0);
        println!(
            "{ADDRESSES} addresses: called in {called:?}, all closed (both sides) in {closed:?}"
        );
        assert!(closed < Duration::from_secs(5), "closing took {closed:?}");

        // Dropping the last clone of a protocol with live connections ends everything too.
        let again = DubboProtocol::new();
        for url in urls.iter().take(50) {
            again.invoke(url, &say_hello("y")).await.unwrap();
        }
        // Per connection: its driver, its writer, and the pool's watch for its close.
        assert_eq!(rudder_rpc::live_connection_tasks(), 150);
        drop(again);
        for (server, _) in servers.iter().take(50) {
            server.wait_for_open_connections(0).await;
        }
        for (server, _) in servers {
            server.shutdown().await;
        }
        // The server saw EOF; our side's tasks end right after closing, without any timer.
        tokio::time::timeout(Duration::from_secs(5), rudder_rpc::connection_tasks_ended())
            .await
            .expect("the dropped protocol's connection tasks did not end");
        assert_eq!(rudder_rpc::live_connection_tasks(), 0);
    })
    .await;
}
