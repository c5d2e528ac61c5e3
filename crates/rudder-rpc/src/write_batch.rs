//! The writer half of server sessions: frames from a queue, gathered
//! into batches so a burst of small frames costs one system call.
//!
//! A peer that stops reading fills its receive window and then ours; a plain `write_all` would then
//! wait forever and pin the task (and the socket) with it. Every write here must make progress
//! within a stall deadline, and a close request interrupts a write in progress.

use std::io;
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, watch};

/// Most bytes gathered from the queue into one write.
const WRITE_BATCH: usize = 64 * 1024;

/// Writes queued frames until the queue closes or `shutdown` turns true; calls `on_write` after
/// each successful write. The writer is shut down (FIN sent) on the way out.
///
/// # Errors
/// The first write error, or [`io::ErrorKind::TimedOut`] when the peer accepted no byte for
/// `stall`; the caller closes the connection with it.
pub(crate) async fn write_frames<W: AsyncWrite + Unpin>(
    writer: &mut W,
    outbound: &mut mpsc::Receiver<Bytes>,
    mut shutdown: watch::Receiver<bool>,
    stall: Duration,
    mut on_write: impl FnMut(),
) -> io::Result<()> {
    let mut batch = Vec::with_capacity(WRITE_BATCH);
    loop {
        let first = tokio::select! {
            _ = shutdown.wait_for(|closed| *closed) => break,
            next = outbound.recv() => match next {
                Some(frame) => frame,
                None => break,
            },
        };
        let bytes: &[u8] = if first.len() >= WRITE_BATCH {
            &first
        } else {
            batch.clear();
            batch.extend_from_slice(&first);
            while batch.len() < WRITE_BATCH {
                match outbound.try_recv() {
                    Ok(frame) => batch.extend_from_slice(&frame),
                    Err(_) => break,
                }
            }
            &batch
        };
        tokio::select! {
            written = write_all_progressing(writer, bytes, stall) => written?,
            _ = shutdown.wait_for(|closed| *closed) => break,
        }
        on_write();
    }
    let _ = writer.shutdown().await;
    Ok(())
}

/// `write_all`, failing when one write waits longer than `stall` for the peer to take a byte.
async fn write_all_progressing<W: AsyncWrite + Unpin>(
    writer: &mut W,
    mut bytes: &[u8],
    stall: Duration,
) -> io::Result<()> {
    while !bytes.is_empty() {
        let written = tokio::time::timeout(stall, writer.write(bytes))
            .await
            .map_err(|_| {
                io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "write stalled: the peer took no byte for {} ms",
                        stall.as_millis()
                    ),
                )
            })??;
        if written == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        bytes = &bytes[written..];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_peer_that_stops_reading_fails_the_writer_after_the_stall_deadline() {
        // A 1 KiB pipe whose other end is never read.
        let (mut ours, _theirs) = tokio::io::duplex(1024);
        let (tx, mut rx) = mpsc::channel(4);
        let (_stop, stop_rx) = watch::channel(false);
        tx.send(Bytes::from(vec![7u8; 8192])).await.unwrap();
        let started = tokio::time::Instant::now();
        let err = write_frames(
            &mut ours,
            &mut rx,
            stop_rx,
            Duration::from_millis(250),
            || {},
        )
        .await
        .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(err.to_string().contains("write stalled"), "{err}");
        assert_eq!(started.elapsed(), Duration::from_millis(250));
    }

    #[tokio::test(start_paused = true)]
    async fn a_close_request_interrupts_a_stuck_write() {
        let (mut ours, _theirs) = tokio::io::duplex(1024);
        let (tx, mut rx) = mpsc::channel(4);
        let (stop, stop_rx) = watch::channel(false);
        tx.send(Bytes::from(vec![7u8; 8192])).await.unwrap();
        let writer = async {
            write_frames(
                &mut ours,
                &mut rx,
                stop_rx,
                Duration::from_secs(3600),
                || {},
            )
            .await
        };
        let closer = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            stop.send_replace(true);
        };
        let (written, ()) = tokio::join!(writer, closer);
        assert!(written.is_ok(), "a requested close is not an error");
    }
}
