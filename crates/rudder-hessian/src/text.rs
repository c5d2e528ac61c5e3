//! Java's string encoding on the Hessian wire.
//!
//! Hessian counts string lengths in UTF-16 code units and writes each unit as a 1-3 byte UTF-8-like
//! sequence, so a character outside the Basic Multilingual Plane becomes two 3-byte surrogates
//! (CESU-8). Standard UTF-8 decoding would reject those bytes, hence this module.

use crate::error::DecodeError;

/// The number of UTF-16 units in `s` (Java's `String.length()`).
pub(crate) fn utf16_len(s: &str) -> usize {
    s.bytes()
        .map(|b| usize::from(b & 0xc0 != 0x80) + usize::from(b >= 0xf0))
        .sum()
}

/// Appends `s` in Java's encoding.
pub(crate) fn encode_into(s: &str, out: &mut Vec<u8>) {
    // For the Basic Multilingual Plane, Java's bytes are exactly UTF-8.
    if !s.bytes().any(|b| b >= 0xf0) {
        out.extend_from_slice(s.as_bytes());
        return;
    }
    let mut units = [0u16; 2];
    for c in s.chars() {
        if c.len_utf8() < 4 {
            let mut tmp = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
        } else {
            for unit in c.encode_utf16(&mut units).iter() {
                out.push(0xe0 | (unit >> 12) as u8);
                out.push(0x80 | ((unit >> 6) & 0x3f) as u8);
                out.push(0x80 | (unit & 0x3f) as u8);
            }
        }
    }
}

/// Splits `s` at the byte index where its first `max_units` UTF-16 units end, never inside a
/// surrogate pair (Java shortens such a chunk by one unit). Returns the byte index and unit count.
pub(crate) fn split_at_units(s: &str, max_units: usize) -> (usize, usize) {
    let mut units = 0;
    for (index, c) in s.char_indices() {
        let width = c.len_utf16();
        if units + width > max_units {
            return (index, units);
        }
        units += width;
    }
    (s.len(), units)
}

/// Decodes Java-encoded UTF-16 units into a Rust string, pairing surrogates even across chunks.
#[derive(Debug, Default)]
pub(crate) struct UnitDecoder {
    out: String,
    pending_high: bool,
    high: u16,
}

impl UnitDecoder {
    pub(crate) fn with_capacity(bytes: usize) -> Self {
        UnitDecoder {
            out: String::with_capacity(bytes),
            ..UnitDecoder::default()
        }
    }

    /// Bytes reserved for the decoded text so far.
    pub(crate) fn capacity(&self) -> usize {
        self.out.capacity()
    }

    /// Decodes `units` UTF-16 units from `input` starting at `*pos`, advancing `*pos`.
    pub(crate) fn decode(
        &mut self,
        input: &[u8],
        pos: &mut usize,
        mut units: usize,
    ) -> Result<(), DecodeError> {
        while units > 0 {
            let start = *pos;
            let lead = *input.get(start).ok_or(eof(start))?;
            if lead < 0x80 {
                // Fast path for ASCII runs.
                let run = input[start..]
                    .iter()
                    .take(units)
                    .take_while(|b| **b < 0x80)
                    .count();
                self.flush_lone_high();
                // An ASCII run is valid UTF-8, so the conversion always succeeds.
                if let Ok(ascii) = std::str::from_utf8(&input[start..start + run]) {
                    self.out.push_str(ascii);
                }
                *pos += run;
                units -= run;
                continue;
            }
            let (width, used_units) = match lead {
                0xc0..=0xdf => (2, 1),
                0xe0..=0xef => (3, 1),
                // Not Java's, but some non-Java writers send real 4-byte UTF-8: count it as a pair.
                0xf0..=0xf7 => (4, 2),
                _ => {
                    return Err(DecodeError::InvalidString {
                        offset: start,
                        byte: lead,
                    })
                }
            };
            let bytes = input.get(start..start + width).ok_or(eof(input.len()))?;
            *pos += width;
            units = units.saturating_sub(used_units);
            // Like Java, continuation bytes are masked, not validated.
            let tail = |i: usize| u32::from(bytes[i] & 0x3f);
            let code = match width {
                2 => (u32::from(lead & 0x1f) << 6) | tail(1),
                3 => (u32::from(lead & 0x0f) << 12) | (tail(1) << 6) | tail(2),
                _ => (u32::from(lead & 0x07) << 18) | (tail(1) << 12) | (tail(2) << 6) | tail(3),
            };
            self.push_code(code);
        }
        Ok(())
    }

    fn push_code(&mut self, code: u32) {
        match code {
            0xd800..=0xdbff => {
                self.flush_lone_high();
                self.pending_high = true;
                self.high = code as u16;
            }
            0xdc00..=0xdfff => {
                if self.pending_high {
                    self.pending_high = false;
                    let high = u32::from(self.high - 0xd800);
                    let combined = 0x10000 + (high << 10) + (code - 0xdc00);
                    self.out
                        .push(char::from_u32(combined).unwrap_or(char::REPLACEMENT_CHARACTER));
                } else {
                    self.out.push(char::REPLACEMENT_CHARACTER);
                }
            }
            _ => {
                self.flush_lone_high();
                self.out
                    .push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
        }
    }

    fn flush_lone_high(&mut self) {
        if self.pending_high {
            self.pending_high = false;
            self.out.push(char::REPLACEMENT_CHARACTER);
        }
    }

    /// The decoded string; a high surrogate left unpaired at the end becomes U+FFFD.
    pub(crate) fn finish(mut self) -> String {
        self.flush_lone_high();
        self.out
    }
}

fn eof(offset: usize) -> DecodeError {
    DecodeError::UnexpectedEnd {
        offset,
        context: "string",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_len_counts_pairs_twice() {
        assert_eq!(utf16_len("é😀a"), 4);
    }

    #[test]
    fn split_never_cuts_a_pair() {
        assert_eq!(split_at_units("a😀", 2), (1, 1));
        assert_eq!(split_at_units("a😀", 3), (5, 3));
    }

    #[test]
    fn lone_surrogates_become_replacement() {
        let mut d = UnitDecoder::default();
        let bytes = [0xed, 0xa0, 0xbd, b'x', 0xed, 0xb8, 0x80];
        let mut pos = 0;
        d.decode(&bytes, &mut pos, 3).unwrap();
        assert_eq!(d.finish(), "\u{fffd}x\u{fffd}");
    }
}
