//! Response bodies (`DubboCodec.encodeResponseData` / `DecodeableRpcResult`), and heartbeats.
//!
//! An OK body starts with a kind flag (a Hessian int): 0 exception, 1 value, 2 null, and 3/4/5 the
//! same followed by an attachments map. Providers add attachments only for callers that sent dubbo
//! version 2.0.2..2.0.99. Any other status has a body of one Hessian string, the error message.

use bytes::Bytes;
use rudder_common::value::{JavaException, Value};
use rudder_hessian::{DecodeLimits, Hessian2Reader};

use super::error::{BodyError, FrameError};
use super::frame::{finish_frame, start_frame, DEFAULT_PAYLOAD_LIMIT};
use super::header::{Flags, Header, HESSIAN2};
use crate::response::{ProviderError, ResponseStatus, RpcResponse};

const WITH_EXCEPTION: i32 = 0;
const VALUE: i32 = 1;
const NULL_VALUE: i32 = 2;
const ATTACHMENTS_OFFSET: i32 = 3;

/// The Hessian limits for a body of `len` bytes.
///
/// The frame decoder admitted the body, so the configured `payload` limit is at least `len`; the
/// absolute decoded-memory budget scales with that (`DecodeLimits::for_payload`), and the budget
/// relative to the body's own length is what binds: a body may decode to at most 32 bytes of memory
/// per byte plus 8 MiB.
pub(crate) fn body_limits(len: usize) -> DecodeLimits {
    DecodeLimits::for_payload(len.max(DEFAULT_PAYLOAD_LIMIT))
}

/// A decoded response frame: either the provider's answer or its status error.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// Status 20: a value or business exception.
    Ok(RpcResponse),
    /// Any other status, with its message.
    Status(ProviderError),
}

