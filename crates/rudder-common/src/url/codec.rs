//! `java.net.URLEncoder` / `URLDecoder` compatible encoding, the form Dubbo uses for ZooKeeper node names.
//!
//! Dubbo writes every registry node name as `URLEncoder.encode(url.toFullString(), "UTF-8")`: the bytes
//! `A-Z a-z 0-9 . - * _` stay as they are, a space becomes `+`, and every other byte becomes `%XX` with
//! upper-case hex. Decoding is the inverse: `%XX` gives a byte, `+` gives a space.

use std::fmt::Write as _;

use super::UrlError;

fn keeps(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'*' | b'_')
}

/// Encodes `s` exactly as Java's `URLEncoder.encode(s, "UTF-8")` does.
///
/// ```
/// use rudder_common::url::java_url_encode;
/// assert_eq!(java_url_encode("dubbo://a:1/S?x=1 2"), "dubbo%3A%2F%2Fa%3A1%2FS%3Fx%3D1+2");
/// ```
pub fn java_url_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 2);
    for &b in s.as_bytes() {
        if keeps(b) {
            out.push(b as char);
        } else if b == b' ' {
            out.push('+');
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Decodes `s` as Java's `URLDecoder.decode(s, "UTF-8")` does: `%XX` escapes and `+` as a space.
///
/// # Errors
/// A `%` not followed by two hex digits, or bytes that are not UTF-8 once decoded, give
/// [`UrlError::BadEscape`] / [`UrlError::NotUtf8`].
///
/// ```
/// use rudder_common::url::java_url_decode;
/// assert_eq!(java_url_decode("a%2Cb+c").unwrap(), "a,b c");
/// assert!(java_url_decode("50%").is_err());
/// ```
pub fn java_url_decode(s: &str) -> Result<String, UrlError> {
    if !s.bytes().any(|b| b == b'%' || b == b'+') {
        return Ok(s.to_owned());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .ok_or(UrlError::BadEscape { offset: i })?;
                let hi = hex_value(hex[0]).ok_or(UrlError::BadEscape { offset: i })?;
                let lo = hex_value(hex[1]).ok_or(UrlError::BadEscape { offset: i })?;
                out.push(hi << 4 | lo);
                i += 3;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| UrlError::NotUtf8)
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_java() {
        assert_eq!(java_url_encode("A-z0.9*_~ é"), "A-z0.9*_%7E+%C3%A9");
        assert_eq!(java_url_encode(""), "");
    }

    #[test]
    fn decode_rejects_truncated_and_non_hex_escapes() {
        assert_eq!(
            java_url_decode("%4"),
            Err(UrlError::BadEscape { offset: 0 })
        );
        assert_eq!(
            java_url_decode("ab%zz"),
            Err(UrlError::BadEscape { offset: 2 })
        );
        assert_eq!(java_url_decode("%FF"), Err(UrlError::NotUtf8));
    }

    #[test]
    fn decode_inverts_encode_for_unicode() {
        let s = "consumer://10.0.0.1/x?name=é😀&a=b c";
        assert_eq!(java_url_decode(&java_url_encode(s)).unwrap(), s);
    }
}
