//! [`TlsClient`]: the loaded TLS material, re-read when its files change, and the handshake.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rudder_common::error::RpcError;
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use super::classify::{handshake_error, timed_out};
use super::config::{TlsConfig, TlsConfigError};

/// The ALPN protocol tri:// asks for (a Java provider picks HTTP/2 by it).
const H2: &[u8] = b"h2";

/// A loaded [`TlsConfig`]: cheap to clone (clones share the material), used by the protocols for
/// every new connection. See the [module docs](super) for when files are re-read.
#[derive(Clone)]
pub struct TlsClient {
    inner: Arc<Inner>,
}

struct Inner {
    config: TlsConfig,
    /// The system's roots, read once (they do not rotate with the consumer's files).
    system_roots: Option<Arc<RootCertStore>>,
    current: Mutex<Arc<Material>>,
    /// The file stamps of the last reload that failed: warned about once, not retried until the
    /// files change again.
    failed: Mutex<Option<Stamps>>,
    /// Providers (`host:port`) that asked for a client certificate in their last handshake while we
    /// had none: when such a provider then drops the connection, that is why (TLS 1.3 sends the
    /// refusal after our side of the handshake, and some servers just close).
    asked_for_cert: Mutex<std::collections::HashSet<String>>,
    /// Handshakes completed, for the proof that a connection carries many calls.
    handshakes: std::sync::atomic::AtomicU64,
}

/// Shows no certificate, and remembers that the provider asked for one.
#[derive(Debug)]
struct NoCert(std::sync::atomic::AtomicBool);

impl rustls::client::ResolvesClientCert for NoCert {
    fn resolve(
        &self,
        _root_hint_subjects: &[&[u8]],
        _sigschemes: &[rustls::SignatureScheme],
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
        None
    }

    fn has_certs(&self) -> bool {
        false
    }
}

/// A hash of each configured file's contents, in the order ca, cert, key (`None`: unreadable).
/// Contents, not modification times: a rotation within the file system's clock tick, or one that
/// keeps the old mtime (`cp -p`, a ConfigMap's symlink swap), must still be seen. The files are a
/// few KiB and are read only when a connection opens.
type Stamps = Vec<Option<u64>>;

struct Material {
    stamps: Stamps,
    /// No ALPN (dubbo://).
    plain: Arc<ClientConfig>,
    /// ALPN `h2` (tri://).
    h2: Arc<ClientConfig>,
}

impl TlsClient {
    pub(crate) fn load(config: TlsConfig) -> Result<TlsClient, TlsConfigError> {
        if let Some(name) = &config.server_name {
            ServerName::try_from(name.clone()).map_err(|e| {
                TlsConfigError::new(format!(
                    "TLS server name {name:?} is not a DNS name or an IP address"
                ))
                .caused_by(e)
            })?;
        }
        if config.cert.is_some() != config.key.is_some() {
            return Err(TlsConfigError::new(
                "a TLS client certificate needs both its chain and its key file",
            ));
        }
        let system_roots = match config.ca {
            Some(_) => None,
            None => Some(Arc::new(system_roots()?)),
        };
        let stamps = stamps(&config);
        let material = build(&config, system_roots.as_deref(), stamps)?;
        Ok(TlsClient {
            inner: Arc::new(Inner {
                config,
                system_roots,
                current: Mutex::new(Arc::new(material)),
                failed: Mutex::new(None),
                asked_for_cert: Mutex::new(std::collections::HashSet::new()),
                handshakes: std::sync::atomic::AtomicU64::new(0),
            }),
        })
    }

    /// The settings this client was loaded from.
    pub fn config(&self) -> &TlsConfig {
        &self.inner.config
    }

    /// Whether a client certificate is configured (mutual TLS).
    pub fn has_client_cert(&self) -> bool {
        self.inner.config.cert.is_some()
    }

