//! The task behind a [`Connection`](super::Connection): reads and dispatches frames, writes queued
//! frames in batches (on a task of its own), and keeps the connection alive with heartbeats.
//!
//! The driver holds the shared state but no handle, so it runs only while some handle does (or the
//! provider keeps sending): the last handle dropped closes the connection and both tasks end.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use rudder_common::error::{RpcError, RpcErrorKind};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::watch;
use tokio::time::Instant;

use super::outbox::write_queued;
use super::Shared;
use crate::census::{Census, SocketToken};
use crate::codec::{event_name, Frame, FrameDecoder, FrameError};

/// Shortest idle-check period, whatever `heartbeat` says.
const MIN_TICK: Duration = Duration::from_millis(10);

/// Drives one connection until it closes; start it with [`Driver::spawn`].
#[derive(Debug)]
pub(crate) struct Driver<R> {
    shared: Arc<Shared>,
    reader: R,
    shutdown: watch::Receiver<bool>,
    census: Arc<Census>,
    /// Counts the socket as open until both halves are dropped.
    socket: SocketToken,
}

impl<R> Driver<R>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    pub(super) fn new(
        shared: Arc<Shared>,
        reader: R,
        shutdown: watch::Receiver<bool>,
        census: &Arc<Census>,
    ) -> Driver<R> {
        Driver {
            shared,
            reader,
            shutdown,
            census: Arc::clone(census),
            socket: census.socket(),
        }
    }

    /// Spawns the driver (and, from it, the writer) on the current tokio runtime, both counted in
    /// the census until they end.
    pub(crate) fn spawn(self) {
        let token = self.census.task();
        tokio::spawn(async move {
            let _token = token;
            self.run().await;
        });
    }

    /// Runs the connection; returns once it is closed, every waiting call has been failed and
    /// the socket is closed.
    async fn run(self) {
        let Driver {
            shared,
            reader,
            shutdown,
            census,
            socket,
        } = self;
        let writer_token = census.task();
        let write_task = tokio::spawn({
            let (shared, shutdown) = (Arc::clone(&shared), shutdown.clone());
            async move {
                let _token = writer_token;
                write_loop(shared, shutdown).await;
            }
        });
        let why = read_loop(&shared, reader, shutdown).await;
        shared.close(&format!("connection to {} closed: {why}", shared.addr));
        // The writer sees the close at once, even in the middle of a stalled write.
        let _ = write_task.await;
        drop(socket);
        tracing::debug!(addr = %shared.addr, reason = %why, "dubbo connection closed");
    }
}

/// Reads until the connection must close, and says why.
async fn read_loop<R: AsyncRead + Unpin>(
    shared: &Shared,
    mut reader: R,
    mut shutdown: watch::Receiver<bool>,
) -> String {
    let heartbeat = shared.config.heartbeat;
    let mut decoder = FrameDecoder::new(shared.config.payload_limit);
    let mut buf = BytesMut::with_capacity(16 * 1024);
    let mut last_read = Instant::now();
    let mut ticker = tokio::time::interval((heartbeat / 3).max(MIN_TICK));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.wait_for(|closed| *closed) => return "closed locally".to_owned(),
            _ = ticker.tick() => {
                let idle_read = last_read.elapsed();
                if idle_read >= heartbeat.saturating_mul(3) {
                    return format!("nothing received for {} ms (3 heartbeats)", idle_read.as_millis());
                }
                let since_write = shared
                    .started
                    .elapsed()
                    .saturating_sub(Duration::from_millis(shared.last_write_ms.load(Ordering::Relaxed)));
                if idle_read >= heartbeat || since_write >= heartbeat {
                    shared.queue_heartbeat(None);
                }
            }
            read = reader.read_buf(&mut buf) => {
                match read {
                    Ok(0) => return "closed by the provider".to_owned(),
                    Err(e) => return format!("read failed: {e}"),
                    Ok(_) => last_read = Instant::now(),
                }
                loop {
                    match decoder.decode(&mut buf) {
                        Ok(Some(frame)) => dispatch(shared, frame),
                        Ok(None) => break,
                        Err(e @ FrameError::TooLong { .. }) => oversized(shared, &decoder, &e),
                        Err(e) => return format!("malformed frame: {e}"),
                    }
                }
            }
        }
    }
}

/// A frame over the payload limit: the decoder skips its body; only the call it answers fails.
fn oversized(shared: &Shared, decoder: &FrameDecoder, error: &FrameError) {
    shared.answered.store(true, Ordering::Relaxed);
    let Some(header) = decoder.last_skipped() else {
        return;
    };
    if header.flags.is_request() || header.flags.is_event() {
        tracing::debug!(addr = %shared.addr, %error, "skipping an oversized request or event");
        return;
    }
    let failed = shared.pending.fail(
        header.request_id,
        RpcError::new(
            RpcErrorKind::Serialization,
            format!("response from {}: {error} (skipped)", shared.addr),
        ),
    );
    if !failed {
        tracing::trace!(addr = %shared.addr, %error, "oversized response for a call no longer waiting");
    }
    close_if_drained(shared);
}

fn dispatch(shared: &Shared, frame: Frame) {
    shared.answered.store(true, Ordering::Relaxed);
    let flags = frame.header.flags;
    let id = frame.header.request_id;
    if !flags.is_request() {
        if flags.is_event() {
            return; // the answer to one of our heartbeats: receiving it was the point
        }
        if !shared.pending.complete(id, frame) {
            tracing::trace!(addr = %shared.addr, id, "response for a call no longer waiting");
        }
        close_if_drained(shared);
        return;
    }
    if !flags.is_event() {
        tracing::debug!(addr = %shared.addr, id, "ignoring a non-event request from a provider");
        return;
    }
    match event_name(&frame.body).as_deref() {
        Some("R") => {
            tracing::info!(addr = %shared.addr, "provider is shutting down (readonly event)");
            shared.readonly.store(true, Ordering::Relaxed);
            close_if_drained(shared);
        }
        Some("W") => shared.readonly.store(false, Ordering::Relaxed),
        _ => {}
    }
    if flags.is_twoway() {
        shared.queue_heartbeat(Some(id));
    }
}

/// A read-only provider gets no new calls; once the last one is answered the connection can go.
fn close_if_drained(shared: &Shared) {
    if shared.readonly.load(Ordering::Relaxed) && shared.pending.len() == 0 {
        shared.close(&format!(
            "connection to {} closed: provider is shutting down",
            shared.addr
        ));
    }
}

async fn write_loop(shared: Arc<Shared>, shutdown: watch::Receiver<bool>) {
    let stall = shared.config.write_stall();
    let stamp = || shared.stamp_write();
    if let Err(e) = write_queued(&shared.outbox, shutdown, stall, stamp).await {
        shared.close(&format!(
            "connection to {} closed: write failed: {e}",
            shared.addr
        ));
    }
}
