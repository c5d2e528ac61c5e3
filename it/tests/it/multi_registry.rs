//! One reference, two registries (one per data centre), against two real ZooKeepers: the registry is
//! chosen per call by Dubbo 3.3's zone-aware rules.
//!
//! Each ZooKeeper lists providers of its own (`DubboServer`s on 127.0.0.1 that answer with the name of
//! their data centre), so every answer tells which registry served the call.

use std::time::Duration;

use rudder::{CallError, Consumer, DubboUrl, Invocation, Reference, RpcErrorKind, Value};
use rudder_it::ZooKeeperContainer;
use rudder_rpc::server::DubboServer;
use zookeeper_client::{Acls, Client, CreateMode};

/// Two data centres, each with its registry and one provider process answering with its name.
struct DataCentres {
    hz: ZooKeeperContainer,
    sh: ZooKeeperContainer,
    hz_writer: Client,
    sh_writer: Client,
    hz_server: DubboServer,
    sh_server: DubboServer,
}

impl DataCentres {
    async fn start() -> DataCentres {
        let (hz, sh) = tokio::join!(ZooKeeperContainer::start(), ZooKeeperContainer::start());
        let (hz, sh) = (
            hz.unwrap_or_else(|e| panic!("{e}")),
            sh.unwrap_or_else(|e| panic!("{e}")),
        );
        let hz_writer = Client::connect(&hz.connect_string()).await.expect("hz");
        let sh_writer = Client::connect(&sh.connect_string()).await.expect("sh");
        DataCentres {
            hz_server: answering("hz").await,
            sh_server: answering("sh").await,
            hz,
            sh,
            hz_writer,
            sh_writer,
        }
    }

    /// `zookeeper://` URL of the hz registry, with registry parameters.
    fn hz_url(&self, parameters: &str) -> String {
        registry_url(&self.hz, parameters)
    }

    fn sh_url(&self, parameters: &str) -> String {
        registry_url(&self.sh, parameters)
    }

    /// Lists each data centre's provider of `interface` in its own registry.
    async fn export(&self, interface: &str) {
        register(
            &self.hz_writer,
            &provider_url(&self.hz_server.local_addr().to_string(), interface),
        )
        .await;
        register(
            &self.sh_writer,
            &provider_url(&self.sh_server.local_addr().to_string(), interface),
        )
        .await;
    }
}

fn registry_url(zookeeper: &ZooKeeperContainer, parameters: &str) -> String {
    let query = if parameters.is_empty() {
        String::new()
    } else {
        format!("?{parameters}")
    };
    format!("zookeeper://{}{query}", zookeeper.connect_string())
}

async fn answering(name: &'static str) -> DubboServer {
    DubboServer::bind(
        0,
        move |_call: Invocation| async move { Ok(Value::from(name)) },
    )
    .await
    .expect("bind")
}

fn provider_url(address: &str, interface: &str) -> DubboUrl {
    DubboUrl::parse(&format!(
        "dubbo://{address}/{interface}?interface={interface}&side=provider&methods=where"
    ))
    .expect("provider URL")
}

/// Registers `url` as a provider node (persistent: the test decides when it goes).
async fn register(zk: &Client, url: &DubboUrl) {
    let persistent = CreateMode::Persistent.with_acls(Acls::anyone_all());
    let parent = format!("/dubbo/{}/providers", url.service_interface());
    zk.mkdir(&parent, &persistent).await.expect("mkdir");
    let path = format!("{parent}/{}", url.to_node_name());
    zk.create(&path, b"", &persistent).await.expect("create");
}

/// Which data centre answered, for a call with `attachments`.
async fn served_by(
    reference: &Reference,
    attachments: &[(&str, &str)],
) -> Result<String, CallError> {
    let mut call = Invocation::new("where", vec![], vec![]);
    for (key, value) in attachments {
        call.set_attachment(key, value);
    }
    let answer = reference.invoke(call).await?.into_result()?;
    Ok(answer.as_str().expect("a name").to_owned())
}

