//! The `rudder` binary with `--registry` repeated (one ZooKeeper per data centre) and `--attachment`:
//! `providers` lists each registry, `simulate` picks the registry per call as a reference would, and
//! `invoke` sends the attachment that routes the call. Build the binary first: `cargo build -p rudder-cli`.

use rudder::{DubboUrl, Invocation, Value};
use rudder_it::{run_rudder, ZooKeeperContainer};
use rudder_registry::ZookeeperRegistry;
use rudder_rpc::server::DubboServer;

const SERVICE: &str = "com.acme.Greeter";

async fn rudder(args: &[&str]) -> (i32, String, String) {
    let out = run_rudder(args).await;
    (out.code, out.stdout, out.stderr)
}

/// A registry listing one provider of [`SERVICE`] at `address`.
async fn registry_listing(zookeeper: &ZooKeeperContainer, address: &str) -> ZookeeperRegistry {
    let registry = crate::common::registry(zookeeper).await;
    let url =
        format!("dubbo://{address}/{SERVICE}?interface={SERVICE}&methods=where&side=provider");
    registry
        .register_provider(&DubboUrl::parse(&url).expect("URL"))
        .await
        .expect("register");
    registry
}

async fn answering(name: &'static str) -> DubboServer {
    DubboServer::bind(
        0,
        move |_call: Invocation| async move { Ok(Value::from(name)) },
    )
    .await
    .expect("bind")
}

/// The title line of a `rudder providers` table whose addresses are `127.0.0.1:PORT` (5-digit ports).
const TITLES: &str = "ADDRESS          PROTOCOL  APPLICATION  VERSION  GROUP  WEIGHT";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_and_attachment_repeat_on_providers_simulate_and_invoke() {
    let (hz, sh) = tokio::join!(ZooKeeperContainer::start(), ZooKeeperContainer::start());
    let (hz, sh) = (hz.expect("hz"), sh.expect("sh"));
    let (hz_server, sh_server) = (answering("hz").await, answering("sh").await);
    let hz_address = hz_server.local_addr().to_string();
    let sh_address = sh_server.local_addr().to_string();
    let _hz_registry = registry_listing(&hz, &hz_address).await;
    let _sh_registry = registry_listing(&sh, &sh_address).await;
    let hz_url = format!("zookeeper://{}?zone=hz&weight=100", hz.connect_string());
    let sh_url = format!("zookeeper://{}?zone=sh&weight=300", sh.connect_string());
    let hz_label = format!("zookeeper://{}/dubbo", hz.connect_string());
    let sh_label = format!("zookeeper://{}/dubbo", sh.connect_string());

    // providers: one listing per registry, headed by the registry and its choice parameters.
    let (code, out, err) = rudder(&[
        "providers",
        "--registry",
        &hz_url,
        "--registry",
        &sh_url,
        "--interface",
        SERVICE,
    ])
    .await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        format!(
            "# {SERVICE} in {hz_label} zone=hz weight=100: 1 provider\n{TITLES}\n{hz_address}  dubbo     -            -        -      weight 100, effective 100\n\
             # {SERVICE} in {sh_label} zone=sh weight=300: 1 provider\n{TITLES}\n{sh_address}  dubbo     -            -        -      weight 100, effective 100\n"
        )
    );

    // simulate --summary: per-provider counts, then one total per registry; 100:300 over 4000 calls is
    // 1000:3000 within five binomial deviations (sqrt(4000 * 0.75 * 0.25) ~ 27.4, so +-137).
    let simulate = |extra: &'static [&'static str]| {
        let mut args = vec![
            "simulate".to_owned(),
            "--registry".to_owned(),
            hz_url.clone(),
            "--registry".to_owned(),
            sh_url.clone(),
            "--interface".to_owned(),
            SERVICE.to_owned(),
            "--method".to_owned(),
            "where".to_owned(),
            "--summary".to_owned(),
            "--seed".to_owned(),
            "9".to_owned(),
        ];
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            rudder(&args).await
        }
    };
    let (code, out, err) = simulate(&["--calls", "4000"]).await;
    assert_eq!(code, 0, "{err}");
    let lines: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert_eq!(
        (lines[0][0], lines[1][0]),
        (hz_address.as_str(), sh_address.as_str()),
        "{out}"
    );
    assert_eq!(
        (lines[2][0], lines[2][1]),
        ("registry", hz_label.as_str()),
        "{out}"
    );
    assert_eq!(
        (lines[3][0], lines[3][1]),
        ("registry", sh_label.as_str()),
        "{out}"
    );
    // `ADDRESS CALLS SHARE % (weight W)` and `registry LABEL CALLS`.
    let count = |line: &[&str]| {
        let calls = if line[0] == "registry" {
            line[2]
        } else {
            line[1]
        };
        calls.parse::<usize>().unwrap()
    };
    assert_eq!(
        count(&lines[0]),
        count(&lines[2]),
        "hz's one provider has all of hz's calls"
    );
    assert_eq!(count(&lines[2]) + count(&lines[3]), 4000);
    assert!(count(&lines[3]).abs_diff(3000) <= 137, "{out}");

    // --attachment registry_zone routes every call; forcing an unknown zone fails naming it.
    let (code, out, err) = simulate(&["--calls", "100", "--attachment", "registry_zone=hz"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.ends_with(&format!("registry {hz_label} 100\nregistry {sh_label} 0\n")),
        "{out}"
    );
    let (code, _, err) = simulate(&[
        "--calls",
        "1",
        "--attachment",
        "registry_zone=bj",
        "--attachment",
        "registry_zone_force=true",
    ])
    .await;
    assert_eq!(
        code, 1,
        "a forced zone with no registry is a failed call: {err}"
    );
    assert!(err.contains("zone: bj"), "{err}");
    let (code, _, err) = simulate(&["--attachment", "no-equals-sign"]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("KEY=VALUE"), "{err}");

    // invoke: the attachment goes with the call, and the zone's registry answers.
    for (zone, expected) in [
        ("registry_zone=sh", "\"sh\"\n".repeat(3)),
        ("registry_zone=hz", "\"hz\"\n".repeat(3)),
    ] {
        let (code, out, err) = rudder(&[
            "invoke",
            "--registry",
            &hz_url,
            "--registry",
            &sh_url,
            "--interface",
            SERVICE,
            "--method",
            "where",
            "--calls",
            "3",
            "--attachment",
            zone,
        ])
        .await;
        assert_eq!(code, 0, "{err}");
        assert_eq!(out, expected, "{zone}");
    }
}
