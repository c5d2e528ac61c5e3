//! The write side of a client connection: a caller writes its own frame when nobody else is writing
//! and nothing waits, otherwise it queues the frame for the writer task, which writes the queue in
//! batches.
//!
//! With one call in flight, a hop through a channel to a writer task costs a task wake-up (often a
//! cross-thread one: a futex) and a copy per call; the direct write costs neither. Under load, frames
//! queue while a write is in progress and the writer task sends them together, one system call for
//! many. The direct write is a single non-blocking attempt (a no-op waker, nothing awaited): what it
//! could not write, and a flush it could not finish (TLS), go to the writer task, which alone waits
//! for the peer, under the stall deadline. Bytes never interleave: the writer is taken out of the
//! shared state by whoever writes, and a partly written frame's rest goes to the queue's front.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{LazyLock, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::{Buf, Bytes};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{watch, Notify};

use super::secure::BoxWrite;

/// Most bytes gathered from the queue into one write.
const WRITE_BATCH: usize = 64 * 1024;
/// Frames queued before callers wait for room.
pub(crate) const OUTBOUND_QUEUE: usize = 1024;

/// The environment variable that turns direct writes by callers off (`0`, `false` or `off`), for
/// benchmarks that compare the two paths in one binary (`RUDDER_RPC_DIRECT_WRITES=0 e2e_load ...`):
/// with them off, every frame goes through the connection's writer task. Read once per process.
pub(crate) const DIRECT_WRITES_VAR: &str = "RUDDER_RPC_DIRECT_WRITES";

/// Whether callers may write directly: on unless [`DIRECT_WRITES_VAR`] says off.
static DIRECT_WRITES: LazyLock<bool> =
    LazyLock::new(|| direct_writes_from(std::env::var(DIRECT_WRITES_VAR).ok().as_deref()));

/// What a value of [`DIRECT_WRITES_VAR`] means (unset or anything else: on).
fn direct_writes_from(value: Option<&str>) -> bool {
    !matches!(value.map(str::trim), Some("0" | "false" | "off"))
}

#[derive(Default)]
struct State {
    /// `None` while a caller or the writer task is writing.
    writer: Option<BoxWrite>,
    /// Frames waiting, in order; the front one may be the rest of a partly written frame.
    queue: VecDeque<Bytes>,
    /// A direct write left bytes in the TLS layer that a flush has yet to push out.
    needs_flush: bool,
    closed: bool,
}

/// The shared write state of one connection.
#[derive(Default)]
pub(crate) struct Outbox {
    state: Mutex<State>,
    /// Wakes the writer task: frames queued, or the writer put back with work left.
    work: Notify,
    /// Wakes callers waiting for room in a full queue.
    room: Notify,
}

impl std::fmt::Debug for Outbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbox").finish_non_exhaustive()
    }
}

/// Where [`Outbox::place`] put a frame.
enum Placed {
    Closed,
    Queued,
    /// The writer is free and nothing waits: the caller writes.
    Direct(BoxWrite, Bytes),
    /// The queue is full: the frame comes back.
    Full(Bytes),
}

/// What [`Outbox::send`] did with a frame.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Sent {
    /// Written (or handed to the writer task).
    Done,
    /// The connection is closed: nothing was written.
    Closed,
}

impl Outbox {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing here can be left half-updated by a panic; keep going.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Installs the writer; done once, before the connection is used.
    pub(super) fn install(&self, writer: BoxWrite) {
        self.lock().writer = Some(writer);
    }

    /// Sends `frame`: written here and now when the writer is free and nothing is queued, queued for
    /// the writer task otherwise. Waits only while the queue is full. `on_write` runs after bytes
    /// went out directly (the writer task runs its own).
    pub(crate) async fn send(&self, frame: Bytes, on_write: impl FnOnce()) -> Sent {
        let mut frame = frame;
        loop {
            let room = self.room.notified();
            tokio::pin!(room);
            room.as_mut().enable();
            match self.place(frame) {
                Placed::Closed => return Sent::Closed,
                Placed::Queued => return Sent::Done,
                Placed::Direct(writer, frame) => {
                    self.write_directly(writer, frame);
                    on_write();
                    return Sent::Done;
                }
                // Full: the writer task makes room (or the connection closes, which wakes us too).
                Placed::Full(back) => frame = back,
            }
            room.await;
        }
    }

    /// Decides, under the lock, where `frame` goes.
    fn place(&self, frame: Bytes) -> Placed {
        let mut state = self.lock();
        if state.closed {
            return Placed::Closed;
        }
        if state.queue.is_empty() && !state.needs_flush && *DIRECT_WRITES {
            if let Some(writer) = state.writer.take() {
                return Placed::Direct(writer, frame);
            }
        }
        if state.queue.len() >= OUTBOUND_QUEUE {
            return Placed::Full(frame);
        }
        state.queue.push_back(frame);
        drop(state);
        self.work.notify_one();
        Placed::Queued
    }

