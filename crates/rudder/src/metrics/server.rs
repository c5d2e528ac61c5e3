//! A tiny HTTP/1.1 responder for Prometheus scrapes: `GET /metrics` answers the exposition, anything
//! else 404. No HTTP library: one request per connection, a bounded request head, a bounded number of
//! connections, and every task owned by the [`MetricsServer`] handle.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::{JoinHandle, JoinSet};

use super::Metrics;

/// The most a request head (request line and headers) may take; scrapers send a few hundred bytes.
pub(crate) const MAX_REQUEST_BYTES: usize = 8 * 1024;
/// Connections served at once; further ones are closed unanswered until one ends.
pub(crate) const MAX_CONNECTIONS: usize = 16;
/// How long a client may take to send its request and read the answer.
pub(crate) const IO_TIMEOUT: Duration = Duration::from_secs(10);
/// What is read and dropped after refusing an oversized request, and for how long at most.
const MAX_DRAIN_BYTES: usize = 64 * 1024;
const DRAIN_TIMEOUT: Duration = Duration::from_secs(1);
/// The OpenMetrics text format, which Prometheus negotiates and reads.
pub(crate) const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The metrics endpoint of one consumer, serving until dropped or shut down.
///
/// ```
/// use rudder::metrics::MetricsConfig;
/// use rudder::Consumer;
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let consumer = Consumer::builder().metrics(MetricsConfig::default()).build();
/// let server = consumer.metrics().unwrap().serve("127.0.0.1:0".parse().unwrap()).await?;
/// let mut scrape = tokio::net::TcpStream::connect(server.local_addr()).await?;
/// scrape.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").await?;
/// let mut answer = String::new();
/// scrape.read_to_string(&mut answer).await?;
/// assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"));
/// assert!(answer.ends_with("# EOF\n"));
/// server.shutdown().await;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct MetricsServer {
    local_addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl MetricsServer {
    pub(crate) async fn bind(metrics: Metrics, addr: SocketAddr) -> io::Result<MetricsServer> {
        let listener = TcpListener::bind(addr).await?;
        let local_addr = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(accept_loop(listener, metrics, stopped));
        Ok(MetricsServer {
            local_addr,
            stop: Some(stop),
            task,
        })
    }

    /// The address it listens on (the port chosen when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops accepting, ends the connections being served, and waits until all of it is closed.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.task).await;
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        // Aborting the accept loop drops its listener and its `JoinSet`, which aborts every connection.
        self.task.abort();
    }
}

async fn accept_loop(listener: TcpListener, metrics: Metrics, mut stopped: oneshot::Receiver<()>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) if connections.len() < MAX_CONNECTIONS => {
                    let metrics = metrics.clone();
                    connections.spawn(async move {
                        if let Err(error) = respond(stream, &metrics).await {
                            tracing::debug!(%error, "metrics: scrape connection failed");
                        }
                    });
                }
                Ok((stream, peer)) => {
                    tracing::warn!(%peer, "metrics: too many scrapes at once, closing a connection");
                    drop(stream);
                }
                Err(error) => {
                    // Out of file descriptors and the like: pause instead of spinning on the error.
                    tracing::warn!(%error, "metrics: accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
        }
    }
}

/// Reads one request head and answers it.
async fn respond(mut stream: TcpStream, metrics: &Metrics) -> io::Result<()> {
    let head = tokio::time::timeout(IO_TIMEOUT, read_head(&mut stream))
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "request not received in time"))??;
    let too_large = matches!(head, Head::TooLarge);
    let answer = match head {
        Head::TooLarge => answer(
            "431 Request Header Fields Too Large",
            "text/plain",
            "request too large\n",
        ),
        Head::Complete(head) => match route(&head) {
            Route::Metrics => answer("200 OK", CONTENT_TYPE, &metrics.encode()),
            Route::NotFound => answer(
                "404 Not Found",
                "text/plain",
                "not found; try GET /metrics\n",
            ),
        },
    };
    tokio::time::timeout(IO_TIMEOUT, async {
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await
    })
    .await
    .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "answer not taken in time"))??;
    if too_large {
        // Closing with unread input resets the connection, and the client may lose the answer:
        // read a bounded amount of what it still sends first.
        let _ = tokio::time::timeout(DRAIN_TIMEOUT, drain(&mut stream)).await;
    }
    Ok(())
}

/// Reads and discards at most [`MAX_DRAIN_BYTES`], until the client closes its side.
async fn drain(stream: &mut TcpStream) -> io::Result<()> {
    let mut chunk = [0u8; 4096];
    let mut drained = 0;
    while drained < MAX_DRAIN_BYTES {
        match stream.read(&mut chunk).await? {
            0 => break,
            read => drained += read,
        }
    }
    Ok(())
}

enum Head {
    Complete(Vec<u8>),
    TooLarge,
}

/// Reads until the blank line ending the head, at most [`MAX_REQUEST_BYTES`].
async fn read_head(stream: &mut TcpStream) -> io::Result<Head> {
    let mut head = Vec::with_capacity(512);
    let mut chunk = [0u8; 1024];
    loop {
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            // The client closed early; answer what arrived (a bare request line is fine).
            return Ok(Head::Complete(head));
        }
        head.extend_from_slice(&chunk[..read]);
        if head.windows(4).any(|w| w == b"\r\n\r\n") {
            return Ok(Head::Complete(head));
        }
        if head.len() > MAX_REQUEST_BYTES {
            return Ok(Head::TooLarge);
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Route {
    Metrics,
    NotFound,
}

fn route(head: &[u8]) -> Route {
    let line = head
        .split(|&b| b == b'\r' || b == b'\n')
        .next()
        .unwrap_or(&[]);
    let mut parts = line.split(|&b| b == b' ');
    let (method, target) = (parts.next(), parts.next());
    let path = target.map(|t| t.split(|&b| b == b'?').next().unwrap_or(t));
    match (method, path) {
        (Some(b"GET"), Some(b"/metrics")) => Route::Metrics,
        _ => Route::NotFound,
    }
}

fn answer(status: &str, content_type: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_get_of_the_metrics_path_is_routed_to_the_exposition() {
        assert_eq!(route(b"GET /metrics HTTP/1.1\r\n\r\n"), Route::Metrics);
        assert_eq!(route(b"GET /metrics?x=1 HTTP/1.0\r\n\r\n"), Route::Metrics);
        assert_eq!(route(b"POST /metrics HTTP/1.1\r\n\r\n"), Route::NotFound);
        assert_eq!(route(b"GET /metricsx HTTP/1.1\r\n\r\n"), Route::NotFound);
        assert_eq!(route(b"GET / HTTP/1.1\r\n\r\n"), Route::NotFound);
        assert_eq!(route(b""), Route::NotFound);
    }
}
