//! dubbo:// frames from and to bytes, without a connection (feature `wire`): for tools that read
//! captured traffic, the codec bench, and the cargo-fuzz targets in `fuzz/`.
//!
//! ```
//! use rudder_common::{invocation::Invocation, url::DubboUrl};
//! use rudder_rpc::wire::{decode_stream, encode_request_frame};
//!
//! let url = DubboUrl::parse("dubbo://127.0.0.1:20880/com.acme.Greeter")?;
//! let frame = encode_request_frame(&url, &Invocation::new("sayHello", vec![], vec![]));
//! // Fed 7 bytes at a time, as reads might deliver it: one whole frame.
//! assert_eq!(decode_stream(&frame, 7, 8 * 1024 * 1024), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use bytes::{Bytes, BytesMut};
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_common::value::{JavaException, Value};

use crate::codec::{
    decode_request, decode_response, encode_request, encode_response, Answer, FrameDecoder,
    FrameError, DEFAULT_PAYLOAD_LIMIT,
};
use crate::response::RpcResponse;
use crate::settings;

#[cfg(feature = "fuzzing")]
pub use crate::scripted_peer::{drive_scripted_peer, PeerRun};

/// Feeds `data` to a frame decoder `chunk` bytes at a time (as reads would deliver it), with body
/// limit `limit`, and decodes every complete frame's body both as a response and as a request.
/// Oversized frames are skipped, any other frame error ends the stream. Returns the number of
/// frames seen. Must never panic or allocate beyond `limit` per frame.
pub fn decode_stream(data: &[u8], chunk: usize, limit: usize) -> usize {
    let mut decoder = FrameDecoder::new(limit);
    let mut buf = BytesMut::new();
    let mut frames = 0;
    for piece in data.chunks(chunk.max(1)) {
        buf.extend_from_slice(piece);
        loop {
            match decoder.decode(&mut buf) {
                Ok(Some(frame)) => {
                    assert!(frame.body.len() <= limit, "body over the limit");
                    frames += 1;
                    let _ = decode_response(&frame.header, &frame.body);
                    let _ = decode_request(&frame.body);
                }
                Ok(None) => break,
                // The decoder skips an oversized body and carries on, as the client does.
                Err(FrameError::TooLong { .. }) => {}
                Err(_) => return frames,
            }
        }
    }
    frames
}

/// Decodes `body` as a response body under a response header with `status` and `flags`.
pub fn decode_response_body(flags: u8, status: u8, body: &[u8]) {
    let header = crate::codec::Header {
        flags: crate::codec::Flags::from_byte(flags),
        status,
        request_id: 1,
        body_len: u32::try_from(body.len()).unwrap_or(u32::MAX),
    };
    let _ = decode_response(&header, body);
}

/// A whole request frame for `invocation` to the service of `url`.
pub fn encode_request_frame(url: &DubboUrl, invocation: &Invocation) -> Bytes {
    encode_request(
        1,
        &settings::target(url),
        invocation,
        1000,
        DEFAULT_PAYLOAD_LIMIT,
    )
    .unwrap_or_default()
}

/// Splits off the frame and decodes its body as a provider would; the method name on success.
pub fn decode_request_frame(frame: &[u8]) -> Option<String> {
    let frame = FrameDecoder::new(DEFAULT_PAYLOAD_LIMIT)
        .decode(&mut BytesMut::from(frame))
        .ok()??;
    decode_request(&frame.body)
        .ok()
        .map(|r| r.invocation.method_name().to_owned())
}

/// A whole OK response frame with the `dubbo` attachment.
pub fn encode_response_frame(outcome: &Result<Value, JavaException>) -> Bytes {
    encode_response(
        1,
        outcome,
        Some(&[("dubbo", "2.0.2")]),
        DEFAULT_PAYLOAD_LIMIT,
    )
    .unwrap_or_default()
}

/// Splits off the frame and decodes its body as the consumer does.
pub fn decode_response_frame(frame: &[u8]) -> Option<RpcResponse> {
    let frame = FrameDecoder::new(DEFAULT_PAYLOAD_LIMIT)
        .decode(&mut BytesMut::from(frame))
        .ok()??;
    match decode_response(&frame.header, &frame.body) {
        Ok(Answer::Ok(response)) => Some(response),
        _ => None,
    }
}
