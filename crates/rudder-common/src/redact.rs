//! What of a URL may be shown: never its credentials, never a secret parameter's value.
//!
//! One rule for every place a registry or provider URL (or a key derived from one) leaves the
//! process: log lines, error messages, CLI output, metrics labels, spans.
//!
//! * The user information (`user:password@`) is replaced by `***@`. It runs from the scheme to the
//!   last `@` before the query's first `=`, as rudder's registry URL parser reads it, so a password
//!   holding `/`, `?` or `@` is hidden whole.
//! * The value of every [secret parameter](is_secret_parameter) becomes `***` (`token=***`).
//!
//! ```
//! use rudder_common::redact;
//!
//! assert_eq!(
//!     redact::url("zookeeper://app:s3/cr@t@10.0.0.1:2181?backup=h:2&token=abc"),
//!     "zookeeper://***@10.0.0.1:2181?backup=h:2&token=***"
//! );
//! assert_eq!(redact::url("dubbo://10.0.0.1:20880/S?weight=5"), "dubbo://10.0.0.1:20880/S?weight=5");
//! ```

use std::borrow::Cow;

/// What a hidden part is replaced with.
pub const MASK: &str = "***";

/// Parameter names (compared without case, after the last `.`, so `sayHello.token` and
/// `registry.password` count too) whose values are secrets: Dubbo's `token` (token authentication),
/// passwords, and the key/secret pairs of cloud registries and config centres.
const SECRET_NAMES: &[&str] = &[
    "token",
    "password",
    "passwd",
    "secret",
    "secretkey",
    "secret-key",
    "accesskey",
    "access-key",
    "credential",
    "credentials",
    "privatekey",
    "private-key",
];

/// Whether the value of parameter `key` is a secret (see [`url`]).
///
/// ```
/// use rudder_common::redact::is_secret_parameter;
/// assert!(is_secret_parameter("token"));
/// assert!(is_secret_parameter("sayHello.TOKEN"));
/// assert!(is_secret_parameter("accessKey"));
/// assert!(!is_secret_parameter("tls.key")); // a path, not a key
/// assert!(!is_secret_parameter("weight"));
/// ```
pub fn is_secret_parameter(key: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key).trim();
    SECRET_NAMES
        .iter()
        .any(|name| name.eq_ignore_ascii_case(last))
}

/// `text` (a URL, plain, or anything that may hold one) with its user information and the values of
/// its secret parameters replaced by [`MASK`]. Borrowed when nothing needed hiding.
pub fn url(text: &str) -> Cow<'_, str> {
    let start = text.find("://").map_or(0, |i| i + 3);
    let query = text[start..].find('?').map(|q| start + q);
    let userinfo_end = {
        // The last `@` before the query's first `=` (a password may hold `?`, not `?...=`).
        let limit = query
            .and_then(|q| text[q..].find('=').map(|e| q + e))
            .unwrap_or(text.len());
        text[start..limit].rfind('@').map(|at| start + at)
    };
    let query = match (query, userinfo_end) {
        // A `?` inside the password is not the query.
        (Some(q), Some(at)) if q < at => text[at..].find('?').map(|i| at + i),
        (q, _) => q,
    };
    let secret_query = query.is_some_and(|q| {
        text[q + 1..].split('&').any(|part| {
            part.split_once('=')
                .is_some_and(|(k, _)| is_secret_parameter(k))
        })
    });
    if userinfo_end.is_none() && !secret_query {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..start]);
    let rest = match userinfo_end {
        Some(at) => {
            out.push_str(MASK);
            at
        }
        None => start,
    };
    match query {
        Some(q) if secret_query => {
            out.push_str(&text[rest..=q]);
            for (i, part) in text[q + 1..].split('&').enumerate() {
                if i > 0 {
                    out.push('&');
                }
                match part.split_once('=') {
                    Some((k, _)) if is_secret_parameter(k) => {
                        out.push_str(k);
                        out.push('=');
                        out.push_str(MASK);
                    }
                    _ => out.push_str(part),
                }
            }
        }
        _ => out.push_str(&text[rest..]),
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_every_shape_are_hidden() {
        for (text, shown) in [
            ("dubbo://u:p@h:1/S", "dubbo://***@h:1/S"),
            ("dubbo://u:p/w@rd@h:1/S?x=1", "dubbo://***@h:1/S?x=1"),
            (
                "zookeeper://app:a?b@h:1?backup=h2:2",
                "zookeeper://***@h:1?backup=h2:2",
            ),
            ("u:p@h:1", "***@h:1"),
            ("zookeeper://user@h:1", "zookeeper://***@h:1"),
            (
                "dubbo://h:1/S?token=t0k&weight=1",
                "dubbo://h:1/S?token=***&weight=1",
            ),
            (
                "dubbo://u:p@h:1/S?m.token=1&accessKey=k&tls.key=/etc/k.pem",
                "dubbo://***@h:1/S?m.token=***&accessKey=***&tls.key=/etc/k.pem",
            ),
        ] {
            assert_eq!(url(text), shown, "{text}");
        }
    }

    #[test]
    fn nothing_to_hide_borrows() {
        for text in [
            "dubbo://h:1/S?weight=1",
            "",
            "h:1",
            "zookeeper://h:1?backup=a@b",
        ] {
            assert!(matches!(url(text), Cow::Borrowed(_)), "{text}");
        }
    }

    #[test]
    fn no_input_shows_a_secret_it_marks() {
        // A property-style check over many shapes: the secret never survives.
        let secrets = ["pw", "p@w", "p/w", "p?w", "p:w"];
        for secret in secrets {
            for text in [
                format!("dubbo://user:{secret}@10.0.0.1:20880/S?x=1"),
                format!("zookeeper://user:{secret}@10.0.0.1?backup=h:2"),
                format!("dubbo://10.0.0.1:20880/S?token={secret}"),
                format!("user:{secret}@h"),
            ] {
                let shown = url(&text);
                assert!(!shown.contains(secret), "{text} -> {shown}");
            }
        }
    }
}
