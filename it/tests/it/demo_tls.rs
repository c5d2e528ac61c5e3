//! `rudder demo --registry` with TLS end to end: the registry is ZooKeeper's secure client port
//! (mutual TLS, the URL's `tls.*` files), the embedded providers serve mutual TLS
//! (`--provider-cert`, `--provider-key`, `--provider-client-ca`) and the demo's consumer calls them
//! with `--tls-ca`, `--tls-cert`, `--tls-key`; certificates made at test time (openssl).

use rudder_it::{run_rudder, SecureZooKeeper, TestPki, ZooKeeperContainer, ZooKeeperImage};

#[tokio::test]
async fn demo_through_a_tls_zookeeper_to_mutual_tls_providers() {
    let pki = TestPki::generate().unwrap();
    let image = ZooKeeperImage::from_env();
    assert!(
        image.is_local_build(),
        "the secure ZooKeeper needs the local image (scripts/build-zookeeper-image.sh), not {}",
        image.reference()
    );
    let (extras, secure_port) = SecureZooKeeper::tls(&pki, "need").await.unwrap();
    let _zookeeper = ZooKeeperContainer::start_with(image, &extras)
        .await
        .unwrap();
    let path = |name: &str| pki.dir().join(name).display().to_string();
    let (ca, client_cert, client_key) = (path("ca.pem"), path("client.crt"), path("client.key"));
    let registry = format!(
        "zookeeper://127.0.0.1:{secure_port}?tls.ca={ca}&tls.cert={client_cert}&tls.key={client_key}"
    );
    let (server_cert, server_key) = (path("server.crt"), path("server.key"));
    let args = vec![
        "demo",
        "--registry",
        &registry,
        "--write-to-registry",
        "--calls",
        "200",
        "--concurrency",
        "8",
        "--tls-ca",
        &ca,
        "--tls-cert",
        &client_cert,
        "--tls-key",
        &client_key,
        "--provider-cert",
        &server_cert,
        "--provider-key",
        &server_key,
        "--provider-client-ca",
        &ca,
    ];
    let out = run_rudder(&args).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("providers over mutual TLS on 127.0.0.1"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("registered in and discovered through ZooKeeper"),
        "{}",
        out.stdout
    );
    // Five strategy tables of four providers each, every call answered.
    let rows: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("  127.0.0.1:"))
        .collect();
    assert_eq!(rows.len(), 20, "{}", out.stdout);
    for row in rows {
        assert!(row.ends_with(" 0"), "a call failed: {row}\n{}", out.stdout);
    }

    // TLS on one side only is refused before anything starts: rudder never falls back to plaintext.
    let out = run_rudder(&[
        "demo",
        "--registry",
        &registry,
        "--write-to-registry",
        "--provider-cert",
        &server_cert,
        "--provider-key",
        &server_key,
    ])
    .await;
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(out.stderr.contains("--tls-ca"), "{}", out.stderr);
}
