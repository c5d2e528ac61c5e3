//! TLS failures as [`RpcError`]s of kind `Tls`, each with the [`TlsFailure`] a user can act on.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rudder_common::error::{RpcError, RpcErrorKind, TlsError, TlsFailure};
use rudder_common::tls_classify::{self, MissingCertAlert};
use rustls::AlertDescription;

/// The error of a failed handshake with `addr` (or of the first read after it, where TLS 1.3
/// providers refuse a client certificate); `client_cert` says whether we showed one.
pub fn handshake_error(addr: &str, error: std::io::Error, client_cert: bool) -> RpcError {
    let failure = classify(&error, client_cert);
    tls_error(addr, TlsError::new(failure).with_cause(error))
}

/// An error of kind `Tls` about the provider at `addr`: "TLS with 10.0.0.1:20880", caused by `tls`.
pub fn tls_error(addr: &str, tls: TlsError) -> RpcError {
    record(tls.failure());
    RpcError::new(RpcErrorKind::Tls, format!("TLS with {addr}")).with_source(tls)
}

pub(crate) fn timed_out(addr: &str, timeout: Duration) -> RpcError {
    record(TlsFailure::HandshakeTimeout);
    RpcError::new(
        RpcErrorKind::Tls,
        format!(
            "TLS with {addr} (no handshake in {} ms)",
            timeout.as_millis()
        ),
    )
    .with_source(TlsError::new(TlsFailure::HandshakeTimeout))
}

/// What an I/O error from a TLS stream means for the user. Providers' TLS stacks differ, so only
/// `certificate_required` (and the certificate alerts) say a client certificate was missing.
pub(crate) fn classify(error: &std::io::Error, client_cert: bool) -> TlsFailure {
    tls_classify::classify(error, client_cert, MissingCertAlert::CertificateRequired)
        .unwrap_or(TlsFailure::Handshake)
}

fn classify_tls(tls: &rustls::Error, client_cert: bool) -> TlsFailure {
    tls_classify::classify_tls(tls, client_cert, MissingCertAlert::CertificateRequired)
}

/// The TLS failure somewhere in `error`'s chain, if any: an [`RpcError`] that carries one (a failed
/// connect under a client library's own error), or a TLS library error (an alert read after the
/// handshake). `client_cert` says whether we showed a client certificate.
///
/// ```
/// use rudder_common::error::{RpcErrorKind, TlsError, TlsFailure};
/// let connect = rudder_rpc::tls::tls_error("10.0.0.1:50051", TlsError::new(TlsFailure::Expired));
/// let wrapped = std::io::Error::other(connect);
/// assert_eq!(rudder_rpc::tls::tls_failure_in(&wrapped, false), Some(TlsFailure::Expired));
/// ```
pub fn tls_failure_in(
    error: &(dyn std::error::Error + 'static),
    client_cert: bool,
) -> Option<TlsFailure> {
    let mut link = Some(error);
    while let Some(e) = link {
        if let Some(rpc) = e.downcast_ref::<RpcError>() {
            if let Some(failure) = rpc.tls_failure() {
                return Some(failure);
            }
        }
        if let Some(tls) = e.downcast_ref::<TlsError>() {
            return Some(tls.failure());
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            if io
                .get_ref()
                .is_some_and(|inner| inner.is::<rustls::Error>())
            {
                return Some(classify(io, client_cert));
            }
        }
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return Some(classify_tls(tls, client_cert));
        }
        // HTTP/2 stacks keep only the text of the I/O error a TLS alert became.
        if let Some(failure) = alert_in_text(&e.to_string(), client_cert) {
            return Some(failure);
        }
        link = e.source();
    }
    None
}

/// rustls' "received fatal alert: BadCertificate", read back from text.
fn alert_in_text(text: &str, client_cert: bool) -> Option<TlsFailure> {
    let (_, name) = text.split_once("received fatal alert: ")?;
    let name = name.split(|c: char| !c.is_ascii_alphanumeric()).next()?;
    let alert = [
        AlertDescription::CertificateRequired,
        AlertDescription::BadCertificate,
        AlertDescription::NoCertificate,
        AlertDescription::UnsupportedCertificate,
        AlertDescription::CertificateRevoked,
        AlertDescription::CertificateExpired,
        AlertDescription::CertificateUnknown,
        AlertDescription::UnknownCA,
        AlertDescription::AccessDenied,
        AlertDescription::DecryptError,
        AlertDescription::HandshakeFailure,
    ]
    .into_iter()
    .find(|a| format!("{a:?}") == name)?;
    Some(classify_tls(
        &rustls::Error::AlertReceived(alert),
        client_cert,
    ))
}

/// Every [`TlsFailure`], in the order [`failure_counts`] reports them.
const ALL: [TlsFailure; 11] = [
    TlsFailure::UnknownIssuer,
    TlsFailure::NameMismatch,
    TlsFailure::Expired,
    TlsFailure::NotYetValid,
    TlsFailure::BadCertificate,
    TlsFailure::ClientCertRequired,
    TlsFailure::ClientCertRefused,
    TlsFailure::PlaintextPeer,
    TlsFailure::ProviderRequiresTls,
    TlsFailure::HandshakeTimeout,
    TlsFailure::Handshake,
];

static COUNTS: [AtomicU64; ALL.len()] = [const { AtomicU64::new(0) }; ALL.len()];

/// Counts one failed TLS connect (or call) in the process-wide [`failure_counts`].
pub fn record(failure: TlsFailure) {
    if let Some(i) = ALL.iter().position(|f| *f == failure) {
        COUNTS[i].fetch_add(1, Ordering::Relaxed);
    }
}

/// TLS failures so far in this process, by reason (every reason, zeros included): the metric
/// `rudder_tls_failures_total{reason}`. Failed connects count, not the calls a backing-off provider
/// refuses meanwhile.
///
/// ```
/// use rudder_common::error::TlsFailure;
/// let before = rudder_rpc::tls::failure_counts();
/// rudder_rpc::tls::record(TlsFailure::Expired);
/// let after = rudder_rpc::tls::failure_counts();
/// let expired = |counts: &[(TlsFailure, u64)]| counts.iter().find(|(f, _)| *f == TlsFailure::Expired).unwrap().1;
/// assert_eq!(expired(&after), expired(&before) + 1);
/// ```
pub fn failure_counts() -> Vec<(TlsFailure, u64)> {
    ALL.iter()
        .zip(&COUNTS)
        .map(|(failure, count)| (*failure, count.load(Ordering::Relaxed)))
        .collect()
}
