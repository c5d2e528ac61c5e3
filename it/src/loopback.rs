//! Loopback helpers: picking a free port and asking ZooKeeper whether it serves.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Asks the kernel for a free port on 127.0.0.1 and releases it for the server to take.
///
/// Another process could grab the port in between; with ports drawn from the ephemeral range
/// that is unlikely enough for tests, and a clash shows up as a start failure, not a wrong result.
pub(crate) async fn free_port() -> std::io::Result<u16> {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
    Ok(listener.local_addr()?.port())
}

/// Whether a ZooKeeper on `port` answers the `srvr` four-letter word as a serving server.
///
/// `ruok` is not enough: it answers `imok` before the server has loaded its data.
pub(crate) async fn serves(port: u16) -> bool {
    let probe = async {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await?;
        stream.write_all(b"srvr").await?;
        let mut reply = Vec::with_capacity(512);
        // The server closes the connection after its reply; 4 KiB bounds a misbehaving peer.
        (&mut stream).take(4096).read_to_end(&mut reply).await?;
        Ok::<_, std::io::Error>(reply)
    };
    match tokio::time::timeout(Duration::from_secs(2), probe).await {
        Ok(Ok(reply)) => reply.windows(b"Mode:".len()).any(|w| w == b"Mode:"),
        _ => false,
    }
}
