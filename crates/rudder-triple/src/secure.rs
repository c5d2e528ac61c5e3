//! TLS under tri:// connections: tonic's `Channel` over rudder's own rustls handshake (the same
//! [`TlsClient`] as dubbo://, so both protocols trust, show, reload and classify alike), with ALPN
//! `h2`, which a Java provider's port needs to pick HTTP/2.
//!
//! tonic's own `tls-ring` feature would do the handshake too, but fixes the certificates when the
//! endpoint is built (no reload for the reconnects it makes by itself) and reports every failure as
//! "transport error"; a connector of ours keeps both.

use std::time::Duration;

use hyper_util::rt::TokioIo;
use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_rpc::tls::{tls_failure_in, TlsClient};
use tokio::net::TcpStream;
use tonic::transport::{Channel, Endpoint};

/// Connects `endpoint` (made for `https://{addr}`, with no connect timeout of tonic's: ours says
/// which step stalled) with TCP then TLS, both within `connect_timeout`, each new connection (tonic's
/// reconnects too) re-checking the TLS files.
pub(crate) async fn connect(
    endpoint: Endpoint,
    addr: &str,
    tls: &TlsClient,
    connect_timeout: Duration,
) -> Result<Channel, RpcError> {
    let (client, target) = (tls.clone(), addr.to_owned());
    let connector = tower::service_fn(move |_: http::Uri| {
        let (tls, target) = (client.clone(), target.clone());
        async move {
            let deadline = tokio::time::Instant::now() + connect_timeout;
            let tcp = tokio::time::timeout_at(deadline, TcpStream::connect(&target))
                .await
                .map_err(|_| {
                    RpcError::new(
                        RpcErrorKind::Network,
                        format!(
                            "connect to {target} timed out after {} ms",
                            connect_timeout.as_millis()
                        ),
                    )
                })?
                .map_err(|e| {
                    RpcError::new(RpcErrorKind::Network, format!("connect to {target} failed"))
                        .with_source(e)
                })?;
            let _ = tcp.set_nodelay(true);
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let stream = tls.connect(tcp, &target, true, left).await?;
            Ok::<_, RpcError>(TokioIo::new(stream))
        }
    });
    endpoint
        .connect_with_connector(connector)
        .await
        .map_err(|e| connect_error(addr, &e, tls))
}

/// A failed connect: the TLS failure when it was one (kind `Tls`, its sub-kind kept), else a network
/// failure; one line either way.
fn connect_error(addr: &str, error: &tonic::transport::Error, tls: &TlsClient) -> RpcError {
    let text = chain_text(error);
    match tls_failure_in(error, tls.has_client_cert()) {
        // Our own TLS error is in tonic's chain: its reason is said once, by the `TlsError`, with what
        // lies under it (the TLS library's words) as its cause.
        Some(failure) => {
            let detail = below_tls_error(error).unwrap_or(text);
            RpcError::new(RpcErrorKind::Tls, format!("cannot connect to tri://{addr}")).with_source(
                rudder_common::error::TlsError::new(failure)
                    .with_cause(std::io::Error::other(detail)),
            )
        }
        None => RpcError::new(
            RpcErrorKind::Network,
            format!("cannot connect to tri://{addr}: {text}"),
        ),
    }
}

/// The text of the causes under the first `TlsError` in `error`'s chain, if there is one.
fn below_tls_error(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut link = Some(error);
    while let Some(e) = link {
        link = e.source();
        if e.is::<rudder_common::error::TlsError>() {
            let mut parts = Vec::new();
            while let Some(cause) = link {
                parts.push(cause.to_string());
                link = cause.source();
            }
            return Some(parts.join(": "));
        }
    }
    None
}

/// A call that failed because TLS did (a TLS 1.3 provider refusing our client certificate after the
/// handshake, on the first read): an error of kind `Tls` in place of the status's `UNAVAILABLE`.
pub(crate) fn call_failure(
    status: &tonic::Status,
    addr: &str,
    tls: Option<&TlsClient>,
) -> Option<RpcError> {
    let tls = tls?;
    let failure = tls_failure_in(status, tls.has_client_cert()).or_else(|| {
        // Closed without a TLS word by a provider that asked for the certificate we do not have.
        (tls.provider_asked_for_cert(addr)
            && matches!(
                status.code(),
                tonic::Code::Unavailable | tonic::Code::Cancelled | tonic::Code::Unknown
            ))
        .then_some(rudder_common::error::TlsFailure::ClientCertRequired)
    })?;
    rudder_rpc::tls::record(failure);
    Some(
        RpcError::new(
            RpcErrorKind::Tls,
            format!("TLS with tri://{addr}: {}", chain_text(status)),
        )
        .with_source(rudder_common::error::TlsError::new(failure)),
    )
}

/// An error and its causes, one line (tonic's transport error alone says only "transport error").
fn chain_text(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(link) = cause {
        text.push_str(": ");
        text.push_str(&link.to_string());
        cause = link.source();
    }
    text
}
