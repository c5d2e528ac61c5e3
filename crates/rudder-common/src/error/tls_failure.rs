//! The sub-kinds of [`RpcErrorKind::Tls`](super::RpcErrorKind::Tls): what went wrong between a
//! TLS consumer and a provider, each a different thing for the user to fix.

use std::fmt;

/// Why TLS to a provider failed. Each variant says who has to act: the provider's certificate
/// (`UnknownIssuer` … `BadCertificate`), this consumer's client certificate (`ClientCert*`), or the
/// configuration on one side (`PlaintextPeer`, `ProviderRequiresTls`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TlsFailure {
    /// The provider's certificate is not signed by a CA this consumer trusts (wrong `--tls-ca`, or a
    /// self-signed certificate).
    UnknownIssuer,
    /// The provider's certificate does not name the address called (nor `--tls-server-name`).
    NameMismatch,
    /// The provider's certificate has expired.
    Expired,
    /// The provider's certificate is not valid yet (or a clock is wrong).
    NotYetValid,
    /// The provider's certificate is unusable otherwise (bad signature, encoding, revoked, …).
    BadCertificate,
    /// The provider requires a client certificate and this consumer has none (`--tls-cert`/`--tls-key`).
    ClientCertRequired,
    /// The provider refused this consumer's client certificate (not signed by a CA it trusts).
    ClientCertRefused,
    /// The provider does not speak TLS: it answered a TLS hello in plaintext or hung up on it.
    PlaintextPeer,
    /// The provider's URL says `ssl-enabled=true` and this consumer has no TLS configured: rudder does
    /// not fall back to plaintext.
    ProviderRequiresTls,
    /// The handshake did not finish within `connect.timeout`: a stalled provider, or a plaintext one
    /// that waits in silence on a TLS hello (a Java Dubbo provider without TLS does).
    HandshakeTimeout,
    /// Any other handshake failure (no common protocol version or cipher suite, an unexpected alert).
    Handshake,
}

impl TlsFailure {
    /// A short stable name, for metric labels and logs (`unknown-issuer`, `name-mismatch`, …).
    ///
    /// ```
    /// use rudder_common::error::TlsFailure;
    /// assert_eq!(TlsFailure::ClientCertRequired.name(), "client-cert-required");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            TlsFailure::UnknownIssuer => "unknown-issuer",
            TlsFailure::NameMismatch => "name-mismatch",
            TlsFailure::Expired => "expired",
            TlsFailure::NotYetValid => "not-yet-valid",
            TlsFailure::BadCertificate => "bad-certificate",
            TlsFailure::ClientCertRequired => "client-cert-required",
            TlsFailure::ClientCertRefused => "client-cert-refused",
            TlsFailure::PlaintextPeer => "plaintext-peer",
            TlsFailure::ProviderRequiresTls => "provider-requires-tls",
            TlsFailure::HandshakeTimeout => "handshake-timeout",
            TlsFailure::Handshake => "handshake",
        }
    }

    fn reason(self) -> &'static str {
        match self {
            TlsFailure::UnknownIssuer => {
                "the provider's certificate is not signed by a trusted CA (check the CA file)"
            }
            TlsFailure::NameMismatch => {
                "the provider's certificate does not name this address (check its SANs or set a server name)"
            }
            TlsFailure::Expired => "the provider's certificate has expired",
            TlsFailure::NotYetValid => "the provider's certificate is not valid yet",
            TlsFailure::BadCertificate => "the provider's certificate is unusable",
            TlsFailure::ClientCertRequired => {
                "the provider requires a client certificate and none is configured"
            }
            TlsFailure::ClientCertRefused => "the provider refused our client certificate",
            TlsFailure::PlaintextPeer => {
                "the provider does not speak TLS (a plaintext provider under a TLS consumer)"
            }
            TlsFailure::ProviderRequiresTls => {
                "the provider announces ssl-enabled=true and this consumer has no TLS configured"
            }
            TlsFailure::HandshakeTimeout => {
                "no TLS answer in time (a plaintext provider: Java's waits in silence on a TLS hello; or a stalled one)"
            }
            TlsFailure::Handshake => "the TLS handshake failed",
        }
    }
}

impl fmt::Display for TlsFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A [`TlsFailure`] as an error in a chain: the cause of an `RpcError` of kind `Tls`, itself caused by
/// the TLS library's error when there is one.
///
/// ```
/// use rudder_common::error::{TlsError, TlsFailure};
/// let e = TlsError::new(TlsFailure::Expired);
/// assert_eq!(e.to_string(), "the provider's certificate has expired");
/// ```
#[derive(Debug)]
pub struct TlsError {
    failure: TlsFailure,
    cause: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl TlsError {
    /// A failure with no further cause.
    pub fn new(failure: TlsFailure) -> TlsError {
        TlsError {
            failure,
            cause: None,
        }
    }

    /// The same failure, caused by `cause` (the TLS library's own error).
    pub fn with_cause(mut self, cause: impl std::error::Error + Send + Sync + 'static) -> TlsError {
        self.cause = Some(Box::new(cause));
        self
    }

    /// Which failure.
    pub fn failure(&self) -> TlsFailure {
        self.failure
    }
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.failure.reason())
    }
}

impl std::error::Error for TlsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause
            .as_deref()
            .map(|c| c as &(dyn std::error::Error + 'static))
    }
}
