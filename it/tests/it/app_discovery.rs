//! Application-level discovery (issue 16): probe.

use std::time::Duration;

use rudder_it::{Peer, PeerConfig, PeerKind, ZooKeeperContainer};
use zookeeper_client::Client;

const READY_WITHIN: Duration = Duration::from_secs(120);

async fn dump(zk: &Client, path: &str, depth: usize) {
    let data = zk.get_data(path).await.map(|(d, _)| String::from_utf8_lossy(&d).into_owned());
    println!("{path} = {:?}", data.unwrap_or_default());
    if depth == 0 {
        return;
    }
    let children = zk.list_children(path).await.unwrap_or_default();
    for child in children {
        let p = if path == "/" { format!("/{child}") } else { format!("{path}/{child}") };
        Box::pin(dump(zk, &p, depth - 1)).await;
    }
}

#[tokio::test]
async fn probe_dump() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let mut config = PeerConfig::new(PeerKind::Java, &zookeeper.connect_string(), "java-inst");
    config.register_mode = Some("instance".into());
    let peer = Peer::start(config, READY_WITHIN).await.unwrap();
    println!("READY {}", peer.url());
    let zk = Client::connect(&zookeeper.connect_string()).await.unwrap();
    dump(&zk, "/", 6).await;
}
