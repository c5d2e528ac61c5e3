//! Cutting a byte stream into dubbo:// frames, and writing frames with the same size limit.
//!
//! The decoder follows tokio-util's length-delimited codec: two states, `Head` and `Body`, so a
//! header is parsed once however many reads its body takes; `Ok(None)` means "feed me more bytes".
//! The body length is checked against the payload limit before a single byte is reserved for it.
//!
//! A body over the limit is reported once ([`FrameError::TooLong`]) and then skipped: the decoder
//! discards that many bytes as they arrive, never buffering them, so the caller may fail the one
//! call it belonged to and keep reading. Every other error leaves the stream unreadable.

use bytes::{Buf, Bytes, BytesMut};
use rudder_hessian::Hessian2Writer;

use super::error::FrameError;

/// The most the decoder reserves ahead of bytes that have not arrived yet.
const RESERVE_STEP: usize = 64 * 1024;
use super::header::{Flags, Header, HEADER_LEN};

/// Dubbo's default `payload` limit: 8 MiB.
pub(crate) const DEFAULT_PAYLOAD_LIMIT: usize = 8 << 20;

/// One complete frame: its header and its body bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    pub(crate) header: Header,
    pub(crate) body: Bytes,
}

#[derive(Debug, Clone, Copy)]
enum DecodeState {
    Head,
    Body(Header),
    /// Discarding the body of an oversized frame: this many bytes are still to come.
    Skip(u32),
}

/// Incremental frame decoder over a growing read buffer.
#[derive(Debug)]
pub(crate) struct FrameDecoder {
    state: DecodeState,
    max_body_len: usize,
    /// The header of the last oversized frame, for the caller to see whose call it was.
    skipped: Option<Header>,
}

impl FrameDecoder {
    /// A decoder accepting bodies of at most `max_body_len` bytes.
    pub(crate) fn new(max_body_len: usize) -> FrameDecoder {
        FrameDecoder {
            state: DecodeState::Head,
            max_body_len,
            skipped: None,
        }
    }

    /// The header of the last frame reported as [`FrameError::TooLong`].
    pub(crate) fn last_skipped(&self) -> Option<Header> {
        self.skipped
    }

    /// Changes the limit; a body whose header was already read keeps the old one.
    #[cfg(test)]
    pub(crate) fn set_max_body_len(&mut self, max_body_len: usize) {
        self.max_body_len = max_body_len;
    }

    /// Takes the next complete frame off the front of `src`, or `Ok(None)` if it is not all there.
    ///
    /// # Errors
    /// [`FrameError::TooLong`] for a header whose body is over the limit: that body is then skipped
    /// by the following calls, and the caller may go on decoding. Any other [`FrameError`]: the
    /// stream is corrupt and must not be read further.
    pub(crate) fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        if let DecodeState::Skip(remaining) = self.state {
            let discard = src.len().min(remaining as usize);
            src.advance(discard);
            // `discard` is at most `remaining`, a u32.
            let left = remaining - discard as u32;
            if left > 0 {
                self.state = DecodeState::Skip(left);
                return Ok(None);
            }
            self.state = DecodeState::Head;
        }
        let header = match self.state {
            DecodeState::Body(header) => header,
            // A finished skip set the state back to `Head` above.
            DecodeState::Head | DecodeState::Skip(_) => {
                if src.len() < HEADER_LEN {
                    return Ok(None);
                }
                let header = Header::parse(&src[..HEADER_LEN])?;
                let fits =
                    usize::try_from(header.body_len).is_ok_and(|len| len <= self.max_body_len);
                if !fits {
                    src.advance(HEADER_LEN);
                    self.state = DecodeState::Skip(header.body_len);
                    self.skipped = Some(header);
                    return Err(FrameError::TooLong {
                        len: u64::from(header.body_len),
                        limit: self.max_body_len,
                        request_id: header.request_id,
                    });
                }
                src.advance(HEADER_LEN);
                self.state = DecodeState::Body(header);
                header
            }
        };
        // Checked above against the limit, so this cannot overflow or over-reserve.
        let len = header.body_len as usize;
        if src.len() < len {
            // Room for more of this body plus the next header, in steps: memory follows the bytes that
            // actually arrive, so a header that claims the full limit and sends nothing costs 64 KiB.
            src.reserve((len - src.len()).min(RESERVE_STEP) + HEADER_LEN);
            return Ok(None);
        }
        self.state = DecodeState::Head;
        Ok(Some(Frame {
            header,
            body: src.split_to(len).freeze(),
        }))
    }
}

/// A Hessian writer whose buffer already holds room for the header, so a frame is built in one
/// allocation; finish it with [`finish_frame`].
pub(crate) fn start_frame() -> Hessian2Writer {
    Hessian2Writer::from_vec(vec![0u8; HEADER_LEN])
}

/// Fills in the header of a frame started with [`start_frame`].
///
/// # Errors
/// [`FrameError::TooLong`] when the body is over `limit` (or over `i32::MAX`).
pub(crate) fn finish_frame(
    body: Hessian2Writer,
    flags: Flags,
    status: u8,
    request_id: i64,
    limit: usize,
) -> Result<Bytes, FrameError> {
    let mut buf = body.into_bytes();
    let len = buf.len().saturating_sub(HEADER_LEN);
    let body_len = u32::try_from(len)
        .ok()
        .filter(|&l| len <= limit && i32::try_from(l).is_ok())
        .ok_or(FrameError::TooLong {
            len: len as u64,
            limit,
            request_id,
        })?;
    let header = Header {
        flags,
        status,
        request_id,
        body_len,
    };
    buf[..HEADER_LEN].copy_from_slice(&header.to_bytes());
    Ok(Bytes::from(buf))
}

#[cfg(test)]
#[path = "frame_tests.rs"]
mod tests;
