//! One multiplexed TCP connection to a provider: cheap cloneable handles plus a driver task.
//!
//! Like h2's `handshake`, [`Connection::connect`] returns the handle and a [`Driver`] the caller
//! spawns. Calls are multiplexed by request id: each registers a oneshot in [`pending::Pending`],
//! writes its encoded frame itself when the socket is free, or queues it for the writer task
//! ([`outbox`]), and waits until its deadline. The driver reads frames,
//! completes calls, answers the provider's heartbeats and sends ours when idle. Decoding a response
//! body happens in the calling task, so one slow decode never stalls the reader.
//!
//! The handles own the connection, as h2's `SendRequest` does: the driver holds only the shared
//! state, so when the last [`Connection`] clone is dropped the connection closes, the driver and its
//! writer end and the socket is closed. Heartbeats never keep an unused connection alive.
//!
//! The connection also ends on a close request, on EOF or an I/O error, on a malformed frame, after
//! three heartbeat periods without a byte from the provider, or when a write makes no progress for
//! the write stall deadline (the provider stopped reading). Whatever the reason, every waiting call
//! fails with a [`RpcErrorKind::Network`] error that names it, and later calls are refused. A
//! response over the payload limit fails only its own call: its body is skipped.

mod driver;
mod outbox;
mod pending;
mod secure;
mod tls_halves;

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::census::Census;
use crate::codec::{
    decode_response, encode_heartbeat, encode_request, Answer, Frame, ServiceTarget,
};
use crate::response::RpcResponse;

pub(crate) use driver::Driver;
use outbox::{Outbox, Sent};
use pending::{Pending, PendingGuard};
use secure::{BoxRead, BoxWrite};

/// The longest a write may wait for the provider to take a byte, whatever `heartbeat` says.
pub(crate) const MAX_WRITE_STALL: Duration = Duration::from_secs(15);

/// Settings fixed when a connection is opened.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectionConfig {
    /// Largest body accepted or sent, in bytes (URL `payload`).
    pub(crate) payload_limit: usize,
    /// Idle time after which we send a heartbeat (URL `heartbeat`); 3× it without input closes.
    pub(crate) heartbeat: Duration,
    /// Longest wait for the TCP connect, and the TLS handshake after it (URL `connect.timeout`).
    pub(crate) connect_timeout: Duration,
    /// The provider's URL says its port serves TLS (`ssl-enabled=true`): never sent plaintext.
    pub(crate) provider_tls: bool,
}

impl ConnectionConfig {
    /// How long a write may make no progress before the connection is closed: one heartbeat period,
    /// at most [`MAX_WRITE_STALL`]. A provider that cannot take a byte for that long is not reading.
    pub(crate) fn write_stall(&self) -> Duration {
        self.heartbeat.min(MAX_WRITE_STALL)
    }
}

#[derive(Debug)]
struct Shared {
    addr: String,
    config: ConnectionConfig,
    pending: Pending,
    next_id: AtomicI64,
    outbox: Outbox,
    shutdown: watch::Sender<bool>,
    readonly: AtomicBool,
    /// Set by the first frame received: the provider really speaks dubbo:// to us.
    answered: AtomicBool,
    started: Instant,
    /// Milliseconds after `started` of the last write, for the idle heartbeat.
    last_write_ms: AtomicU64,
}

impl Shared {
    fn close(&self, reason: &str) {
        self.pending.close(reason);
        self.outbox.close();
        self.shutdown.send_replace(true);
    }

    fn next_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Notes that bytes went out now, for the idle heartbeat.
    fn stamp_write(&self) {
        let now = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_write_ms.store(now, Ordering::Relaxed);
    }

    fn queue_heartbeat(&self, answer_to: Option<i64>) {
        let frame = match answer_to {
            Some(id) => encode_heartbeat(id, false),
            None => encode_heartbeat(self.next_id(), true),
        };
        // A full queue means traffic is flowing, which is all a heartbeat would prove.
        let _ = self.outbox.try_queue(frame);
    }
}

/// Owns the connection on behalf of every [`Connection`] clone; the last one gone closes it.
#[derive(Debug)]
struct Handle {
    shared: Arc<Shared>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        // No handle means no call can be waiting: nothing is cut.
        self.shared.close(&format!(
            "connection to {} closed: no longer used",
            self.shared.addr
        ));
    }
}

/// Handle to one connection; clones share it, and dropping the last one closes it.
#[derive(Debug, Clone)]
pub(crate) struct Connection {
    handle: Arc<Handle>,
}

impl Connection {
    /// Opens a TCP connection to `addr` (`host:port`), counted in `census`, with TLS over it when
    /// `tls` is given.
    ///
    /// # Errors
    /// A [`RpcErrorKind::Network`] error when the connect fails or takes longer than
    /// `config.connect_timeout`; a [`RpcErrorKind::Tls`] one when the handshake fails, or when the
    /// provider announces TLS and `tls` is `None`.
    pub(crate) async fn connect(
        addr: &str,
        config: ConnectionConfig,
        tls: Option<&crate::tls::TlsClient>,
        census: &Arc<Census>,
    ) -> Result<(Connection, Driver<BoxRead>), RpcError> {
        if tls.is_none() && config.provider_tls {
            return Err(crate::tls::tls_error(
                addr,
                rudder_common::error::TlsError::new(
                    rudder_common::error::TlsFailure::ProviderRequiresTls,
                ),
            ));
        }
        let deadline = Instant::now() + config.connect_timeout;
        let stream = tokio::time::timeout(config.connect_timeout, TcpStream::connect(addr))
            .await
            .map_err(|_| {
                RpcError::new(
                    RpcErrorKind::Network,
                    format!(
                        "connect to {addr} timed out after {} ms",
                        config.connect_timeout.as_millis()
                    ),
                )
            })?
            .map_err(|e| {
                RpcError::new(RpcErrorKind::Network, format!("connect to {addr} failed"))
                    .with_source(e)
            })?;
        // Dubbo sets TCP_NODELAY too: small request frames must not wait for Nagle.
        let _ = stream.set_nodelay(true);
        let (reader, writer): (BoxRead, BoxWrite) = match tls {
            Some(tls) => {
                secure::handshake(stream, addr, tls, config.payload_limit, deadline).await?
            }
            None => {
                let (reader, writer) = stream.into_split();
                (Box::new(reader), Box::new(writer))
            }
        };
        Ok(Connection::over(addr, reader, writer, config, census))
    }

