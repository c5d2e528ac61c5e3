//! Child names that could not be used: warned about once each, remembered in bounded memory.
//!
//! A registry can hold any number of junk children, and the catalog sees every one of them again on
//! each listing. Logging them each time would flood the log, and remembering their names would let
//! the junk grow rudder's memory, so only a 64-bit hash of each is kept, up to [`REMEMBERED`] of them
//! (32 KiB). Past that, further junk names are skipped without a warning of their own (one warning says
//! so) and no longer counted.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

/// Distinct junk names remembered (and counted).
pub const REMEMBERED: usize = 4096;

/// The junk names seen so far, by hash.
#[derive(Debug, Default)]
pub(crate) struct JunkLog {
    seen: HashSet<u64>,
    full: bool,
}

impl JunkLog {
    /// Whether `name` is new: the caller then warns about it. `false` for a name already seen, and for
    /// every new one once [`REMEMBERED`] names are remembered.
    pub(crate) fn first_sighting(&mut self, name: &str) -> bool {
        // DefaultHasher::new() has fixed keys: the same name hashes the same on every listing.
        let mut hasher = DefaultHasher::new();
        name.hash(&mut hasher);
        let hash = hasher.finish();
        if self.seen.contains(&hash) {
            return false;
        }
        if self.seen.len() >= REMEMBERED {
            if !self.full {
                self.full = true;
                tracing::warn!(
                    remembered = REMEMBERED,
                    "too many unreadable registry children; further ones are skipped without a warning"
                );
            }
            return false;
        }
        self.seen.insert(hash);
        true
    }

    /// Distinct junk names seen (at most [`REMEMBERED`]).
    pub(crate) fn count(&self) -> u64 {
        self.seen.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_once_and_memory_capped() {
        let mut log = JunkLog::default();
        assert!(log.first_sighting("a"));
        assert!(!log.first_sighting("a"));
        for i in 0..REMEMBERED * 2 {
            log.first_sighting(&format!("junk-{i}"));
        }
        assert_eq!(log.count(), REMEMBERED as u64);
        assert!(!log.first_sighting("never-seen-before"));
        assert!(log.seen.capacity() <= 2 * REMEMBERED + 64);
    }
}
