//! A first look at a secure ZooKeeper port when a TLS session does not come at once: one rustls
//! handshake per server with the URL's own TLS material, so that a wrong CA, a certificate naming
//! another host, an expired one, a refused client certificate or a plaintext port fails with that
//! reason instead of zookeeper-client's bare "connection loss" after the whole connect timeout.
//!
//! The same role as `probe` for plain ports (which speaks ZooKeeper's `srvr` and so cannot look at
//! a TLS port). A handshake that completes, or one that does not end within the bound, is no
//! verdict: the client's own attempt decides. Nothing is sent after the handshake.

use std::sync::Arc;
use std::time::Duration;

use rudder_common::tls_classify::{self, MissingCertAlert};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use crate::error::{RegistryError, ZkTlsFailure};
use crate::security::TlsFiles;

/// What one server's handshake said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Look {
    /// The handshake failed for this reason.
    Failed(ZkTlsFailure),
    /// Refused, completed, or no answer in time: no verdict.
    Inconclusive,
}

/// The error for `hosts` when every server's handshake fails for a reason TLS names (the first
/// server's reason); `None` when any may be fine. An unusable TLS file is its own error, as the
/// client's attempt would say.
pub(crate) async fn diagnose(
    hosts: &[String],
    files: &TlsFiles,
    within: Duration,
) -> Option<RegistryError> {
    let config = match client_config(files) {
        Ok(config) => Arc::new(config),
        Err(error) => return Some(error),
    };
    let client_cert = files.cert.is_some();
    let looks: Vec<_> = hosts
        .iter()
        .map(|host| {
            let config = Arc::clone(&config);
            tokio::spawn(look(host.clone(), config, client_cert, within))
        })
        .collect();
    let mut first = None;
    for handle in looks {
        match handle.await.unwrap_or(Look::Inconclusive) {
            Look::Failed(failure) => {
                first.get_or_insert(failure);
            }
            Look::Inconclusive => return None,
        }
    }
    first.map(|failure| RegistryError::Tls {
        hosts: hosts.join(","),
        failure,
    })
}

/// The rustls configuration the URL's files make: the CA file's certificates as the only roots
/// (without one, nothing can be verified, as for zookeeper-client), and the client identity.
fn client_config(files: &TlsFiles) -> Result<ClientConfig, RegistryError> {
    let (ca, identity) = files.read()?;
    let unusable = |what: &'static str| RegistryError::Security {
        what,
        source: crate::error::SecurityError::NothingUsable,
    };
    let mut roots = RootCertStore::empty();
    if let Some(ca) = ca {
        for cert in CertificateDer::pem_slice_iter(ca.as_bytes()) {
            let cert = cert.map_err(|_| unusable("tls.ca"))?;
            roots.add(cert).map_err(|_| unusable("tls.ca"))?;
        }
    }
    crate::security::ensure_crypto_provider();
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::aws_lc_rs::default_provider()));
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|_| unusable("tls"))?
        .with_root_certificates(roots);
    match identity {
        Some((cert, key)) => {
            let chain = CertificateDer::pem_slice_iter(cert.as_bytes())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| unusable("tls.cert"))?;
            let key =
                PrivateKeyDer::from_pem_slice(key.as_bytes()).map_err(|_| unusable("tls.key"))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|_| unusable("tls.cert/tls.key"))
        }
        None => Ok(builder.with_no_client_auth()),
    }
}

/// Whether `host` answers a TLS hello in TLS (a certificate, an alert), within `deadline`: a port
/// that said nothing to plaintext may be ZooKeeper's `secureClientPort`. Nothing is trusted, so no
/// handshake completes and nothing is sent after the hello.
pub(crate) async fn speaks_tls(host: &str, deadline: tokio::time::Instant) -> bool {
    let Ok(config) = client_config(&TlsFiles::default()) else {
        return false;
    };
    let name = host_name(host);
    let server_name =
        ServerName::try_from(name).unwrap_or_else(|_| ServerName::try_from("zookeeper").unwrap());
    let attempt = async {
        let tcp = TcpStream::connect(host).await.ok()?;
        match TlsConnector::from(Arc::new(config))
            .connect(server_name, tcp)
            .await
        {
            Ok(_) => Some(true),
            Err(error) => Some(matches!(
                error
                    .get_ref()
                    .and_then(|e| e.downcast_ref::<rustls::Error>()),
                Some(rustls::Error::InvalidCertificate(_) | rustls::Error::AlertReceived(_))
            )),
        }
    };
    matches!(
        tokio::time::timeout_at(deadline, attempt).await,
        Ok(Some(true))
    )
}

