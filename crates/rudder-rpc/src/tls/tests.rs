//! TLS over dubbo:// against real rustls handshakes: a TLS terminator (rustls' server side) in front
//! of the test server, with certificates made by the test.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rudder_common::error::{RpcErrorKind, TlsFailure};
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_common::value::Value;
use rudder_test_support::pki::{Issued, Pki, Validity};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use super::TlsConfig;
use crate::server::DubboServer;
use crate::DubboProtocol;

/// A TLS server on 127.0.0.1 that forwards each session's plaintext to `upstream`.
struct Terminator {
    addr: String,
    handshakes: Arc<AtomicU64>,
    task: JoinHandle<()>,
}

impl Drop for Terminator {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn server_config(server: &Issued, client_ca: Option<&std::path::Path>) -> rustls::ServerConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain = CertificateDer::pem_file_iter(&server.cert)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(&server.key).unwrap();
    let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .unwrap();
    let builder = match client_ca {
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in CertificateDer::pem_file_iter(ca).unwrap() {
                roots.add(cert.unwrap()).unwrap();
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .unwrap();
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    builder.with_single_cert(chain, key).unwrap()
}

impl Terminator {
    async fn start(upstream: String, config: rustls::ServerConfig) -> Terminator {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let handshakes = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&handshakes);
        let task = tokio::spawn(async move {
            let mut sessions = tokio::task::JoinSet::new();
            while let Ok((tcp, _)) = listener.accept().await {
                let (acceptor, upstream, counted) =
                    (acceptor.clone(), upstream.clone(), Arc::clone(&counted));
                sessions.spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    counted.fetch_add(1, Ordering::Relaxed);
                    let mut plain = TcpStream::connect(upstream).await.unwrap();
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
            }
        });
        Terminator {
            addr,
            handshakes,
            task,
        }
    }
}

async fn hello_server() -> DubboServer {
    DubboServer::bind(0, |call: Invocation| async move {
        Ok(Value::from(format!(
            "Hello {}",
            call.arguments()[0].as_str().unwrap_or("?")
        )))
    })
    .await
    .unwrap()
}

fn hello() -> Invocation {
    Invocation::new(
        "sayHello",
        vec!["java.lang.String".into()],
        vec![Value::from("tls")],
    )
}

fn url(addr: &str, extra: &str) -> DubboUrl {
    DubboUrl::parse(&format!(
        "dubbo://{addr}/org.apache.dubbo.demo.DemoService?timeout=5000&connect.timeout=2000{extra}"
    ))
    .unwrap()
}

/// One provider behind TLS with `server` as its certificate (client certificates checked against
/// `client_ca` when given).
async fn provider(
    server: &Issued,
    client_ca: Option<&std::path::Path>,
) -> (DubboServer, Terminator) {
    let backend = hello_server().await;
    let front = Terminator::start(
        backend.local_addr().to_string(),
        server_config(server, client_ca),
    )
    .await;
    (backend, front)
}

async fn failure_of(tls: TlsConfig, addr: &str) -> (RpcErrorKind, Option<TlsFailure>, String) {
    let protocol = DubboProtocol::with_tls(Some(tls.load().unwrap()));
    let error = protocol.invoke(&url(addr, ""), &hello()).await.unwrap_err();
    (
        error.kind(),
        error.tls_failure(),
        error.message_with_causes(),
    )
}

#[tokio::test]
async fn calls_go_through_tls_with_one_handshake_per_connection() {
    let pki = Pki::new("ok");
    let server = pki.issue("server", &["127.0.0.1", "localhost"], Validity::Current);
    let (_backend, front) = provider(&server, None).await;
    let tls = TlsConfig::ca_file(pki.ca()).load().unwrap();
    let protocol = DubboProtocol::with_tls(Some(tls.clone()));
    for _ in 0..20 {
        let answer = protocol
            .invoke(&url(&front.addr, ""), &hello())
            .await
            .unwrap();
        assert_eq!(answer.value(), Some(&Value::from("Hello tls")));
    }
    assert_eq!(
        front.handshakes.load(Ordering::Relaxed),
        1,
        "connections are reused"
    );
    assert_eq!(tls.handshakes(), 1, "the client counts the same handshake");
    protocol.shutdown().await;
}

#[tokio::test]
async fn each_certificate_problem_is_its_own_failure() {
    let pki = Pki::new("good");
    let other = Pki::new("other");
    let cases = [
        (
            pki.issue("s1", &["127.0.0.1"], Validity::Current),
            TlsConfig::ca_file(other.ca()),
            TlsFailure::UnknownIssuer,
        ),
        (
            pki.issue("s2", &["provider.internal"], Validity::Current),
            TlsConfig::ca_file(pki.ca()),
            TlsFailure::NameMismatch,
        ),
        (
            pki.issue("s3", &["127.0.0.1"], Validity::Expired),
            TlsConfig::ca_file(pki.ca()),
            TlsFailure::Expired,
        ),
        (
            pki.issue("s4", &["127.0.0.1"], Validity::NotYetValid),
            TlsConfig::ca_file(pki.ca()),
            TlsFailure::NotYetValid,
        ),
    ];
    for (server, tls, expected) in cases {
        let (_backend, front) = provider(&server, None).await;
        let (kind, failure, text) = failure_of(tls, &front.addr).await;
        assert_eq!(
            (kind, failure),
            (RpcErrorKind::Tls, Some(expected)),
            "{text}"
        );
        assert!(text.contains(&front.addr), "names the provider: {text}");
        assert!(!text.contains('\n'), "one line: {text}");
    }
}

#[tokio::test]
async fn a_server_name_override_checks_the_certificate_against_that_name() {
    let pki = Pki::new("names");
    let server = pki.issue("server", &["provider.internal"], Validity::Current);
    let (_backend, front) = provider(&server, None).await;
    let tls = TlsConfig::ca_file(pki.ca()).server_name("provider.internal");
    let protocol = DubboProtocol::with_tls(Some(tls.load().unwrap()));
    protocol
        .invoke(&url(&front.addr, ""), &hello())
        .await
        .unwrap();
}

#[tokio::test]
async fn mutual_tls_requires_a_client_certificate_the_provider_trusts() {
    let pki = Pki::new("mutual");
    let stranger = Pki::new("stranger");
    let server = pki.issue("server", &["127.0.0.1"], Validity::Current);
    let client = pki.issue("client", &["consumer"], Validity::Current);
    let untrusted = stranger.issue("client", &["consumer"], Validity::Current);
    let (_backend, front) = provider(&server, Some(&pki.ca())).await;

    let (kind, failure, text) = failure_of(TlsConfig::ca_file(pki.ca()), &front.addr).await;
    assert_eq!(
        (kind, failure),
        (RpcErrorKind::Tls, Some(TlsFailure::ClientCertRequired)),
        "{text}"
    );

    let refused = TlsConfig::ca_file(pki.ca()).client_cert(&untrusted.cert, &untrusted.key);
    let (kind, failure, text) = failure_of(refused, &front.addr).await;
    assert_eq!(
        (kind, failure),
        (RpcErrorKind::Tls, Some(TlsFailure::ClientCertRefused)),
        "{text}"
    );

    let mutual = TlsConfig::ca_file(pki.ca()).client_cert(&client.cert, &client.key);
    let protocol = DubboProtocol::with_tls(Some(mutual.load().unwrap()));
    protocol
        .invoke(&url(&front.addr, ""), &hello())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_plaintext_provider_under_a_tls_consumer_fails_and_is_not_called_again_at_once() {
    let pki = Pki::new("plain");
    let plain = hello_server().await;
    let addr = plain.local_addr().to_string();
    let protocol = DubboProtocol::with_tls(Some(TlsConfig::ca_file(pki.ca()).load().unwrap()));
    let first = protocol
        .invoke(&url(&addr, ""), &hello())
        .await
        .unwrap_err();
    assert_eq!(
        first.tls_failure(),
        Some(TlsFailure::PlaintextPeer),
        "{}",
        first.message_with_causes()
    );
    let again = protocol
        .invoke(&url(&addr, ""), &hello())
        .await
        .unwrap_err();
    assert_eq!(
        again.kind(),
        RpcErrorKind::Tls,
        "the backoff refusal keeps the kind"
    );
    assert_eq!(again.tls_failure(), Some(TlsFailure::PlaintextPeer));
    assert_eq!(
        plain.accepted_connections(),
        1,
        "backing off: no second connect"
    );
}

#[tokio::test]
async fn a_provider_announcing_tls_is_never_called_in_plaintext() {
    let plain = hello_server().await;
    let addr = plain.local_addr().to_string();
    let error = DubboProtocol::new()
        .invoke(&url(&addr, "&ssl-enabled=true"), &hello())
        .await
        .unwrap_err();
    assert_eq!(error.tls_failure(), Some(TlsFailure::ProviderRequiresTls));
    assert_eq!(plain.accepted_connections(), 0, "nothing was sent");
}

#[tokio::test]
async fn a_stalled_handshake_ends_within_the_connect_timeout() {
    let pki = Pki::new("stall");
    // Accepts and never answers: the hello sits unread.
    let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = silent.local_addr().unwrap().to_string();
    let _held = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((tcp, _)) = silent.accept().await {
            held.push(tcp);
        }
    });
    let protocol = DubboProtocol::with_tls(Some(TlsConfig::ca_file(pki.ca()).load().unwrap()));
    let stalled = DubboUrl::parse(&format!(
        "dubbo://{addr}/org.apache.dubbo.demo.DemoService?timeout=10000&connect.timeout=300"
    ))
    .unwrap();
    let started = std::time::Instant::now();
    let error = protocol.invoke(&stalled, &hello()).await.unwrap_err();
    assert_eq!(
        error.tls_failure(),
        Some(TlsFailure::HandshakeTimeout),
        "{}",
        error.message_with_causes()
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "ended by connect.timeout, not the call's 10 s"
    );
}

