//! Real Dubbo providers written by others, run as child processes: Java Dubbo 3.3 and sofa-rpc-node,
//! and a plain gRPC server of another stack (Python grpcio, called by URL: it registers nowhere).
//!
//! Each peer is started through its script in `scripts/peers/` (which builds or installs it when needed),
//! registers itself in the ZooKeeper it is given, and prints `READY <url>` once it is. [`Peer::start`]
//! waits for that line, bounded by a timeout, and the process is killed when the [`Peer`] is dropped.
//! [`Peer::run_java`] runs another program of the Java project to its end (such as `RoutingProbe`, the
//! Java consumer of the routing parity test) and returns what it printed.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::HarnessError;

/// The most of a Java program's stderr kept for an error message (its tail: where the exception is).
const STDERR_TAIL: usize = 8 * 1024;
/// The most of a Java program's stdout [`Peer::run_java`] returns; a longer output is an error.
const STDOUT_MAX: usize = 1024 * 1024;

/// Which implementation to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerKind {
    /// Apache Dubbo 3.3 (Java), `it/java-provider`.
    Java,
    /// sofa-rpc-node (JavaScript), `it/node-provider`.
    Node,
    /// A plain gRPC server, Python grpcio, `it/python-grpc`: the Greeter of `proto/greeter.proto` with
    /// server reflection (grpc.reflection.v1alpha). It ignores `zookeeper`, `weight`, `group` and the
    /// Java-only settings; `version` is the `tri-service-version` every call must carry.
    PythonGrpc,
    /// apache-dubbo, Dubbo's own Python implementation (PyPI 3.0.0b1), `it/python-dubbo`: the Greeter's
    /// `SayHello` over Triple with protobuf messages, registered in `zookeeper` at interface level.
    /// It reads only `zookeeper`, `port` and `instance`.
    PythonDubbo,
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
    /// Static `dubbo.tag` to register, if any (Java only).
    pub tag: Option<String>,
    /// The provider's application name, if not the peer's default (Java only; the tag router reads
    /// rules from `<application>.tag-router`).
    pub application: Option<String>,
    /// Milliseconds the Java provider waits before answering `sayHello` and `whoAmI` (the slow
    /// provider of load-balancing tests), if any.
    pub delay_ms: Option<u32>,
    /// `warmup` to register (ms; 0 turns Dubbo's 10-minute weight ramp off), if any (Java only).
    /// Peers started one after another otherwise get weights in proportion to their uptimes.
    pub warmup_ms: Option<u32>,
    /// Dubbo's `register-mode` (`interface`, `instance` or `all`; the provider's default is `all`), if
    /// any (Java only). `instance` writes only the application-level nodes (`/services/<app>/...`, the
    /// interface-to-application mapping), no `/dubbo/<interface>/providers` node.
    pub register_mode: Option<String>,
    /// The protocol to export over, if not dubbo:// (Java only: `"tri"` for Triple), on `port`.
    pub protocol: Option<String>,
    /// Dubbo's `metadata-type` (`local`, the default, or `remote`: each revision's MetadataInfo
    /// published under `/dubbo/metadata/<app>/<revision>`), if any (Java only).
    pub metadata_storage_type: Option<String>,
    /// Dubbo's `only-use-metadata-v2` (Java with `protocol` tri only): the provider exports
    /// MetadataServiceV2 (protobuf) and not the hessian2 MetadataService.
    pub metadata_v2_only: bool,
    /// Whether the Python gRPC server serves reflection (`true` unless turned off; Python gRPC only).
    pub reflection: bool,
    /// A whole registry URL to register in instead of `zookeeper` (`nacos://127.0.0.1:PORT`), if any
    /// (Java only).
    pub registry: Option<String>,
    /// Serve TLS (Java only): a directory with `server.pem` and `server.key` (and `client-ca.pem`
    /// when `tls_mutual`), made by the test.
    pub tls_dir: Option<std::path::PathBuf>,
    /// With `tls_dir`: require client certificates signed by `client-ca.pem`.
    pub tls_mutual: bool,
    /// While this file exists, the Java provider's `sayHello` and `whoAmI` throw an
    /// `IllegalStateException` (the failing provider of outlier tests), if any (Java only).
    pub failing_file: Option<std::path::PathBuf>,
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
            tag: None,
            application: None,
            delay_ms: None,
            warmup_ms: None,
            register_mode: None,
            protocol: None,
            metadata_storage_type: None,
            metadata_v2_only: false,
            reflection: true,
            registry: None,
            tls_dir: None,
            tls_mutual: false,
            failing_file: None,
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
            PeerKind::PythonGrpc => "start-python-grpc.sh",
            PeerKind::PythonDubbo => "start-python-dubbo.sh",
        };
        let mut command = Command::new("bash");
        command
            .arg(scripts_dir().join(script))
            .env("RUDDER_ZK_ADDRESS", &config.zookeeper)
            .env("RUDDER_DUBBO_PORT", port.to_string())
            .env("RUDDER_INSTANCE", &config.instance)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        for (key, value) in [
            ("RUDDER_WEIGHT", config.weight.map(|w| w.to_string())),
            ("RUDDER_VERSION", config.version.clone()),
            ("RUDDER_GROUP", config.group.clone()),
            ("RUDDER_TAG", config.tag.clone()),
            ("RUDDER_APPLICATION", config.application.clone()),
            ("RUDDER_DELAY_MS", config.delay_ms.map(|d| d.to_string())),
            (
                "RUDDER_FAILING_FILE",
                config
                    .failing_file
                    .as_ref()
                    .map(|f| f.display().to_string()),
            ),
            ("RUDDER_WARMUP", config.warmup_ms.map(|w| w.to_string())),
            ("RUDDER_REGISTER_MODE", config.register_mode.clone()),
            ("RUDDER_REGISTRY_ADDRESS", config.registry.clone()),
            ("RUDDER_PROTOCOL", config.protocol.clone()),
            (
                "RUDDER_METADATA_STORAGE_TYPE",
                config.metadata_storage_type.clone(),
            ),
            (
                "RUDDER_METADATA_V2_ONLY",
                config.metadata_v2_only.then(|| "true".to_owned()),
            ),
            (
                "RUDDER_REFLECTION",
                (!config.reflection).then(|| "off".to_owned()),
            ),
            (
                "RUDDER_TLS_DIR",
                config.tls_dir.as_ref().map(|d| d.display().to_string()),
            ),
            (
                "RUDDER_TLS_MUTUAL",
                config.tls_mutual.then(|| "true".to_owned()),
            ),
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

    /// The port it listens on (127.0.0.1): dubbo://, tri:// or gRPC.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its process id (the script execs the peer itself), while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// The provider URL it registered, as it printed it.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Kills it at once (SIGKILL: its ZooKeeper node stays until the session expires).
    pub async fn kill(&mut self) {
        let _ = self.child.kill().await;
    }

    /// Stops it as an operator's `kill` does (SIGTERM: Dubbo's shutdown hook removes its nodes) and
    /// waits for it to exit.
    ///
    /// # Errors
    /// [`HarnessError::Peer`] when the signal cannot be sent.
    pub async fn terminate(&mut self) -> Result<(), HarnessError> {
        let failed = |reason: String| HarnessError::Peer {
            peer: format!("pid {:?}", self.child.id()),
            reason,
        };
        let Some(pid) = self.child.id() else {
            return Ok(()); // already exited
        };
        let status = Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .await
            .map_err(|e| failed(format!("kill: {e}")))?;
        if !status.success() {
            return Err(failed(format!("kill -TERM exited with {status}")));
        }
        let _ = self.child.wait().await;
        Ok(())
    }

    /// Sends one command line to the peer's stdin (the Java provider's `export-later`).
    ///
    /// # Errors
    /// [`HarnessError::Peer`] when the peer's stdin is closed.
    pub async fn send_line(&mut self, line: &str) -> Result<(), HarnessError> {
        use tokio::io::AsyncWriteExt;
        let failed = |reason: String| HarnessError::Peer {
            peer: "java".to_owned(),
            reason,
        };
        let stdin = self
            .child
            .stdin
            .as_mut()
            .ok_or_else(|| failed("no stdin".into()))?;
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .map_err(|e| failed(format!("write stdin: {e}")))?;
        stdin
            .flush()
            .await
            .map_err(|e| failed(format!("flush stdin: {e}")))
    }

    /// Runs another `main` class of `it/java-provider` (e.g. `org.rudder.it.RoutingProbe`) to its end,
    /// with `env` set, and returns its stdout. The program is killed if it runs past `within`.
    ///
    /// # Errors
    /// [`HarnessError::Peer`] when it cannot start, exits with a failure (the message holds the tail
    /// of its stderr), or runs too long.
    pub async fn run_java(
        main_class: &str,
        env: &[(&str, &str)],
        within: Duration,
    ) -> Result<String, HarnessError> {
        let failed = |reason: String| HarnessError::Peer {
            peer: format!("Java {main_class}"),
            reason,
        };
        let mut command = Command::new("bash");
        command
            .arg(scripts_dir().join("start-java-provider.sh"))
            .env("RUDDER_MAIN", main_class)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|e| failed(format!("spawn: {e}")))?;
        let (Some(mut stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(failed("no stdout or stderr".into()));
        };
        let run = async {
            let (out, tail, status) =
                tokio::join!(stdout_head(&mut stdout), stderr_tail(stderr), child.wait());
            Ok::<_, std::io::Error>((out?, tail?, status?))
        };
        match tokio::time::timeout(within, run).await {
            Ok(Ok((out, _, status))) if status.success() && out.len() <= STDOUT_MAX => Ok(out),
            Ok(Ok((_, _, status))) if status.success() => Err(failed(format!(
                "printed more than {STDOUT_MAX} bytes on stdout"
            ))),
            Ok(Ok((out, tail, status))) => Err(failed(format!(
                "exited with {status}; stdout:\n{out}\nstderr (tail):\n{tail}"
            ))),
            Ok(Err(e)) => Err(failed(e.to_string())),
            Err(_) => Err(failed(format!("still running after {within:?}"))),
        }
    }
}

