//! Byte-level reading: fixed-width fields and the chunked string and binary bodies.

use super::Hessian2Reader;
use crate::error::DecodeError;
use crate::tags::*;
use crate::text::UnitDecoder;

impl Hessian2Reader<'_> {
    pub(super) fn remaining(&self) -> usize {
        self.input.len().saturating_sub(self.pos)
    }

    pub(super) fn peek(&self, context: &'static str) -> Result<u8, DecodeError> {
        self.input
            .get(self.pos)
            .copied()
            .ok_or(DecodeError::UnexpectedEnd {
                offset: self.pos,
                context,
            })
    }

    pub(super) fn byte(&mut self, context: &'static str) -> Result<u8, DecodeError> {
        let b = self.peek(context)?;
        self.pos += 1;
        Ok(b)
    }

    pub(super) fn array<const N: usize>(
        &mut self,
        context: &'static str,
    ) -> Result<[u8; N], DecodeError> {
        let bytes = self.take(N, context)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    fn take(&mut self, len: usize, context: &'static str) -> Result<&[u8], DecodeError> {
        let start = self.pos;
        let end = start
            .checked_add(len)
            .filter(|end| *end <= self.input.len())
            .ok_or(DecodeError::UnexpectedEnd {
                offset: self.input.len(),
                context,
            })?;
        self.pos = end;
        Ok(&self.input[start..end])
    }

    /// Reads the string whose first tag (`tag`, at `offset`) was already consumed, following `R`
    /// chunks until the final one.
    pub(super) fn string_body(
        &mut self,
        mut tag: u8,
        offset: usize,
    ) -> Result<String, DecodeError> {
        let mut decoder: Option<UnitDecoder> = None;
        let mut total = 0usize;
        let mut charged = 0usize;
        loop {
            let (units, last) = match tag {
                0x00..=0x1f => (usize::from(tag), true),
                0x30..=0x33 => {
                    let low = usize::from(self.byte("string length")?);
                    ((usize::from(tag - STRING_SHORT) << 8) | low, true)
                }
                STRING_FINAL | STRING_CHUNK => {
                    let len = usize::from(u16::from_be_bytes(self.array("string length")?));
                    (len, tag == STRING_FINAL)
                }
                _ => {
                    return Err(DecodeError::UnexpectedTag {
                        tag,
                        offset: self.pos - 1,
                        expected: "string chunk",
                    })
                }
            };
            total += units;
            if total > self.limits.max_length {
                return Err(DecodeError::LengthOverLimit {
                    what: "string",
                    len: total as i64,
                    limit: self.limits.max_length,
                    offset,
                });
            }
            let decoder = match decoder.as_mut() {
                Some(decoder) => decoder,
                None => {
                    // Each unit takes at least one byte, so the remaining input bounds the
                    // allocation; it is charged before it is made.
                    charged = units.min(self.remaining());
                    self.budget.charge(charged, offset)?;
                    decoder.insert(UnitDecoder::with_capacity(charged))
                }
            };
            decoder.decode(self.input, &mut self.pos, units)?;
            // Decoded text is never longer than its input, so growth is charged once it happened.
            let capacity = decoder.capacity();
            if capacity > charged {
                self.budget.charge(capacity - charged, offset)?;
                charged = capacity;
            }
            if last {
                break;
            }
            tag = self.byte("string chunk")?;
        }
        Ok(decoder.map(UnitDecoder::finish).unwrap_or_default())
    }

    /// Reads the binary whose first tag was already consumed, following `A` chunks.
    pub(super) fn binary_body(
        &mut self,
        mut tag: u8,
        offset: usize,
    ) -> Result<Vec<u8>, DecodeError> {
        let mut out = Vec::new();
        loop {
            let (len, last) = match tag {
                0x20..=0x2f => (usize::from(tag - BINARY_DIRECT), true),
                0x34..=0x37 => {
                    let low = usize::from(self.byte("binary length")?);
                    ((usize::from(tag - BINARY_SHORT) << 8) | low, true)
                }
                BINARY_FINAL | BINARY_CHUNK => {
                    let len = usize::from(u16::from_be_bytes(self.array("binary length")?));
                    (len, tag == BINARY_FINAL)
                }
                _ => {
                    return Err(DecodeError::UnexpectedTag {
                        tag,
                        offset: self.pos - 1,
                        expected: "binary chunk",
                    })
                }
            };
            if out.len() + len > self.limits.max_length {
                return Err(DecodeError::LengthOverLimit {
                    what: "binary",
                    len: (out.len() + len) as i64,
                    limit: self.limits.max_length,
                    offset,
                });
            }
            let needed = out.len() + len;
            // When the chunk is not all there, `take` below fails before anything is reserved.
            if needed > out.capacity() && len <= self.remaining() {
                // Double for chunked binaries, but never past what the input could still hold.
                let capacity = needed
                    .max(out.capacity() * 2)
                    .min(out.len() + self.remaining());
                self.budget.charge(capacity - out.capacity(), offset)?;
                out.reserve_exact(capacity - out.len());
            }
            // `take` checks the bytes exist before anything is copied.
            let chunk = self.take(len, "binary")?;
            out.extend_from_slice(chunk);
            if last {
                return Ok(out);
            }
            tag = self.byte("binary chunk")?;
        }
    }
}
