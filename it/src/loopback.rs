//! Loopback helpers: picking a free port and asking ZooKeeper whether it serves.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Lowest port [`free_port`] hands out.
const FIRST_PICKED_PORT: u16 = 10_000;

/// Next candidate offset; shared by every pick in this process so two picks never race for one port.
static NEXT_PICK: AtomicU32 = AtomicU32::new(0);

/// The second ports of the pairs [`free_port_pair`] handed out: [`free_port`] never hands them out
/// again, since nothing holds them until the server they were picked for binds them.
static PAIRED: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());

/// A port on 127.0.0.1 that is free now and that no `bind(0)` on this machine will be given.
///
/// The servers these tests start (ZooKeeper on the host network, the Java and Node peers) take a
/// port number we name, after we have checked it and let it go. A port from the kernel's
/// ephemeral range could be handed to any `bind(0)` or outgoing connection in between, and tests
/// running beside this one open thousands of those (the consumer-scale test binds 1,000
/// providers); ZooKeeper then fails to bind and the test fails for nothing. So ports come from
/// below the ephemeral range (`/proc/sys/net/ipv4/ip_local_port_range`), in an order seeded by
/// the process id so that two test processes rarely try the same ones, each checked by binding it.
pub(crate) async fn free_port() -> std::io::Result<u16> {
    let first = u32::from(FIRST_PICKED_PORT);
    let end = ephemeral_start().map_or(32_768, u32::from);
    if end <= first + 1_000 {
        // A machine whose ephemeral range starts low: fall back to asking the kernel.
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        return Ok(listener.local_addr()?.port());
    }
    let span = end - first;
    let seed = std::process::id().wrapping_mul(7_919);
    for _ in 0..span {
        let offset = seed.wrapping_add(NEXT_PICK.fetch_add(1, Ordering::Relaxed)) % span;
        let port = u16::try_from(first + offset).expect("below the ephemeral start, a u16");
        if PAIRED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&port)
        {
            continue;
        }
        if let Ok(listener) = TcpListener::bind(("127.0.0.1", port)).await {
            drop(listener);
            return Ok(port);
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AddrInUse,
        format!("every port in {first}..{end} is taken"),
    ))
}

/// A port `p` from [`free_port`] whose partner `p + offset` is free too, below the ephemeral range
/// like `p`, and kept from every later [`free_port`] pick of this process (rnacos's gRPC port is
/// its HTTP port + 1000, where Nacos 2.x clients look for it).
pub(crate) async fn free_port_pair(offset: u16) -> std::io::Result<u16> {
    let end = match ephemeral_start() {
        // Where free_port falls back to the kernel's picks, the partner cannot be kept below.
        Some(start) if start <= FIRST_PICKED_PORT + 1_000 => u16::MAX,
        start => start.unwrap_or(32_768),
    };
    for _ in 0..1_000 {
        let port = free_port().await?;
        let Some(partner) = port.checked_add(offset).filter(|p| *p < end) else {
            continue;
        };
        if let Ok(listener) = TcpListener::bind(("127.0.0.1", partner)).await {
            drop(listener);
            let mut paired = PAIRED.lock().unwrap_or_else(|e| e.into_inner());
            if paired.insert(partner) {
                return Ok(port);
            }
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AddrInUse,
        format!("no free port pair (p, p + {offset}) below {end}"),
    ))
}

/// The first port of the kernel's ephemeral range, where it says (Linux).
fn ephemeral_start() -> Option<u16> {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    range.split_whitespace().next()?.parse().ok()
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
