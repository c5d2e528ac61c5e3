//! The `rudder` binary as a Dubbo engineer uses it against real Java Dubbo 3.3 providers in a real
//! ZooKeeper: `list` (services, then methods with the metadata's types and the fields of their
//! classes), `providers --format json`
//! and `--watch` (a rule's weight change, the connection lost and back), and `invoke` answering wrong
//! calls at once (unknown method, arguments fitting no overload, a version nobody provides) and
//! applying `--interface` / `--version` to a direct `--url`.

use std::process::Stdio;
use std::time::Duration;

use crate::common::watch_lines::next_line_with;
use rudder_it::{run_rudder, Peer, PeerConfig, PeerKind, ZooKeeperContainer};
use tokio::io::{AsyncBufReadExt, BufReader};
use zookeeper_client::{Acls, Client, CreateMode};

const SERVICE: &str = "org.rudder.it.GreetingService";
const READY_WITHIN: Duration = Duration::from_secs(120);

async fn java(zookeeper: &ZooKeeperContainer, instance: &str, version: Option<&str>) -> Peer {
    let mut config = PeerConfig::new(PeerKind::Java, &zookeeper.connect_string(), instance);
    config.weight = Some(200);
    config.version = version.map(str::to_owned);
    Peer::start(config, READY_WITHIN).await.unwrap()
}

async fn rudder(args: &[&str]) -> (i32, String, String) {
    let out = run_rudder(args).await;
    (out.code, out.stdout, out.stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dubbo_engineer_lists_inspects_and_calls() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let registry = format!("zookeeper://{}", zookeeper.connect_string());
    let (versioned, plain) = tokio::join!(
        java(&zookeeper, "java-v1", Some("1.0.0")),
        java(&zookeeper, "java-plain", None)
    );
    let v1 = format!("127.0.0.1:{}", versioned.port());
    let plain_address = format!("127.0.0.1:{}", plain.port());

    // list: one row per service and version.
    let (code, out, err) = rudder(&["list", "--registry", &registry]).await;
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Vec<&str>> = out
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
        "{out}"
    );
    assert!(
        rows.contains(&vec![SERVICE, "1.0.0", "-", "1", "dubbo", "both"]),
        "{out}"
    );
    // list --interface: the methods, typed by the metadata report.
    let (code, out, err) = rudder(&["list", "--registry", &registry, "--interface", SERVICE]).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(&format!("# {SERVICE}: 2 providers, versions (none), 1.0.0")),
        "{out}"
    );
    assert!(out.contains("\nadd(int, int) -> int\n"), "{out}");
    assert!(
        out.contains("\nechoUser(org.rudder.it.User) -> org.rudder.it.User\n"),
        "{out}"
    );
    // Then the fields of the classes the methods take and return (the metadata's type definitions).
    assert!(
        out.ends_with(
            "\nclass org.rudder.it.User {\n  age: int\n  name: java.lang.String\n  \
             tags: java.util.List<java.lang.String>\n}\n"
        ),
        "{out}"
    );
    let (_, out, _) = rudder(&[
        "list",
        "--registry",
        &registry,
        "--interface",
        SERVICE,
        "--format",
        "json",
    ])
    .await;
    // An array, as `list --format json` always prints: here of the one service.
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json.as_array().map(Vec::len), Some(1), "{out}");
    assert_eq!(
        json[0]["classes"],
        serde_json::json!([{"name": "org.rudder.it.User", "fields": {"age": "int",
            "name": "java.lang.String", "tags": "java.util.List<java.lang.String>"}}]),
        "{out}"
    );
    assert!(json[0]["methods"]
        .as_array()
        .unwrap()
        .contains(&serde_json::json!({"name": "slow", "parameter_types": ["int"], "return_type": "java.lang.String"})));

    // providers --format json: one array of objects.
    let (code, out, err) = rudder(&[
        "providers",
        "--registry",
        &registry,
        "--interface",
        SERVICE,
        "--version",
        "1.0.0",
        "--format",
        "json",
    ])
    .await;
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let provider = &json.as_array().unwrap()[0];
    assert_eq!(provider["address"], v1.as_str());
    assert_eq!(provider["protocol"], "dubbo");
    assert_eq!(provider["application"], "rudder-it-java-provider");
    assert_eq!(provider["version"], "1.0.0");
    assert_eq!(provider["group"], serde_json::Value::Null);
    assert_eq!(provider["weight"], 200);
    // Just started: inside Dubbo's default 10-minute warmup, so a share of its weight.
    assert_eq!(provider["warming"], true, "{provider}");
    let effective = provider["effective_weight"].as_i64().unwrap();
    assert!((1..200).contains(&effective), "{provider}");
    assert_eq!(
        provider["warmup_percent"],
        (effective * 100 + 100) / 200,
        "{provider}"
    );
    assert!(provider["methods"]
        .as_array()
        .unwrap()
        .contains(&"sayHello".into()));

    // Wrong calls get an answer at once.
    let invoke = |extra: &[&str]| {
        let mut args = vec![
            "invoke",
            "--registry",
            registry.as_str(),
            "--interface",
            SERVICE,
        ];
        args.extend_from_slice(extra);
        let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            rudder(&args).await
        }
    };
    let (code, _, err) = invoke(&["--version", "2.0.0", "--method", "whoAmI"]).await;
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!("error: no-provider: none of the 2 providers of {SERVICE} has version 2.0.0; seen: (none), 1.0.0\n")
    );
    let (code, _, err) = invoke(&["--method", "sayHi", "--args", "[\"x\"]"]).await;
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!("error: method-not-found: {SERVICE} has no method sayHi; its providers list: add, echoUser, fail, nullValue, sayHello, slow, whoAmI\n")
    );
    // Arguments that fit no overload are a usage mistake (exit 2), as ones that do not convert are.
    let (code, _, err) = invoke(&["--method", "add", "--args", "[\"a\", 1]"]).await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("fit no overload of add; the service has: add(int, int)"),
        "{err}"
    );
    for args in ["[3000000000, 2]", "[1.5, 2]"] {
        let (code, _, err) = invoke(&["--method", "add", "--args", args]).await;
        assert_eq!(code, 2, "{args}: {err}");
    }
    // The metadata's overload gives the types; every call is made and summarised.
    let (code, out, err) =
        invoke(&["--method", "add", "--args", "[2, 3]", "--calls", "3", "-v"]).await;
    assert_eq!((code, out.as_str()), (0, "5\n5\n5\n"), "{err}");
    assert!(
        err.contains(&format!("call 1/3 ok: provider {plain_address}, ")),
        "{err}"
    );
    assert!(err.ends_with("3 calls: 3 ok\n"), "{err}");

    // --url takes --interface and --version as a reference's.
    let bare = format!("dubbo://{v1}");
    let (code, out, err) = rudder(&[
        "invoke",
        "--url",
        &bare,
        "--interface",
        SERVICE,
        "--version",
        "1.0.0",
        "--method",
        "whoAmI",
    ])
    .await;
    assert_eq!((code, out.as_str()), (0, "\"java-v1\"\n"), "{err}");
    let plain_url = format!("dubbo://{plain_address}/{SERVICE}");
    let (code, _, err) = rudder(&[
        "invoke",
        "--url",
        &plain_url,
        "--version",
        "9.9",
        "--method",
        "whoAmI",
    ])
    .await;
    assert_eq!(
        code, 1,
        "a version the provider does not export is refused: {err}"
    );
    assert!(
        err.contains("BAD_REQUEST") && err.contains("hint:"),
        "{err}"
    );

    // An empty registry (a chroot nobody uses) lists nothing, successfully.
    let empty = format!("{registry}?chroot=/nobody");
    let (code, out, err) = rudder(&["list", "--registry", &empty, "--format", "json"]).await;
    assert_eq!((code, out.as_str()), (0, "[]\n"), "{err}");
    let (code, out, err) = rudder(&[
        "providers",
        "--registry",
        &registry,
        "--interface",
        "com.acme.Nobody",
        "--format",
        "json",
    ])
    .await;
    assert_eq!((code, out.as_str()), (0, "[]\n"), "{err}");
    assert!(err.contains("nobody provides com.acme.Nobody"), "{err}");

    watch_shows_rule_changes_and_connection_loss(&zookeeper, &registry, &v1).await;
    drop((versioned, plain));
}

