//! The `rudder` binary against a real ZooKeeper: `providers`, `simulate --registry`, `demo --registry`.

use std::time::Duration;

use rudder::DubboUrl;
use rudder_it::{run_rudder, ZooKeeperContainer};
use rudder_registry::ZookeeperRegistry;

async fn rudder(args: &[&str]) -> (i32, String, String) {
    let out = run_rudder(args).await;
    (out.code, out.stdout, out.stderr)
}

const SERVICE: &str = "com.acme.Greeter";

async fn registry_with_providers(zookeeper: &ZooKeeperContainer) -> ZookeeperRegistry {
    let registry = crate::common::registry(zookeeper).await;
    for (port, weight) in [(20881, 100), (20882, 300)] {
        let url = format!("dubbo://127.0.0.1:{port}/{SERVICE}?interface={SERVICE}&loadbalance=roundrobin&weight={weight}");
        registry
            .register_provider(&DubboUrl::parse(&url).unwrap())
            .await
            .unwrap();
    }
    let other = DubboUrl::parse(&format!(
        "dubbo://127.0.0.1:20883/{SERVICE}?version=2.0&weight=50"
    ))
    .unwrap();
    registry.register_provider(&other).await.unwrap();
    registry
}

#[tokio::test]
async fn providers_and_simulate_read_the_live_registry() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let _registry = registry_with_providers(&zookeeper).await;
    let url = format!("zookeeper://{}", zookeeper.connect_string());

    let (code, out, err) = rudder(&["providers", "--registry", &url, "--interface", SERVICE]).await;
    assert_eq!(code, 0, "{err}");
    let label = format!("zookeeper://{}/dubbo", zookeeper.connect_string());
    assert_eq!(
        out,
        format!(
            "# {SERVICE} in {label}: 2 providers\n\
             ADDRESS          PROTOCOL  APPLICATION  VERSION  GROUP  WEIGHT\n\
             127.0.0.1:20881  dubbo     -            -        -      weight 100, effective 100\n\
             127.0.0.1:20882  dubbo     -            -        -      weight 300, effective 300\n"
        )
    );
    // The service may be named as `rudder list` takes it, without --interface: the same listing.
    let (code, positional, err) = rudder(&["providers", "--registry", &url, SERVICE]).await;
    assert_eq!((code, positional.as_str()), (0, out.as_str()), "{err}");
    let (code, out, _) = rudder(&[
        "providers",
        "--registry",
        &url,
        "--interface",
        SERVICE,
        "--version",
        "2.0",
    ])
    .await;
    assert_eq!(code, 0);
    assert!(
        out.lines()
            .nth(2)
            .unwrap()
            .starts_with("127.0.0.1:20883  dubbo"),
        "{out}"
    );
    assert!(out.contains("weight 50, effective 50"), "{out}");
    let (code, _, err) = rudder(&[
        "providers",
        "--registry",
        &url,
        "--interface",
        "com.acme.Nobody",
    ])
    .await;
    assert_eq!(code, 0, "an empty listing is an answer: {err}");
    assert!(err.contains("nobody provides com.acme.Nobody"), "{err}");

    let (code, out, err) = rudder(&[
        "simulate",
        "--registry",
        &url,
        "--interface",
        SERVICE,
        "--calls",
        "400",
        "--summary",
    ])
    .await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "127.0.0.1:20881 100 25.0 % (weight 100)\n127.0.0.1:20882 300 75.0 % (weight 300)\n"
    );
}

#[tokio::test]
async fn demo_runs_against_a_real_zookeeper() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let url = format!("zookeeper://{}", zookeeper.connect_string());
    let args = [
        "demo",
        "--calls",
        "200",
        "--concurrency",
        "8",
        "--registry",
        &url,
        "--write-to-registry",
    ];
    // Without the flag that allows the writes: refused, saying what it would write.
    let (code, _, err) = rudder(&args[..args.len() - 1]).await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("writes four ephemeral providers of org.rudder.demo.Greeter")
            && err.contains("--write-to-registry"),
        "{err}"
    );
    let run = rudder(&args);
    let (code, out, err) = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .unwrap();
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("discovered through ZooKeeper"), "{out}");
    let rows = out
        .lines()
        .filter(|l| l.trim_start().starts_with("127.0.0.1:"))
        .count();
    assert_eq!(rows, 20, "{out}");
    assert!(
        out.lines()
            .filter(|l| l.trim_start().starts_with("127.0.0.1:"))
            .all(|l| l.ends_with(" 0")),
        "{out}"
    );
}