/// Decodes the body of a non-event response frame.
///
/// # Errors
/// [`BodyError`] when the body does not decode, including one that would decode to more memory
/// than its budget ([`body_limits`]); the frame itself was sound, so only this call fails.
pub(crate) fn decode_response(header: &Header, body: &[u8]) -> Result<Answer, BodyError> {
    if header.flags.serialization_id() != HESSIAN2 {
        return Err(BodyError::UnsupportedSerialization(
            header.flags.serialization_id(),
        ));
    }
    let mut r = Hessian2Reader::with_limits(body, body_limits(body.len()));
    let status = ResponseStatus::from_byte(header.status);
    if status != ResponseStatus::Ok {
        // A message that does not decode still leaves the status worth reporting.
        let message = r
            .read_string()
            .unwrap_or_else(|e| format!("(undecodable error message: {e})"));
        return Ok(Answer::Status(ProviderError::new(status, message)));
    }
    // sofa-rpc-node answers a `null` result with a bare hessian null and no response flag at all.
    if body == [b'N'] {
        return Ok(Answer::Ok(RpcResponse::from_value(Value::Null)));
    }
    let flag = r.read_int().map_err(BodyError::hessian("response kind"))?;
    let kind = match flag {
        0..=2 => flag,
        3..=5 => flag - ATTACHMENTS_OFFSET,
        other => return Err(BodyError::UnknownResponseFlag(other)),
    };
    let response = match kind {
        VALUE => RpcResponse::from_value(r.read_value().map_err(BodyError::hessian("result"))?),
        NULL_VALUE => RpcResponse::from_value(Value::Null),
        _ => {
            let thrown = r.read_value().map_err(BodyError::hessian("exception"))?;
            RpcResponse::from_exception(exception_of(&thrown))
        }
    };
    if flag < ATTACHMENTS_OFFSET {
        return Ok(Answer::Ok(response));
    }
    let attachments = match r.read_value().map_err(BodyError::hessian("attachments"))? {
        Value::Map { entries, .. } => entries
            .into_iter()
            .filter_map(|(k, v)| match k {
                Value::String(k) => Some((k, v)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    Ok(Answer::Ok(response.with_attachments(attachments)))
}

/// A thrown value that does not look like a `Throwable` is still reported, by its class.
fn exception_of(thrown: &Value) -> JavaException {
    JavaException::from_value(thrown).unwrap_or_else(|| JavaException {
        class: match thrown {
            Value::Object { class, .. } => class.to_string(),
            _ => "java.lang.Throwable".to_owned(),
        },
        message: None,
        cause: None,
    })
}

/// Whether a caller of this dubbo version understands response attachments (`Version.isSupportResponseAttachment`).
pub(crate) fn supports_response_attachments(dubbo_version: &str) -> bool {
    dubbo_version
        .strip_prefix("2.0.")
        .and_then(|minor| minor.parse::<u32>().ok())
        .is_some_and(|minor| (2..=99).contains(&minor))
}

/// An OK response frame for `outcome`.
///
/// # Errors
/// [`FrameError::TooLong`] when the body is over `limit`.
pub(crate) fn encode_response(
    request_id: i64,
    outcome: &Result<Value, JavaException>,
    attachments: Option<&[(&str, &str)]>,
    limit: usize,
) -> Result<Bytes, FrameError> {
    let mut w = start_frame();
    let offset = if attachments.is_some() {
        ATTACHMENTS_OFFSET
    } else {
        0
    };
    match outcome {
        Ok(Value::Null) => w.write_int(NULL_VALUE + offset),
        Ok(value) => {
            w.write_int(VALUE + offset);
            w.write_value(value);
        }
        Err(exception) => {
            w.write_int(WITH_EXCEPTION + offset);
            let base = w.ref_count();
            w.write_value(&exception_value(exception, base));
        }
    }
    if let Some(attachments) = attachments {
        w.write_attachments(attachments.iter().copied());
    }
    finish_frame(
        w,
        Flags::RESPONSE,
        ResponseStatus::Ok.code(),
        request_id,
        limit,
    )
}

/// A status-error response frame: the body is the message alone.
///
/// # Errors
/// [`FrameError::TooLong`] when even the message is over `limit`.
pub(crate) fn encode_status(
    request_id: i64,
    status: ResponseStatus,
    message: &str,
    limit: usize,
) -> Result<Bytes, FrameError> {
    let mut w = start_frame();
    w.write_string(message);
    finish_frame(w, Flags::RESPONSE, status.code(), request_id, limit)
}

/// A heartbeat request (`request = true`) or its answer: an event frame whose body is `null`.
pub(crate) fn encode_heartbeat(request_id: i64, request: bool) -> Bytes {
    let mut w = start_frame();
    w.write_null();
    let (flags, status) = if request {
        (Flags::EVENT_REQUEST, 0)
    } else {
        (Flags::EVENT_RESPONSE, ResponseStatus::Ok.code())
    };
    // One byte of body can never be over a limit worth having.
    finish_frame(w, flags, status, request_id, usize::MAX).unwrap_or_default()
}

/// The body of an event request: `None` for a heartbeat, `Some("R")` for readonly, etc.
pub(crate) fn event_name(body: &[u8]) -> Option<String> {
    Hessian2Reader::new(body).read_string().ok()
}

/// A `Throwable` as Java serializes it, field by field; a missing cause is the throwable itself.
fn exception_value(e: &JavaException, ref_index: usize) -> Value {
    let cause = match &e.cause {
        Some(cause) => exception_value(cause, ref_index + 1),
        None => Value::Ref(ref_index),
    };
    Value::Object {
        class: e.class.as_str().into(),
        fields: vec![
            ("detailMessage".into(), Value::from(e.message.clone())),
            ("cause".into(), cause),
            (
                "stackTrace".into(),
                Value::List {
                    type_name: Some("[java.lang.StackTraceElement".into()),
                    items: Vec::new(),
                },
            ),
            (
                "suppressedExceptions".into(),
                Value::List {
                    type_name: Some("java.util.Collections$EmptyList".into()),
                    items: Vec::new(),
                },
            ),
        ],
    }
}

#[cfg(test)]
mod budget_tests {
    use super::*;

    #[test]
    fn the_budget_follows_the_body_and_scales_past_the_default_payload() {
        assert_eq!(body_limits(1024).budget_for(1024), 32 * 1024 + (8 << 20));
        // A provider configured for 64 MiB bodies gets the same per-byte budget, not a lower cap.
        let big = 64 << 20;
        assert_eq!(body_limits(big).budget_for(big), 32 * big);
    }
}