/// Reads `stdout` to its end, keeping its first [`STDOUT_MAX`] bytes and one more (so that a longer
/// output shows), and draining the rest so that the program never blocks on a full pipe.
async fn stdout_head(stdout: &mut tokio::process::ChildStdout) -> std::io::Result<String> {
    use tokio::io::AsyncReadExt;
    let mut head = Vec::new();
    (&mut *stdout)
        .take(STDOUT_MAX as u64 + 1)
        .read_to_end(&mut head)
        .await?;
    tokio::io::copy(stdout, &mut tokio::io::sink()).await?;
    Ok(String::from_utf8_lossy(&head).into_owned())
}

/// Reads `stderr` to its end, keeping only its last [`STDERR_TAIL`] bytes.
async fn stderr_tail(mut stderr: tokio::process::ChildStderr) -> std::io::Result<String> {
    use tokio::io::AsyncReadExt;
    let mut tail = std::collections::VecDeque::with_capacity(STDERR_TAIL);
    let mut buffer = [0u8; 4096];
    loop {
        let n = stderr.read(&mut buffer).await?;
        if n == 0 {
            break;
        }
        for &byte in &buffer[..n] {
            if tail.len() == STDERR_TAIL {
                tail.pop_front();
            }
            tail.push_back(byte);
        }
    }
    Ok(String::from_utf8_lossy(tail.make_contiguous()).into_owned())
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