/// The host of `host:port` (an IPv6 address without its brackets).
fn host_name(host: &str) -> String {
    host.rsplit_once(':')
        .map_or(host, |(name, _)| name)
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned()
}

/// One server: connect, handshake, and with TLS 1.3 read once (a server refusing the client's
/// certificate says so after the client's side of the handshake is done), within `within`.
async fn look(
    host: String,
    config: Arc<ClientConfig>,
    client_cert: bool,
    within: Duration,
) -> Look {
    let Ok(server_name) = ServerName::try_from(host_name(&host)) else {
        return Look::Inconclusive;
    };
    let attempt = async {
        let tcp = TcpStream::connect(host.as_str()).await.ok()?;
        let mut stream = match TlsConnector::from(config).connect(server_name, tcp).await {
            Ok(stream) => stream,
            Err(error) => return Some(classify(&error, client_cert)),
        };
        // ZooKeeper speaks only after a ConnectRequest, so a read that fails at once is the server's
        // alert; one that waits is a handshake that went through.
        let mut byte = [0u8; 1];
        match tokio::time::timeout(
            within / 4,
            tokio::io::AsyncReadExt::read(&mut stream, &mut byte),
        )
        .await
        {
            Ok(Err(error)) => Some(classify(&error, client_cert)),
            _ => None,
        }
    };
    match tokio::time::timeout(within, attempt).await {
        Ok(Some(look)) => look,
        _ => Look::Inconclusive,
    }
}

/// What a failed handshake means for the user. Java's SSLEngine (ZooKeeper's Netty secure port,
/// `ssl.clientAuth=need`) answers a missing client certificate with handshake_failure: observed
/// against ZooKeeper 3.8.
fn classify(error: &std::io::Error, client_cert: bool) -> Look {
    match tls_classify::classify(error, client_cert, MissingCertAlert::OrHandshakeFailure) {
        Some(failure) => Look::Failed(ZkTlsFailure::from(failure)),
        None => Look::Inconclusive,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::{AlertDescription, CertificateError};

    #[test]
    fn library_errors_name_the_reason() {
        let io = |e: rustls::Error| std::io::Error::new(std::io::ErrorKind::InvalidData, e);
        let cases = [
            (
                rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer),
                ZkTlsFailure::UnknownIssuer,
            ),
            (
                rustls::Error::InvalidCertificate(CertificateError::NotValidForName),
                ZkTlsFailure::NameMismatch,
            ),
            (
                rustls::Error::InvalidCertificate(CertificateError::Expired),
                ZkTlsFailure::Expired,
            ),
            (
                rustls::Error::AlertReceived(AlertDescription::CertificateRequired),
                ZkTlsFailure::ClientCertRequired,
            ),
        ];
        for (error, failure) in cases {
            assert_eq!(classify(&io(error), false), Look::Failed(failure));
        }
        assert_eq!(
            classify(
                &io(rustls::Error::AlertReceived(AlertDescription::UnknownCA)),
                true
            ),
            Look::Failed(ZkTlsFailure::ClientCertRefused)
        );
        let eof = std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
        assert_eq!(
            classify(&eof, false),
            Look::Failed(ZkTlsFailure::PlaintextPeer)
        );
    }

    #[tokio::test]
    async fn a_plaintext_port_and_a_silent_one() {
        // ZooKeeper's plain port: reads the hello, then hangs up.
        let plain = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let plain_at = plain.local_addr().unwrap().to_string();
        let server = tokio::spawn(async move {
            let (mut stream, _) = plain.accept().await.unwrap();
            let mut head = [0u8; 4];
            let _ = tokio::io::AsyncReadExt::read_exact(&mut stream, &mut head).await;
        });
        let files = TlsFiles::default();
        match diagnose(
            std::slice::from_ref(&plain_at),
            &files,
            Duration::from_secs(5),
        )
        .await
        {
            Some(RegistryError::Tls { hosts, failure }) => {
                assert_eq!(hosts, plain_at);
                assert_eq!(failure, ZkTlsFailure::PlaintextPeer);
            }
            other => panic!("{other:?}"),
        }
        server.await.unwrap();

        // A server that accepts and says nothing: no verdict, within the bound.
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let silent_at = silent.local_addr().unwrap().to_string();
        let started = std::time::Instant::now();
        let verdict = diagnose(&[silent_at], &files, Duration::from_millis(200)).await;
        assert!(verdict.is_none(), "{verdict:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
        drop(silent);
    }
}