async fn watch_shows_rule_changes_and_connection_loss(
    zookeeper: &ZooKeeperContainer,
    registry: &str,
    v1: &str,
) {
    let binary =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/debug/rudder");
    let mut child = tokio::process::Command::new(binary)
        .args([
            "providers",
            "--registry",
            registry,
            "--interface",
            SERVICE,
            "--version",
            "1.0.0",
            "--watch",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = String::new();
    next_line_with(&mut lines, &format!("{v1}  dubbo"), &mut seen).await;

    let client = Client::connect(&zookeeper.connect_string()).await.unwrap();
    let rule = format!("override://{v1}/{SERVICE}?category=configurators&weight=300&version=1.0.0");
    let path = format!(
        "/dubbo/{SERVICE}/configurators/{}",
        rudder_common::url::java_url_encode(&rule)
    );
    let persistent = CreateMode::Persistent.with_acls(Acls::anyone_all());
    client.create(&path, b"", &persistent).await.unwrap();
    // `~ ADDRESS weight 200 → 300 (rule configurators)`, or `+` when the Java provider re-registered
    // itself with the rule applied before the consumer saw the rule.
    // Both forms hold "300 (rule configurators)"; waiting for the listing's form alone missed the `~`.
    next_line_with(&mut lines, "300 (rule configurators)", &mut seen).await;
    assert!(
        seen.contains(&format!("~ {v1} weight 200 → 300 (rule configurators)"))
            || seen.contains(&format!("+ {v1}  dubbo")),
        "{seen}"
    );
    drop(client);

    zookeeper.pause().await.unwrap();
    next_line_with(&mut lines, "! registry connection lost", &mut seen).await;
    zookeeper.unpause().await.unwrap();
    next_line_with(&mut lines, "! registry connection back", &mut seen).await;
    child.kill().await.unwrap();
}
