//! The decoder's limits, and the memory budget that bounds what one stream may decode to.
//!
//! # How decoded memory is counted
//!
//! Every allocation the reader makes for the values it returns (and for its own tables) is charged
//! to one budget per reader, before it is made:
//!
//! - a slot in a list (`size_of::<Value>()`, 48 bytes), a map entry (two values, 96 bytes) or an
//!   object field (a shared name and a value, 64 bytes), charged by the capacity reserved, so a
//!   declared length is charged in full before any element is read and a growing container is
//!   charged for each doubling;
//! - the bytes of every string and binary, by the capacity of its buffer;
//! - class definitions, type names and the back-reference table (one entry per list, map or object).
//!
//! Class names, field names and type names are shared ([`Arc<str>`](std::sync::Arc)): a 64 KiB class name
//! is charged once where it is defined, and each object of that class only for its slot and fields.
//! Values that back-references expand into copies are charged like any other, so a reference bomb
//! meets the budget as well as [`DecodeLimits::max_ref_expansion`].
//!
//! The budget of a reader over `n` input bytes is
//! `min(max_decoded_bytes, n × decoded_bytes_per_input_byte + decoded_bytes_allowance)`. Honest
//! bodies stay well inside the defaults (32 per byte, 8 MiB allowance, 256 MiB absolute): text and
//! binary cost about 1 byte per byte, typical objects with strings and numbers 10 to 15, and only
//! containers packed with one-byte numbers or nulls come near 48 to 72, which the allowance absorbs
//! for the first few hundred kilobytes.

use std::mem::size_of;

use crate::error::DecodeError;

/// Bounds that keep hostile input from exhausting the stack or memory.
///
/// ```
/// use rudder_hessian::{DecodeLimits, Hessian2Reader};
/// let limits = DecodeLimits { max_depth: 16, ..DecodeLimits::default() };
/// let mut r = Hessian2Reader::with_limits(&[0x90], limits);
/// assert_eq!(r.read_int().unwrap(), 0);
///
/// // A reader over 1 KiB gets 1 KiB × 32 + 8 MiB of decoded memory.
/// assert_eq!(DecodeLimits::default().budget_for(1024), 32 * 1024 + (8 << 20));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeLimits {
    /// Deepest nesting of lists, maps and objects (default 128).
    pub max_depth: usize,
    /// Largest string (in UTF-16 units), binary (in bytes) or list (in items) (default 16 MiB).
    pub max_length: usize,
    /// Most bytes re-read to expand back-references into copies, per reader (default 8 MiB).
    pub max_ref_expansion: usize,
    /// Most bytes of memory one reader may decode to, whatever its input (default 256 MiB:
    /// 32 × Dubbo's default 8 MiB payload limit; see [`DecodeLimits::for_payload`]).
    pub max_decoded_bytes: usize,
    /// Bytes of decoded memory each input byte may cost (default 32).
    pub decoded_bytes_per_input_byte: usize,
    /// Bytes of decoded memory any input may cost on top of its per-byte share (default 8 MiB),
    /// so small bodies of densely packed numbers still decode.
    pub decoded_bytes_allowance: usize,
}

/// Dubbo's default `payload` limit, which the default budget is derived from.
const DEFAULT_PAYLOAD: usize = 8 << 20;
const PER_INPUT_BYTE: usize = 32;

impl DecodeLimits {
    /// The default limits, with the absolute decoded-memory budget scaled to a `payload` limit
    /// (the largest body a peer may send): `payload × 32`, the same ratio the per-byte budget allows.
    ///
    /// ```
    /// use rudder_hessian::DecodeLimits;
    /// assert_eq!(DecodeLimits::for_payload(1 << 20).max_decoded_bytes, 32 << 20);
    /// assert_eq!(DecodeLimits::for_payload(8 << 20), DecodeLimits::default());
    /// ```
    pub fn for_payload(payload: usize) -> Self {
        DecodeLimits {
            max_depth: 128,
            max_length: 16 << 20,
            max_ref_expansion: 8 << 20,
            max_decoded_bytes: payload.saturating_mul(PER_INPUT_BYTE),
            decoded_bytes_per_input_byte: PER_INPUT_BYTE,
            decoded_bytes_allowance: 8 << 20,
        }
    }

