//! rnacos (a Nacos-2.x-compatible server, crates.io) on loopback, the Nacos the tests run.
//!
//! `scripts/it-setup.sh` installs it (through `scripts/rnacos.sh`, cached under `~/.cache/rudder`);
//! [`Rnacos::start`] runs one server as a child process on free 127.0.0.1 ports (the gRPC port is the
//! HTTP port + 1000, where Nacos 2.x clients look for it) with its data in a fresh directory, waits
//! for its own log line saying both servers listen, then for a config written to it to read back
//! (rnacos 0.8.8's start-up can lose every write: `rnacos/cluster.rs`). [`Rnacos::cluster`] starts a
//! Raft cluster and returns once it has formed. The process is killed on drop.
//!
//! A test that cannot find rnacos fails, unless `RUDDER_SKIP_NACOS=1` says to skip it:
//! [`Rnacos::start`] returns `None` then.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

mod cluster;

pub use cluster::{RaftMembership, RaftMetrics};

/// The environment variable that skips the Nacos tests (`1`).
pub const SKIP_NACOS_ENV: &str = "RUDDER_SKIP_NACOS";
/// The environment variable naming an rnacos binary to use instead of the cached one.
pub const RNACOS_BIN_ENV: &str = "RUDDER_RNACOS_BIN";

/// How long a server may take to say it listens.
const READY_WITHIN: Duration = Duration::from_secs(60);

/// A running rnacos; killed on drop, its data directory removed.
#[derive(Debug)]
pub struct Rnacos {
    child: Option<Child>,
    http_port: u16,
    dir: PathBuf,
    binary: PathBuf,
    /// More `RNACOS_*` lines for the env file (a cluster member's Raft settings).
    extra_env: String,
    /// The first log line saying a thread panicked (see [`Rnacos::panic_seen`]).
    panicked: Arc<Mutex<Option<String>>>,
}

impl Rnacos {
    /// Starts one server, or `None` when `RUDDER_SKIP_NACOS=1`.
    ///
    /// The server is a Raft cluster of one (rnacos's default), and its start-up can lose every
    /// config write (it/src/rnacos/cluster.rs says how): a server started here has shown that a
    /// config written to it reads back, else it is started again with fresh data.
    ///
    /// # Panics
    /// When rnacos is not installed or does not start: the message says how to install it.
    pub async fn start() -> Option<Rnacos> {
        Rnacos::start_with_env("").await
    }

    /// Starts one server with `extra` lines in its env file (`NAME=value\n` each, e.g. authentication
    /// on), or `None` when `RUDDER_SKIP_NACOS=1`. With `RNACOS_ENABLE_OPEN_API_AUTH=true` the probe
    /// of [`Rnacos::start`] is a log-in as the initial admin, the first write rnacos makes itself.
    ///
    /// # Panics
    /// As [`Rnacos::start`].
    pub async fn start_with_env(extra: &str) -> Option<Rnacos> {
        if std::env::var(SKIP_NACOS_ENV).is_ok_and(|v| v == "1") {
            eprintln!("{SKIP_NACOS_ENV}=1: skipping a Nacos test");
            return None;
        }
        let mut failures = Vec::new();
        for attempt in 1..=cluster::ATTEMPTS {
            let mut server = Rnacos::unstarted().await;
            server.extra_env = extra.to_owned();
            server.run().await;
            let probe = if extra.contains("RNACOS_ENABLE_OPEN_API_AUTH=true") {
                cluster::admin_logs_in(&server, extra).await
            } else {
                cluster::leads_and_applies(&server).await
            };
            match probe {
                Ok(()) => return Some(server),
                Err(why) => {
                    eprintln!("rnacos, attempt {attempt}: {why}; starting it again");
                    failures.push(why);
                }
            }
        }
        panic!(
            "rnacos lost its config writes in {} starts: {failures:#?}",
            cluster::ATTEMPTS
        );
    }

    /// Free ports and a fresh data directory; not running yet.
    async fn unstarted() -> Rnacos {
        let binary = binary().unwrap_or_else(|| {
            panic!(
                "rnacos is not installed: run scripts/it-setup.sh (or scripts/rnacos.sh install), \
                 or set {SKIP_NACOS_ENV}=1 to skip the Nacos tests"
            )
        });
        // Nacos 2.x clients reach gRPC at the HTTP port + 1000: a pair, the second kept from other picks.
        let http_port = crate::loopback::free_port_pair(1000)
            .await
            .expect("a free port pair");
        let dir =
            std::env::temp_dir().join(format!("rudder-rnacos-{}-{http_port}", std::process::id()));
        Rnacos {
            child: None,
            http_port,
            dir,
            binary,
            extra_env: String::new(),
            panicked: Arc::default(),
        }
    }

