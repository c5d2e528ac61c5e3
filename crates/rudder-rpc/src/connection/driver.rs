//! The task behind a [`Connection`](super::Connection): reads and dispatches frames, writes queued
//! frames in batches, and keeps the connection alive with heartbeats.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::io::AsyncReadExt;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::Shared;
use crate::codec::{event_name, Frame, FrameDecoder};
use crate::write_batch::write_frames;

/// Shortest idle-check period, whatever `heartbeat` says.
const MIN_TICK: Duration = Duration::from_millis(10);

/// Drives one connection until it closes; spawn [`Driver::run`] on a tokio runtime.
#[derive(Debug)]
pub(crate) struct Driver {
    shared: Arc<Shared>,
    stream: TcpStream,
    outbound: mpsc::Receiver<Bytes>,
    shutdown: watch::Receiver<bool>,
}

impl Driver {
    pub(super) fn new(
        shared: Arc<Shared>,
        stream: TcpStream,
        outbound: mpsc::Receiver<Bytes>,
        shutdown: watch::Receiver<bool>,
    ) -> Driver {
        Driver {
            shared,
            stream,
            outbound,
            shutdown,
        }
    }

    /// Runs the connection; returns once it is closed and every waiting call has been failed.
    pub(crate) async fn run(self) {
        let Driver {
            shared,
            stream,
            outbound,
            shutdown,
        } = self;
        let (reader, writer) = stream.into_split();
        let write_task = tokio::spawn(write_loop(
            Arc::clone(&shared),
            writer,
            outbound,
            shutdown.clone(),
        ));
        let why = read_loop(&shared, reader, shutdown).await;
        shared.close(&format!("connection to {} closed: {why}", shared.addr));
        let _ = write_task.await;
        tracing::debug!(addr = %shared.addr, reason = %why, "dubbo connection closed");
    }
}

/// Reads until the connection must close, and says why.
async fn read_loop(
    shared: &Shared,
    mut reader: OwnedReadHalf,
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
                        Err(e) => return format!("malformed frame: {e}"),
                    }
                }
            }
        }
    }
}

fn dispatch(shared: &Shared, frame: Frame) {
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

async fn write_loop(
    shared: Arc<Shared>,
    mut writer: OwnedWriteHalf,
    mut outbound: mpsc::Receiver<Bytes>,
    shutdown: watch::Receiver<bool>,
) {
    let stamp = || {
        let now = u64::try_from(shared.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        shared.last_write_ms.store(now, Ordering::Relaxed);
    };
    if let Err(e) = write_frames(&mut writer, &mut outbound, shutdown, stamp).await {
        shared.close(&format!(
            "connection to {} closed: write failed: {e}",
            shared.addr
        ));
    }
}
