//! [`TlsConfig`]: what a consumer trusts and which certificate it shows, by file name.

use std::fmt;
use std::path::{Path, PathBuf};

/// TLS settings for calls to providers: the CA to trust (a PEM file, or the system's roots), an
/// optional client certificate and key for mutual TLS (PEM; the key PKCS#8, PKCS#1 or SEC1), and an
/// optional name to check the provider's certificate against instead of its address.
///
/// Dubbo's `SslConfig` names the same files: `client-trust-cert-collection-path` is
/// [`TlsConfig::ca_file`], `client-key-cert-chain-path` and `client-private-key-path` are
/// [`TlsConfig::client_cert`]. Encrypted keys (`client-key-password`) are not read.
///
/// ```
/// use rudder_rpc::tls::TlsConfig;
///
/// let mutual = TlsConfig::ca_file("/etc/dubbo/ca.pem")
///     .client_cert("/etc/dubbo/client.pem", "/etc/dubbo/client.key")
///     .server_name("provider.internal");
/// assert_eq!(mutual.server_name_override(), Some("provider.internal"));
/// // Nothing is read until `load` (which the consumer's builder calls):
/// let error = mutual.load().unwrap_err();
/// assert!(error.to_string().contains("/etc/dubbo/ca.pem"));
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct TlsConfig {
    pub(crate) ca: Option<PathBuf>,
    pub(crate) cert: Option<PathBuf>,
    pub(crate) key: Option<PathBuf>,
    pub(crate) server_name: Option<String>,
}

impl TlsConfig {
    /// Trust the system's root certificates (the platform store, read by rustls-native-certs).
    pub fn system_roots() -> TlsConfig {
        TlsConfig {
            ca: None,
            cert: None,
            key: None,
            server_name: None,
        }
    }

    /// Trust only the CA certificates in this PEM file (one or more `CERTIFICATE` blocks).
    pub fn ca_file(path: impl Into<PathBuf>) -> TlsConfig {
        TlsConfig {
            ca: Some(path.into()),
            ..TlsConfig::system_roots()
        }
    }

    /// Show this certificate chain (PEM, leaf first) and private key (PEM: `PRIVATE KEY`,
    /// `RSA PRIVATE KEY` or `EC PRIVATE KEY`) to providers that ask for one (mutual TLS).
    pub fn client_cert(mut self, chain: impl Into<PathBuf>, key: impl Into<PathBuf>) -> TlsConfig {
        self.cert = Some(chain.into());
        self.key = Some(key.into());
        self
    }

    /// Check the provider's certificate against `name` (a DNS name or an IP address) instead of the
    /// address in its URL, and send it as SNI: for providers registered by IP whose certificates name
    /// a host.
    pub fn server_name(mut self, name: impl Into<String>) -> TlsConfig {
        self.server_name = Some(name.into());
        self
    }

    /// The CA file, `None` for the system's roots.
    pub fn ca_path(&self) -> Option<&Path> {
        self.ca.as_deref()
    }

    /// The client certificate chain and key files, when set.
    pub fn client_cert_paths(&self) -> Option<(&Path, &Path)> {
        self.cert.as_deref().zip(self.key.as_deref())
    }

    /// The name given with [`TlsConfig::server_name`].
    pub fn server_name_override(&self) -> Option<&str> {
        self.server_name.as_deref()
    }
}

impl fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // File names only: the material itself is never held here, let alone printed.
        f.debug_struct("TlsConfig")
            .field(
                "ca",
                &self
                    .ca
                    .as_deref()
                    .map_or_else(|| "system roots".to_owned(), |p| p.display().to_string()),
            )
            .field("cert", &self.cert.as_deref().map(Path::display))
            .field("key", &self.key.as_deref().map(Path::display))
            .field("server_name", &self.server_name)
            .finish()
    }
}

/// A TLS file that cannot be used: which file, and why (never its contents).
#[derive(Debug)]
pub struct TlsConfigError {
    what: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl TlsConfigError {
    pub(crate) fn new(what: impl Into<String>) -> TlsConfigError {
        TlsConfigError {
            what: what.into(),
            source: None,
        }
    }

    pub(crate) fn caused_by(
        mut self,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> TlsConfigError {
        self.source = Some(Box::new(source));
        self
    }
}

impl fmt::Display for TlsConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.what)
    }
}

impl std::error::Error for TlsConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|s| s as &(dyn std::error::Error + 'static))
    }
}