#[tokio::test]
async fn changed_files_are_used_by_new_connections_and_a_broken_change_keeps_the_old_ones() {
    let old = Pki::new("old");
    let new = Pki::new("new");
    let server_old = old.issue("server", &["127.0.0.1"], Validity::Current);
    let server_new = new.issue("server", &["127.0.0.1"], Validity::Current);
    let (_b1, front_old) = provider(&server_old, None).await;
    let (_b2, front_new) = provider(&server_new, None).await;
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::copy(old.ca(), &ca).unwrap();
    let client = TlsConfig::ca_file(&ca).load().unwrap();
    let protocol = DubboProtocol::with_tls(Some(client.clone()));
    protocol
        .invoke(&url(&front_old.addr, ""), &hello())
        .await
        .unwrap();

    // A broken CA file: the old material stays in use.
    std::fs::write(&ca, "-----BEGIN CERTIFICATE-----\nnot base64\n").unwrap();
    let still = DubboProtocol::with_tls(Some(client.clone()));
    still
        .invoke(&url(&front_old.addr, ""), &hello())
        .await
        .unwrap();

    // The new CA: new connections trust it (and no longer the old one); the open one is untouched.
    std::fs::copy(new.ca(), &ca).unwrap();
    let renewed = DubboProtocol::with_tls(Some(client));
    renewed
        .invoke(&url(&front_new.addr, ""), &hello())
        .await
        .unwrap();
    protocol
        .invoke(&url(&front_old.addr, ""), &hello())
        .await
        .unwrap();
    let error = renewed
        .invoke(&url(&front_old.addr, ""), &hello())
        .await
        .unwrap_err();
    assert_eq!(error.tls_failure(), Some(TlsFailure::UnknownIssuer));
}

