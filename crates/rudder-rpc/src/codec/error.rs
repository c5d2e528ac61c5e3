//! What can go wrong reading or writing dubbo:// frames and bodies.

use rudder_hessian::DecodeError;

/// A frame-level failure. The byte stream cannot be resynchronised after one of these, so the
/// connection that produced it is closed (and only that connection).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum FrameError {
    /// The first two bytes were not `0xdabb` (a telnet client, or a desynchronised stream).
    #[error("bad magic 0x{found:04x}, expected 0xdabb")]
    BadMagic { found: u16 },
    /// The body length field is negative.
    #[error("negative body length {len} in frame {request_id}")]
    NegativeLength { len: i32, request_id: i64 },
    /// The body length is over the payload limit (URL parameter `payload`).
    #[error("frame {request_id} body of {len} bytes is over the payload limit of {limit} bytes")]
    TooLong {
        len: u64,
        limit: usize,
        request_id: i64,
    },
    /// Fewer than 16 bytes were given to the header parser.
    #[error("header needs 16 bytes, got {len}")]
    Truncated { len: usize },
}

/// A body that could not be decoded. The frame boundary is intact, so only the call it belongs to
/// fails; the connection carries on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum BodyError {
    /// The Hessian stream is malformed. The decoder's error is part of this message, not a
    /// `source()`: the body error is private, and its text is what a provider sends back (status 40).
    #[error("malformed {part}: {error}")]
    Hessian {
        part: &'static str,
        error: DecodeError,
    },
    /// The response kind flag is not one of 0..=5.
    #[error("unknown response kind flag {0}")]
    UnknownResponseFlag(i32),
    /// The body uses a serialization other than hessian2.
    #[error("unsupported serialization id {0} (only hessian2 = 2 is supported)")]
    UnsupportedSerialization(u8),
    /// A generic `$invoke` whose arguments are not (method, types[], args[]).
    #[error("malformed generic call: {0}")]
    BadGenericCall(&'static str),
    /// A parameter descriptor that is not a JVM method descriptor.
    #[error("malformed parameter descriptor {0:?}")]
    BadDescriptor(String),
}

impl BodyError {
    pub(crate) fn hessian(part: &'static str) -> impl FnOnce(DecodeError) -> BodyError {
        move |error| BodyError::Hessian { part, error }
    }
}
