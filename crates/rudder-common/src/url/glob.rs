//! Dubbo's `UrlUtils.isMatchGlobPattern`: rule values with one `*` wildcard.

/// Whether `value` matches `pattern`: `*` matches everything; otherwise the last `*` splits the
/// pattern into a prefix and a suffix the value must start and end with (they may overlap, as in
/// Java); without `*` the two must be equal. An empty pattern matches only an empty value (Java's
/// `null` reads as empty: pass `""`).
///
/// ```
/// use rudder_common::url::is_match_glob_pattern;
/// assert!(is_match_glob_pattern("10.20.*", "10.20.3.3"));
/// assert!(is_match_glob_pattern("*:20880", "10.0.0.7:20880"));
/// assert!(!is_match_glob_pattern("10.0.0.1", "10.0.0.12"));
/// ```
pub fn is_match_glob_pattern(pattern: &str, value: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    if pattern.is_empty() || value.is_empty() {
        return pattern.is_empty() && value.is_empty();
    }
    match pattern.rfind('*') {
        None => value == pattern,
        Some(i) if i == pattern.len() - 1 => value.starts_with(&pattern[..i]),
        Some(0) => value.ends_with(&pattern[1..]),
        Some(i) => value.starts_with(&pattern[..i]) && value.ends_with(&pattern[i + 1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::is_match_glob_pattern as glob;

    /// Dubbo 3.3's `UrlUtilsTest.testIsMatchGlobPattern` (the `$key` form reads a URL parameter
    /// first; callers that support it look the parameter up themselves).
    #[test]
    fn url_utils_test_is_match_glob_pattern() {
        assert!(glob("*", "value"));
        assert!(glob("", ""));
        assert!(!glob("", "value"));
        assert!(glob("value", "value"));
        assert!(glob("v*", "value"));
        assert!(glob("*e", "value"));
        assert!(glob("v*e", "value"));
    }

    #[test]
    fn the_last_star_splits_and_parts_may_overlap() {
        assert!(glob("*", ""));
        assert!(!glob("a", ""));
        assert!(glob("10*3", "10.20.3.3"));
        assert!(!glob("10*4", "10.20.3.3"));
        assert!(glob("a*a", "a"), "prefix and suffix overlap, as in Java");
        assert!(glob("a*b*c", "a*bc"), "only the last star is a wildcard");
        assert!(!glob("a*b*c", "abc"));
        assert!(!glob("a", "b"));
    }
}
