//! `rudder providers --watch` on Nacos (rnacos on loopback): a Java Dubbo 3.3.6 provider arriving and
//! leaving shows as `+`/`-` lines, and the Nacos server going away and coming back as `! registry
//! connection lost` / `back` (the naming stream's real connection state). Needs `cargo build -p
//! rudder-cli` first; skipped only with `RUDDER_SKIP_NACOS=1`.

use std::process::Stdio;
use std::time::Duration;

use crate::common::watch_lines::next_line_with;
use rudder_it::{Peer, PeerConfig, PeerKind, Rnacos};
use tokio::io::{AsyncBufReadExt, BufReader};

const SERVICE: &str = "org.rudder.it.GreetingService";

#[tokio::test]
async fn watch_on_nacos_shows_a_provider_arriving_and_leaving_and_the_connection_state() {
    let Some(mut nacos) = Rnacos::start().await else {
        return;
    };
    let binary =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/debug/rudder");
    let mut child = tokio::process::Command::new(binary)
        .args([
            "providers",
            "--registry",
            &nacos.url(),
            "--interface",
            SERVICE,
            "--watch",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = String::new();

    let mut config = PeerConfig::new(PeerKind::Java, "127.0.0.1:1", "java-watch");
    config.registry = Some(nacos.url());
    config.register_mode = Some("interface".to_owned());
    config.warmup_ms = Some(0);
    let mut provider = Peer::start(config, Duration::from_secs(120)).await.unwrap();
    let address = format!("127.0.0.1:{}", provider.port());
    // The first listing (`{address}  dubbo`) or a `+` line when the provider came after it.
    next_line_with(&mut lines, &address, &mut seen).await;

    nacos.kill().await;
    next_line_with(&mut lines, "! registry connection lost", &mut seen).await;
    nacos.restart().await;
    next_line_with(&mut lines, "! registry connection back", &mut seen).await;
    assert!(
        !seen.contains(&format!("- {address}")),
        "the provider stays listed while Nacos is away and comes back empty:\n{seen}"
    );

    provider.terminate().await.unwrap();
    next_line_with(&mut lines, &format!("- {address}"), &mut seen).await;
    child.kill().await.unwrap();
}
