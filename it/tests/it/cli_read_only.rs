//! The `rudder` commands an engineer points at a production registry change nothing in it: `list`,
//! `providers` and `simulate` create, change and delete no node (a snapshot of every node and its data
//! is the same before and after each), also for a mistyped interface; `invoke` and `bench` register
//! a consumer node only as Dubbo's consumer does, under the service's existing node, and remove it on
//! exit, creating no provider or rule path. And `list` sees the services a Dubbo 3 provider offers
//! at application level only (`register-mode=instance`), with a column saying at which level.
//!
//! Against a real ZooKeeper and two real Java Dubbo 3.3 providers. Needs Docker, the local image and
//! the Java provider: run `scripts/it-setup.sh` first.

use std::collections::BTreeMap;
use std::time::Duration;

use rudder_it::{run_rudder, Peer, PeerConfig, PeerKind, ZooKeeperContainer};
use zookeeper_client::Client;

const SERVICE: &str = "org.rudder.it.GreetingService";
const TYPO: &str = "org.rudder.it.GreetingServise";
const READY_WITHIN: Duration = Duration::from_secs(120);

/// Every node below `/` (ZooKeeper's own `/zookeeper` left out) and its data.
async fn snapshot(client: &Client) -> BTreeMap<String, Vec<u8>> {
    let mut nodes = BTreeMap::new();
    let mut pending = vec!["/".to_owned()];
    while let Some(path) = pending.pop() {
        let children = match client.list_children(&path).await {
            Ok(children) => children,
            Err(zookeeper_client::Error::NoNode) => continue,
            Err(e) => panic!("list {path}: {e}"),
        };
        for child in children {
            let child = if path == "/" {
                format!("/{child}")
            } else {
                format!("{path}/{child}")
            };
            if child == "/zookeeper" {
                continue;
            }
            match client.get_data(&child).await {
                Ok((data, _)) => {
                    nodes.insert(child.clone(), data);
                }
                Err(zookeeper_client::Error::NoNode) => continue,
                Err(e) => panic!("read {child}: {e}"),
            }
            pending.push(child);
        }
    }
    nodes
}

/// What `after` has that `before` has not, and what it lost or changed.
fn difference(
    before: &BTreeMap<String, Vec<u8>>,
    after: &BTreeMap<String, Vec<u8>>,
) -> (Vec<String>, Vec<String>) {
    let added = after
        .keys()
        .filter(|k| !before.contains_key(*k))
        .cloned()
        .collect();
    let lost_or_changed = before
        .iter()
        .filter(|(k, v)| after.get(*k) != Some(v))
        .map(|(k, _)| k.clone())
        .collect();
    (added, lost_or_changed)
}