    /// Handshakes this client (and its clones) completed so far, to every provider: one per
    /// connection, however many calls the connection carries.
    ///
    /// ```no_run
    /// // (no_run: the host may have no system roots)
    /// let tls = rudder_rpc::tls::TlsConfig::system_roots().load().unwrap();
    /// assert_eq!(tls.handshakes(), 0);
    /// ```
    pub fn handshakes(&self) -> u64 {
        self.inner
            .handshakes
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether the provider at `addr` asked for a client certificate in its last handshake and got
    /// none: a connection it then closes without a word was refused for that.
    pub fn provider_asked_for_cert(&self, addr: &str) -> bool {
        lock(&self.inner.asked_for_cert).contains(addr)
    }

    /// The material for a new connection: re-read first if a file changed since the last read.
    fn material(&self) -> Arc<Material> {
        let current = Arc::clone(&lock(&self.inner.current));
        let now = stamps(&self.inner.config);
        if now == current.stamps {
            return current;
        }
        let mut failed = lock(&self.inner.failed);
        if failed.as_ref() == Some(&now) {
            return current;
        }
        match build(
            &self.inner.config,
            self.inner.system_roots.as_deref(),
            now.clone(),
        ) {
            Ok(material) => {
                tracing::info!(config = ?self.inner.config, "TLS files changed: new connections use the new ones");
                let material = Arc::new(material);
                *lock(&self.inner.current) = Arc::clone(&material);
                *failed = None;
                material
            }
            Err(error) => {
                tracing::warn!(
                    config = ?self.inner.config,
                    error = %rudder_common::error::causes_text(&error),
                    "TLS files changed but cannot be used; keeping the previous ones"
                );
                *failed = Some(now);
                current
            }
        }
    }

    /// Runs a TLS handshake with the provider at `addr` (`host:port`) over `stream`, asking for
    /// HTTP/2 by ALPN when `h2` (tri://), within `timeout`. The certificate is checked against the
    /// configured server name, else the address's host (an IP address against IP SANs).
    ///
    /// # Errors
    /// An error of kind [`Tls`](rudder_common::error::RpcErrorKind::Tls) whose
    /// [`tls_failure`](RpcError::tls_failure) says what failed.
    pub async fn connect<S>(
        &self,
        stream: S,
        addr: &str,
        h2: bool,
        timeout: Duration,
    ) -> Result<TlsStream<S>, RpcError>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        let material = self.material();
        let config = if h2 { &material.h2 } else { &material.plain };
        let name = self
            .inner
            .config
            .server_name
            .as_deref()
            .unwrap_or_else(|| super::host_of(addr));
        let server_name = ServerName::try_from(name.to_owned()).map_err(|e| {
            handshake_error(
                addr,
                std::io::Error::new(std::io::ErrorKind::InvalidInput, e),
                false,
            )
        })?;
        // Without a certificate of our own, a per-connection copy of the configuration notes whether
        // the provider asks for one (handshakes are per connection, so the copy is cheap enough).
        let asked = Arc::new(NoCert(std::sync::atomic::AtomicBool::new(false)));
        let config = if self.has_client_cert() {
            Arc::clone(config)
        } else {
            let mut copy = ClientConfig::clone(config);
            copy.client_auth_cert_resolver = Arc::clone(&asked) as _;
            Arc::new(copy)
        };
        let connector = TlsConnector::from(config);
        let outcome = tokio::time::timeout(timeout, connector.connect(server_name, stream)).await;
        {
            let mut asking = lock(&self.inner.asked_for_cert);
            if asked.0.load(std::sync::atomic::Ordering::Relaxed) {
                asking.insert(addr.to_owned());
            } else if matches!(outcome, Ok(Ok(_))) {
                asking.remove(addr);
            }
        }
        match outcome {
            Ok(Ok(stream)) => {
                self.inner
                    .handshakes
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Ok(stream)
            }
            Ok(Err(e)) => Err(handshake_error(addr, e, self.has_client_cert())),
            Err(_) => Err(timed_out(addr, timeout)),
        }
    }
}

