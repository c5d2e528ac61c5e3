//! The decoder's error type.

use thiserror::Error;

/// Why a Hessian stream could not be decoded. Every variant names the byte offset (from the start of
/// the reader's input) where the problem was found.
///
/// After an error the reader's position and tables are unspecified: drop it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input ended in the middle of a value.
    #[error("unexpected end of input at byte {offset} while reading {context}")]
    UnexpectedEnd {
        /// Offset where more bytes were needed.
        offset: usize,
        /// What was being read.
        context: &'static str,
    },
    /// A byte that starts no Hessian 2.0 value (e.g. `Z` outside a map, or a reserved code).
    #[error("unknown tag 0x{tag:02x} at byte {offset}")]
    UnknownTag {
        /// The tag byte.
        tag: u8,
        /// Its offset.
        offset: usize,
    },
    /// A valid tag where the grammar wants something else (e.g. a list where a length belongs).
    #[error("unexpected tag 0x{tag:02x} at byte {offset}, expected {expected}")]
    UnexpectedTag {
        /// The tag byte.
        tag: u8,
        /// Its offset.
        offset: usize,
        /// What the grammar allows here.
        expected: &'static str,
    },
    /// A length field is negative, larger than the configured limit, or larger than the input
    /// left could possibly hold.
    #[error("{what} length {len} at byte {offset} is over the limit {limit}")]
    LengthOverLimit {
        /// What the length is of (`list`, `string`, `binary`, `class definition`).
        what: &'static str,
        /// The length read (negative lengths are reported as read).
        len: i64,
        /// The largest length allowed here.
        limit: usize,
        /// Offset of the value.
        offset: usize,
    },
    /// A back-reference (`Q`) to a list, map or object that has not been read.
    #[error("reference #{index} at byte {offset}, but only {count} referable values were read")]
    BadRef {
        /// The index read.
        index: i64,
        /// How many referable values exist so far.
        count: usize,
        /// Offset of the reference.
        offset: usize,
    },
    /// An object names a class definition that has not been read.
    #[error("object of class definition #{index} at byte {offset}, but only {count} were defined")]
    BadClassRef {
        /// The index read.
        index: i64,
        /// How many class definitions exist so far.
        count: usize,
        /// Offset of the object.
        offset: usize,
    },
    /// A typed list or map names a type by an index that has not been defined.
    #[error("type reference #{index} at byte {offset}, but only {count} types were defined")]
    BadTypeRef {
        /// The index read.
        index: i64,
        /// How many type names exist so far.
        count: usize,
        /// Offset of the type reference.
        offset: usize,
    },
    /// A class definition (`C`) is malformed.
    #[error("invalid class definition at byte {offset}: {reason}")]
    InvalidClassDef {
        /// Offset of the `C` tag.
        offset: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// A string holds a byte that cannot start a character.
    #[error("invalid string byte 0x{byte:02x} at byte {offset}")]
    InvalidString {
        /// The byte.
        byte: u8,
        /// Its offset.
        offset: usize,
    },
    /// Lists, maps and objects are nested deeper than the configured limit.
    #[error("nesting deeper than {limit} at byte {offset}")]
    TooDeep {
        /// The configured maximum depth.
        limit: usize,
        /// Offset of the value that went too deep.
        offset: usize,
    },
    /// Expanding back-references into copies would re-read more bytes than the configured limit
    /// (a small input can otherwise reference itself into an exponentially large tree).
    #[error("back-references at byte {offset} expand beyond the limit of {limit} bytes")]
    RefExpansionOverLimit {
        /// The configured limit.
        limit: usize,
        /// Offset of the reference.
        offset: usize,
    },
    /// What the stream decodes to would take more memory than the reader's budget
    /// ([`DecodeLimits::budget_for`](crate::DecodeLimits::budget_for)): the input is denser than
    /// honest data, such as millions of objects or typed lists of a few bytes each.
    #[error("decoded values at byte {offset} would take {used} bytes of memory, over the budget of {limit}")]
    BudgetExceeded {
        /// Bytes the decoded values would have taken with the allocation that failed.
        used: usize,
        /// The reader's budget.
        limit: usize,
        /// Offset of the value being read.
        offset: usize,
    },
}

impl DecodeError {
    /// The byte offset where the problem was found.
    pub fn offset(&self) -> usize {
        match *self {
            DecodeError::UnexpectedEnd { offset, .. }
            | DecodeError::UnknownTag { offset, .. }
            | DecodeError::UnexpectedTag { offset, .. }
            | DecodeError::LengthOverLimit { offset, .. }
            | DecodeError::BadRef { offset, .. }
            | DecodeError::BadClassRef { offset, .. }
            | DecodeError::BadTypeRef { offset, .. }
            | DecodeError::InvalidClassDef { offset, .. }
            | DecodeError::InvalidString { offset, .. }
            | DecodeError::TooDeep { offset, .. }
            | DecodeError::RefExpansionOverLimit { offset, .. }
            | DecodeError::BudgetExceeded { offset, .. } => offset,
        }
    }

    /// Whether more input could have made this decode succeed (the value was cut short).
    pub fn is_truncation(&self) -> bool {
        matches!(self, DecodeError::UnexpectedEnd { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::DecodeError;

    const fn assert_send_sync<T: Send + Sync>() {}
    const _: () = assert_send_sync::<DecodeError>();
}
