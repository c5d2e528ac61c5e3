//! The writer half shared by client connections and server sessions: frames from a queue, gathered
//! into batches so a burst of small frames costs one system call.

use std::io;

use bytes::Bytes;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, watch};

/// Most bytes gathered from the queue into one write.
const WRITE_BATCH: usize = 64 * 1024;

/// Writes queued frames until the queue closes or `shutdown` turns true; calls `on_write` after
/// each successful write. The writer is shut down (FIN sent) on the way out.
///
/// # Errors
/// The first write error; the caller closes the connection with it.
pub(crate) async fn write_frames<W: AsyncWrite + Unpin>(
    writer: &mut W,
    outbound: &mut mpsc::Receiver<Bytes>,
    mut shutdown: watch::Receiver<bool>,
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
        if first.len() >= WRITE_BATCH {
            writer.write_all(&first).await?;
        } else {
            batch.clear();
            batch.extend_from_slice(&first);
            while batch.len() < WRITE_BATCH {
                match outbound.try_recv() {
                    Ok(frame) => batch.extend_from_slice(&frame),
                    Err(_) => break,
                }
            }
            writer.write_all(&batch).await?;
        }
        on_write();
    }
    let _ = writer.shutdown().await;
    Ok(())
}
