//! TLS and mutual TLS against Java Dubbo 3.3.6 providers with an `SslConfig`, over dubbo:// and
//! tri://, by URL and through ZooKeeper, and from the CLI; certificates made by the test (rcgen).
//!
//! Per protocol: one provider with server authentication (group `sa`), one requiring client
//! certificates (group `mt`), one in plaintext (group `plain`). Interop matrix: protocol ×
//! {server-auth, mutual} × {registry, url}; failures: wrong CA, wrong name, no client certificate when
//! one is required, a client certificate from another CA, a plaintext provider under a TLS consumer,
//! a TLS provider under a plaintext consumer, a stalled handshake beside a good provider.

use std::time::{Duration, Instant};

use rudder::{CallError, Consumer, Reference, RpcErrorKind, TlsConfig, TlsFailure, Value};
use rudder_it::{run_rudder, Peer, PeerConfig, PeerKind, ZooKeeperContainer};
use rudder_test_support::pki::{Pki, Validity};

const SERVICE: &str = "org.rudder.it.GreetingService";
const READY_WITHIN: Duration = Duration::from_secs(120);

struct Setup {
    zookeeper: ZooKeeperContainer,
    pki: Pki,
    server_auth: Peer,
    mutual: Peer,
    plain: Peer,
}

/// The three Java providers of `protocol`, all in one ZooKeeper, their certificates from one CA.
async fn setup(protocol: &str) -> Setup {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let pki = Pki::new("java");
    pki.issue("server", &["127.0.0.1", "localhost"], Validity::Current);
    std::fs::copy(pki.ca(), pki.dir().join("client-ca.pem")).unwrap();
    let config = |group: &str, tls: bool, mutual: bool| {
        let mut config = PeerConfig::new(
            PeerKind::Java,
            &zookeeper.connect_string(),
            &format!("java-{protocol}-{group}"),
        );
        config.group = Some(group.into());
        config.protocol = Some(protocol.into());
        config.tls_dir = tls.then(|| pki.dir().to_path_buf());
        config.tls_mutual = mutual;
        config
    };
    let (server_auth, mutual, plain) = tokio::join!(
        Peer::start(config("sa", true, false), READY_WITHIN),
        Peer::start(config("mt", true, true), READY_WITHIN),
        Peer::start(config("plain", false, false), READY_WITHIN),
    );
    Setup {
        server_auth: server_auth.unwrap(),
        mutual: mutual.unwrap(),
        plain: plain.unwrap(),
        zookeeper,
        pki,
    }
}

fn url(protocol: &str, peer: &Peer, group: &str) -> String {
    format!(
        "{protocol}://127.0.0.1:{}/{SERVICE}?group={group}&timeout=15000&connect.timeout=10000",
        peer.port()
    )
}

async fn by_url(tls: Option<TlsConfig>, url: &str) -> Reference {
    let mut consumer = Consumer::builder().application("rudder-it-tls");
    if let Some(tls) = tls {
        consumer = consumer.tls(tls.load().unwrap());
    }
    consumer
        .build()
        .reference(SERVICE)
        .provider(url)
        .retries(0)
        .build()
        .await
        .unwrap()
}

async fn by_registry(tls: Option<TlsConfig>, setup: &Setup, group: &str) -> Reference {
    let mut consumer = Consumer::builder().application("rudder-it-tls");
    if let Some(tls) = tls {
        consumer = consumer.tls(tls.load().unwrap());
    }
    consumer
        .build()
        .reference(SERVICE)
        .registry(&format!("zookeeper://{}", setup.zookeeper.connect_string()))
        .group(group)
        .retries(0)
        // A cold JVM's first handshakes are slow on a busy 2-core machine.
        .parameter("connect.timeout", "10000")
        .timeout(Duration::from_secs(15))
        .build()
        .await
        .unwrap()
}

async fn says_hello(reference: &Reference, instance: &str) {
    let answer = reference
        .call::<Value, _>("sayHello", &["java.lang.String"], vec![Value::from("tls")])
        .await
        .unwrap_or_else(|e| {
            panic!(
                "{instance}: {e:#}: {:?}",
                e.rpc().map(|r| r.message_with_causes())
            )
        });
    assert_eq!(answer, Value::from(format!("Hello tls, from {instance}")));
}

async fn fails_with(reference: &Reference, expected: TlsFailure) -> String {
    let error = reference
        .call::<Value, _>("sayHello", &["java.lang.String"], vec![Value::from("tls")])
        .await
        .unwrap_err();
    let CallError::Rpc(rpc) = &error else {
        panic!("expected a TLS failure, got {error:?}");
    };
    let text = rpc.message_with_causes();
    assert_eq!(rpc.kind(), RpcErrorKind::Tls, "{text}");
    assert_eq!(rpc.tls_failure(), Some(expected), "{text}");
    text
}

/// One cell of the interop matrix passed: a line the closing note's matrix is read from
/// (`-- --nocapture`).
fn cell(protocol: &str, auth: &str, found: &str, how: &str) {
    eprintln!("interop cell ok: {protocol}:// | {auth} | {found} | {how}");
}

