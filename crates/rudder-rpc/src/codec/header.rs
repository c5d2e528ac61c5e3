//! The 16-byte dubbo:// frame header, parsed and written without any I/O.
//!
//! Layout (big-endian, Dubbo's `ExchangeCodec`):
//!
//! ```text
//! 0      2      3       4                 12            16
//! +------+------+-------+-----------------+-------------+
//! |daBB  |flags |status | request id (i64)| body len i32|
//! +------+------+-------+-----------------+-------------+
//! flags: 0x80 REQUEST | 0x40 TWOWAY | 0x20 EVENT | low 5 bits = serialization id
//! ```

use super::error::FrameError;

/// Length of the header in bytes.
pub(crate) const HEADER_LEN: usize = 16;
/// The two magic bytes every frame starts with.
pub(crate) const MAGIC: [u8; 2] = [0xda, 0xbb];

const FLAG_REQUEST: u8 = 0x80;
const FLAG_TWOWAY: u8 = 0x40;
const FLAG_EVENT: u8 = 0x20;
const SERIALIZATION_MASK: u8 = 0x1f;

/// Serialization id of hessian2, the only body format rudder speaks.
pub(crate) const HESSIAN2: u8 = 2;

/// The flags byte: direction, two-way, event, serialization id. Any byte is valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Flags(u8);

impl Flags {
    /// A two-way hessian2 request.
    pub(crate) const REQUEST: Flags = Flags(FLAG_REQUEST | FLAG_TWOWAY | HESSIAN2);
    /// A two-way hessian2 event request (heartbeat).
    pub(crate) const EVENT_REQUEST: Flags =
        Flags(FLAG_REQUEST | FLAG_TWOWAY | FLAG_EVENT | HESSIAN2);
    /// A hessian2 response.
    pub(crate) const RESPONSE: Flags = Flags(HESSIAN2);
    /// A hessian2 event response (heartbeat answer).
    pub(crate) const EVENT_RESPONSE: Flags = Flags(FLAG_EVENT | HESSIAN2);

    pub(crate) fn from_byte(byte: u8) -> Flags {
        Flags(byte)
    }
    pub(crate) fn byte(self) -> u8 {
        self.0
    }
    pub(crate) fn is_request(self) -> bool {
        self.0 & FLAG_REQUEST != 0
    }
    pub(crate) fn is_twoway(self) -> bool {
        self.0 & FLAG_TWOWAY != 0
    }
    pub(crate) fn is_event(self) -> bool {
        self.0 & FLAG_EVENT != 0
    }
    pub(crate) fn serialization_id(self) -> u8 {
        self.0 & SERIALIZATION_MASK
    }
}

/// One parsed header. `body_len` is already known to be non-negative.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) flags: Flags,
    /// Raw status byte; meaningful in responses only (see [`crate::ResponseStatus`]).
    pub(crate) status: u8,
    pub(crate) request_id: i64,
    pub(crate) body_len: u32,
}

impl Header {
    /// Parses the first [`HEADER_LEN`] bytes of `bytes`.
    ///
    /// # Errors
    /// [`FrameError::BadMagic`] and [`FrameError::NegativeLength`]; a short slice is
    /// [`FrameError::Truncated`] (callers normally check the length first).
    pub(crate) fn parse(bytes: &[u8]) -> Result<Header, FrameError> {
        let head: &[u8; HEADER_LEN] = bytes
            .get(..HEADER_LEN)
            .and_then(|h| h.try_into().ok())
            .ok_or(FrameError::Truncated { len: bytes.len() })?;
        if head[..2] != MAGIC {
            return Err(FrameError::BadMagic {
                found: u16::from_be_bytes([head[0], head[1]]),
            });
        }
        let mut id = [0u8; 8];
        id.copy_from_slice(&head[4..12]);
        let request_id = i64::from_be_bytes(id);
        let len = i32::from_be_bytes([head[12], head[13], head[14], head[15]]);
        let body_len =
            u32::try_from(len).map_err(|_| FrameError::NegativeLength { len, request_id })?;
        Ok(Header {
            flags: Flags::from_byte(head[2]),
            status: head[3],
            request_id,
            body_len,
        })
    }

    /// The 16 header bytes. `body_len` must fit an `i32`; the frame encoder checks it.
    pub(crate) fn to_bytes(self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[..2].copy_from_slice(&MAGIC);
        out[2] = self.flags.byte();
        out[3] = self.status;
        out[4..12].copy_from_slice(&self.request_id.to_be_bytes());
        out[12..].copy_from_slice(&self.body_len.to_be_bytes());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_heartbeat_request_header() {
        let bytes = [
            0xda, 0xbb, 0xe2, 0x00, 0, 0, 0, 0, 0, 0, 0, 0x63, 0, 0, 0, 1,
        ];
        let h = Header::parse(&bytes).unwrap();
        assert!(h.flags.is_request() && h.flags.is_twoway() && h.flags.is_event());
        assert_eq!(h.flags.serialization_id(), HESSIAN2);
        assert_eq!((h.request_id, h.body_len), (0x63, 1));
        assert_eq!(h.flags, Flags::EVENT_REQUEST);
        assert_eq!(h.to_bytes(), bytes);
    }

    #[test]
    fn response_header_round_trips() {
        let h = Header {
            flags: Flags::RESPONSE,
            status: 20,
            request_id: 1,
            body_len: 0x33,
        };
        let bytes = h.to_bytes();
        assert_eq!(
            bytes,
            [0xda, 0xbb, 0x02, 0x14, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0x33]
        );
        assert_eq!(Header::parse(&bytes).unwrap(), h);
    }

    #[test]
    fn bad_magic_and_negative_length_are_errors() {
        let mut bytes = [0u8; HEADER_LEN];
        assert!(matches!(
            Header::parse(&bytes),
            Err(FrameError::BadMagic { found: 0 })
        ));
        bytes[..2].copy_from_slice(&MAGIC);
        bytes[12..].copy_from_slice(&(-5i32).to_be_bytes());
        assert!(matches!(
            Header::parse(&bytes),
            Err(FrameError::NegativeLength { len: -5, .. })
        ));
        assert!(matches!(
            Header::parse(&bytes[..3]),
            Err(FrameError::Truncated { len: 3 })
        ));
    }

    #[test]
    fn every_flags_byte_is_accepted() {
        for b in 0..=u8::MAX {
            let f = Flags::from_byte(b);
            assert_eq!(f.byte(), b);
            assert!(f.serialization_id() < 32);
        }
    }
}