#[test]
fn keys_in_pkcs1_and_sec1_load_as_well_as_pkcs8() {
    let pki = Pki::new("keys");
    let issued = pki.issue("client", &["consumer"], Validity::Current);
    // SEC1 ("EC PRIVATE KEY"): the same key, converted by openssl.
    let sec1 = pki.dir().join("client-sec1.key");
    let status = std::process::Command::new("openssl")
        .args(["ec", "-in"])
        .arg(&issued.key)
        .arg("-out")
        .arg(&sec1)
        .stderr(std::process::Stdio::null())
        .status()
        .expect("openssl (the test converts keys with it)");
    assert!(status.success());
    assert!(std::fs::read_to_string(&sec1)
        .unwrap()
        .contains("BEGIN EC PRIVATE KEY"));
    TlsConfig::ca_file(pki.ca())
        .client_cert(&issued.cert, &sec1)
        .load()
        .unwrap();
    // PKCS#1 ("RSA PRIVATE KEY"): an RSA certificate made by openssl, its key converted.
    let rsa_key = pki.dir().join("rsa.key");
    let rsa_cert = pki.dir().join("rsa.pem");
    let status = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=consumer",
            "-keyout",
        ])
        .arg(&rsa_key)
        .arg("-out")
        .arg(&rsa_cert)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let pkcs1 = pki.dir().join("rsa-pkcs1.key");
    let status = std::process::Command::new("openssl")
        .args(["rsa", "-traditional", "-in"])
        .arg(&rsa_key)
        .arg("-out")
        .arg(&pkcs1)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    assert!(std::fs::read_to_string(&pkcs1)
        .unwrap()
        .contains("BEGIN RSA PRIVATE KEY"));
    TlsConfig::ca_file(pki.ca())
        .client_cert(&rsa_cert, &pkcs1)
        .load()
        .unwrap();
    // A key that is not the certificate's is refused at load, naming both files.
    let error = TlsConfig::ca_file(pki.ca())
        .client_cert(&issued.cert, &pkcs1)
        .load()
        .unwrap_err();
    assert!(error.to_string().contains("does not fit"), "{error}");
}

