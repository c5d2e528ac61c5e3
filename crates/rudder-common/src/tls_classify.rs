//! What a failed TLS handshake means for the user, read from rustls' error: one classification for
//! the provider connections (rudder-rpc) and the ZooKeeper secure-port look (rudder-registry), with
//! the one way peers differ as a parameter ([`MissingCertAlert`]). Feature `tls`.
//!
//! ```
//! use rudder_common::error::TlsFailure;
//! use rudder_common::tls_classify::{classify, MissingCertAlert};
//! let alert = rustls::Error::AlertReceived(rustls::AlertDescription::HandshakeFailure);
//! let io = std::io::Error::new(std::io::ErrorKind::InvalidData, alert);
//! // Java's SSLEngine answers a missing client certificate with handshake_failure.
//! assert_eq!(classify(&io, false, MissingCertAlert::OrHandshakeFailure), Some(TlsFailure::ClientCertRequired));
//! assert_eq!(classify(&io, false, MissingCertAlert::CertificateRequired), Some(TlsFailure::Handshake));
//! ```

use rustls::{AlertDescription, CertificateError};

use crate::error::TlsFailure;

/// How the peer says that it wanted a client certificate and got none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissingCertAlert {
    /// With `certificate_required` (or a certificate alert) only: `handshake_failure` is then any
    /// other handshake failure. What rudder assumes of providers, whose TLS stacks differ.
    CertificateRequired,
    /// Also with `handshake_failure` when we showed none: Java's SSLEngine with client
    /// authentication required (ZooKeeper's Netty secure port, `ssl.clientAuth=need`; observed
    /// against ZooKeeper 3.8).
    OrHandshakeFailure,
}

/// The failure an I/O error from a TLS stream stands for; `client_cert` says whether we showed a
/// client certificate. `None` for an I/O error that is neither rustls' nor a hang-up (a reset or an
/// end of stream: a plaintext peer dropping our hello).
pub fn classify(
    error: &std::io::Error,
    client_cert: bool,
    missing: MissingCertAlert,
) -> Option<TlsFailure> {
    let Some(tls) = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    else {
        return match error.kind() {
            // A plaintext server reads our hello as garbage and hangs up.
            std::io::ErrorKind::UnexpectedEof
            | std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::BrokenPipe => Some(TlsFailure::PlaintextPeer),
            _ => None,
        };
    };
    Some(classify_tls(tls, client_cert, missing))
}

/// The failure rustls' `error` stands for (see [`classify`]).
pub fn classify_tls(
    error: &rustls::Error,
    client_cert: bool,
    missing: MissingCertAlert,
) -> TlsFailure {
    match error {
        rustls::Error::InvalidCertificate(cert) => match cert {
            CertificateError::UnknownIssuer => TlsFailure::UnknownIssuer,
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                TlsFailure::NameMismatch
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                TlsFailure::Expired
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                TlsFailure::NotYetValid
            }
            _ => TlsFailure::BadCertificate,
        },
        // Bytes that are no TLS record: a plaintext peer answering in its own protocol.
        rustls::Error::InvalidMessage(_) => TlsFailure::PlaintextPeer,
        rustls::Error::AlertReceived(alert) => match alert {
            AlertDescription::CertificateRequired => TlsFailure::ClientCertRequired,
            AlertDescription::HandshakeFailure
                if !client_cert && missing == MissingCertAlert::OrHandshakeFailure =>
            {
                TlsFailure::ClientCertRequired
            }
            AlertDescription::BadCertificate
            | AlertDescription::NoCertificate
            | AlertDescription::UnsupportedCertificate
            | AlertDescription::CertificateRevoked
            | AlertDescription::CertificateExpired
            | AlertDescription::CertificateUnknown
            | AlertDescription::UnknownCA
            | AlertDescription::AccessDenied
            | AlertDescription::DecryptError => {
                if client_cert {
                    TlsFailure::ClientCertRefused
                } else {
                    TlsFailure::ClientCertRequired
                }
            }
            _ => TlsFailure::Handshake,
        },
        _ => TlsFailure::Handshake,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(error: rustls::Error) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::InvalidData, error)
    }

    #[test]
    fn each_library_error_names_its_reason() {
        use MissingCertAlert::CertificateRequired as Plain;
        let cases = [
            (
                rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer),
                TlsFailure::UnknownIssuer,
            ),
            (
                rustls::Error::InvalidCertificate(CertificateError::NotValidForName),
                TlsFailure::NameMismatch,
            ),
            (
                rustls::Error::InvalidCertificate(CertificateError::Expired),
                TlsFailure::Expired,
            ),
            (
                rustls::Error::InvalidCertificate(CertificateError::NotValidYet),
                TlsFailure::NotYetValid,
            ),
            (
                rustls::Error::InvalidCertificate(CertificateError::BadSignature),
                TlsFailure::BadCertificate,
            ),
            (
                rustls::Error::AlertReceived(AlertDescription::CertificateRequired),
                TlsFailure::ClientCertRequired,
            ),
            (
                rustls::Error::AlertReceived(AlertDescription::ProtocolVersion),
                TlsFailure::Handshake,
            ),
        ];
        for (error, failure) in cases {
            assert_eq!(classify(&io(error), false, Plain), Some(failure));
        }
        let unknown_ca = io(rustls::Error::AlertReceived(AlertDescription::UnknownCA));
        assert_eq!(
            classify(&unknown_ca, true, Plain),
            Some(TlsFailure::ClientCertRefused)
        );
        assert_eq!(
            classify(&unknown_ca, false, Plain),
            Some(TlsFailure::ClientCertRequired)
        );
    }

    #[test]
    fn handshake_failure_means_a_missing_certificate_only_where_told() {
        let alert = io(rustls::Error::AlertReceived(
            AlertDescription::HandshakeFailure,
        ));
        let java = MissingCertAlert::OrHandshakeFailure;
        assert_eq!(
            classify(&alert, false, java),
            Some(TlsFailure::ClientCertRequired)
        );
        // With a certificate shown, handshake_failure is no verdict on it.
        assert_eq!(classify(&alert, true, java), Some(TlsFailure::Handshake));
        assert_eq!(
            classify(&alert, false, MissingCertAlert::CertificateRequired),
            Some(TlsFailure::Handshake)
        );
    }

    #[test]
    fn hang_ups_are_a_plaintext_peer_and_other_io_errors_no_verdict() {
        let plain = MissingCertAlert::CertificateRequired;
        for kind in [
            std::io::ErrorKind::UnexpectedEof,
            std::io::ErrorKind::ConnectionReset,
        ] {
            assert_eq!(
                classify(&std::io::Error::from(kind), false, plain),
                Some(TlsFailure::PlaintextPeer)
            );
        }
        assert_eq!(
            classify(
                &std::io::Error::from(std::io::ErrorKind::PermissionDenied),
                false,
                plain
            ),
            None
        );
    }
}