    /// A connection over any byte stream (the fuzz targets use an in-memory pipe).
    pub(crate) fn over<R, W>(
        addr: &str,
        reader: R,
        writer: W,
        config: ConnectionConfig,
        census: &Arc<Census>,
    ) -> (Connection, Driver<R>)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (shutdown, shutdown_rx) = watch::channel(false);
        let shared = Arc::new(Shared {
            addr: addr.to_owned(),
            config,
            pending: Pending::default(),
            next_id: AtomicI64::new(0),
            outbox: Outbox::default(),
            shutdown,
            readonly: AtomicBool::new(false),
            answered: AtomicBool::new(false),
            started: Instant::now(),
            last_write_ms: AtomicU64::new(0),
        });
        shared.outbox.install(Box::new(writer));
        let driver = Driver::new(Arc::clone(&shared), reader, shutdown_rx, census);
        let connection = Connection {
            handle: Arc::new(Handle { shared }),
        };
        (connection, driver)
    }

    fn shared(&self) -> &Shared {
        &self.handle.shared
    }

    /// Whether the connection is closed (or closing) and will refuse calls.
    pub(crate) fn is_closed(&self) -> bool {
        *self.shared().shutdown.borrow()
    }

    /// Turns `true` when the connection closes (or errs once its state is gone).
    pub(crate) fn closed(&self) -> watch::Receiver<bool> {
        self.shared().shutdown.subscribe()
    }

    /// Whether the provider announced it is shutting down (a `R` readonly event).
    pub(crate) fn is_readonly(&self) -> bool {
        self.shared().readonly.load(Ordering::Relaxed)
    }

    /// Whether a well-formed frame ever arrived: a connection that closes before that is a failed
    /// connect as far as backoff is concerned.
    pub(crate) fn was_answered(&self) -> bool {
        self.shared().answered.load(Ordering::Relaxed)
    }

    /// Why the connection closed, once it has.
    pub(crate) fn close_reason(&self) -> Option<String> {
        self.shared().pending.close_reason()
    }

    /// Closes the connection; waiting calls fail with a network error naming `reason`.
    pub(crate) fn close(&self, reason: &str) {
        self.shared().close(&format!(
            "connection to {} closed: {reason}",
            self.shared().addr
        ));
    }

    /// Sends `invocation` and waits until `deadline` for the answer; `timeout` is the configured
    /// call timeout, sent to the provider and named in errors.
    ///
    /// # Errors
    /// `Timeout` when no answer came in time (the connection stays usable), `Network` when the
    /// connection is or gets closed, `Serialization` for a request over the payload limit or an
    /// undecodable response, and the mapped kind of a non-OK response status.
    pub(crate) async fn invoke(
        &self,
        target: &ServiceTarget<'_>,
        invocation: &Invocation,
        timeout: Duration,
        deadline: Instant,
    ) -> Result<RpcResponse, RpcError> {
        let shared = self.shared();
        let id = shared.next_id();
        let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        let frame = encode_request(
            id,
            target,
            invocation,
            timeout_ms,
            shared.config.payload_limit,
        )
        .map_err(|e| {
            RpcError::new(
                RpcErrorKind::Serialization,
                format!("request to {} not sent", shared.addr),
            )
            .with_source(e)
        })?;
        let answer = tokio::time::timeout_at(deadline, self.round_trip(id, frame))
            .await
            .map_err(|_| {
                RpcError::new(
                    RpcErrorKind::Timeout,
                    format!(
                        "no answer from {} in {timeout_ms} ms (method {}, request {id})",
                        shared.addr,
                        invocation.method_name()
                    ),
                )
            })??;
        match decode_response(&answer.header, &answer.body) {
            Ok(Answer::Ok(response)) => Ok(response),
            // The message says where; the status answer, the source, says what.
            Ok(Answer::Status(status)) => Err(RpcError::new(
                status.status().error_kind(status.message()),
                shared.addr.clone(),
            )
            .with_source(status)),
            Err(e) => Err(RpcError::new(
                RpcErrorKind::Serialization,
                format!("response {id} from {} unreadable", shared.addr),
            )
            .with_source(e)),
        }
    }

    async fn round_trip(&self, id: i64, frame: Bytes) -> Result<Frame, RpcError> {
        let shared = self.shared();
        let rx = shared.pending.register(id)?;
        let _guard = PendingGuard {
            pending: &shared.pending,
            id,
        };
        if shared.outbox.send(frame, || shared.stamp_write()).await == Sent::Closed {
            return Err(self.closed_error());
        }
        match rx.await {
            Ok(delivery) => delivery,
            Err(_) => Err(self.closed_error()),
        }
    }

    fn closed_error(&self) -> RpcError {
        let reason = self
            .close_reason()
            .unwrap_or_else(|| format!("connection to {} closed", self.shared().addr));
        RpcError::new(RpcErrorKind::Network, reason)
    }
}
