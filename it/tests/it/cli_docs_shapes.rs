//! Every `rudder` command the README and the guides (`docs/*.md`) show output for is run against the
//! setup they describe: a real ZooKeeper and `it/`'s Java Dubbo 3.3.6 provider with version 1.0.0
//! (`RUDDER_VERSION=1.0.0 bash scripts/peers/start-java-provider.sh`), the docs' `127.0.0.1:2181` and
//! `127.0.0.1:20880` replaced by their addresses. Each shown line (read by `rudder_it::doc_examples`)
//! must be a line the command printed on the same stream, with each run of digits taken as any
//! number and a warmup share ("(warming, 18 %)") as optional: headers, columns, words and JSON keys
//! are checked, figures that depend on the moment are not. A command with a fixed `--seed` and
//! `--now` is compared digits and all. Commands with `...` placeholders are left out (they are
//! parsed by `crates/rudder-cli/tests/cli/docs_commands.rs`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use rudder_it::doc_examples::{examples, words, Example};
use rudder_it::{run_rudder, Peer, PeerConfig, PeerKind, ZooKeeperContainer};

/// Pages whose examples need a setup other than this one, and why they are left out here.
const OTHER_SETUPS: [(&str, &str); 1] = [(
    "docs/zookeeper-security.md",
    "a ZooKeeper with ACLs and SASL (it/tests/it/zookeeper_security.rs sets one up)",
)];

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The pages whose examples are checked: the README and every guide.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![repository().join("README.md")];
    let mut guides: Vec<PathBuf> = std::fs::read_dir(repository().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    guides.sort();
    pages.extend(guides);
    pages
}

/// `line` as a shape: each run of digits `N`, a warmup share dropped, blanks collapsed.
fn shape(line: &str) -> String {
    let mut masked = String::new();
    let mut in_number = false;
    for c in line.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                masked.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            masked.push(c);
        }
    }
    let masked = masked.replace(" (warming, N %)", "");
    masked.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Each line of `shown` (`...` aside) is among `printed`'s, as shapes unless `exact`.
fn check_lines(shown: &[String], printed: &str, exact: bool, what: &str) {
    let form = |line: &str| {
        if exact {
            line.split_whitespace().collect::<Vec<_>>().join(" ")
        } else {
            shape(line)
        }
    };
    let printed: Vec<String> = printed.lines().map(form).collect();
    for line in shown.iter().filter(|l| l.trim() != "...") {
        assert!(
            printed.contains(&form(line)),
            "{what}: the shown line\n  {line}\nis not among what it printed:\n{}",
            printed.join("\n")
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_docs_outputs_have_the_shape_rudder_prints() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let mut config = PeerConfig::new(PeerKind::Java, &zookeeper.connect_string(), "java-20880");
    config.version = Some("1.0.0".to_owned());
    let peer = Peer::start(config, Duration::from_secs(120)).await.unwrap();
    let provider = format!("127.0.0.1:{}", peer.port());

    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page
            .strip_prefix(repository())
            .unwrap_or(&page)
            .display()
            .to_string();
        if OTHER_SETUPS.iter().any(|(page, _)| name == *page) {
            continue;
        }
        for Example {
            command,
            stdout,
            stderr,
            terminal,
        } in examples(&text)
        {
            if command.contains("...") || (stdout.is_empty() && stderr.is_empty()) {
                continue;
            }
            let local = command
                .replace("127.0.0.1:2181", &zookeeper.connect_string())
                .replace("127.0.0.1:20880", &provider);
            let args = words(&local);
            let args: Vec<&str> = args[1..].iter().map(String::as_str).collect();
            let out = run_rudder(&args).await;
            let what = format!("{name}: `{command}`");
            assert!(
                !out.stderr.contains("Usage: rudder") && out.code != 101,
                "{what}: {}",
                out.stderr
            );
            let exact = command.contains("--seed") && command.contains("--now");
            if terminal {
                let both = format!("{}{}", out.stdout, out.stderr);
                check_lines(&stdout, &both, exact, &what);
                checked += 1;
                continue;
            }
            check_lines(&stdout, &out.stdout, exact, &format!("{what} (stdout)"));
            check_lines(&stderr, &out.stderr, exact, &format!("{what} (stderr)"));
            checked += 1;
        }
    }
    // The README's session and docs/cli.md's: list, list SERVICE, providers, invoke, simulate ...
    assert!(checked >= 9, "only {checked} commands with shown output");
    drop(peer);
}

#[test]
fn shapes_ignore_figures_and_the_warmup_share() {
    assert_eq!(
        shape("127.0.0.1:20880  dubbo  weight 100, effective 18 (warming, 18 %)"),
        shape("127.0.0.1:41234 dubbo weight 100, effective 100")
    );
    assert_ne!(shape("1 provider"), shape("2 providers"));
    assert_ne!(shape("SERVICE VERSION"), shape("SERVICE GROUP"));
}
