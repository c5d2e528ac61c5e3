//! The condition grammar: `key = v1,v2 & key2 != v3`, tokenised as Dubbo's
//! `([&!=,]*)\s*([^&!=,\s]+)` regex finds it.

use super::matcher::{Matcher, Source};

/// All of these must match (an empty condition matches everything on the `when` side).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Condition {
    /// One matcher per key, in first-seen order.
    pub(crate) matchers: Vec<Matcher>,
}

impl Condition {
    /// Whether there is no matcher.
    pub fn is_empty(&self) -> bool {
        self.matchers.is_empty()
    }

    /// Whether any matcher reads the call's arguments or attachments.
    pub fn reads_call(&self) -> bool {
        self.matchers
            .iter()
            .any(|m| matches!(m.source, Source::Argument(_) | Source::Attachment(_)))
    }
}

fn is_separator(b: u8) -> bool {
    matches!(b, b'&' | b'!' | b'=' | b',')
}

/// `\s` of Java regexes.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// The `(separator, content)` pairs the regex's `find()` loop yields, in order.
pub(crate) fn tokens(rule: &str) -> Vec<(&str, &str)> {
    let bytes = rule.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let mut sep_end = at;
        while sep_end < bytes.len() && is_separator(bytes[sep_end]) {
            sep_end += 1;
        }
        let mut start = sep_end;
        while start < bytes.len() && is_space(bytes[start]) {
            start += 1;
        }
        let mut end = start;
        while end < bytes.len() && !is_separator(bytes[end]) && !is_space(bytes[end]) {
            end += 1;
        }
        if end > start {
            out.push((&rule[at..sep_end], &rule[start..end]));
            at = end;
        } else {
            // No match starts here; only ASCII separators or spaces fail, so `at + 1` is a char boundary.
            at += 1;
        }
    }
    out
}

/// Which value set the last `=`/`!=` added to: `,` adds to it.
#[derive(Clone, Copy)]
enum LastSet {
    Matches(usize),
    Mismatches(usize),
}

/// Parses one side of a condition (`ConditionStateRouter.parseRule`).
///
/// # Errors
/// A value with no key before it, a `,` with no value before it, or an unknown separator (`&&`, `==`).
pub fn parse_condition(rule: &str) -> Result<Condition, String> {
    let mut condition = Condition::default();
    let mut current: Option<usize> = None;
    let mut last: Option<LastSet> = None;
    let error = |sep: &str, content: &str| {
        format!("illegal route rule {rule:?}: unexpected {sep:?} before {content:?}")
    };
    for (sep, content) in tokens(rule) {
        match sep {
            "" => {
                // A new matcher for the key, replacing any earlier one of the same key.
                let fresh = Matcher::new(content);
                match condition.matchers.iter().position(|m| *m.key == *content) {
                    Some(i) => {
                        condition.matchers[i] = fresh;
                        current = Some(i);
                    }
                    None => {
                        condition.matchers.push(fresh);
                        current = Some(condition.matchers.len() - 1);
                    }
                }
            }
            "&" => match condition.matchers.iter().position(|m| *m.key == *content) {
                Some(i) => current = Some(i),
                None => {
                    condition.matchers.push(Matcher::new(content));
                    current = Some(condition.matchers.len() - 1);
                }
            },
            "=" | "!=" => {
                let i = current.ok_or_else(|| error(sep, content))?;
                let set = if sep == "=" {
                    LastSet::Matches(i)
                } else {
                    LastSet::Mismatches(i)
                };
                add(&mut condition, set, content);
                last = Some(set);
            }
            "," => {
                // Java adds to the set last used, even when `&` has since moved to another key.
                let set = match last {
                    Some(set) if !values(&condition, set).is_empty() => set,
                    _ => return Err(error(sep, content)),
                };
                add(&mut condition, set, content);
            }
            _ => return Err(error(sep, content)),
        }
    }
    Ok(condition)
}

fn values(condition: &Condition, set: LastSet) -> &[Box<str>] {
    match set {
        LastSet::Matches(i) => &condition.matchers[i].matches,
        LastSet::Mismatches(i) => &condition.matchers[i].mismatches,
    }
}

fn add(condition: &mut Condition, set: LastSet, value: &str) {
    let list = match set {
        LastSet::Matches(i) => &mut condition.matchers[i].matches,
        LastSet::Mismatches(i) => &mut condition.matchers[i].mismatches,
    };
    if !list.iter().any(|v| **v == *value) {
        list.push(value.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_follow_the_java_regex() {
        assert_eq!(
            tokens("host = 2.2.2.2,1.1.1.1 & host !=1.1.1.1"),
            [
                ("", "host"),
                ("=", "2.2.2.2"),
                (",", "1.1.1.1"),
                ("&", "host"),
                ("!=", "1.1.1.1")
            ]
        );
        // A space inside a value starts a new key.
        assert_eq!(tokens("host = a b"), [("", "host"), ("=", "a"), ("", "b")]);
        assert_eq!(tokens("a==b"), [("", "a"), ("==", "b")]);
        assert_eq!(tokens("  "), []);
    }

    #[test]
    fn parses_matches_and_mismatches() {
        let c = parse_condition("host = 2.2.2.2,1.1.1.1 & host != 1.1.1.1 & method = a").unwrap();
        assert_eq!(c.matchers.len(), 2);
        assert_eq!(&*c.matchers[0].key, "host");
        assert_eq!(c.matchers[0].matches.len(), 2);
        assert_eq!(c.matchers[0].mismatches.len(), 1);
        assert!(!c.reads_call());
        assert!(parse_condition("arguments[0] = a").unwrap().reads_call());
        assert!(parse_condition("attachments[k] = a").unwrap().reads_call());
    }

    #[test]
    fn rejects_what_dubbo_rejects() {
        assert!(parse_condition("= a").is_err());
        assert!(parse_condition("a == b").is_err());
        assert!(parse_condition("a = b && c = d").is_err());
        assert!(parse_condition("a , b").is_err());
    }

    #[test]
    fn a_bare_key_replaces_an_earlier_matcher_of_the_same_key() {
        let c = parse_condition("a = 1 a = 2").unwrap();
        assert_eq!(c.matchers.len(), 1);
        assert_eq!(&*c.matchers[0].matches, [Box::<str>::from("2")]);
        // `&` reuses the matcher.
        let c = parse_condition("a = 1 & a = 2").unwrap();
        assert_eq!(c.matchers[0].matches.len(), 2);
    }
}
