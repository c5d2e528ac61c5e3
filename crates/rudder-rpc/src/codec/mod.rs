//! The dubbo:// wire format: frame header, frame splitting, request and response bodies.
//!
//! Pure functions over bytes, no I/O: the connection and the server drive them. The layout follows
//! Dubbo Java's `ExchangeCodec` (header, events) and `DubboCodec` (bodies); see
//! `wire-protocols.md` §2 for the byte-level description and captured exchanges.

mod descriptor;
mod error;
mod frame;
mod header;
mod request;
mod response;

#[cfg(test)]
pub(crate) use error::BodyError;
pub(crate) use error::FrameError;
pub(crate) use frame::{Frame, FrameDecoder, DEFAULT_PAYLOAD_LIMIT};
#[cfg(feature = "wire")]
pub(crate) use header::{Flags, Header};
pub(crate) use request::{decode_request, encode_request, ServiceTarget, NO_VERSION};
pub(crate) use response::{
    decode_response, encode_heartbeat, encode_response, encode_status, event_name,
    supports_response_attachments, Answer,
};

#[cfg(test)]
mod tests;
