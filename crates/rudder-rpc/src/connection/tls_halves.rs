//! TLS over a TCP stream's two halves, one for the connection's reader and one for its writers, with
//! every system call made outside the lock on the TLS state.
//!
//! `tokio::io::split` of a tokio-rustls stream puts the whole stream behind one mutex that each half
//! holds across its system calls and its crypto: a caller's direct write then sleeps while the driver
//! reads and decrypts, and the driver sleeps while a caller encrypts and writes. The slower the
//! system calls, the more they collide: under `strace`, which slows every one, a TLS connection made
//! 3 to 4 times the plaintext one's futex calls and half as many writes again (docs/tls.md). Here the
//! mutex guards rustls' state only while it seals or opens records, and each half owns its side of
//! the socket. The read half also takes what the socket holds in one system call, where rustls reads
//! 4 KiB at a time, and the write half sends a frame's records with one.
//!
//! Order on the wire: rustls numbers records as it seals them, so sealed bytes must leave in the order
//! they were made. Only the write half takes them out of rustls, and it sends what it took before it
//! takes more. Records that reading makes rustls queue (the answer to the peer's KeyUpdate, which
//! RFC 8446 wants before our next record, not at once) leave with the next write.

use std::io::{self, BufRead};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{ready, Context, Poll};

use rustls::ClientConnection;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Ciphertext taken from the socket in one read: room for a couple of full records, or for the
/// responses of a few hundred calls.
const READ_CHUNK: usize = 32 * 1024;

type Session = Arc<Mutex<ClientConnection>>;

/// Locks the TLS state. A panic inside rustls while it was held leaves the state unknown: the
/// connection fails rather than send or accept records from it.
fn lock(session: &Mutex<ClientConnection>) -> io::Result<MutexGuard<'_, ClientConnection>> {
    session
        .lock()
        .map_err(|_| io::Error::other("the TLS session's state was lost to a panic"))
}

/// Splits an established TLS session over the two halves of its byte stream.
pub(crate) fn split<R, W>(
    reader: R,
    writer: W,
    session: ClientConnection,
) -> (TlsRead<R>, TlsWrite<W>) {
    let session = Arc::new(Mutex::new(session));
    let read = TlsRead {
        io: reader,
        session: Arc::clone(&session),
        ciphertext: vec![0; READ_CHUNK].into_boxed_slice(),
        start: 0,
        end: 0,
        eof: Eof::Open,
    };
    let write = TlsWrite {
        io: writer,
        session,
        sealed: Vec::new(),
        sent: 0,
        closing: false,
    };
    (read, write)
}

/// Where the read half is with the end of the byte stream.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Eof {
    Open,
    /// The socket ended; rustls has yet to hear it.
    Seen,
    /// rustls knows: it says whether the end was clean.
    Told,
}

/// The read half: plaintext out of the socket's records.
pub(crate) struct TlsRead<R> {
    io: R,
    session: Session,
    /// Read from the socket, not yet given to rustls: `ciphertext[start..end]`.
    ciphertext: Box<[u8]>,
    start: usize,
    end: usize,
    eof: Eof,
}

impl<R> TlsRead<R> {
    /// Moves plaintext into `buf`, giving rustls the ciphertext read so far as it needs it. `true`
    /// when `buf` got bytes or the session ended cleanly (then nothing was added); `false` when
    /// everything read is used up and nothing came of it: the socket must be read.
    fn deliver(&mut self, buf: &mut ReadBuf<'_>) -> io::Result<bool> {
        let before = buf.filled().len();
        let mut session = lock(&self.session)?;
        loop {
            let mut plaintext = session.reader();
            loop {
                match plaintext.fill_buf() {
                    // A close_notify, after everything it followed.
                    Ok([]) => return Ok(true),
                    Ok(chunk) => {
                        let n = chunk.len().min(buf.remaining());
                        buf.put_slice(&chunk[..n]);
                        plaintext.consume(n);
                        if buf.remaining() == 0 {
                            return Ok(true);
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    // The bytes before an unclean end go out first; the next read reports it.
                    Err(_) if buf.filled().len() > before => return Ok(true),
                    Err(e) => return Err(e),
                }
            }
            if self.start == self.end {
                match self.eof {
                    Eof::Open => return Ok(buf.filled().len() > before),
                    Eof::Seen => {
                        // rustls now answers with a clean end or `UnexpectedEof`.
                        session.read_tls(&mut io::empty())?;
                        self.eof = Eof::Told;
                        continue;
                    }
                    Eof::Told => return Err(io::ErrorKind::UnexpectedEof.into()),
                }
            }
            let fed = session.read_tls(&mut &self.ciphertext[self.start..self.end])?;
            self.start += fed;
            session
                .process_new_packets()
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for TlsRead<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        loop {
            if this.deliver(buf)? {
                return Poll::Ready(Ok(()));
            }
            // Everything read was given to rustls: the whole chunk is free.
            let mut room = ReadBuf::new(&mut this.ciphertext);
            ready!(Pin::new(&mut this.io).poll_read(cx, &mut room))?;
            let n = room.filled().len();
            (this.start, this.end) = (0, n);
            if n == 0 {
                this.eof = Eof::Seen;
            }
        }
    }
}

/// The write half: plaintext sealed into records, sent outside the lock.
pub(crate) struct TlsWrite<W> {
    io: W,
    session: Session,
    /// Records taken out of rustls, sent up to `sent`.
    sealed: Vec<u8>,
    sent: usize,
    /// The close_notify is sealed.
    closing: bool,
}

impl<W: AsyncWrite + Unpin> TlsWrite<W> {
    /// Sends what was sealed and not yet sent.
    fn poll_send(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.sent < self.sealed.len() {
            let n = ready!(Pin::new(&mut self.io).poll_write(cx, &self.sealed[self.sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.sent += n;
        }
        self.sealed.clear();
        self.sent = 0;
        Poll::Ready(Ok(()))
    }

    /// Seals with `seal` under the lock and takes everything rustls has queued, in order.
    fn seal<T>(
        &mut self,
        seal: impl FnOnce(&mut ClientConnection) -> io::Result<T>,
    ) -> io::Result<T> {
        let mut session = lock(&self.session)?;
        let out = seal(&mut session)?;
        while session.wants_write() {
            session.write_tls(&mut self.sealed)?;
        }
        Ok(out)
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for TlsWrite<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        // Records sealed earlier leave first; until they can, the caller waits.
        ready!(this.poll_send(cx))?;
        let n = this.seal(|session| io::Write::write(&mut session.writer(), buf))?;
        // One attempt now; what the socket does not take leaves with the next write or the flush.
        if let Poll::Ready(Err(e)) = this.poll_send(cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_send(cx))?;
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_send(cx))?;
        if !this.closing {
            this.seal(|session| {
                session.send_close_notify();
                Ok(())
            })?;
            this.closing = true;
            ready!(this.poll_send(cx))?;
        }
        match ready!(Pin::new(&mut this.io).poll_shutdown(cx)) {
            // The peer went first: nothing is left to close.
            Err(e) if e.kind() == io::ErrorKind::NotConnected => Poll::Ready(Ok(())),
            done => Poll::Ready(done),
        }
    }
}

#[cfg(test)]
#[path = "tls_halves_tests.rs"]
mod tests;
