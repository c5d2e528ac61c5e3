//! One key of a condition: where its value comes from and how patterns match it.
//!
//! * `method`/`methods`: the call's method on the `when` side; the URL's `method` parameter otherwise.
//! * `arguments[N]`: `String.valueOf(args[N])`; a bad or missing index reads a sentinel string, so
//!   `!=` matches it (Dubbo's behaviour, kept).
//! * `attachments[k]`: the call's attachment `k`; absent is no match.
//! * anything else: the URL's parameter or special key (`host`, `port`, `address`, `protocol`, `path`).
//!
//! Patterns: `a~b` (inclusive integer range, `~b` up to b) or a glob with one `*` (prefix, suffix or
//! infix); on the `then` side `$key` reads the consumer's `key`.

use std::borrow::Cow;
use std::fmt::Write;

use rudder_common::invocation::Invocation;
use rudder_common::java_string::write_java_string;
use rudder_common::net::java_split;
use rudder_common::url::{is_match_glob_pattern, DubboUrl};

use crate::router::sample::{original, raw_parameter};
use crate::router::Consumer;

/// What Dubbo reads for an argument or attachment it cannot locate.
pub const NOT_FOUND: &str = "dubbo_internal_not_found_argument_condition_value";

/// Where a condition key's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    Method,
    /// The argument index, or `None` when the key names none (the sentinel is read).
    Argument(Option<usize>),
    /// The attachment key, or `None` when the key names none (the sentinel is read).
    Attachment(Option<Box<str>>),
    Param,
}

/// One key with its `=` and `!=` values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Matcher {
    pub(crate) key: Box<str>,
    pub(crate) source: Source,
    pub(crate) matches: Vec<Box<str>>,
    pub(crate) mismatches: Vec<Box<str>>,
}

/// What a condition is evaluated against.
pub(crate) enum Side<'a> {
    /// The consumer and the call (`invocation` is `None` when the result is computed per method).
    When {
        consumer: &'a Consumer,
        method: &'a str,
        invocation: Option<&'a Invocation>,
    },
    /// A provider, with the consumer for `$key` patterns.
    Then {
        provider: &'a DubboUrl,
        consumer: &'a DubboUrl,
    },
}

impl Matcher {
    pub(crate) fn new(key: &str) -> Matcher {
        let head = key.split('.').next().unwrap_or("");
        let source = if key.starts_with("attachments") {
            Source::Attachment(attachment_key(head).map(Into::into))
        } else if key.starts_with("arguments") {
            Source::Argument(argument_index(head))
        } else if key == "method" || key == "methods" {
            Source::Method
        } else {
            Source::Param
        };
        Matcher {
            key: key.into(),
            source,
            matches: Vec::new(),
            mismatches: Vec::new(),
        }
    }

    fn value<'a>(&self, side: &Side<'a>, scratch: &'a mut String) -> Option<Cow<'a, str>> {
        match (side, &self.source) {
            (Side::When { method, .. }, Source::Method) => Some(Cow::Borrowed(*method)),
            (Side::When { invocation, .. }, Source::Argument(index)) => {
                let argument = index.and_then(|i| (*invocation)?.arguments().get(i));
                let Some(argument) = argument else {
                    return Some(Cow::Borrowed(NOT_FOUND));
                };
                scratch.clear();
                let _ = write_java_string(scratch, argument);
                Some(Cow::Borrowed(scratch.as_str()))
            }
            (Side::When { invocation, .. }, Source::Attachment(key)) => match key {
                Some(key) => (*invocation)?.attachment(key).map(Cow::Borrowed),
                None => Some(Cow::Borrowed(NOT_FOUND)),
            },
            (Side::When { consumer, .. }, _) => consumer.sample(&self.key),
            // The then side has no call: Java's NPE is caught and the sentinel read.
            (Side::Then { .. }, Source::Argument(_) | Source::Attachment(_)) => {
                Some(Cow::Borrowed(NOT_FOUND))
            }
            (Side::Then { provider, .. }, _) => original(provider, &self.key),
        }
    }

