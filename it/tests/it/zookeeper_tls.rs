//! rudder against ZooKeeper's TLS secure client port (Netty, PEM stores; certificates made at test
//! time): with and without a client certificate, a wrong CA, TLS and plaintext each to the other's
//! port, an expired server certificate and one for another name.
//!
//! As in `zookeeper_security`, each failure runs under a connect timeout far longer than the test's
//! own deadline: an error that arrives proves rudder failed at once instead of retrying.

use std::time::Duration;

use rudder_it::{run_rudder, SecureZooKeeper, TestPki, ZooKeeperContainer};
use rudder_registry::{RegistryError, RegistryOptions, ZkTlsFailure, ZookeeperRegistry};
use rudder_test_support::pki::Validity;
use zookeeper_client::{Client, TlsOptions};

use crate::common;
use crate::zookeeper_security::{
    chain, local_image, patient, put_provider, spec, PROMPTLY, SERVICE,
};

#[tokio::test]
async fn tls_to_the_secure_client_port_with_and_without_a_client_certificate() {
    let pki = TestPki::generate().unwrap();
    let (extras, secure_port) = SecureZooKeeper::tls(&pki, "need").await.unwrap();
    let zookeeper = ZooKeeperContainer::start_with(local_image(), &extras)
        .await
        .unwrap();
    let admin = common::writer(&zookeeper).await;
    put_provider(&admin, "/dubbo", 20880, false).await;
    let secure = format!("127.0.0.1:{secure_port}");
    let files = format!(
        "tls.ca={}&tls.cert={}&tls.key={}",
        pki.ca().display(),
        pki.client_cert().display(),
        pki.client_key().display()
    );

    let registry = ZookeeperRegistry::connect(&format!("zookeeper://{secure}?{files}"), patient())
        .await
        .expect("TLS session");
    let (directory, subscription) = common::subscribe(&registry, spec()).await;
    assert_eq!(directory.snapshot().providers().len(), 1);
    subscription.close().await;
    registry.close().await;

    // zookeeper-client alone connects the same way (after rudder has set the process's rustls
    // provider: this binary links both ring and aws-lc-rs).
    let tls = TlsOptions::new()
        .with_pem_ca(&std::fs::read_to_string(pki.ca()).unwrap())
        .unwrap()
        .with_pem_identity(
            &std::fs::read_to_string(pki.client_cert()).unwrap(),
            &std::fs::read_to_string(pki.client_key()).unwrap(),
        )
        .unwrap();
    Client::connector()
        .with_tls(tls)
        .secure_connect(&secure)
        .await
        .expect("zookeeper-client itself connects over TLS");

    // The CLI over TLS lists the same provider.
    let url = format!("zookeeper://{secure}?{files}");
    let out = run_rudder(&["providers", "--registry", &url, "--interface", SERVICE]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("127.0.0.1:20880"), "{}", out.stdout);

    // Trusting another CA, or no client certificate where one is needed: no session, with an
    // error that names the hosts and the reason (found by rudder's own handshake: zookeeper-client
    // says only "connection loss"), well within the connect timeout; plaintext to the TLS port
    // neither.
    let short = RegistryOptions::default().with_connect_timeout(Duration::from_secs(3));
    for (what, failure, url) in [
        (
            "wrong CA",
            ZkTlsFailure::UnknownIssuer,
            format!(
                "zookeeper://{secure}?tls.ca={}&tls.cert={}&tls.key={}",
                pki.other_ca().display(),
                pki.client_cert().display(),
                pki.client_key().display()
            ),
        ),
        (
            "no client certificate",
            ZkTlsFailure::ClientCertRequired,
            format!("zookeeper://{secure}?tls.ca={}", pki.ca().display()),
        ),
    ] {
        let started = std::time::Instant::now();
        let error = ZookeeperRegistry::connect(&url, short)
            .await
            .expect_err(what);
        let took = started.elapsed();
        eprintln!("{what}: {} ({took:?})", chain(&error));
        match &error {
            RegistryError::Tls { failure: f, .. } => assert_eq!(*f, failure, "{what}"),
            other => panic!("{what}: {}", chain(other)),
        }
        assert!(took < Duration::from_secs(3), "{what}: {took:?}");
        assert!(chain(&error).contains(&secure), "{what}: {}", chain(&error));
    }

    // Plaintext to the TLS port: ZooKeeper 3.8's secure port closes on `srvr` without a word, and
    // answers the probe's TLS hello in TLS: named as a TLS port, long before the connect timeout.
    let started = std::time::Instant::now();
    let error = ZookeeperRegistry::connect(&format!("zookeeper://{secure}"), patient())
        .await
        .expect_err("plaintext to the TLS port");
    eprintln!(
        "plaintext to the TLS port: {} ({:?})",
        chain(&error),
        started.elapsed()
    );
    assert!(
        matches!(
            error,
            RegistryError::Tls {
                failure: ZkTlsFailure::TlsPort,
                ..
            }
        ),
        "{}",
        chain(&error)
    );
    assert!(started.elapsed() < PROMPTLY, "{:?}", started.elapsed());
    assert!(chain(&error).contains("speaks TLS"), "{}", chain(&error));
    // The CLI says the same in one run.
    let out = tokio::time::timeout(
        PROMPTLY,
        run_rudder(&[
            "providers",
            "--registry",
            &format!("zookeeper://{secure}"),
            "--interface",
            SERVICE,
        ]),
    )
    .await
    .expect("the CLI fails at once");
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("speaks TLS"), "{}", out.stderr);

    // Plain ZooKeeper's port under a TLS URL: named as such.
    let plain = zookeeper.connect_string();
    let error = ZookeeperRegistry::connect(
        &format!("zookeeper://{plain}?tls.ca={}", pki.ca().display()),
        short,
    )
    .await
    .expect_err("TLS to the plain port");
    eprintln!("TLS to the plain port: {}", chain(&error));
    assert!(
        matches!(
            error,
            RegistryError::Tls {
                failure: ZkTlsFailure::PlaintextPeer,
                ..
            }
        ),
        "{}",
        chain(&error)
    );

    // A key file that is not a key: named by its parameter, its content never shown.
    let bogus = pki.dir().join("bogus.pem");
    std::fs::write(&bogus, "TOP-SECRET-NOT-A-KEY").unwrap();
    let url = format!(
        "zookeeper://{secure}?tls.ca={}&tls.cert={}&tls.key={}",
        pki.ca().display(),
        pki.client_cert().display(),
        bogus.display()
    );
    let error = ZookeeperRegistry::connect(&url, short)
        .await
        .expect_err("bogus key");
    let text = format!("{} {error:?}", chain(&error));
    assert!(text.contains("tls.cert/tls.key"), "{text}");
    assert!(!text.contains("TOP-SECRET"), "{text}");
}

