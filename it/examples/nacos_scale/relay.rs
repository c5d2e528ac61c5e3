//! A loopback relay between rudder and rnacos that notes when bytes pass, so that a change's time
//! can be split between the server and rudder without instrumenting rudder: bytes the relay has
//! written to rudder's socket are rudder's from then on.
//!
//! It listens on a port P (HTTP) and P + 1000 (gRPC, where Nacos 2.x clients look for it) and
//! forwards each connection to rnacos's matching port. Every read is logged after it was written
//! on: connection, direction, bytes, time.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One forwarded read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Chunk {
    /// The connection (numbered as accepted).
    pub(crate) conn: usize,
    /// From rnacos to rudder.
    pub(crate) to_client: bool,
    pub(crate) bytes: usize,
    /// When it had been written on.
    pub(crate) at: Instant,
}

pub(crate) struct Relay {
    port: u16,
    log: Arc<Mutex<Vec<Chunk>>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Relay {
    /// A relay in front of the rnacos whose HTTP port is `upstream` (gRPC: `upstream + 1000`).
    pub(crate) async fn start(upstream: u16) -> Relay {
        let (http, grpc) = loop {
            let http = TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let port = http.local_addr().expect("address").port();
            let Some(grpc_port) = port.checked_add(1000) else {
                continue;
            };
            if let Ok(grpc) = TcpListener::bind(("127.0.0.1", grpc_port)).await {
                break (http, grpc);
            }
        };
        let port = http.local_addr().expect("address").port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let tasks = [(http, upstream), (grpc, upstream + 1000)]
            .into_iter()
            .map(|(listener, to)| {
                let (log, next) = (Arc::clone(&log), Arc::clone(&next));
                tokio::spawn(async move {
                    while let Ok((client, _)) = listener.accept().await {
                        let conn = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let log = Arc::clone(&log);
                        tokio::spawn(forward(client, to, conn, log));
                    }
                })
            })
            .collect();
        Relay { port, log, tasks }
    }

    /// `nacos://127.0.0.1:P`.
    pub(crate) fn url(&self) -> String {
        format!("nacos://127.0.0.1:{}", self.port)
    }

    /// The chunks logged after `from` and up to `to`.
    pub(crate) fn between(&self, from: Instant, to: Instant) -> Vec<Chunk> {
        let log = self.log.lock().expect("log");
        log.iter()
            .filter(|c| c.at > from && c.at <= to)
            .copied()
            .collect()
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

async fn forward(client: TcpStream, to: u16, conn: usize, log: Arc<Mutex<Vec<Chunk>>>) {
    let Ok(server) = TcpStream::connect(("127.0.0.1", to)).await else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    let up = pump(client_read, server_write, conn, false, Arc::clone(&log));
    let down = pump(server_read, client_write, conn, true, log);
    tokio::join!(up, down);
}

async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    conn: usize,
    to_client: bool,
    log: Arc<Mutex<Vec<Chunk>>>,
) {
    let mut buffer = vec![0u8; 256 * 1024];
    loop {
        let n = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if to.write_all(&buffer[..n]).await.is_err() {
            break;
        }
        log.lock().expect("log").push(Chunk {
            conn,
            to_client,
            bytes: n,
            at: Instant::now(),
        });
    }
    let _ = to.shutdown().await;
}

/// A run of rnacos→rudder bytes on one connection: a list rnacos sent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Burst {
    pub(crate) conn: usize,
    /// When its first and its last chunk had been written to rudder.
    pub(crate) first: Instant,
    pub(crate) last: Instant,
    pub(crate) bytes: usize,
}

/// The largest run of rnacos→rudder bytes on one connection among `chunks`, runs split where
/// nothing came for `gap`.
pub(crate) fn largest_burst(chunks: &[Chunk], gap: Duration) -> Option<Burst> {
    let mut best: Option<Burst> = None;
    let mut keep = |run: Option<Burst>| {
        if let Some(run) = run {
            if best.is_none_or(|b| run.bytes > b.bytes) {
                best = Some(run);
            }
        }
    };
    let mut conns: Vec<usize> = chunks.iter().map(|c| c.conn).collect();
    conns.sort_unstable();
    conns.dedup();
    for conn in conns {
        let mut run: Option<Burst> = None;
        for c in chunks.iter().filter(|c| c.conn == conn && c.to_client) {
            match &mut run {
                Some(r) if c.at.duration_since(r.last) <= gap => {
                    r.last = c.at;
                    r.bytes += c.bytes;
                }
                _ => {
                    keep(run);
                    run = Some(Burst {
                        conn,
                        first: c.at,
                        last: c.at,
                        bytes: c.bytes,
                    });
                }
            }
        }
        keep(run);
    }
    best
}

/// When rudder last wrote to rnacos on `burst`'s connection before the burst began: the request
/// it answers.
pub(crate) fn request_before(chunks: &[Chunk], burst: &Burst) -> Option<Instant> {
    chunks
        .iter()
        .filter(|c| c.conn == burst.conn && !c.to_client && c.at < burst.first)
        .map(|c| c.at)
        .max()
}
