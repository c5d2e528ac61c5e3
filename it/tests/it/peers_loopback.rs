//! Every peer the scripts in `scripts/peers/` start keeps to loopback: each listening socket of the
//! Java provider (over dubbo:// and over tri://), the Node provider and both Python servers is bound
//! to 127.0.0.1 (or `::ffff:127.0.0.1`, `::1`), never to every interface. Read from the process's
//! own sockets (`/proc/<pid>/fd` matched against `/proc/net/tcp{,6}` in state LISTEN).
//!
//! Needs Docker, the local image and every peer: run `scripts/it-setup.sh` first.

use std::collections::BTreeSet;
use std::time::Duration;

use rudder_it::{Peer, PeerConfig, PeerKind, ZooKeeperContainer};

const READY_WITHIN: Duration = Duration::from_secs(120);

/// The socket inodes the process holds.
fn socket_inodes(pid: u32) -> BTreeSet<String> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).expect("the peer's fds");
    fds.filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter_map(|target| {
            let target = target.to_string_lossy().into_owned();
            Some(
                target
                    .strip_prefix("socket:[")?
                    .strip_suffix(']')?
                    .to_owned(),
            )
        })
        .collect()
}

/// `address:port` of each listening TCP socket among `inodes`, the address as /proc spells it (hex).
fn listening(inodes: &BTreeSet<String>) -> Vec<String> {
    let mut found = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).expect("the socket table");
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
            if fields.len() > 9 && fields[3] == "0A" && inodes.contains(fields[9]) {
                found.push(fields[1].to_owned());
            }
        }
    }
    found
}

/// Whether a /proc local address (hex, host byte order per 32-bit word) is a loopback one.
fn is_loopback(local: &str) -> bool {
    let address = local.split(':').next().unwrap_or("");
    matches!(
        address,
        // 127.0.0.1 (little-endian word)
        "0100007F"
        // ::ffff:127.0.0.1
        | "0000000000000000FFFF00000100007F"
        // ::1
        | "00000000000000000000000001000000"
    )
}

async fn assert_on_loopback(name: &str, peer: &Peer) {
    let pid = peer.pid().expect("the peer runs");
    let sockets = listening(&socket_inodes(pid));
    assert!(
        !sockets.is_empty(),
        "{name} (pid {pid}) listens on nothing it owns"
    );
    let port = format!("{:04X}", peer.port());
    assert!(
        sockets.iter().any(|s| s.ends_with(&port)),
        "{name} does not listen on its port {}: {sockets:?}",
        peer.port()
    );
    let open: Vec<&String> = sockets.iter().filter(|s| !is_loopback(s)).collect();
    assert!(
        open.is_empty(),
        "{name} listens beyond loopback: {open:?} (all: {sockets:?})"
    );
}

#[test]
fn proc_addresses_read_as_loopback_or_not() {
    assert!(is_loopback("0100007F:C383"));
    assert!(is_loopback("0000000000000000FFFF00000100007F:C383"));
    assert!(!is_loopback("00000000:C383"));
    assert!(!is_loopback("00000000000000000000000000000000:C383"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_started_peer_listens_on_loopback_only() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let zk = zookeeper.connect_string();
    let mut tri = PeerConfig::new(PeerKind::Java, &zk, "java-tri");
    tri.protocol = Some("tri".to_owned());
    let (dubbo, tri) = tokio::join!(
        Peer::start(
            PeerConfig::new(PeerKind::Java, &zk, "java-dubbo"),
            READY_WITHIN
        ),
        Peer::start(tri, READY_WITHIN)
    );
    assert_on_loopback("java dubbo://", &dubbo.unwrap()).await;
    assert_on_loopback("java tri://", &tri.unwrap()).await;
    for (name, kind) in [
        ("node", PeerKind::Node),
        ("python grpc", PeerKind::PythonGrpc),
        ("python dubbo", PeerKind::PythonDubbo),
    ] {
        let peer = Peer::start(PeerConfig::new(kind, &zk, name), READY_WITHIN)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_on_loopback(name, &peer).await;
    }
}
