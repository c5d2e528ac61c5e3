//! The ZooKeeper harness gives tests a real server they can read, write, stop and freeze.
//!
//! Needs Docker and the local image: run `scripts/it-setup.sh` first.

use std::time::Duration;

use rudder_it::ZooKeeperContainer;
use zookeeper_client::{Acls, Client, CreateMode, EventType, SessionState};

/// Upper bound for anything the tests wait on; generous for a loaded 2-core machine.
const WAIT: Duration = Duration::from_secs(30);

async fn zookeeper() -> ZooKeeperContainer {
    match ZooKeeperContainer::start().await {
        Ok(zookeeper) => zookeeper,
        Err(err) => panic!("{err}"),
    }
}

#[tokio::test]
async fn providers_created_under_dubbo_are_listed() {
    let zookeeper = zookeeper().await;
    let client = Client::connect(&zookeeper.connect_string())
        .await
        .expect("connect");
    let persistent = CreateMode::Persistent.with_acls(Acls::anyone_all());
    let ephemeral = CreateMode::Ephemeral.with_acls(Acls::anyone_all());
    let providers = "/dubbo/org.example.Greeter/providers";
    client.mkdir(providers, &persistent).await.expect("mkdir");
    let url = "dubbo%3A%2F%2F127.0.0.1%3A20880%2Forg.example.Greeter%3Fweight%3D100";
    client
        .create(&format!("{providers}/{url}"), b"", &ephemeral)
        .await
        .expect("create provider");
    client
        .create("/dubbo/org.example.Other", b"", &persistent)
        .await
        .expect("create second service");

    let mut services = client.list_children("/dubbo").await.expect("list /dubbo");
    services.sort();
    assert_eq!(services, ["org.example.Greeter", "org.example.Other"]);
    assert_eq!(
        client
            .list_children(providers)
            .await
            .expect("list providers"),
        [url]
    );
    assert_eq!(
        client.list_ephemerals("/dubbo").await.expect("ephemerals"),
        [format!("{providers}/{url}")]
    );
}

#[tokio::test]
async fn pausing_the_server_expires_a_short_session() {
    let zookeeper = zookeeper().await;
    let doomed = Client::connector()
        .with_session_timeout(Duration::from_secs(2))
        .connect(&zookeeper.connect_string())
        .await
        .expect("connect with a short session");
    assert!(doomed.session_timeout() <= Duration::from_secs(2));
    doomed
        .create(
            "/held-by-short-session",
            b"",
            &CreateMode::Ephemeral.with_acls(Acls::anyone_all()),
        )
        .await
        .expect("create ephemeral");
    let mut states = doomed.state_watcher();

    zookeeper.pause().await.expect("pause");
    let mut seen = Vec::new();
    let outcome = tokio::time::timeout(WAIT, async {
        loop {
            let state = states.changed().await;
            seen.push(state);
            if state.is_terminated() {
                return state;
            }
        }
    })
    .await;
    // Thaw before asserting so a failure does not leave a frozen container behind.
    zookeeper.unpause().await.expect("unpause");

    assert_eq!(
        outcome.ok(),
        Some(SessionState::Expired),
        "states seen while paused: {seen:?}"
    );
    assert!(
        seen.contains(&SessionState::Disconnected),
        "expiry should follow a disconnection, saw {seen:?}"
    );

    // The server agrees once it runs again: it drops the expired session's ephemeral node.
    let observer = Client::connect(&zookeeper.connect_string())
        .await
        .expect("connect after unpause");
    let (stat, watcher) = observer
        .check_and_watch_stat("/held-by-short-session")
        .await
        .expect("watch ephemeral");
    if stat.is_some() {
        let event = tokio::time::timeout(WAIT, watcher.changed())
            .await
            .expect("the server should expire the session");
        assert_eq!(event.event_type, EventType::NodeDeleted);
    }
    assert_eq!(
        observer
            .check_stat("/held-by-short-session")
            .await
            .expect("stat"),
        None
    );
}

#[tokio::test]
async fn a_stopped_server_comes_back_on_the_same_port_with_its_data() {
    let zookeeper = zookeeper().await;
    let connect = zookeeper.connect_string();
    let client = Client::connect(&connect).await.expect("connect");
    client
        .create(
            "/survives-restart",
            b"kept",
            &CreateMode::Persistent.with_acls(Acls::anyone_all()),
        )
        .await
        .expect("create");
    drop(client);

    zookeeper.stop().await.expect("stop");
    let refused = Client::connector()
        .with_connection_timeout(Duration::from_millis(500))
        .with_fail_eagerly()
        .connect(&connect)
        .await;
    assert!(
        refused.is_err(),
        "a stopped server must not accept sessions"
    );

    zookeeper.start_again().await.expect("start again");
    assert_eq!(zookeeper.connect_string(), connect);
    let client = Client::connect(&connect).await.expect("reconnect");
    let (data, _) = client.get_data("/survives-restart").await.expect("get");
    assert_eq!(data, b"kept");
}
