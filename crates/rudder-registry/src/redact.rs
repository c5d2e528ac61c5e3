//! What may be logged of a registry child name: never its credentials.
//!
//! A provider may register `dubbo://user:password@host:port/...` (Dubbo keeps credentials in the URL),
//! and a junk child name can hold anything. A parsed [`DubboUrl`](rudder_common::url::DubboUrl) already
//! leaves credentials out of `Display`; these helpers cover what cannot be parsed: the raw name, and the
//! parse error, whose text quotes part of the input (a password holding `/` is read as a port).

use rudder_common::url::UrlError;

/// Longest part of a child name shown in a log line, in bytes (a child name can be 1 MB).
const SHOWN: usize = 256;

/// `name` percent-decoded where it can be, with everything from `://` (or the start) to the last `@`
/// replaced by `***` and secret parameter values by `***` ([`rudder_common::redact`]), cut to a few
/// hundred bytes: safe to log, still recognisable.
///
/// ```text
/// dubbo%3A%2F%2Fu%3Ap%40ss%40h%3A1%2FS  ->  dubbo://***@h:1/S
/// ```
pub(crate) fn node_name(name: &str) -> String {
    let decoded = lenient_decode(name);
    // Only the `://` (or the start) and the last `@` matter here, not where the query starts: a junk
    // name's `@` after a `=` still hides everything before it.
    let start = decoded.find("://").map_or(0, |i| i + 3);
    let mut shown = match decoded[start..].rfind('@') {
        Some(at) => format!("{}***{}", &decoded[..start], &decoded[start + at..]),
        None => decoded,
    };
    // Then the common rule, for the values of secret parameters (`token=***`).
    shown = rudder_common::redact::url(&shown).into_owned();
    if shown.len() > SHOWN {
        let mut cut = SHOWN;
        while !shown.is_char_boundary(cut) {
            cut -= 1;
        }
        shown.truncate(cut);
        shown.push_str("...");
    }
    shown
}

/// What is wrong, without quoting the input (a [`UrlError`]'s `Display` does quote it).
pub(crate) fn url_error(error: &UrlError) -> &'static str {
    match error {
        UrlError::Empty => "empty",
        UrlError::MissingProtocol => "no protocol before ://",
        UrlError::BadProtocol(_) => "invalid protocol",
        UrlError::BadPort(_) => "port not a number in 0..=65535",
        UrlError::BadHost(_) => "invalid host",
        UrlError::BadEscape { .. } => "invalid percent escape",
        UrlError::NotUtf8 => "not UTF-8 once decoded",
        UrlError::BadNumber { .. } => "a numeric parameter is not a number",
        _ => "unreadable",
    }
}

/// `%XX` and `+` decoded as Java's `URLDecoder` does, a broken escape kept as written, invalid UTF-8
/// replaced: never fails, so even a junk name can be redacted.
fn lenient_decode(name: &str) -> String {
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(bytes.len().min(4 * SHOWN));
    let mut i = 0;
    // Decoding more than is shown (plus what redaction may cut) is wasted work.
    while i < bytes.len() && out.len() < 4 * SHOWN {
        let escaped = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match (escaped, bytes[i]) {
            (Some(byte), _) => {
                out.push(byte);
                i += 3;
            }
            (None, b'+') => {
                out.push(b' ');
                i += 1;
            }
            (None, byte) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    if i < bytes.len() {
        // Cut: the rest may hold an `@` that redaction must see, so hide everything after the scheme.
        let mut head = String::from_utf8_lossy(&out).into_owned();
        let start = head.find("://").map_or(0, |i| i + 3);
        head.truncate(start);
        head.push_str("***@...");
        return head;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rudder_common::url::DubboUrl;

    #[test]
    fn credentials_are_hidden_in_every_form() {
        let plain = "dubbo://admin:p4ss/w@rd@10.0.0.1:20880/S?x=1";
        let encoded = rudder_common::url::java_url_encode(plain);
        let lower = encoded.to_lowercase();
        for name in [plain, encoded.as_str(), lower.as_str(), "admin:p4ss@h:1/S"] {
            let shown = node_name(name);
            assert!(!shown.contains("p4ss"), "{name} -> {shown}");
            assert!(!shown.contains("admin"), "{name} -> {shown}");
        }
        assert_eq!(node_name(&encoded), "dubbo://***@10.0.0.1:20880/S?x=1");
        assert_eq!(node_name("dubbo%3A%2F%2Fh%3A1%2FS"), "dubbo://h:1/S");
        assert_eq!(node_name("%zz-junk"), "%zz-junk");
    }

    #[test]
    fn long_names_are_cut_and_a_late_at_still_hides_the_credentials() {
        let long = format!("dubbo://u:secret{}@h:1/S", "x".repeat(5000));
        let shown = node_name(&long);
        assert!(shown.len() < 2 * SHOWN, "{}", shown.len());
        assert!(!shown.contains("secret"), "{shown}");
        let multibyte = "é".repeat(1000);
        assert!(node_name(&multibyte).len() <= SHOWN + 3);
    }

    #[test]
    fn parse_errors_are_described_without_quoting() {
        // A password with `/` is read as a port: the error quotes it, the description does not.
        let error = DubboUrl::parse("dubbo://u:pa/ss@h:1/S").unwrap_err();
        assert!(error.to_string().contains("pa"));
        assert_eq!(url_error(&error), "port not a number in 0..=65535");
    }
}
