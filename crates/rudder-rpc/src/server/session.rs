//! One accepted connection of the test server: read requests, run handlers, write answers.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::sync::{mpsc, watch};

use super::{Handler, OpenConnection, ServerConfig, ServerStats};
use crate::codec::{
    decode_request, encode_heartbeat, encode_response, encode_status,
    supports_response_attachments, Frame, FrameDecoder, FrameError,
};
use crate::response::ResponseStatus;
use crate::write_batch::write_frames;

const OUTBOUND_QUEUE: usize = 1024;
/// A consumer that takes no byte of our answers for this long is not reading: drop it.
const WRITE_STALL: Duration = Duration::from_secs(30);
const DUBBO_ATTACHMENT: [(&str, &str); 1] = [("dubbo", "2.0.2")];

/// Serves one connection until the peer leaves, sends a malformed frame, or the task is aborted.
pub(super) async fn serve<R, W>(
    mut reader: R,
    mut writer: W,
    peer: SocketAddr,
    handler: Arc<dyn Handler>,
    config: ServerConfig,
    stats: Arc<ServerStats>,
    open: OpenConnection,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let (tx, mut rx) = mpsc::channel::<Bytes>(OUTBOUND_QUEUE);
    let (stop, stop_rx) = watch::channel(false);
    let handler_stop = stop_rx.clone();
    let write = async {
        if let Err(e) = write_frames(&mut writer, &mut rx, stop_rx, WRITE_STALL, || {}).await {
            tracing::debug!(%peer, error = %e, "write failed");
        }
    };
    let read = async {
        let why = read_requests(&mut reader, &tx, &handler, &handler_stop, config, &stats).await;
        tracing::debug!(%peer, reason = %why, "session ends");
        // Answers still queued are dropped; the peer is gone or misbehaved.
        stop.send_replace(true);
    };
    tokio::join!(read, write);
    // Both halves are dropped at the end of this function: the socket is closed.
    drop((reader, writer));
    drop(open);
}

async fn read_requests(
    reader: &mut (impl AsyncRead + Unpin),
    tx: &mpsc::Sender<Bytes>,
    handler: &Arc<dyn Handler>,
    stop: &watch::Receiver<bool>,
    config: ServerConfig,
    stats: &ServerStats,
) -> String {
    let mut decoder = FrameDecoder::new(config.payload_limit);
    let mut buf = BytesMut::with_capacity(16 * 1024);
    loop {
        match reader.read_buf(&mut buf).await {
            Ok(0) => return "closed by the consumer".to_owned(),
            Err(e) => return format!("read failed: {e}"),
            Ok(_) => {}
        }
        loop {
            match decoder.decode(&mut buf) {
                Ok(Some(frame)) => handle_frame(frame, tx, handler, stop, config, stats),
                Ok(None) => break,
                Err(e) => return format!("malformed frame: {e}"),
            }
        }
    }
}

fn handle_frame(
    frame: Frame,
    tx: &mpsc::Sender<Bytes>,
    handler: &Arc<dyn Handler>,
    stop: &watch::Receiver<bool>,
    config: ServerConfig,
    stats: &ServerStats,
) {
    let flags = frame.header.flags;
    let id = frame.header.request_id;
    if !flags.is_request() {
        return; // answers to heartbeats we never send
    }
    if flags.is_event() {
        stats.heartbeat_received();
        if flags.is_twoway() {
            let _ = tx.try_send(encode_heartbeat(id, false));
        }
        return;
    }
    let request = match decode_request(&frame.body) {
        Ok(request) => request,
        Err(e) => {
            if flags.is_twoway() {
                let message = format!("Fail to decode request due to: {e}");
                if let Ok(answer) = encode_status(
                    id,
                    ResponseStatus::BadRequest,
                    &message,
                    config.payload_limit,
                ) {
                    let _ = tx.try_send(answer);
                }
            }
            return;
        }
    };
    let handler = Arc::clone(handler);
    let tx = tx.clone();
    let mut stop = stop.clone();
    tokio::spawn(async move {
        // A handler that never finishes must not outlive its session (or the server).
        let outcome = tokio::select! {
            outcome = handler.call(request.invocation) => outcome,
            _ = stop.wait_for(|stopped| *stopped) => return,
        };
        if !flags.is_twoway() {
            return;
        }
        let attachments =
            supports_response_attachments(&request.dubbo_version).then_some(&DUBBO_ATTACHMENT[..]);
        let answer =
            encode_response(id, &outcome, attachments, config.payload_limit).or_else(|e| {
                let message = match e {
                    FrameError::TooLong { len, limit, .. } => {
                        format!("Data length too large: {len}, max payload: {limit}")
                    }
                    other => other.to_string(),
                };
                encode_status(
                    id,
                    ResponseStatus::BadResponse,
                    &message,
                    config.payload_limit,
                )
            });
        if let Ok(answer) = answer {
            let _ = tx.send(answer).await;
        }
    });
}