impl TlsConfig {
    /// Reads the files now and checks them (the certificates parse, the key matches the certificate,
    /// the server name is valid).
    ///
    /// # Errors
    /// A [`TlsConfigError`] naming the file and what is wrong with it (never its contents).
    pub fn load(&self) -> Result<TlsClient, TlsConfigError> {
        TlsClient::load(self.clone())
    }
}

impl fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TlsClient")
            .field(&self.inner.config)
            .finish()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn stamps(config: &TlsConfig) -> Stamps {
    [&config.ca, &config.cert, &config.key]
        .into_iter()
        .flatten()
        .map(|path| {
            std::fs::read(path).ok().map(|bytes| {
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                bytes.hash(&mut hasher);
                hasher.finish()
            })
        })
        .collect()
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn system_roots() -> Result<RootCertStore, TlsConfigError> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        return Err(TlsConfigError::new(
            "no usable root certificate in the system's trust store (give a CA file instead)",
        ));
    }
    Ok(roots)
}

fn read(path: &Path, what: &str) -> Result<Vec<u8>, TlsConfigError> {
    std::fs::read(path).map_err(|e| {
        TlsConfigError::new(format!("cannot read the TLS {what} {}", path.display())).caused_by(e)
    })
}

/// The certificates of the PEM file at `path` (`what` names it in errors); at least one.
pub(crate) fn certificates(
    path: &Path,
    what: &str,
) -> Result<Vec<CertificateDer<'static>>, TlsConfigError> {
    let pem = read(path, what)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            TlsConfigError::new(format!("the TLS {what} {} is not PEM", path.display()))
                .caused_by(e)
        })?;
    if certs.is_empty() {
        return Err(TlsConfigError::new(format!(
            "the TLS {what} {} holds no CERTIFICATE block",
            path.display()
        )));
    }
    Ok(certs)
}

fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsConfigError> {
    let pem = read(path, "client key")?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
        TlsConfigError::new(format!(
            "the TLS client key {} holds no unencrypted PKCS#8, PKCS#1 or SEC1 private key",
            path.display()
        ))
        .caused_by(e)
    })
}

fn build(
    config: &TlsConfig,
    system: Option<&RootCertStore>,
    stamps: Stamps,
) -> Result<Material, TlsConfigError> {
    let roots = match (&config.ca, system) {
        (Some(ca), _) => {
            let mut roots = RootCertStore::empty();
            for cert in certificates(ca, "CA file")? {
                roots.add(cert).map_err(|e| {
                    TlsConfigError::new(format!(
                        "the TLS CA file {} holds a certificate that is not a usable CA",
                        ca.display()
                    ))
                    .caused_by(e)
                })?;
            }
            Arc::new(roots)
        }
        (None, Some(system)) => Arc::new(system.clone()),
        (None, None) => Arc::new(system_roots()?),
    };
    let verifier = WebPkiServerVerifier::builder_with_provider(roots, provider())
        .build()
        .map_err(|e| TlsConfigError::new("cannot build the certificate verifier").caused_by(e))?;
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsConfigError::new("no TLS protocol version available").caused_by(e))?
        .with_webpki_verifier(verifier);
    let mut plain = match (&config.cert, &config.key) {
        (Some(cert), Some(key)) => {
            let chain = certificates(cert, "client certificate")?;
            let key_der = private_key(key)?;
            builder.with_client_auth_cert(chain, key_der).map_err(|e| {
                TlsConfigError::new(format!(
                    "the TLS client key {} does not fit the certificate {}",
                    key.display(),
                    cert.display()
                ))
                .caused_by(e)
            })?
        }
        _ => builder.with_no_client_auth(),
    };
    plain.alpn_protocols.clear();
    let mut h2 = plain.clone();
    h2.alpn_protocols = vec![H2.to_vec()];
    Ok(Material {
        stamps,
        plain: Arc::new(plain),
        h2: Arc::new(h2),
    })
}
