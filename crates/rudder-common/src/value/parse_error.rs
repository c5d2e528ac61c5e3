//! The one error of every `FromStr` in the value model.

use thiserror::Error;

/// Why a string is not the Java value asked for (a `BigDecimal`, a `LocalDate`...).
///
/// ```
/// use rudder_common::value::{BigDecimal, LocalDate};
/// let e = "12,5".parse::<BigDecimal>().unwrap_err();
/// assert_eq!(e.to_string(), "\"12,5\" is not a BigDecimal");
/// assert!("2026-02-30".parse::<LocalDate>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{input:?} is not a {what}")]
pub struct ParseError {
    input: String,
    what: &'static str,
}

impl ParseError {
    pub(crate) fn new(input: &str, what: &'static str) -> Self {
        // A hostile input may be huge; the error quotes its start only.
        let input = input.chars().take(64).collect();
        ParseError { input, what }
    }

    /// The Java type that was asked for, e.g. `"LocalDate"`.
    pub fn expected(&self) -> &'static str {
        self.what
    }
}