/// How many of `calls` calls each data centre served: (hz, sh).
async fn split(
    reference: &Reference,
    calls: usize,
    attachments: &[(&str, &str)],
) -> (usize, usize) {
    let mut hz = 0;
    for _ in 0..calls {
        if served_by(reference, attachments).await.expect("call") == "hz" {
            hz += 1;
        }
    }
    (hz, calls - hz)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preferred_then_zone_then_force_choose_the_registry() {
    let dcs = DataCentres::start().await;
    dcs.export("com.acme.Orders").await;
    let consumer = Consumer::builder().application("multi").seed(11).build();

    // preferred=true wins over the call's zone, whatever the weights.
    let preferring_sh = consumer
        .reference("com.acme.Orders")
        .registry(&dcs.hz_url("zone=hz&weight=1000"))
        .registry(&dcs.sh_url("zone=sh&preferred=true&weight=1"))
        .build()
        .await
        .expect("reference");
    assert_eq!(preferring_sh.snapshots().len(), 2);
    assert_eq!(
        split(&preferring_sh, 50, &[("registry_zone", "hz")]).await,
        (0, 50)
    );

    // Without a preferred registry, `registry_zone` routes each call to its zone.
    let zoned = consumer
        .reference("com.acme.Orders")
        .registry(&dcs.hz_url("zone=hz"))
        .registry(&dcs.sh_url("zone=sh"))
        .build()
        .await
        .expect("reference");
    assert_eq!(split(&zoned, 50, &[("registry_zone", "sh")]).await, (0, 50));
    assert_eq!(split(&zoned, 50, &[("registry_zone", "hz")]).await, (50, 0));
    // An unknown zone falls back to the weighted pick (equal weights: both serve)...
    let (hz, sh) = split(&zoned, 200, &[("registry_zone", "bj")]).await;
    assert!(
        hz > 0 && sh > 0,
        "both registries serve an unknown zone: {hz}/{sh}"
    );
    // ...unless forced: then the call fails, naming the zone.
    let forced = served_by(
        &zoned,
        &[("registry_zone", "bj"), ("registry_zone_force", "true")],
    )
    .await;
    let Err(CallError::Rpc(error)) = forced else {
        panic!("forced unknown zone must fail: {forced:?}")
    };
    assert_eq!(error.kind(), RpcErrorKind::NoProvider);
    assert!(error.message().contains("zone: bj"), "{error}");

    // The registry parameters are not part of the session: four registry URLs, two sessions.
    assert_eq!(consumer.diagnostics().registry_sessions(), 2);
    consumer.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registries_without_providers_are_skipped() {
    let dcs = DataCentres::start().await;
    // Only sh provides this service; hz is preferred and nearer, but lists nobody.
    register(
        &dcs.sh_writer,
        &provider_url(&dcs.sh_server.local_addr().to_string(), "com.acme.Stock"),
    )
    .await;
    let consumer = Consumer::builder().seed(3).build();
    let stock = consumer
        .reference("com.acme.Stock")
        .registry(&dcs.hz_url("zone=hz&preferred=true&weight=900"))
        .registry(&dcs.sh_url("zone=sh&weight=100"))
        .build()
        .await
        .expect("reference");
    let sizes: Vec<usize> = stock
        .snapshots()
        .iter()
        .map(|s| s.providers().len())
        .collect();
    assert_eq!(sizes, [0, 1]);
    assert_eq!(
        split(&stock, 50, &[]).await,
        (0, 50),
        "preferred and heavy, but empty"
    );
    assert_eq!(
        split(&stock, 50, &[("registry_zone", "hz")]).await,
        (0, 50),
        "the zone is empty"
    );
    // Forcing the empty zone is an error, as in Dubbo.
    let forced = served_by(
        &stock,
        &[("registry_zone", "hz"), ("registry_zone_force", "true")],
    )
    .await;
    assert!(
        matches!(&forced, Err(CallError::Rpc(e)) if e.message().contains("zone: hz")),
        "{forced:?}"
    );
    consumer.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn weights_100_to_300_split_calls_one_to_three() {
    // N calls, each to sh with probability p = 300/400 = 0.75: the count to sh is binomial, with
    // standard deviation sqrt(N p (1 - p)) = sqrt(4000 * 0.1875) ~ 27.4. Five deviations (+-137, i.e.
    // the share of sh within 0.75 +- 0.034) fail a correct implementation with probability ~6e-7; the
    // seed makes the run reproducible, the tolerance keeps it honest for any seed.
    const N: usize = 4000;
    const TOLERANCE: usize = 137;
    let dcs = DataCentres::start().await;
    dcs.export("com.acme.Catalog").await;
    let consumer = Consumer::builder().seed(2024).build();
    let catalog = consumer
        .reference("com.acme.Catalog")
        .registry(&dcs.hz_url("zone=hz&weight=100"))
        .registry(&dcs.sh_url("zone=sh&weight=300"))
        .timeout(std::time::Duration::from_millis(5000))
        .build()
        .await
        .expect("reference");
    let (hz, sh) = split(&catalog, N, &[]).await;
    println!(
        "weights 100:300 over {N} calls: hz {hz}, sh {sh} (expected 1000:3000 +- {TOLERANCE})"
    );
    assert!(sh.abs_diff(N * 3 / 4) <= TOLERANCE, "hz {hz}, sh {sh}");
    consumer.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failover_across_registries_only_when_enabled() {
    let dcs = DataCentres::start().await;
    // hz lists a provider that is gone (nothing listens on its port); sh lists a live one.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").expect("port");
    let dead_address = dead.local_addr().expect("address").to_string();
    drop(dead);
    register(
        &dcs.hz_writer,
        &provider_url(&dead_address, "com.acme.Billing"),
    )
    .await;
    register(
        &dcs.sh_writer,
        &provider_url(&dcs.sh_server.local_addr().to_string(), "com.acme.Billing"),
    )
    .await;
    let consumer = Consumer::builder().seed(5).build();
    let build = |failover: &str| {
        consumer
            .reference("com.acme.Billing")
            .registry(&dcs.hz_url("zone=hz&preferred=true"))
            .registry(&dcs.sh_url("zone=sh"))
            .retries(1)
            .timeout(std::time::Duration::from_millis(2000))
            .parameter("registry.failover", failover)
            .build()
    };

    let strict = build("false").await.expect("reference");
    let Err(CallError::Rpc(error)) = served_by(&strict, &[]).await else {
        panic!("without failover the preferred registry's failure is the answer")
    };
    assert_eq!(error.kind(), RpcErrorKind::Network, "{error}");
    assert_eq!(dcs.sh_server.open_connections(), 0, "sh was never called");

    let failing_over = build("true").await.expect("reference");
    for _ in 0..5 {
        assert_eq!(
            served_by(&failing_over, &[]).await.expect("sh answers"),
            "sh"
        );
    }
    // A forced zone is never left, failover or not.
    let forced = served_by(
        &failing_over,
        &[("registry_zone", "hz"), ("registry_zone_force", "true")],
    )
    .await;
    assert!(forced.is_err(), "{forced:?}");

    let bad = build("maybe").await;
    assert!(
        matches!(&bad, Err(e) if e.to_string().contains("registry.failover=\"maybe\"")),
        "{bad:?}"
    );
    tokio::time::timeout(Duration::from_secs(30), consumer.shutdown())
        .await
        .expect("shutdown");
}

/// A ZooKeeper (zone hz) and a Nacos (zone sh) registry behind one reference (issue 25, item 1):
/// the zone-aware choice does not care which kind of registry a zone is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zones_choose_between_a_zookeeper_and_a_nacos_registry() {
    let Some(nacos) = rudder_it::Rnacos::start().await else {
        return;
    };
    let zookeeper = ZooKeeperContainer::start()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let writer = Client::connect(&zookeeper.connect_string())
        .await
        .expect("hz");
    let (hz_server, sh_server) = (answering("hz").await, answering("sh").await);
    let interface = "org.acme.TwoKinds";
    register(
        &writer,
        &provider_url(&hz_server.local_addr().to_string(), interface),
    )
    .await;
    let nacos_writer = rudder_registry::connect(
        &nacos.url(),
        rudder_registry::RegistryOptions::default(),
        None,
    )
    .await
    .expect("Nacos");
    nacos_writer
        .register_provider(&provider_url(
            &sh_server.local_addr().to_string(),
            interface,
        ))
        .await
        .expect("registered in Nacos");
    let consumer = Consumer::builder().build();
    let reference = consumer
        .reference(interface)
        .registry(&registry_url(&zookeeper, "zone=hz"))
        .registry(&format!("{}?zone=sh", nacos.url()))
        .build()
        .await
        .expect("reference");
    assert_eq!(
        split(&reference, 50, &[("registry_zone", "sh")]).await,
        (0, 50)
    );
    assert_eq!(
        split(&reference, 50, &[("registry_zone", "hz")]).await,
        (50, 0)
    );
    let (hz, sh) = split(&reference, 200, &[("registry_zone", "bj")]).await;
    assert!(
        hz > 0 && sh > 0,
        "both registries serve an unknown zone: {hz}/{sh}"
    );
    drop(reference);
    consumer.shutdown().await;
    nacos_writer.close().await;
}