    /// `AbstractConditionMatcher.isMatch`: an absent value never matches, `!=` wins over `=`.
    pub(crate) fn is_match(&self, side: &Side<'_>) -> bool {
        let mut scratch = String::new();
        let Some(value) = self.value(side, &mut scratch) else {
            return false;
        };
        let is_when = matches!(side, Side::When { .. });
        let consumer = match side {
            Side::Then { consumer, .. } => Some(*consumer),
            Side::When { .. } => None,
        };
        let hit = |patterns: &[Box<str>]| {
            patterns
                .iter()
                .any(|p| pattern_match(p, &value, consumer, is_when))
        };
        if !self.mismatches.is_empty() && hit(&self.mismatches) {
            return false;
        }
        if !self.matches.is_empty() {
            return hit(&self.matches);
        }
        !self.mismatches.is_empty()
    }
}

/// `arguments\[([0-9]+)\]` found in the key's first dotted part.
fn argument_index(head: &str) -> Option<usize> {
    let at = head.find("arguments[")?;
    let rest = &head[at + "arguments[".len()..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || rest.as_bytes().get(digits) != Some(&b']') {
        return None;
    }
    // Java's Integer.parseInt: an index beyond i32 throws, which reads the sentinel.
    rest[..digits].parse::<i32>().ok().map(|i| i as usize)
}

/// `attachments\[(.+)\]` found in the key's first dotted part (greedy: up to the last `]`).
fn attachment_key(head: &str) -> Option<&str> {
    let at = head.find("attachments[")?;
    let rest = &head[at + "attachments[".len()..];
    let close = rest.rfind(']')?;
    (close > 0).then(|| &rest[..close])
}

/// A `ValuePattern`: range when the pattern has `~`, else a glob.
fn pattern_match(pattern: &str, value: &str, consumer: Option<&DubboUrl>, is_when: bool) -> bool {
    if pattern.contains('~') {
        return range_match(pattern, value, is_when);
    }
    match (consumer, pattern.strip_prefix('$')) {
        (Some(consumer), Some(key)) => {
            is_match_glob_pattern(raw_parameter(consumer, key).as_deref().unwrap_or(""), value)
        }
        _ => is_match_glob_pattern(pattern, value),
    }
}

/// `StringUtils.parseInteger`: digits only, else 0; `None` when Java's `parseInt` would throw.
fn parse_integer(s: &str) -> Option<i32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Some(0);
    }
    s.parse().ok()
}

/// `RangeValuePattern`: a malformed range gives `false` on the when side and `true` on the then side.
fn range_match(pattern: &str, value: &str, is_when: bool) -> bool {
    let default = !is_when;
    let Some(v) = parse_integer(value) else {
        return default;
    };
    let parts = java_split(pattern, '~');
    if parts.len() < 2 {
        return default;
    }
    let (start, end) = (parts[0], parts[1]);
    let bound = |s: &str| parse_integer(s);
    match (start.is_empty(), end.is_empty()) {
        (true, true) => default,
        (true, false) => bound(end).map_or(default, |e| v <= e),
        (false, true) => bound(start).map_or(default, |s| v >= s),
        (false, false) => match (bound(start), bound(end)) {
            (Some(s), Some(e)) => s <= v && v <= e,
            _ => default,
        },
    }
}

/// Renders a rule's matcher for explanations: `key = a,b != c`.
pub(crate) fn describe(matcher: &Matcher) -> String {
    let mut out = String::from(&*matcher.key);
    if !matcher.matches.is_empty() {
        let _ = write!(out, " = {}", matcher.matches.join(","));
    }
    if !matcher.mismatches.is_empty() {
        let _ = write!(out, " != {}", matcher.mismatches.join(","));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_including_dubbos_broken_open_end() {
        assert!(range_match("1~100", "80", true));
        assert!(!range_match("1~100", "101", true));
        assert!(range_match("~100", "1", true));
        assert!(!range_match("~100", "101", true));
        // `1~` splits into one part in Java: the default, false when, true then.
        assert!(!range_match("1~", "5", true));
        assert!(range_match("1~", "5", false));
        // Non-numbers read as 0.
        assert!(range_match("~1", "abc", true));
        assert!(!range_match("1~5", "-3", true));
    }

    #[test]
    fn argument_and_attachment_keys() {
        assert_eq!(argument_index("arguments[0]"), Some(0));
        assert_eq!(argument_index("arguments[12]"), Some(12));
        assert_eq!(argument_index("arguments"), None);
        assert_eq!(argument_index("arguments[x]"), None);
        assert_eq!(attachment_key("attachments[foo]"), Some("foo"));
        assert_eq!(attachment_key("attachments[]"), None);
        assert_eq!(attachment_key("attachments"), None);
    }
}