async fn java(zookeeper: &ZooKeeperContainer, instance: &str, mode: Option<&str>) -> Peer {
    let mut config = PeerConfig::new(PeerKind::Java, &zookeeper.connect_string(), instance);
    config.warmup_ms = Some(0);
    if let Some(mode) = mode {
        config.register_mode = Some(mode.to_owned());
        config.version = Some("2.0.0".to_owned());
        config.application = Some("greeter-app-only".to_owned());
    }
    Peer::start(config, READY_WITHIN).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_commands_write_nothing_and_list_sees_both_levels() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let registry = format!("zookeeper://{}", zookeeper.connect_string());
    let (_both, _app_only) = tokio::join!(
        java(&zookeeper, "java-both", None),
        java(&zookeeper, "java-app", Some("instance"))
    );
    let zk = Client::connect(&zookeeper.connect_string()).await.unwrap();
    // The application-only provider registered no interface-level node for its version.
    let before = snapshot(&zk).await;
    assert!(
        before.contains_key(&format!("/dubbo/{SERVICE}/providers")),
        "{:?}",
        before.keys()
    );
    assert!(
        !before.contains_key(&format!("/dubbo/{SERVICE}/consumers")),
        "a consumers node before any consumer: {:?}",
        before.keys()
    );

    let read_only: Vec<Vec<&str>> = vec![
        vec!["list", "--registry", &registry],
        vec!["list", "--registry", &registry, "--format", "json"],
        vec!["list", "--registry", &registry, SERVICE],
        vec![
            "list",
            "--registry",
            &registry,
            SERVICE,
            "--version",
            "2.0.0",
        ],
        vec!["list", "--registry", &registry, TYPO],
        vec!["providers", "--registry", &registry, SERVICE],
        vec![
            "providers",
            "--registry",
            &registry,
            SERVICE,
            "--version",
            "2.0.0",
        ],
        vec!["providers", "--registry", &registry, TYPO],
        vec![
            "providers",
            "--registry",
            &registry,
            SERVICE,
            "--method",
            "sayHello",
            "--explain",
        ],
        vec!["simulate", "--registry", &registry, "--interface", SERVICE],
        vec!["simulate", "--registry", &registry, "--interface", TYPO],
        // A consumer of a service that is not in the registry registers nowhere.
        vec![
            "invoke",
            "--registry",
            &registry,
            TYPO,
            "--method",
            "sayHello",
            "--args",
            r#"["x"]"#,
        ],
        vec![
            "bench",
            "--registry",
            &registry,
            "--interface",
            TYPO,
            "--method",
            "sayHello",
            "--args",
            r#"["x"]"#,
            "--calls",
            "5",
        ],
    ];
    let mut outputs = Vec::new();
    for args in &read_only {
        let out = run_rudder(args).await;
        let after = snapshot(&zk).await;
        let (added, lost) = difference(&before, &after);
        assert!(
            added.is_empty() && lost.is_empty(),
            "`rudder {}` (exit {}, {}) changed the registry: added {added:?}, lost or changed {lost:?}",
            args.join(" "),
            out.code,
            out.stderr
        );
        outputs.push(out);
    }

    // list: the application-only version is listed, at application level; the other at both.
    let list = &outputs[0];
    assert_eq!(list.code, 0, "{}", list.stderr);
    let rows: Vec<Vec<&str>> = list
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows[0],
        [
            "SERVICE",
            "VERSION",
            "GROUP",
            "PROVIDERS",
            "PROTOCOLS",
            "LEVEL"
        ]
    );
    assert!(
        rows.contains(&vec![SERVICE, "-", "-", "1", "dubbo", "both"]),
        "{}",
        list.stdout
    );
    assert!(
        rows.contains(&vec![SERVICE, "2.0.0", "-", "1", "dubbo", "application"]),
        "{}",
        list.stdout
    );
    assert!(!list.stdout.contains(TYPO), "{}", list.stdout);
    let json: serde_json::Value = serde_json::from_str(&outputs[1].stdout).unwrap();
    let levels: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row["interface"] == SERVICE)
        .map(|row| row["level"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["both", "application"], "{json}");
    // list SERVICE --version of the application-only provider: its methods.
    let methods = &outputs[3];
    assert_eq!(methods.code, 0, "{}", methods.stderr);
    assert!(
        methods
            .stdout
            .starts_with(&format!("# {SERVICE}: 1 provider, versions 2.0.0")),
        "{}",
        methods.stdout
    );
    assert!(methods.stdout.contains("\nsayHello"), "{}", methods.stdout);
    // The mistyped interface: said, nothing found, nothing made.
    assert!(
        outputs[7]
            .stderr
            .contains(&format!("nobody provides {TYPO}")),
        "{}",
        outputs[7].stderr
    );
    assert_eq!(outputs[11].code, 1, "{}", outputs[11].stderr);

    // invoke through the registry: a consumer node while it runs (as Dubbo's consumer, under the
    // service's node), gone on exit; no provider or rule path created.
    let out = run_rudder(&[
        "invoke",
        "--registry",
        &registry,
        SERVICE,
        "--method",
        "sayHello",
        "--args",
        r#"["rust"]"#,
    ])
    .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("Hello rust"), "{}", out.stdout);
    let after = snapshot(&zk).await;
    let (added, lost) = difference(&before, &after);
    assert!(lost.is_empty(), "invoke changed {lost:?}");
    assert!(
        added
            .iter()
            .all(|p| p == &format!("/dubbo/{SERVICE}/consumers")),
        "invoke left more than Dubbo's consumers node behind: {added:?}"
    );

    // The configurator keys followed are said at debug level: an operator whose rule sits at
    // `<interface>.configurators` (no `::`) sees which key Dubbo's consumer reads instead.
    let debug = tokio::process::Command::new(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/debug/rudder"),
    )
    .args(["providers", "--registry", &registry, SERVICE])
    .env("RUDDER_LOG", "rudder_registry=debug")
    .output()
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&debug.stderr);
    assert!(
        stderr.contains("following configurator rules at these config-center keys only")
            && stderr.contains(&format!("{SERVICE}::.configurators")),
        "{stderr}"
    );

    // A java.util.Date parameter takes ISO-8601 text and epoch milliseconds without --types (the
    // metadata gives the type).
    for date in [r#"["2026-12-01T23:30:00Z"]"#, "[1796167800000]"] {
        let out = run_rudder(&[
            "invoke",
            "--registry",
            &registry,
            "org.rudder.it.JavaTypesService",
            "--method",
            "echoDate",
            "--args",
            date,
        ])
        .await;
        assert_eq!(out.code, 0, "{date}: {}", out.stderr);
        assert!(out.stdout.contains("2026-12-01"), "{date}: {}", out.stdout);
    }
}