    async fn run(&mut self) {
        if let Err(why) = self.try_run().await {
            panic!("{why}");
        }
    }

    /// Starts the server and waits until it says both its servers listen.
    async fn try_run(&mut self) -> Result<(), String> {
        let console = crate::loopback::free_port().await.expect("a free port");
        std::fs::create_dir_all(&self.dir).expect("rnacos data directory");
        let env = self.dir.join("env");
        let grpc = self.http_port + 1000;
        std::fs::write(
            &env,
            format!(
                "RNACOS_HTTP_PORT={http}\nRNACOS_GRPC_PORT={grpc}\nRNACOS_HTTP_CONSOLE_PORT={console}\n\
                 RNACOS_CONFIG_DB_DIR={db}\nRNACOS_SDK_HOST=127.0.0.1\nRNACOS_CONSOLE_HOST=127.0.0.1\n\
                 RNACOS_RAFT_NODE_ADDR=127.0.0.1:{grpc}\n{extra}",
                http = self.http_port,
                db = self.dir.join("db").display(),
                extra = self.extra_env,
            ),
        )
        .expect("rnacos env file");
        *self.panicked.lock().unwrap_or_else(|e| e.into_inner()) = None;
        let mut child = Command::new(&self.binary)
            .arg("-e")
            .arg(&env)
            // rnacos logs (env_logger) to stderr: that is where it says it listens.
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.binary.display()))?;
        let stderr = child.stderr.take().expect("piped stderr");
        let mut lines = BufReader::new(stderr).lines();
        let listening = format!("listening on: 127.0.0.1:{}", self.http_port);
        let grpc_line = format!("grpc server addr:127.0.0.1:{grpc}");
        let panicked = Arc::clone(&self.panicked);
        // A thread of rnacos that panics leaves the process running without that thread's actor:
        // keep its first such line for whoever asks (see cluster.rs).
        let note = move |line: &str| {
            if line.contains("panicked at") {
                let mut first = panicked.lock().unwrap_or_else(|e| e.into_inner());
                first.get_or_insert_with(|| line.to_owned());
            }
        };
        let ready = async {
            let (mut http_up, mut grpc_up) = (false, false);
            while let Some(line) = lines.next_line().await.ok().flatten() {
                note(&line);
                http_up |= line.contains(&listening);
                grpc_up |= line.contains(&grpc_line);
                if http_up && grpc_up {
                    return true;
                }
            }
            false
        };
        match tokio::time::timeout(READY_WITHIN, ready).await {
            Ok(true) => {}
            Ok(false) => return Err("rnacos exited before listening".to_owned()),
            Err(_) => return Err(format!("rnacos not listening within {READY_WITHIN:?}")),
        }
        // Keep reading its log so that the pipe never fills and blocks the server.
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                note(&line);
            }
        });
        self.child = Some(child);
        Ok(())
    }

    /// The first line of the server's log saying a thread panicked, since it last started.
    pub(crate) fn panic_seen(&self) -> Option<String> {
        self.panicked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// `127.0.0.1:<http port>`: what a `nacos://` URL names.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.http_port)
    }

    /// `nacos://127.0.0.1:<http port>`.
    pub fn url(&self) -> String {
        format!("nacos://{}", self.address())
    }

    /// Kills the server (SIGKILL) and waits for it to end; its data stays for [`Rnacos::restart`].
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
        }
    }

    /// Starts the server again on the same ports and data.
    pub async fn restart(&mut self) {
        self.kill().await;
        self.run().await;
    }
}

impl Drop for Rnacos {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.start_kill();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `RUDDER_RNACOS_BIN`, else what `scripts/rnacos.sh path` prints.
fn binary() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os(RNACOS_BIN_ENV) {
        return Some(PathBuf::from(bin)).filter(|p| p.is_file());
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/rnacos.sh");
    let out = std::process::Command::new("bash")
        .arg(script)
        .arg("path")
        .output()
        .ok()?;
    let path = String::from_utf8(out.stdout).ok()?;
    out.status
        .success()
        .then(|| PathBuf::from(path.trim()))
        .filter(|p| p.is_file())
}