async fn matrix(protocol: &str) {
    let setup = setup(protocol).await;
    let pki = &setup.pki;
    let client = pki.issue("client", &["rudder-consumer"], Validity::Current);
    let trusting = || TlsConfig::ca_file(pki.ca());
    let mutual = || trusting().client_cert(&client.cert, &client.key);
    let (sa, mt) = (format!("java-{protocol}-sa"), format!("java-{protocol}-mt"));
    assert!(
        setup.server_auth.url().contains("ssl-enabled=true"),
        "{}",
        setup.server_auth.url()
    );

    // The matrix: server-auth and mutual, by URL and through ZooKeeper.
    says_hello(
        &by_url(Some(trusting()), &url(protocol, &setup.server_auth, "sa")).await,
        &sa,
    )
    .await;
    cell(protocol, "server-auth", "url", "library");
    says_hello(&by_registry(Some(trusting()), &setup, "sa").await, &sa).await;
    cell(protocol, "server-auth", "registry", "library");
    says_hello(
        &by_url(Some(mutual()), &url(protocol, &setup.mutual, "mt")).await,
        &mt,
    )
    .await;
    cell(protocol, "mutual", "url", "library");
    says_hello(&by_registry(Some(mutual()), &setup, "mt").await, &mt).await;
    cell(protocol, "mutual", "registry", "library");

    // Wrong CA, wrong name, no client certificate, a stranger's client certificate.
    let other = Pki::new("other");
    let sa_url = url(protocol, &setup.server_auth, "sa");
    let text = fails_with(
        &by_url(Some(TlsConfig::ca_file(other.ca())), &sa_url).await,
        TlsFailure::UnknownIssuer,
    )
    .await;
    assert!(
        text.contains(&setup.server_auth.port().to_string()),
        "names the provider: {text}"
    );
    fails_with(
        &by_url(Some(trusting().server_name("elsewhere.example")), &sa_url).await,
        TlsFailure::NameMismatch,
    )
    .await;
    let mt_url = url(protocol, &setup.mutual, "mt");
    fails_with(
        &by_url(Some(trusting()), &mt_url).await,
        TlsFailure::ClientCertRequired,
    )
    .await;
    let stranger = other.issue("client", &["rudder-consumer"], Validity::Current);
    fails_with(
        &by_url(
            Some(trusting().client_cert(&stranger.cert, &stranger.key)),
            &mt_url,
        )
        .await,
        TlsFailure::ClientCertRefused,
    )
    .await;

    // Plaintext provider under a TLS consumer: a Java dubbo:// provider without TLS reads our hello
    // and waits for more, so the handshake ends at `connect.timeout`; a tri:// one hangs up on it. A
    // provider announcing TLS under a plaintext consumer is refused before anything is sent.
    let started = Instant::now();
    let plain_url = format!(
        "{}&connect.timeout=1000",
        url(protocol, &setup.plain, "plain")
    );
    let expected = match protocol {
        "tri" => TlsFailure::PlaintextPeer,
        _ => TlsFailure::HandshakeTimeout,
    };
    fails_with(&by_url(Some(trusting()), &plain_url).await, expected).await;
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    let announced = format!("{sa_url}&ssl-enabled=true");
    fails_with(
        &by_url(None, &announced).await,
        TlsFailure::ProviderRequiresTls,
    )
    .await;
    // Through ZooKeeper the listing rudder calls may come from application-level discovery, whose
    // URLs do not carry `ssl-enabled`: the provider then hangs up on plaintext, and the call fails
    // (it never succeeds in plaintext).
    let plaintext = by_registry(None, &setup, "sa").await;
    assert!(plaintext
        .call::<Value, _>("sayHello", &["java.lang.String"], vec![Value::from("x")])
        .await
        .is_err());

    // The CLI: --tls-ca, and mutual with --tls-cert/--tls-key, by --url.
    let ca = pki.ca().display().to_string();
    let out = run_rudder(&[
        "invoke",
        "--url",
        &sa_url,
        "--method",
        "sayHello",
        "--args",
        "[\"cli\"]",
        "--tls-ca",
        &ca,
    ])
    .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(&format!("Hello cli, from {sa}")),
        "{}",
        out.stdout
    );
    cell(
        protocol,
        "server-auth",
        "url",
        "rudder invoke --url --tls-ca",
    );
    let (cert, key) = (
        client.cert.display().to_string(),
        client.key.display().to_string(),
    );
    let out = run_rudder(&[
        "invoke",
        "--url",
        &mt_url,
        "--method",
        "sayHello",
        "--args",
        "[\"cli\"]",
        "--tls-ca",
        &ca,
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
    ])
    .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = run_rudder(&[
        "invoke",
        "--url",
        &mt_url,
        "--method",
        "sayHello",
        "--args",
        "[\"cli\"]",
        "--tls-ca",
        &ca,
    ])
    .await;
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("requires a client certificate"),
        "{}",
        out.stderr
    );
    let secret = std::fs::read_to_string(&client.key).unwrap();
    assert!(!out.stderr.contains(secret.lines().nth(1).unwrap()));
    cell(
        protocol,
        "mutual",
        "url",
        "rudder invoke --url --tls-ca --tls-cert --tls-key",
    );

    // The CLI through ZooKeeper: mutual TLS to the provider found there, and `list`, whose
    // application-level rows come from each provider's MetadataService, asked over TLS too.
    let registry = format!("zookeeper://{}", setup.zookeeper.connect_string());
    let out = run_rudder(&[
        "invoke",
        "--registry",
        &registry,
        "--interface",
        SERVICE,
        "--group",
        "mt",
        "--method",
        "sayHello",
        "--args",
        "[\"cli\"]",
        "--tls-ca",
        &ca,
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
    ])
    .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(&format!("Hello cli, from {mt}")),
        "{}",
        out.stdout
    );
    cell(
        protocol,
        "mutual",
        "registry",
        "rudder invoke --registry --tls-ca --tls-cert --tls-key",
    );
    let out = run_rudder(&[
        "list",
        "--registry",
        &registry,
        "--format",
        "json",
        "--tls-ca",
        &ca,
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
    ])
    .await;
    eprintln!("list over TLS: {}\n{}", out.stdout, out.stderr);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    for group in ["sa", "mt"] {
        let row = rows
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["group"] == group)
            .unwrap_or_else(|| panic!("no row of group {group}: {rows}"));
        assert_eq!(row["level"], "both", "MetadataService over TLS: {row}");
    }
    cell(
        protocol,
        "server-auth and mutual",
        "registry",
        "rudder list (MetadataService over TLS)",
    );

    if protocol == "tri" {
        // A protobuf call (`--proto`) by --url under --tls-ca: over TLS as the POJO calls, never a
        // plaintext channel of its own.
        let proto = concat!(env!("CARGO_MANIFEST_DIR"), "/../proto/greeter.proto");
        let greeter = format!(
            "tri://127.0.0.1:{}/org.rudder.it.proto.Greeter?group=sa&timeout=15000&connect.timeout=10000",
            setup.server_auth.port()
        );
        let out = run_rudder(&[
            "invoke",
            "--url",
            &greeter,
            "--proto",
            proto,
            "--method",
            "SayHello",
            "--args",
            "[{\"name\":\"cli\"}]",
            "--tls-ca",
            &ca,
        ])
        .await;
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(out.stdout.contains("Hello cli"), "{}", out.stdout);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_to_java_over_dubbo() {
    matrix("dubbo").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_to_java_over_tri() {
    matrix("tri").await;
}

/// A provider that accepts TCP and never answers the TLS hello, beside a good one: the calls go to
/// the good one, and the silent one is given up within its `connect.timeout`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_handshake_fails_that_provider_only() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let pki = Pki::new("stall");
    pki.issue("server", &["127.0.0.1", "localhost"], Validity::Current);
    let mut config = PeerConfig::new(PeerKind::Java, &zookeeper.connect_string(), "java-good");
    config.tls_dir = Some(pki.dir().to_path_buf());
    let good = Peer::start(config, READY_WITHIN).await.unwrap();
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    let _held = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let consumer = Consumer::builder()
        .tls(TlsConfig::ca_file(pki.ca()).load().unwrap())
        .build();
    let reference = consumer
        .reference(SERVICE)
        .provider(&format!(
            "dubbo://127.0.0.1:{silent_port}/{SERVICE}?connect.timeout=500&timeout=5000"
        ))
        .provider(&format!(
            "dubbo://127.0.0.1:{}/{SERVICE}?timeout=15000&connect.timeout=10000",
            good.port()
        ))
        .retries(1)
        .build()
        .await
        .unwrap();
    for _ in 0..6 {
        let started = Instant::now();
        says_hello(&reference, "java-good").await;
        // The good provider's first handshake may be slow (a cold JVM); the silent one adds at most
        // its 500 ms connect.timeout.
        assert!(
            started.elapsed() < Duration::from_secs(12),
            "a stalled handshake held a call: {:?}",
            started.elapsed()
        );
    }
    let silent_only = consumer
        .reference(SERVICE)
        .provider(&format!(
            "dubbo://127.0.0.1:{silent_port}/{SERVICE}?connect.timeout=500&timeout=5000"
        ))
        .retries(0)
        .build()
        .await
        .unwrap();
    let started = Instant::now();
    let error = silent_only
        .call::<Value, _>("sayHello", &["java.lang.String"], vec![Value::from("x")])
        .await
        .unwrap_err();
    let rpc = error.rpc().unwrap();
    assert!(
        matches!(rpc.tls_failure(), Some(TlsFailure::HandshakeTimeout))
            || rpc.message_with_causes().contains("unavailable"),
        "{}",
        rpc.message_with_causes()
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}
