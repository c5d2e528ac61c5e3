//! TLS on the test server, as a Java provider with an `SslConfig` serves it: a certificate chain and
//! key (Dubbo's `server-key-cert-chain-path`, `server-private-key-path`) and, for mutual TLS, the CA
//! whose client certificates it requires (`server-trust-cert-collection-path`).

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::PrivateKeyDer;

use crate::tls::{certificates, TlsConfigError};

/// The server side of TLS for [`DubboServer::bind_tls`](super::DubboServer::bind_tls).
///
/// ```no_run
/// use rudder_rpc::server::ServerTls;
/// let tls = ServerTls::from_pem_files("server.pem".as_ref(), "server.key".as_ref(), None).unwrap();
/// # drop(tls);
/// ```
#[derive(Clone)]
pub struct ServerTls {
    pub(super) acceptor: tokio_rustls::TlsAcceptor,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServerTls")
    }
}

impl ServerTls {
    /// Reads the server's chain (PEM, leaf first) and key (PKCS#8, PKCS#1 or SEC1, unencrypted);
    /// with `client_ca`, every client must show a certificate signed by a CA of that file.
    ///
    /// # Errors
    /// A [`TlsConfigError`] naming the file that cannot be used (never its contents).
    pub fn from_pem_files(
        chain: &Path,
        key: &Path,
        client_ca: Option<&Path>,
    ) -> Result<ServerTls, TlsConfigError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let certs = certificates(chain, "server certificate")?;
        let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| {
            TlsConfigError::new(format!(
                "the TLS server key {} holds no unencrypted PKCS#8, PKCS#1 or SEC1 private key",
                key.display()
            ))
            .caused_by(e)
        })?;
        let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsConfigError::new("no TLS protocol version available").caused_by(e))?;
        let builder = match client_ca {
            Some(ca) => {
                let mut roots = rustls::RootCertStore::empty();
                for cert in certificates(ca, "client CA file")? {
                    roots.add(cert).map_err(|e| {
                        TlsConfigError::new(format!(
                            "the TLS client CA file {} holds a certificate that is not a usable CA",
                            ca.display()
                        ))
                        .caused_by(e)
                    })?;
                }
                let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                    Arc::new(roots),
                    provider,
                )
                .build()
                .map_err(|e| {
                    TlsConfigError::new("cannot build the client certificate verifier").caused_by(e)
                })?;
                builder.with_client_cert_verifier(verifier)
            }
            None => builder.with_no_client_auth(),
        };
        let config = builder.with_single_cert(certs, key_der).map_err(|e| {
            TlsConfigError::new(format!(
                "the TLS server key {} does not fit the certificate {}",
                key.display(),
                chain.display()
            ))
            .caused_by(e)
        })?;
        Ok(ServerTls {
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
        })
    }
}

#[cfg(test)]
mod tests {
    use rudder_common::error::{RpcErrorKind, TlsFailure};
    use rudder_common::invocation::Invocation;
    use rudder_common::url::DubboUrl;
    use rudder_common::value::Value;
    use rudder_test_support::pki::{Pki, Validity};

    use super::ServerTls;
    use crate::server::{DubboServer, ServerConfig};
    use crate::tls::TlsConfig;
    use crate::DubboProtocol;

    fn hello() -> Invocation {
        Invocation::new(
            "sayHello",
            vec!["java.lang.String".into()],
            vec![Value::from("tls")],
        )
    }

    #[tokio::test]
    async fn serves_mutual_tls_and_refuses_plaintext_and_strangers() {
        let pki = Pki::new("server-side");
        let server = pki.issue("server", &["127.0.0.1"], Validity::Current);
        let client = pki.issue("client", &["rudder-consumer"], Validity::Current);
        let tls = ServerTls::from_pem_files(&server.cert, &server.key, Some(&pki.ca())).unwrap();
        let provider =
            DubboServer::bind_tls(ServerConfig::new(0), tls, |_call: Invocation| async {
                Ok(Value::from("Hello over TLS"))
            })
            .await
            .unwrap();
        let url = DubboUrl::parse(&format!(
            "dubbo://{}/com.acme.Greeter?timeout=5000&connect.timeout=2000",
            provider.local_addr()
        ))
        .unwrap();

        let mutual = TlsConfig::ca_file(pki.ca())
            .client_cert(&client.cert, &client.key)
            .load()
            .unwrap();
        let protocol = DubboProtocol::with_tls(Some(mutual));
        let answer = protocol.invoke(&url, &hello()).await.unwrap();
        assert_eq!(answer.value(), Some(&Value::from("Hello over TLS")));
        protocol.shutdown().await;

        let no_cert = DubboProtocol::with_tls(Some(TlsConfig::ca_file(pki.ca()).load().unwrap()));
        let error = no_cert.invoke(&url, &hello()).await.unwrap_err();
        assert_eq!(
            (error.kind(), error.tls_failure()),
            (RpcErrorKind::Tls, Some(TlsFailure::ClientCertRequired)),
            "{}",
            error.message_with_causes()
        );
        no_cert.shutdown().await;

        // A plaintext consumer's request is no TLS hello: the server hangs up, the call fails.
        let plaintext = DubboProtocol::with_tls(None);
        assert!(plaintext.invoke(&url, &hello()).await.is_err());
        plaintext.shutdown().await;
        provider.shutdown().await;
    }

    #[test]
    fn unusable_files_are_named_never_quoted() {
        let pki = Pki::new("server-files");
        let server = pki.issue("server", &["127.0.0.1"], Validity::Current);
        let bogus = pki.dir().join("bogus.key");
        std::fs::write(&bogus, "TOP-SECRET-NOT-A-KEY").unwrap();
        let error = ServerTls::from_pem_files(&server.cert, &bogus, None).unwrap_err();
        let text = format!("{error} {error:?}");
        assert!(text.contains("bogus.key"), "{text}");
        assert!(!text.contains("TOP-SECRET"), "{text}");
    }
}