#[test]
fn bad_files_are_named_and_their_contents_never_printed() {
    let pki = Pki::new("bad");
    let issued = pki.issue("client", &["consumer"], Validity::Current);
    let missing = TlsConfig::ca_file(pki.dir().join("nope.pem"))
        .load()
        .unwrap_err();
    assert!(missing.to_string().contains("nope.pem"), "{missing}");
    let not_a_key = TlsConfig::ca_file(pki.ca())
        .client_cert(&issued.cert, &issued.cert)
        .load()
        .unwrap_err();
    assert!(not_a_key.to_string().contains("client.pem"), "{not_a_key}");
    let key = std::fs::read_to_string(&issued.key).unwrap();
    let secret = key.lines().nth(1).unwrap();
    let debug = format!(
        "{:?}",
        TlsConfig::ca_file(pki.ca()).client_cert(&issued.cert, &issued.key)
    );
    assert!(!debug.contains(secret));
    let bad_name = TlsConfig::ca_file(pki.ca())
        .server_name("not a name!")
        .load()
        .unwrap_err();
    assert!(bad_name.to_string().contains("not a name!"), "{bad_name}");
}

#[test]
fn hosts_lose_their_port_and_brackets() {
    assert_eq!(super::host_of("10.0.0.1:20880"), "10.0.0.1");
    assert_eq!(super::host_of("[::1]:20880"), "::1");
    assert_eq!(super::host_of("provider.internal:1"), "provider.internal");
}

#[test]
fn alerts_are_read_back_from_the_text_an_http2_stack_keeps() {
    let io = std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        "received fatal alert: BadCertificate",
    );
    assert_eq!(
        super::tls_failure_in(&io, true),
        Some(TlsFailure::ClientCertRefused)
    );
    assert_eq!(
        super::tls_failure_in(&io, false),
        Some(TlsFailure::ClientCertRequired)
    );
    let other = std::io::Error::other("connection reset");
    assert_eq!(super::tls_failure_in(&other, false), None);
}
