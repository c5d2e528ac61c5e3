//! A loopback TCP proxy in front of ZooKeeper that a test can cut and restore: a network partition
//! between rudder and ZooKeeper while ZooKeeper itself keeps serving other clients.
//!
//! It also notes the session id and password of every session established through it (read from the
//! server's `ConnectResponse`), so a test can have the server expire one of them: see
//! [`super::session::expire`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedReadHalf;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

/// A ZooKeeper frame is a 4-byte big-endian length and that many bytes; a `ConnectResponse` is tiny, so
/// anything longer than this is not one and is not buffered.
const MAX_CONNECT_RESPONSE: usize = 1024;

/// The proxy; dropping it closes the listener and every relayed connection.
#[derive(Debug)]
pub(crate) struct ZkProxy {
    port: u16,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
}

#[derive(Debug)]
struct Shared {
    upstream: u16,
    /// `true` while connections are relayed; `false` drops them all and refuses new ones.
    passing: watch::Sender<bool>,
    /// Session id to session password, for every session that connected through the proxy.
    sessions: Mutex<HashMap<i64, Vec<u8>>>,
}

impl ZkProxy {
    /// A proxy on a free port of 127.0.0.1 relaying to ZooKeeper on `upstream`.
    pub(crate) async fn start(upstream: u16) -> ZkProxy {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("proxy binds");
        let port = listener.local_addr().expect("proxy address").port();
        let shared = Arc::new(Shared {
            upstream,
            passing: watch::channel(true).0,
            sessions: Mutex::new(HashMap::new()),
        });
        let accept = tokio::spawn(accept_loop(listener, Arc::clone(&shared)));
        ZkProxy {
            port,
            shared,
            accept,
        }
    }

    /// `127.0.0.1:PORT` of the proxy.
    pub(crate) fn connect_string(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Drops every relayed connection and closes each new one at once, until [`ZkProxy::restore`].
    pub(crate) fn cut(&self) {
        self.shared.passing.send_replace(false);
    }

    /// Relays again.
    pub(crate) fn restore(&self) {
        self.shared.passing.send_replace(true);
    }

    /// The password of a session established through the proxy.
    pub(crate) fn password_of(&self, session: i64) -> Option<Vec<u8>> {
        self.shared
            .sessions
            .lock()
            .expect("sessions lock")
            .get(&session)
            .cloned()
    }
}

impl Drop for ZkProxy {
    fn drop(&mut self) {
        // The relays are owned by the accept task's JoinSet and end with it.
        self.accept.abort();
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut relays = JoinSet::new();
    loop {
        let Ok((client, _)) = listener.accept().await else {
            continue;
        };
        while relays.try_join_next().is_some() {}
        if !*shared.passing.borrow() {
            drop(client);
            continue;
        }
        relays.spawn(relay(client, Arc::clone(&shared)));
    }
}

/// Relays one client connection until either side closes or the proxy is cut.
async fn relay(client: TcpStream, shared: Arc<Shared>) {
    let mut passing = shared.passing.subscribe();
    let Ok(server) = TcpStream::connect(("127.0.0.1", shared.upstream)).await else {
        return;
    };
    let (mut from_client, mut to_client) = client.into_split();
    let (mut from_server, mut to_server) = server.into_split();
    let up = tokio::io::copy(&mut from_client, &mut to_server);
    let down = async {
        let first = read_frame(&mut from_server).await?;
        shared.note_connect_response(&first);
        to_client
            .write_all(&(first.len() as u32).to_be_bytes())
            .await?;
        to_client.write_all(&first).await?;
        tokio::io::copy(&mut from_server, &mut to_client).await
    };
    tokio::select! {
        _ = up => {}
        _ = down => {}
        _ = passing.wait_for(|p| !*p) => {}
    }
}

/// One length-prefixed frame, refused past [`MAX_CONNECT_RESPONSE`].
async fn read_frame(from: &mut OwnedReadHalf) -> std::io::Result<Vec<u8>> {
    let mut length = [0u8; 4];
    from.read_exact(&mut length).await?;
    let length = u32::from_be_bytes(length) as usize;
    if length > MAX_CONNECT_RESPONSE {
        return Err(std::io::Error::other(
            "first frame too long for a ConnectResponse",
        ));
    }
    let mut frame = vec![0; length];
    from.read_exact(&mut frame).await?;
    Ok(frame)
}

impl Shared {
    /// `ConnectResponse`: protocol version (4), timeout (4), session id (8), password (4 + n), ...
    fn note_connect_response(&self, frame: &[u8]) {
        let Some(session) = frame.get(8..16) else {
            return;
        };
        let session = i64::from_be_bytes(session.try_into().expect("8 bytes"));
        let Some(length) = frame.get(16..20) else {
            return;
        };
        let length = u32::from_be_bytes(length.try_into().expect("4 bytes")) as usize;
        let Some(password) = frame.get(20..20 + length) else {
            return;
        };
        if session != 0 {
            self.sessions
                .lock()
                .expect("sessions lock")
                .insert(session, password.to_vec());
        }
    }
}
