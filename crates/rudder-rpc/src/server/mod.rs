//! A minimal dubbo:// provider, for tests, demos and benchmarks (not a production server).
//!
//! It binds `127.0.0.1`, decodes requests (direct and generic `$invoke`), runs each on its own tokio
//! task through a [`Handler`] (so a slow handler never blocks other calls), and writes the answer
//! the way Java's `DubboCodec` does: kind flags 3/4/5 with a `dubbo=2.0.2` attachment when the
//! caller sent dubbo version 2.0.2..2.0.99, 0/1/2 otherwise. It answers heartbeats, replies status 40
//! to undecodable requests and status 50 when an answer is over its payload limit, and closes a
//! connection that sends a malformed frame. It serves every service and version: the handler sees
//! the `path`, `interface`, `version` and `group` attachments and decides.
//!
//! # Examples
//!
//! ```
//! use rudder_common::{invocation::Invocation, Value};
//! use rudder_common::value::JavaException;
//! use rudder_rpc::server::DubboServer;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let server = DubboServer::bind(0, |call: Invocation| async move {
//!     match call.method_name() {
//!         "sayHello" => Ok(Value::from("Hello")),
//!         other => Err(JavaException {
//!             class: "java.lang.UnsupportedOperationException".into(),
//!             message: Some(format!("no method {other}")),
//!             cause: None,
//!         }),
//!     }
//! })
//! .await?;
//! assert!(server.local_addr().ip().is_loopback());
//! server.shutdown().await;
//! # Ok(())
//! # }
//! ```

mod session;
mod tls;

pub use tls::ServerTls;

use std::future::Future;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;

use rudder_common::invocation::Invocation;
use rudder_common::value::{JavaException, Value};
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

use crate::codec::DEFAULT_PAYLOAD_LIMIT;

/// How long a TLS server waits for a consumer's handshake before dropping the connection.
const HANDSHAKE_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// A boxed, sendable future, as [`Handler::call`] returns.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// What the server runs for each request: the value to return, or the business exception to throw.
///
/// Any `Fn(Invocation) -> impl Future<Output = Result<Value, JavaException>>` closure is a handler.
pub trait Handler: Send + Sync + 'static {
    /// Handles one call.
    fn call(&self, invocation: Invocation) -> BoxFuture<Result<Value, JavaException>>;
}

impl<F, Fut> Handler for F
where
    F: Fn(Invocation) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, JavaException>> + Send + 'static,
{
    fn call(&self, invocation: Invocation) -> BoxFuture<Result<Value, JavaException>> {
        Box::pin(self(invocation))
    }
}

/// Server settings.
///
/// ```
/// use rudder_rpc::server::ServerConfig;
/// let config = ServerConfig::new(0).with_payload_limit(1 << 20);
/// assert_eq!(config.payload_limit(), 1 << 20);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ServerConfig {
    port: u16,
    payload_limit: usize,
}

impl ServerConfig {
    /// Listen on `127.0.0.1:port` (0 picks a free port); 8 MiB payload limit.
    pub fn new(port: u16) -> ServerConfig {
        ServerConfig {
            port,
            payload_limit: DEFAULT_PAYLOAD_LIMIT,
        }
    }

    /// Largest body accepted or answered, in bytes.
    pub fn with_payload_limit(mut self, limit: usize) -> ServerConfig {
        self.payload_limit = limit;
        self
    }

    /// The payload limit.
    pub fn payload_limit(&self) -> usize {
        self.payload_limit
    }
}

/// Counters a test can wait on.
#[derive(Debug)]
pub(crate) struct ServerStats {
    heartbeats: watch::Sender<u64>,
    /// Connections accepted and not yet closed.
    open: watch::Sender<usize>,
    /// Connections accepted since the start.
    accepted: watch::Sender<u64>,
}

impl ServerStats {
    pub(crate) fn heartbeat_received(&self) {
        self.heartbeats.send_modify(|n| *n += 1);
    }

    /// Counts an accepted connection as open until the returned guard is dropped.
    pub(crate) fn connection_opened(self: &Arc<ServerStats>) -> OpenConnection {
        self.accepted.send_modify(|n| *n += 1);
        self.open.send_modify(|n| *n += 1);
        OpenConnection(Arc::clone(self))
    }
}

/// One accepted connection, counted in [`ServerStats`] while it lives.
#[derive(Debug)]
pub(crate) struct OpenConnection(Arc<ServerStats>);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.open.send_modify(|n| *n -= 1);
    }
}

/// A running server; [`DubboServer::shutdown`] stops it.
#[derive(Debug)]
pub struct DubboServer {
    local_addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    accept_task: JoinHandle<()>,
    stats: Arc<ServerStats>,
}

