//! Real Dubbo providers written by others, run as child processes: Java Dubbo 3.3 and sofa-rpc-node.
//!
//! Each peer is started through its script in `scripts/peers/` (which builds or installs it when needed),
//! registers itself in the ZooKeeper it is given, and prints `READY <url>` once it is. [`Peer::start`]
//! waits for that line, bounded by a timeout, and the process is killed when the [`Peer`] is dropped.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::HarnessError;

/// Which implementation to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerKind {
    /// Apache Dubbo 3.3 (Java), `it/java-provider`.
    Java,
    /// sofa-rpc-node (JavaScript), `it/node-provider`.
    Node,
}

/// How to start a peer.
#[derive(Debug, Clone)]
pub struct PeerConfig {
    /// Which implementation.
    pub kind: PeerKind,
    /// ZooKeeper to register in (`127.0.0.1:PORT`).
    pub zookeeper: String,
    /// dubbo:// port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Name the provider echoes in `sayHello` answers.
    pub instance: String,
    /// `weight` to register, if any.
    pub weight: Option<u32>,
    /// `version` to register, if any.
    pub version: Option<String>,
    /// `group` to register, if any.
    pub group: Option<String>,
}

impl PeerConfig {
    /// A peer of `kind` registering in `zookeeper` under the name `instance`.
    pub fn new(kind: PeerKind, zookeeper: &str, instance: &str) -> PeerConfig {
        PeerConfig {
            kind,
            zookeeper: zookeeper.to_owned(),
            port: 0,
            instance: instance.to_owned(),
            weight: None,
            version: None,
            group: None,
        }
    }
}

/// A running peer; killed on drop.
#[derive(Debug)]
pub struct Peer {
    child: Child,
    port: u16,
    url: String,
}

impl Peer {
    /// Starts the peer and waits (at most `ready_within`) for it to report itself registered.
    ///
    /// # Errors
    /// [`HarnessError::Peer`] when it cannot start, exits, or stays silent past the timeout.
    pub async fn start(config: PeerConfig, ready_within: Duration) -> Result<Peer, HarnessError> {
        let port = match config.port {
            0 => crate::loopback::free_port()
                .await
                .map_err(|e| peer_error(&config, e.to_string()))?,
            p => p,
        };
        let script = match config.kind {
            PeerKind::Java => "start-java-provider.sh",
            PeerKind::Node => "start-node-provider.sh",
        };
        let mut command = Command::new("bash");
        command
            .arg(scripts_dir().join(script))
            .env("RUDDER_ZK_ADDRESS", &config.zookeeper)
            .env("RUDDER_DUBBO_PORT", port.to_string())
            .env("RUDDER_INSTANCE", &config.instance)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        for (key, value) in [
            ("RUDDER_WEIGHT", config.weight.map(|w| w.to_string())),
            ("RUDDER_VERSION", config.version.clone()),
            ("RUDDER_GROUP", config.group.clone()),
        ] {
            if let Some(value) = value {
                command.env(key, value);
            }
        }
        let mut child = command
            .spawn()
            .map_err(|e| peer_error(&config, format!("spawn: {e}")))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| peer_error(&config, "no stdout".into()))?;
        let mut lines = BufReader::new(stdout).lines();
        let ready = async {
            while let Some(line) = lines.next_line().await? {
                if let Some(url) = line.strip_prefix("READY ") {
                    return Ok(Some(url.to_owned()));
                }
            }
            Ok::<_, std::io::Error>(None)
        };
        match tokio::time::timeout(ready_within, ready).await {
            Ok(Ok(Some(url))) => Ok(Peer { child, port, url }),
            Ok(Ok(None)) => Err(peer_error(&config, "exited before READY".into())),
            Ok(Err(e)) => Err(peer_error(&config, e.to_string())),
            Err(_) => Err(peer_error(
                &config,
                format!("not READY within {ready_within:?}"),
            )),
        }
    }

    /// The dubbo:// port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The provider URL it registered, as it printed it.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Kills it at once (SIGKILL: its ZooKeeper node stays until the session expires).
    pub async fn kill(&mut self) {
        let _ = self.child.kill().await;
    }
}

fn scripts_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/peers")
}

fn peer_error(config: &PeerConfig, reason: String) -> HarnessError {
    HarnessError::Peer {
        peer: format!("{:?} {}", config.kind, config.instance),
        reason,
    }
}
