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
            // Each unit takes at least one byte, so the remaining input bounds the allocation.
            let decoder = decoder
                .get_or_insert_with(|| UnitDecoder::with_capacity(units.min(self.remaining())));
            decoder.decode(self.input, &mut self.pos, units)?;
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