    /// The decoded-memory budget of a reader over `input_len` bytes.
    pub fn budget_for(&self, input_len: usize) -> usize {
        input_len
            .saturating_mul(self.decoded_bytes_per_input_byte)
            .saturating_add(self.decoded_bytes_allowance)
            .min(self.max_decoded_bytes)
    }
}

impl Default for DecodeLimits {
    fn default() -> Self {
        DecodeLimits::for_payload(DEFAULT_PAYLOAD)
    }
}

/// Smallest capacity a growing container gets (what `Vec` itself starts with for small items).
const MIN_GROWTH: usize = 4;

/// Decoded memory charged so far against the reader's budget.
#[derive(Debug)]
pub(super) struct Budget {
    used: usize,
    limit: usize,
}

impl Budget {
    pub(super) fn new(limit: usize) -> Self {
        Budget { used: 0, limit }
    }

    /// Charges `bytes`, failing (with the total it would have reached) when that is over the limit.
    #[inline]
    pub(super) fn charge(&mut self, bytes: usize, offset: usize) -> Result<(), DecodeError> {
        let used = self.used.saturating_add(bytes);
        if used > self.limit {
            return Err(DecodeError::BudgetExceeded {
                used,
                limit: self.limit,
                offset,
            });
        }
        self.used = used;
        Ok(())
    }

    /// A vector with room for exactly `len` items, charged before it is allocated.
    #[inline]
    pub(super) fn vec_with_capacity<T>(
        &mut self,
        len: usize,
        offset: usize,
    ) -> Result<Vec<T>, DecodeError> {
        self.charge(len.saturating_mul(size_of::<T>()), offset)?;
        Ok(Vec::with_capacity(len))
    }

    /// Makes room for one more item in `vec`, doubling it (at least to [`MIN_GROWTH`]) and charging
    /// the new room before it is allocated.
    #[inline]
    pub(super) fn reserve_one<T>(
        &mut self,
        vec: &mut Vec<T>,
        offset: usize,
    ) -> Result<(), DecodeError> {
        if vec.len() < vec.capacity() {
            return Ok(());
        }
        let growth = vec.capacity().max(MIN_GROWTH);
        self.charge(growth.saturating_mul(size_of::<T>()), offset)?;
        vec.reserve_exact(growth);
        Ok(())
    }

    /// Pushes `item`, charging any growth of `vec` first.
    #[inline]
    pub(super) fn push<T>(
        &mut self,
        vec: &mut Vec<T>,
        item: T,
        offset: usize,
    ) -> Result<(), DecodeError> {
        self.reserve_one(vec, offset)?;
        vec.push(item);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_is_relative_to_the_input_and_capped() {
        let limits = DecodeLimits::default();
        assert_eq!(limits.budget_for(0), 8 << 20);
        assert_eq!(limits.budget_for(100), 3200 + (8 << 20));
        assert_eq!(limits.budget_for(usize::MAX), 256 << 20);
    }

    #[test]
    fn growth_is_charged_before_it_happens() {
        let mut budget = Budget::new(4 * 8 + 8 * 8);
        let mut v: Vec<u64> = Vec::new();
        for i in 0..8 {
            budget.push(&mut v, i, 0).unwrap();
        }
        assert_eq!(v.capacity(), 8);
        // The ninth item would double to 16: 64 more bytes than the budget has.
        let e = budget.push(&mut v, 8, 7).unwrap_err();
        assert_eq!(
            e,
            DecodeError::BudgetExceeded {
                used: 128,
                limit: 96,
                offset: 7
            }
        );
        assert_eq!(v.capacity(), 8);
    }
}