/// A secure port showing an expired certificate, and one showing a certificate for another name
/// (both from a CA the URL trusts): each named at once, well within a long connect timeout.
#[tokio::test]
async fn tls_to_an_expired_certificate_and_to_one_for_another_name() {
    let pki = TestPki::generate().unwrap();
    let issuer = rudder_test_support::pki::Pki::new("zookeeper-server");
    let ca = issuer.ca();
    for (what, sans, validity, failure) in [
        (
            "expired",
            &["127.0.0.1", "localhost"][..],
            Validity::Expired,
            ZkTlsFailure::Expired,
        ),
        (
            "another name",
            &["zookeeper.elsewhere.example"][..],
            Validity::Current,
            ZkTlsFailure::NameMismatch,
        ),
    ] {
        let issued = issuer.issue("server", sans, validity);
        // ZooKeeper's PEM key store: the certificate and its key in one file, in the mounted directory.
        let keystore = format!("{}.pem", what.replace(' ', "-"));
        let mut bundle = std::fs::read_to_string(&issued.cert).unwrap();
        bundle.push_str(&std::fs::read_to_string(&issued.key).unwrap());
        std::fs::write(pki.dir().join(&keystore), bundle).unwrap();
        let (extras, secure_port) = SecureZooKeeper::tls_showing(&pki, "none", &keystore)
            .await
            .unwrap();
        let zookeeper = ZooKeeperContainer::start_with(local_image(), &extras)
            .await
            .unwrap();
        let secure = format!("127.0.0.1:{secure_port}");
        let started = std::time::Instant::now();
        let error = tokio::time::timeout(
            PROMPTLY,
            ZookeeperRegistry::connect(
                &format!("zookeeper://{secure}?tls.ca={}", ca.display()),
                patient(),
            ),
        )
        .await
        .expect("named at once, not retried")
        .expect_err(what);
        eprintln!("{what}: {} ({:?})", chain(&error), started.elapsed());
        match &error {
            RegistryError::Tls { failure: f, hosts } => {
                assert_eq!(*f, failure, "{what}");
                assert_eq!(hosts, &secure);
            }
            other => panic!("{what}: {}", chain(other)),
        }
        // The CLI says the same in one run.
        let url = format!("zookeeper://{secure}?tls.ca={}", ca.display());
        let out = tokio::time::timeout(
            PROMPTLY,
            run_rudder(&["providers", "--registry", &url, "--interface", SERVICE]),
        )
        .await
        .expect("the CLI fails at once");
        assert_ne!(out.code, 0, "{out:?}");
        assert!(
            out.stderr.contains(&failure.to_string()),
            "{what}: {}",
            out.stderr
        );
        zookeeper.stop().await.unwrap();
    }
}
