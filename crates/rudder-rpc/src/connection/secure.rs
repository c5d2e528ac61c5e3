//! TLS under a dubbo:// connection: the handshake, then one heartbeat answered before the
//! connection is handed out.
//!
//! The heartbeat is what makes a TLS failure a connect failure with a reason. Under TLS 1.3 the
//! client's side of the handshake ends before the provider has looked at our certificate, so a
//! provider that requires one (and gets none, or one it does not trust) refuses it with an alert on
//! the first read. Waiting for the answer to a heartbeat sent at once turns that into
//! `ClientCertRequired` / `ClientCertRefused` at connect time, instead of the first call failing
//! with "closed before any answer"; it also proves the provider speaks dubbo:// inside the TLS
//! session. It costs one round trip per connection, never per call.

use bytes::BytesMut;
use rudder_common::error::{RpcError, RpcErrorKind, TlsError, TlsFailure};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::codec::{encode_heartbeat, FrameDecoder};
use crate::tls::{handshake_error, tls_error, TlsClient};

/// Whether `io` carries the TLS library's own error (which says more than a bare close).
fn is_tls(io: &std::io::Error) -> bool {
    io.get_ref()
        .is_some_and(|inner| inner.is::<rustls::Error>())
}

/// The request id of the probe (the connection's own ids start at 0 and count up).
const PROBE_ID: i64 = i64::MAX;

/// One half of a connection's byte stream, whatever it runs over.
pub(crate) type BoxRead = Box<dyn AsyncRead + Send + Unpin>;
/// The other half.
pub(crate) type BoxWrite = Box<dyn AsyncWrite + Send + Unpin>;

/// Runs the TLS handshake with `addr` over `tcp` and waits for a heartbeat's answer, all before
/// `deadline` (the connect deadline); returns the two halves of the TLS stream.
pub(crate) async fn handshake(
    tcp: TcpStream,
    addr: &str,
    tls: &TlsClient,
    payload_limit: usize,
    deadline: Instant,
) -> Result<(BoxRead, BoxWrite), RpcError> {
    let timeout = deadline.saturating_duration_since(Instant::now());
    let mut stream = tls.connect(tcp, addr, false, timeout).await?;
    let probe = async {
        stream.write_all(&encode_heartbeat(PROBE_ID, true)).await?;
        stream.flush().await?;
        let mut buf = BytesMut::with_capacity(1024);
        let mut decoder = FrameDecoder::new(payload_limit);
        loop {
            if stream.read_buf(&mut buf).await? == 0 {
                return Ok(Err(TlsFailure::Handshake));
            }
            match decoder.decode(&mut buf) {
                Ok(Some(_)) => return Ok(Ok(buf)),
                Ok(None) => {}
                Err(_) => return Ok(Err(TlsFailure::PlaintextPeer)),
            }
        }
    };
    let left = deadline.saturating_duration_since(Instant::now());
    let rest = match tokio::time::timeout(left, probe).await {
        Ok(Ok(Ok(rest))) => rest,
        Ok(Ok(Err(TlsFailure::PlaintextPeer))) => {
            return Err(RpcError::new(
                RpcErrorKind::Network,
                format!("{addr} answered inside TLS, but not in dubbo:// frames"),
            ))
        }
        Ok(Ok(Err(failure))) => {
            let failure = if tls.provider_asked_for_cert(addr) {
                TlsFailure::ClientCertRequired
            } else {
                failure
            };
            return Err(tls_error(
                addr,
                TlsError::new(failure).with_cause(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the provider closed the TLS session before answering a heartbeat",
                )),
            ));
        }
        Ok(Err(io)) if tls.provider_asked_for_cert(addr) && !is_tls(&io) => {
            return Err(tls_error(
                addr,
                TlsError::new(TlsFailure::ClientCertRequired).with_cause(io),
            ))
        }
        Ok(Err(io)) => return Err(handshake_error(addr, io, tls.has_client_cert())),
        Err(_) => {
            crate::tls::record(TlsFailure::HandshakeTimeout);
            return Err(RpcError::new(
                RpcErrorKind::Tls,
                format!(
                    "TLS with {addr}: no answer to a heartbeat within connect.timeout after the handshake"
                ),
            )
            .with_source(TlsError::new(TlsFailure::HandshakeTimeout)));
        }
    };
    // Each half gets its side of the socket; they share only rustls' state (see `tls_halves`).
    let (tcp, session) = stream.into_inner();
    let (reader, writer) = tcp.into_split();
    let (reader, writer) = super::tls_halves::split(reader, writer, session);
    // Bytes after the heartbeat's answer belong to the driver: they are read first.
    let reader = std::io::Cursor::new(rest.freeze()).chain(reader);
    Ok((Box::new(reader), Box::new(writer)))
}
