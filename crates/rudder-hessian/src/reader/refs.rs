//! Back-references: the table of referable values and their expansion into copies.
//!
//! Java numbers every list, map and object in the order their headers appear and lets a later `Q`
//! point at any of them. Instead of keeping a copy of each referable value (doubling memory for
//! streams that never use references), the table keeps only the byte range each one came from and a
//! reference is expanded by reading that range again. Class definitions and type names are append-only
//! and indexed, so a second read of the same bytes yields the same value. The total of bytes read again
//! is bounded by [`DecodeLimits::max_ref_expansion`](super::DecodeLimits), which defeats inputs that
//! reference themselves into exponentially large trees.

use super::budget::Budget;
use super::Hessian2Reader;
use crate::error::DecodeError;
use rudder_common::Value;

/// Where one referable value lies in the input; `end` is `None` while it is still being read.
#[derive(Debug, Clone, Copy)]
struct Slot {
    start: usize,
    end: Option<usize>,
}

#[derive(Debug, Default)]
pub(super) struct RefTable {
    slots: Vec<Slot>,
    /// While a range is read again: the index the next value opened there gets.
    replay_next: Option<usize>,
    /// Values opened during replays that are not finished yet (a reference to one is a cycle).
    replay_open: Vec<usize>,
    expanded_bytes: usize,
}

impl RefTable {
    pub(super) fn is_replaying(&self) -> bool {
        self.replay_next.is_some()
    }

    /// Registers a list, map or object whose header starts at `start`; returns its index.
    ///
    /// The table's own growth is charged to `budget`: it holds an entry per value.
    pub(super) fn open(&mut self, start: usize, budget: &mut Budget) -> Result<usize, DecodeError> {
        match self.replay_next.as_mut() {
            Some(next) => {
                let index = *next;
                *next += 1;
                budget.push(&mut self.replay_open, index, start)?;
                Ok(index)
            }
            None => {
                budget.push(&mut self.slots, Slot { start, end: None }, start)?;
                Ok(self.slots.len() - 1)
            }
        }
    }

    /// Marks the value at `index` finished, its bytes ending at `end`.
    pub(super) fn close(&mut self, index: usize, end: usize) {
        if self.replay_next.is_some() {
            self.replay_open.pop();
        } else if let Some(slot) = self.slots.get_mut(index) {
            slot.end = Some(end);
        }
    }
}

impl Hessian2Reader<'_> {
    pub(super) fn resolve_ref(&mut self, index: i64, offset: usize) -> Result<Value, DecodeError> {
        let table = &self.refs;
        let slot = usize::try_from(index)
            .ok()
            .and_then(|i| table.slots.get(i))
            .copied()
            .ok_or(DecodeError::BadRef {
                index,
                count: table.slots.len(),
                offset,
            })?;
        // In range, so it fits usize.
        let index = index as usize;
        let Some(end) = slot.end else {
            return Ok(Value::Ref(index));
        };
        if table.replay_open.contains(&index) {
            return Ok(Value::Ref(index));
        }
        let cost = end - slot.start;
        let limit = self.limits.max_ref_expansion;
        self.refs.expanded_bytes = self.refs.expanded_bytes.saturating_add(cost);
        if self.refs.expanded_bytes > limit {
            return Err(DecodeError::RefExpansionOverLimit { limit, offset });
        }
        let resume_at = self.pos;
        let outer_next = self.refs.replay_next.replace(index);
        self.pos = slot.start;
        let value = self.read_any();
        self.pos = resume_at;
        self.refs.replay_next = outer_next;
        value
    }
}
