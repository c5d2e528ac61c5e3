//! Running the `rudder` binary from integration tests.

use std::path::PathBuf;

/// What one run of the binary produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliOutput {
    /// The exit code (-1 when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs `rudder` with `args` and collects its output.
///
/// The binary is the workspace's debug build, which `cargo test --workspace` builds (rudder-cli is a
/// member); run that, or `cargo build -p rudder-cli`, first.
///
/// # Panics
/// When the binary is missing or cannot be started, naming the command to build it.
pub async fn run_rudder(args: &[&str]) -> CliOutput {
    let binary = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/debug/rudder");
    assert!(
        binary.exists(),
        "{} is missing: cargo build -p rudder-cli",
        binary.display()
    );
    let out = tokio::process::Command::new(&binary)
        .args(args)
        .output()
        .await
        .expect("rudder starts");
    CliOutput {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