impl DubboServer {
    /// Starts serving `handler` on `127.0.0.1:port` with default settings.
    ///
    /// # Errors
    /// The bind error (e.g. the port is taken).
    pub async fn bind(port: u16, handler: impl Handler) -> io::Result<DubboServer> {
        DubboServer::bind_with(ServerConfig::new(port), handler).await
    }

    /// Starts serving `handler` with `config`.
    ///
    /// # Errors
    /// The bind error (e.g. the port is taken).
    pub async fn bind_with(config: ServerConfig, handler: impl Handler) -> io::Result<DubboServer> {
        DubboServer::start(config, None, handler).await
    }

    /// Starts serving `handler` with `config` over TLS only: every connection begins with a TLS
    /// handshake (one that does not end within 10 s is dropped); a plaintext consumer is refused.
    ///
    /// # Errors
    /// The bind error (e.g. the port is taken).
    pub async fn bind_tls(
        config: ServerConfig,
        tls: ServerTls,
        handler: impl Handler,
    ) -> io::Result<DubboServer> {
        DubboServer::start(config, Some(tls), handler).await
    }

    async fn start(
        config: ServerConfig,
        tls: Option<ServerTls>,
        handler: impl Handler,
    ) -> io::Result<DubboServer> {
        let socket = TcpSocket::new_v4()?;
        // A restarted test server must be able to take its old port back at once.
        socket.set_reuseaddr(true)?;
        socket.bind(SocketAddr::from((Ipv4Addr::LOCALHOST, config.port)))?;
        let listener = socket.listen(1024)?;
        let local_addr = listener.local_addr()?;
        let (shutdown, shutdown_rx) = watch::channel(false);
        let stats = Arc::new(ServerStats {
            heartbeats: watch::channel(0).0,
            open: watch::channel(0).0,
            accepted: watch::channel(0).0,
        });
        let accept_task = tokio::spawn(accept_loop(
            listener,
            tls,
            Arc::new(handler),
            config,
            Arc::clone(&stats),
            shutdown_rx,
        ));
        Ok(DubboServer {
            local_addr,
            shutdown,
            accept_task,
            stats,
        })
    }

    /// The address actually bound (with the real port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Heartbeat requests received so far, from all connections.
    pub fn heartbeats_received(&self) -> u64 {
        *self.stats.heartbeats.borrow()
    }

    /// Waits until at least `n` heartbeat requests have been received.
    pub async fn wait_for_heartbeats(&self, n: u64) {
        let mut rx = self.stats.heartbeats.subscribe();
        let _ = rx.wait_for(|count| *count >= n).await;
    }

    /// Connections accepted and still open (the consumer has not closed them, nor the server).
    pub fn open_connections(&self) -> usize {
        *self.stats.open.borrow()
    }

    /// Connections accepted since the server started.
    pub fn accepted_connections(&self) -> u64 {
        *self.stats.accepted.borrow()
    }

    /// Waits until exactly `n` connections are open, e.g. 0 once every consumer hung up.
    pub async fn wait_for_open_connections(&self, n: usize) {
        let mut rx = self.stats.open.subscribe();
        let _ = rx.wait_for(|open| *open == n).await;
    }

    /// Stops accepting, drops every connection (calls in flight get no answer) and waits until
    /// all of it is gone.
    pub async fn shutdown(self) {
        self.shutdown.send_replace(true);
        let _ = self.accept_task.await;
    }
}

async fn accept_loop(
    listener: TcpListener,
    tls: Option<ServerTls>,
    handler: Arc<dyn Handler>,
    config: ServerConfig,
    stats: Arc<ServerStats>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut sessions = JoinSet::new();
    loop {
        tokio::select! {
            _ = shutdown.wait_for(|stop| *stop) => break,
            // Reap finished sessions so the set does not grow with every past connection.
            Some(_) = sessions.join_next(), if !sessions.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    let open = stats.connection_opened();
                    let (handler, stats) = (Arc::clone(&handler), Arc::clone(&stats));
                    match &tls {
                        None => {
                            let (reader, writer) = stream.into_split();
                            sessions.spawn(session::serve(reader, writer, peer, handler, config, stats, open));
                        }
                        Some(tls) => {
                            let acceptor = tls.acceptor.clone();
                            sessions.spawn(async move {
                                let accepted = tokio::time::timeout(HANDSHAKE_WITHIN, acceptor.accept(stream)).await;
                                match accepted {
                                    Ok(Ok(stream)) => {
                                        let (reader, writer) = tokio::io::split(stream);
                                        session::serve(reader, writer, peer, handler, config, stats, open).await;
                                    }
                                    Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                                    Err(_) => tracing::debug!(%peer, "no TLS handshake in time"),
                                }
                            });
                        }
                    }
                }
                Err(e) => tracing::warn!(error = %e, "accept failed"),
            },
        }
    }
    drop(listener);
    sessions.shutdown().await;
}
