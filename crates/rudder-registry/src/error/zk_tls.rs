//! Why a TLS handshake with a ZooKeeper secure port failed, as the pre-flight handshake
//! (`tls_probe`) finds it: each a different thing for the user to fix.

use std::fmt;

/// The reason of a [`RegistryError::Tls`](crate::RegistryError::Tls).
///
/// ```
/// use rudder_registry::ZkTlsFailure;
/// assert_eq!(ZkTlsFailure::UnknownIssuer.name(), "unknown-issuer");
/// assert!(ZkTlsFailure::UnknownIssuer.to_string().contains("tls.ca"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ZkTlsFailure {
    /// The server's certificate is not signed by a CA of `tls.ca`.
    UnknownIssuer,
    /// The server's certificate does not name the host of the connect string.
    NameMismatch,
    /// The server's certificate has expired.
    Expired,
    /// The server's certificate is not valid yet (or a clock is wrong).
    NotYetValid,
    /// The server's certificate is unusable otherwise (bad signature, encoding, ...).
    BadCertificate,
    /// The server requires a client certificate (`ssl.clientAuth=need`) and the URL has none.
    ClientCertRequired,
    /// The server refused the client certificate of `tls.cert`.
    ClientCertRefused,
    /// The port does not speak TLS: ZooKeeper's plain client port, or another server.
    PlaintextPeer,
    /// The reverse: the URL asks for plaintext (no `tls`) and the port answers in TLS, as
    /// ZooKeeper's `secureClientPort` does.
    TlsPort,
    /// Any other handshake failure (no common version or cipher suite, an unexpected alert).
    Handshake,
}

impl ZkTlsFailure {
    /// A short stable name, for logs (`unknown-issuer`, `name-mismatch`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ZkTlsFailure::UnknownIssuer => "unknown-issuer",
            ZkTlsFailure::NameMismatch => "name-mismatch",
            ZkTlsFailure::Expired => "expired",
            ZkTlsFailure::NotYetValid => "not-yet-valid",
            ZkTlsFailure::BadCertificate => "bad-certificate",
            ZkTlsFailure::ClientCertRequired => "client-cert-required",
            ZkTlsFailure::ClientCertRefused => "client-cert-refused",
            ZkTlsFailure::PlaintextPeer => "plaintext-peer",
            ZkTlsFailure::TlsPort => "tls-port",
            ZkTlsFailure::Handshake => "handshake",
        }
    }
}

/// A provider-side reason as the ZooKeeper one: the classification is shared
/// (`rudder_common::tls_classify`); what only a provider connection can meet (an announced TLS, a
/// handshake timeout) is a plain handshake failure here.
///
/// ```
/// use rudder_common::error::TlsFailure;
/// use rudder_registry::ZkTlsFailure;
/// assert_eq!(ZkTlsFailure::from(TlsFailure::Expired), ZkTlsFailure::Expired);
/// ```
impl From<rudder_common::error::TlsFailure> for ZkTlsFailure {
    fn from(failure: rudder_common::error::TlsFailure) -> ZkTlsFailure {
        use rudder_common::error::TlsFailure as F;
        match failure {
            F::UnknownIssuer => ZkTlsFailure::UnknownIssuer,
            F::NameMismatch => ZkTlsFailure::NameMismatch,
            F::Expired => ZkTlsFailure::Expired,
            F::NotYetValid => ZkTlsFailure::NotYetValid,
            F::BadCertificate => ZkTlsFailure::BadCertificate,
            F::ClientCertRequired => ZkTlsFailure::ClientCertRequired,
            F::ClientCertRefused => ZkTlsFailure::ClientCertRefused,
            F::PlaintextPeer => ZkTlsFailure::PlaintextPeer,
            _ => ZkTlsFailure::Handshake,
        }
    }
}

impl fmt::Display for ZkTlsFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ZkTlsFailure::UnknownIssuer => {
                "the server's certificate is not signed by a CA of tls.ca"
            }
            ZkTlsFailure::NameMismatch => {
                "the server's certificate does not name this host (check its SANs)"
            }
            ZkTlsFailure::Expired => "the server's certificate has expired",
            ZkTlsFailure::NotYetValid => "the server's certificate is not valid yet",
            ZkTlsFailure::BadCertificate => "the server's certificate is unusable",
            ZkTlsFailure::ClientCertRequired => {
                "the server requires a client certificate (set tls.cert and tls.key)"
            }
            ZkTlsFailure::ClientCertRefused => "the server refused the client certificate",
            ZkTlsFailure::PlaintextPeer => {
                "the port does not speak TLS (is this secureClientPort?)"
            }
            ZkTlsFailure::TlsPort => {
                "the port speaks TLS (a secureClientPort: set tls.ca, and tls.cert/tls.key if it needs them)"
            }
            ZkTlsFailure::Handshake => "the TLS handshake failed",
        })
    }
}
