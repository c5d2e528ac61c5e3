//! A tiny ISO-8601 scanner shared by the time types.

use std::fmt;

/// A position in an ASCII string being parsed; every step returns `None` on a mismatch.
pub(super) struct Cursor<'a> {
    rest: &'a [u8],
}

impl<'a> Cursor<'a> {
    /// Runs `parse` over `s` and insists it used every byte.
    pub(super) fn whole<T>(
        s: &'a str,
        parse: impl FnOnce(&mut Cursor<'a>) -> Option<T>,
    ) -> Option<T> {
        let mut c = Cursor { rest: s.as_bytes() };
        let value = parse(&mut c)?;
        c.rest.is_empty().then_some(value)
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.rest.first().copied()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    pub(super) fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.rest = &self.rest[1..];
            true
        } else {
            false
        }
    }

    pub(super) fn expect(&mut self, b: u8) -> Option<()> {
        self.eat(b).then_some(())
    }

    /// Between `min` and `max` ASCII digits.
    pub(super) fn digits(&mut self, min: usize, max: usize) -> Option<&'a str> {
        let n = self.rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if n < min || n > max {
            return None;
        }
        let (digits, rest) = self.rest.split_at(n);
        self.rest = rest;
        std::str::from_utf8(digits).ok()
    }

    /// Exactly `n` digits as a number.
    pub(super) fn number(&mut self, n: usize) -> Option<u32> {
        self.digits(n, n)?.parse().ok()
    }

    /// 1-9 fraction digits as nanoseconds.
    pub(super) fn nanos(&mut self) -> Option<u32> {
        let digits = self.digits(1, 9)?;
        let value: u32 = digits.parse().ok()?;
        Some(value * 10u32.pow(9 - digits.len() as u32))
    }

    /// Up to (not including) `end`, or `None` if it never comes.
    pub(super) fn until(&mut self, end: u8) -> Option<&'a str> {
        let i = self.rest.iter().position(|b| *b == end)?;
        let (head, rest) = self.rest.split_at(i);
        self.rest = &rest[1..];
        std::str::from_utf8(head).ok()
    }
}

/// Writes a nanosecond fraction the way Java's ISO formatters do: nothing for zero, else 3, 6 or
/// 9 digits.
pub(super) fn fraction(f: &mut fmt::Formatter<'_>, nano: u32) -> fmt::Result {
    match (nano, nano % 1_000_000, nano % 1000) {
        (0, _, _) => Ok(()),
        (_, 0, _) => write!(f, ".{:03}", nano / 1_000_000),
        (_, _, 0) => write!(f, ".{:06}", nano / 1000),
        _ => write!(f, ".{nano:09}"),
    }
}