    /// Queues a frame without waiting (heartbeats); `false` when the queue is full or closed.
    pub(crate) fn try_queue(&self, frame: Bytes) -> bool {
        let mut state = self.lock();
        if state.closed || state.queue.len() >= OUTBOUND_QUEUE {
            return false;
        }
        state.queue.push_back(frame);
        drop(state);
        self.work.notify_one();
        true
    }

    /// One non-blocking attempt to write `frame` (and flush); the rest goes to the writer task.
    fn write_directly(&self, mut writer: BoxWrite, mut frame: Bytes) {
        let mut cx = Context::from_waker(Waker::noop());
        let mut failed = false;
        while frame.has_remaining() {
            match Pin::new(&mut writer).poll_write(&mut cx, &frame) {
                Poll::Ready(Ok(n)) if n > 0 => frame.advance(n),
                // An error (or a zero write) is the writer task's to meet and report: it gets the
                // bytes and tries them itself.
                Poll::Ready(_) => {
                    failed = true;
                    break;
                }
                Poll::Pending => break,
            }
        }
        let flushed = !failed
            && !frame.has_remaining()
            && matches!(
                Pin::new(&mut writer).poll_flush(&mut cx),
                Poll::Ready(Ok(()))
            );
        let mut state = self.lock();
        state.writer = Some(writer);
        let work = !flushed;
        if frame.has_remaining() {
            state.queue.push_front(frame);
        } else if !flushed {
            state.needs_flush = true;
        }
        let work = work || !state.queue.is_empty();
        drop(state);
        if work {
            self.work.notify_one();
        }
    }

    /// Refuses further frames and wakes everyone waiting.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.room.notify_waiters();
        self.work.notify_one();
    }
}

/// The writer task: writes what callers queued until `shutdown` turns true; calls `on_write` after
/// each write. Shuts the writer down (FIN) on the way out.
///
/// # Errors
/// The first write error, or [`io::ErrorKind::TimedOut`] when the peer accepted no byte for `stall`.
pub(crate) async fn write_queued(
    outbox: &Outbox,
    mut shutdown: watch::Receiver<bool>,
    stall: Duration,
    mut on_write: impl FnMut(),
) -> io::Result<()> {
    let mut batch = Vec::with_capacity(WRITE_BATCH);
    let result = loop {
        // Take the writer and a batch, or wait for work.
        let taken = {
            let mut state = outbox.lock();
            if state.closed {
                break Ok(());
            }
            let ready = !state.queue.is_empty() || state.needs_flush;
            match (ready, state.writer.is_some()) {
                (true, true) => {
                    batch.clear();
                    while batch.len() < WRITE_BATCH {
                        match state.queue.pop_front() {
                            Some(frame) => batch.extend_from_slice(&frame),
                            None => break,
                        }
                    }
                    state.needs_flush = false;
                    state.writer.take()
                }
                _ => None,
            }
        };
        let Some(mut writer) = taken else {
            // Nothing to do, or a caller is writing (it wakes us when it puts the writer back).
            tokio::select! {
                _ = shutdown.wait_for(|closed| *closed) => break Ok(()),
                () = outbox.work.notified() => continue,
            }
        };
        outbox.room.notify_waiters();
        let written = tokio::select! {
            written = write_and_flush(&mut writer, &batch, stall) => written,
            _ = shutdown.wait_for(|closed| *closed) => {
                outbox.lock().writer = Some(writer);
                break Ok(());
            }
        };
        outbox.lock().writer = Some(writer);
        if let Err(e) = written {
            break Err(e);
        }
        on_write();
    };
    outbox.close();
    // A caller may hold the writer for the moment of its direct write: it puts it back at once.
    let mut writer = loop {
        if let Some(writer) = outbox.lock().writer.take() {
            break writer;
        }
        tokio::task::yield_now().await;
    };
    let _ = tokio::time::timeout(stall, writer.shutdown()).await;
    result
}

/// `write_all` then `flush`, failing when the peer takes no byte for `stall`.
async fn write_and_flush(
    writer: &mut BoxWrite,
    mut bytes: &[u8],
    stall: Duration,
) -> io::Result<()> {
    let stalled = || {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "write stalled: the peer took no byte for {} ms",
                stall.as_millis()
            ),
        )
    };
    while !bytes.is_empty() {
        let written = tokio::time::timeout(stall, writer.write(bytes))
            .await
            .map_err(|_| stalled())??;
        if written == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        bytes = &bytes[written..];
    }
    tokio::time::timeout(stall, writer.flush())
        .await
        .map_err(|_| stalled())?
}

#[cfg(test)]
mod tests {
    use super::direct_writes_from;

    #[test]
    fn direct_writes_are_on_unless_the_variable_says_off() {
        for (value, on) in [
            (None, true),
            (Some("1"), true),
            (Some(""), true),
            (Some("0"), false),
            (Some(" false "), false),
            (Some("off"), false),
        ] {
            assert_eq!(direct_writes_from(value), on, "{value:?}");
        }
    }
}
