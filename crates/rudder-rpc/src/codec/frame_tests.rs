//! Split-packet tests for the frame decoder, named after tokio-util's length-delimited tests.

use bytes::BytesMut;

use super::*;
use crate::codec::header::MAGIC;

fn frame_bytes(flags: u8, id: i64, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&MAGIC);
    out.push(flags);
    out.push(20);
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(body);
    out
}

fn decoder() -> FrameDecoder {
    FrameDecoder::new(DEFAULT_PAYLOAD_LIMIT)
}

#[test]
fn read_empty_buffer() {
    assert_eq!(decoder().decode(&mut BytesMut::new()), Ok(None));
}

#[test]
fn read_incomplete_head() {
    let bytes = frame_bytes(0x02, 1, b"N");
    let mut d = decoder();
    let mut buf = BytesMut::from(&bytes[..15]);
    assert_eq!(d.decode(&mut buf), Ok(None));
    assert_eq!(buf.len(), 15, "nothing consumed before the header is whole");
    buf.extend_from_slice(&bytes[15..]);
    let frame = d.decode(&mut buf).unwrap().expect("complete");
    assert_eq!(frame.header.request_id, 1);
    assert_eq!(&frame.body[..], b"N");
}

#[test]
fn read_incomplete_body() {
    let bytes = frame_bytes(0x02, 7, b"hello world");
    let mut d = decoder();
    let mut buf = BytesMut::from(&bytes[..20]);
    assert_eq!(d.decode(&mut buf), Ok(None));
    assert!(
        buf.capacity() >= 11 + HEADER_LEN - 4,
        "reserved the rest of the body"
    );
    buf.extend_from_slice(&bytes[20..]);
    let frame = d.decode(&mut buf).unwrap().expect("complete");
    assert_eq!(&frame.body[..], b"hello world");
    assert!(buf.is_empty());
}

#[test]
fn read_over_limit_fails_before_reserving() {
    let mut head = frame_bytes(0x02, 9, b"");
    head[12..16].copy_from_slice(&0x7fff_ffffu32.to_be_bytes());
    let mut buf = BytesMut::from(&head[..]);
    let err = FrameDecoder::new(1024).decode(&mut buf).unwrap_err();
    assert_eq!(
        err,
        FrameError::TooLong {
            len: 0x7fff_ffff,
            limit: 1024,
            request_id: 9
        }
    );
    assert!(buf.capacity() < 4096, "no reservation for the claimed body");
    assert_eq!(
        err.to_string(),
        "frame 9 body of 2147483647 bytes is over the payload limit of 1024 bytes"
    );
}

#[test]
fn read_at_limit_is_accepted() {
    let bytes = frame_bytes(0x02, 1, &[b'x'; 64]);
    let mut buf = BytesMut::from(&bytes[..]);
    assert!(FrameDecoder::new(64).decode(&mut buf).unwrap().is_some());
    let mut buf = BytesMut::from(&bytes[..]);
    assert!(FrameDecoder::new(63).decode(&mut buf).is_err());
}

#[test]
fn read_bad_magic() {
    let mut bytes = frame_bytes(0x02, 1, b"N");
    bytes[0] = b't';
    let err = decoder()
        .decode(&mut BytesMut::from(&bytes[..]))
        .unwrap_err();
    assert!(matches!(err, FrameError::BadMagic { .. }), "{err}");
}

#[test]
fn read_multi_frame_one_packet() {
    let mut bytes = Vec::new();
    for id in 0..5 {
        bytes.extend(frame_bytes(0x02, id, &vec![b'a'; id as usize]));
    }
    let mut buf = BytesMut::from(&bytes[..]);
    let mut d = decoder();
    for id in 0..5 {
        let frame = d.decode(&mut buf).unwrap().expect("a frame");
        assert_eq!(frame.header.request_id, id);
        assert_eq!(frame.body.len(), id as usize);
    }
    assert_eq!(d.decode(&mut buf), Ok(None));
}

#[test]
fn read_single_frame_multi_packet() {
    let bytes = frame_bytes(0xc2, 42, &[7u8; 300]);
    let mut d = decoder();
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    for chunk in bytes.chunks(7) {
        buf.extend_from_slice(chunk);
        if let Some(frame) = d.decode(&mut buf).unwrap() {
            frames.push(frame);
        }
    }
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0].header.request_id, 42);
    assert!(frames[0].header.flags.is_request());
    assert_eq!(&frames[0].body[..], &[7u8; 300][..]);
}

#[test]
fn read_update_max_body_len_in_flight() {
    let bytes = frame_bytes(0x02, 3, &[1u8; 100]);
    let mut d = FrameDecoder::new(200);
    let mut buf = BytesMut::from(&bytes[..50]);
    assert_eq!(d.decode(&mut buf), Ok(None));
    // The header already passed the old limit; the new one applies from the next frame.
    d.set_max_body_len(10);
    buf.extend_from_slice(&bytes[50..]);
    assert!(d.decode(&mut buf).unwrap().is_some());
    let mut next = BytesMut::from(&bytes[..]);
    assert!(matches!(
        d.decode(&mut next),
        Err(FrameError::TooLong { limit: 10, .. })
    ));
}

#[test]
fn write_enforces_the_limit() {
    let mut w = start_frame();
    w.write_string("0123456789");
    let err = finish_frame(w, Flags::RESPONSE, 20, 5, 4).unwrap_err();
    assert!(matches!(
        err,
        FrameError::TooLong {
            len: 11,
            limit: 4,
            request_id: 5
        }
    ));
    let mut w = start_frame();
    w.write_null();
    let bytes = finish_frame(w, Flags::EVENT_REQUEST, 0, 0x63, 1).unwrap();
    assert_eq!(
        &bytes[..],
        &frame_bytes_with_status(0xe2, 0, 0x63, b"N")[..]
    );
}

fn frame_bytes_with_status(flags: u8, status: u8, id: i64, body: &[u8]) -> Vec<u8> {
    let mut out = frame_bytes(flags, id, body);
    out[3] = status;
    out
}

#[test]
fn oversized_body_is_skipped_as_it_streams_in_and_the_next_frame_decodes() {
    let big = frame_bytes(0x02, 3, &[b'z'; 5000]);
    let next = frame_bytes(0x02, 4, b"ok");
    let stream: Vec<u8> = big.iter().chain(next.iter()).copied().collect();
    let mut d = FrameDecoder::new(1024);
    let mut buf = BytesMut::new();
    let (mut errors, mut frames, mut most_buffered) = (Vec::new(), Vec::new(), 0);
    for piece in stream.chunks(700) {
        buf.extend_from_slice(piece);
        most_buffered = most_buffered.max(buf.len());
        loop {
            match d.decode(&mut buf) {
                Ok(Some(frame)) => frames.push(frame),
                Ok(None) => break,
                Err(e) => errors.push(e),
            }
        }
    }
    assert_eq!(
        errors,
        vec![FrameError::TooLong {
            len: 5000,
            limit: 1024,
            request_id: 3
        }]
    );
    assert_eq!(d.last_skipped().map(|h| h.request_id), Some(3));
    assert_eq!(frames.len(), 1);
    assert_eq!(
        (frames[0].header.request_id, &frames[0].body[..]),
        (4, &b"ok"[..])
    );
    assert!(
        most_buffered <= 700 + HEADER_LEN,
        "skipped bytes are not kept"
    );
}
