//! Having ZooKeeper itself expire a session, the way Curator's tests do: attach to the session from a
//! second connection (same id and password) and close it there. The server then tells the session's
//! own client, when it next connects, that its session is expired.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// ZooKeeper's `closeSession` op code.
const CLOSE_SESSION: i32 = -11;
/// Longest reply read from the server (a `ConnectResponse` or a reply header).
const MAX_REPLY: usize = 1024;

/// Closes `session` on the ZooKeeper at `127.0.0.1:port`, and returns once the server confirmed it.
pub(crate) async fn expire(port: u16, session: i64, password: &[u8]) {
    let work = async {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await?;
        // ConnectRequest: protocol version, last zxid seen, timeout, session id, password, read-only.
        let mut connect = Vec::new();
        connect.extend_from_slice(&0i32.to_be_bytes());
        connect.extend_from_slice(&0i64.to_be_bytes());
        connect.extend_from_slice(&30_000i32.to_be_bytes());
        connect.extend_from_slice(&session.to_be_bytes());
        connect.extend_from_slice(&(password.len() as i32).to_be_bytes());
        connect.extend_from_slice(password);
        connect.push(0);
        write_frame(&mut stream, &connect).await?;
        let response = read_frame(&mut stream).await?;
        let attached = response
            .get(8..16)
            .map(|id| i64::from_be_bytes(id.try_into().unwrap()));
        if attached != Some(session) {
            return Err(std::io::Error::other(format!(
                "the server did not attach session {session:#x}: {attached:?}"
            )));
        }
        // RequestHeader: xid, type.
        let mut close = Vec::new();
        close.extend_from_slice(&1i32.to_be_bytes());
        close.extend_from_slice(&CLOSE_SESSION.to_be_bytes());
        write_frame(&mut stream, &close).await?;
        // ReplyHeader: xid (4), zxid (8), err (4).
        let reply = read_frame(&mut stream).await?;
        let err = reply
            .get(12..16)
            .map(|e| i32::from_be_bytes(e.try_into().unwrap()));
        if err != Some(0) {
            return Err(std::io::Error::other(format!(
                "closeSession answered {err:?}"
            )));
        }
        Ok(())
    };
    match tokio::time::timeout(Duration::from_secs(30), work).await {
        Ok(Ok(())) => {}
        Ok(Err(error)) => panic!("could not expire session {session:#x}: {error}"),
        Err(_) => panic!("ZooKeeper did not close session {session:#x} within 30 s"),
    }
}

async fn write_frame(stream: &mut TcpStream, body: &[u8]) -> std::io::Result<()> {
    stream.write_all(&(body.len() as u32).to_be_bytes()).await?;
    stream.write_all(body).await
}

async fn read_frame(stream: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut length = [0u8; 4];
    stream.read_exact(&mut length).await?;
    let length = u32::from_be_bytes(length) as usize;
    if length > MAX_REPLY {
        return Err(std::io::Error::other("reply too long"));
    }
    let mut frame = vec![0; length];
    stream.read_exact(&mut frame).await?;
    Ok(frame)
}
