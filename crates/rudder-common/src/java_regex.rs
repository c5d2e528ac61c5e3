//! Java's `String.matches(regex)` for rule matchers: the pattern must match the whole input.
//!
//! Tag rules (`match: {regex: ...}`) and configurator conditions (v3.0 `match`) both ask Java for
//! `input.matches(pattern)`. Rust's `regex` crate has no back-references or look-around; a pattern
//! using them (or an invalid one, on which Java would throw when routing) never matches here, with one
//! warning when the rule is read. Compiled patterns are bounded (1 MiB of program), so a hostile rule
//! cannot make the consumer compile without limit.
//!
//! ```
//! use rudder_common::java_regex::WholeRegex;
//! let gray = WholeRegex::new("gray|blue".to_owned(), "tag rule");
//! assert!(gray.is_match("gray") && !gray.is_match("grayish"));
//! assert!(!WholeRegex::new("(a)\\1".to_owned(), "tag rule").is_match("aa"));
//! ```

/// A pattern compiled once to match whole inputs; equal when the sources are.
#[derive(Debug, Clone)]
pub struct WholeRegex {
    source: String,
    compiled: Option<regex::Regex>,
}

impl WholeRegex {
    /// Compiles `source`; `rule` names what it came from in the warning given when it cannot be
    /// compiled (then it never matches).
    pub fn new(source: String, rule: &str) -> WholeRegex {
        let compiled = regex::RegexBuilder::new(&format!("^(?:{source})$"))
            .size_limit(1 << 20)
            .build();
        if let Err(error) = &compiled {
            tracing::warn!(regex = %source, %error, "{rule} regex can never match");
        }
        WholeRegex {
            compiled: compiled.ok(),
            source,
        }
    }

    /// Whether `input` matches as a whole.
    pub fn is_match(&self, input: &str) -> bool {
        self.compiled.as_ref().is_some_and(|r| r.is_match(input))
    }

    /// The pattern as written in the rule.
    pub fn source(&self) -> &str {
        &self.source
    }
}

impl PartialEq for WholeRegex {
    fn eq(&self, other: &WholeRegex) -> bool {
        self.source == other.source
    }
}
