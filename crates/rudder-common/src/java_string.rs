//! Java's `String.valueOf` for argument values, so consistent hashing sees the same key as Java.
//!
//! Dubbo's consistent-hash balancer builds its key by appending arguments to a `StringBuilder`. To route a
//! call to the same provider as a Java consumer, rudder must render each argument the way Java does:
//! strings as they are, integers in decimal, `true`/`false`, `null`, and doubles the way
//! `Double.toString` prints them (`1.0`, `1.0E10`, `1.0E-4`).
//!
//! Doubles use the shortest representation that round-trips, as Java 19 and later print them
//! (JDK-4511638). Java 17 and older sometimes print one more digit than needed; see the crate README.

use std::fmt::{self, Write};

use crate::value::Value;

/// Writes `value` as Java's `String.valueOf(value)` would render it, without allocating.
///
/// Lists, maps and objects have no stable Java rendering (they print identity hash codes unless the class
/// overrides `toString`), so they are written in a fixed, documented form rather than Java's.
///
/// ```
/// use rudder_common::java_string::write_java_string;
/// use rudder_common::Value;
/// let mut s = String::new();
/// for v in [Value::Int(7), Value::Double(1e10), Value::Null, Value::Bool(true), Value::Double(0.5)] {
///     write_java_string(&mut s, &v).unwrap();
///     s.push(' ');
/// }
/// assert_eq!(s, "7 1.0E10 null true 0.5 ");
/// ```
///
/// # Errors
/// Only those of the writer.
pub fn write_java_string<W: Write + ?Sized>(out: &mut W, value: &Value) -> fmt::Result {
    match value {
        Value::Null => out.write_str("null"),
        Value::Bool(b) => out.write_str(if *b { "true" } else { "false" }),
        Value::Int(i) => write!(out, "{i}"),
        Value::Long(l) => write!(out, "{l}"),
        Value::Double(d) => write_java_double(out, *d),
        Value::Date(ms) => write!(out, "{ms}"),
        Value::String(s) => out.write_str(s),
        Value::Binary(b) => write!(out, "[B@{}", b.len()),
        Value::List { items, .. } => {
            out.write_char('[')?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.write_str(", ")?;
                }
                write_java_string(out, item)?;
            }
            out.write_char(']')
        }
        Value::Map { entries, .. } => {
            out.write_char('{')?;
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.write_str(", ")?;
                }
                write_java_string(out, k)?;
                out.write_char('=')?;
                write_java_string(out, v)?;
            }
            out.write_char('}')
        }
        Value::Object { class, .. } => out.write_str(class),
        Value::Decimal(d) => write!(out, "{d}"),
        Value::BigInteger(i) => write!(out, "{i}"),
        // The alternate form of each java.time type is Java's `toString()`.
        Value::Time(t) => write!(out, "{t:#}"),
        _ => out.write_str("?"),
    }
}

/// Writes `d` as Java's `Double.toString(d)` (shortest round-trip digits, Java's layout).
///
/// ```
/// use rudder_common::java_string::write_java_double;
/// let mut s = String::new();
/// write_java_double(&mut s, 1.0e-4).unwrap();
/// assert_eq!(s, "1.0E-4");
/// ```
///
/// # Errors
/// Only those of the writer.
pub fn write_java_double<W: Write + ?Sized>(out: &mut W, d: f64) -> fmt::Result {
    if d.is_nan() {
        return out.write_str("NaN");
    }
    if d.is_infinite() {
        return out.write_str(if d > 0.0 { "Infinity" } else { "-Infinity" });
    }
    if d == 0.0 {
        return out.write_str(if d.is_sign_negative() { "-0.0" } else { "0.0" });
    }
    // `{:e}` gives the shortest round-trip digits as `d[.ddd]e[-]x`; re-lay them out as Java does.
    let mut buf = StackBuf::new();
    write!(buf, "{:e}", d.abs())?;
    let (mut digits, mut exp) = split_scientific(buf.as_str())?;
    let in_plain_range = (-3..7).contains(&exp);
    let mut two_digit = StackBuf::new();
    if !in_plain_range && digits.len == 1 {
        // Java always prints `d.d` in scientific form and picks the closest two-digit decimal, so
        // Double.MIN_VALUE is 4.9E-324 where the shortest form would be 5E-324.
        write!(two_digit, "{:.1e}", d.abs())?;
        (digits, exp) = split_scientific(two_digit.as_str())?;
    }
    let digits = digits.as_str();
    if d < 0.0 {
        out.write_char('-')?;
    }
    if in_plain_range {
        if exp < 0 {
            out.write_str("0.")?;
            for _ in 0..(-exp - 1) {
                out.write_char('0')?;
            }
            out.write_str(digits)
        } else {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.write_str(digits)?;
                for _ in digits.len()..int_len {
                    out.write_char('0')?;
                }
                out.write_str(".0")
            } else {
                out.write_str(&digits[..int_len])?;
                out.write_char('.')?;
                out.write_str(&digits[int_len..])
            }
        }
    } else {
        out.write_str(&digits[..1])?;
        out.write_char('.')?;
        out.write_str(if digits.len() > 1 { &digits[1..] } else { "0" })?;
        write!(out, "E{exp}")
    }
}

/// Splits `d.ddde-x` into its digits (without the point) and exponent.
fn split_scientific(text: &str) -> Result<(StackBuf, i32), fmt::Error> {
    let (mantissa, exp) = text.split_once('e').ok_or(fmt::Error)?;
    let exp = exp.parse().map_err(|_| fmt::Error)?;
    let mut digits = StackBuf::new();
    for c in mantissa.chars().filter(char::is_ascii_digit) {
        digits.write_char(c)?;
    }
    Ok((digits, exp))
}

/// A fixed buffer big enough for any `{:e}` rendering of an f64 (at most 24 bytes).
struct StackBuf {
    bytes: [u8; 40],
    len: usize,
}

impl StackBuf {
    fn new() -> StackBuf {
        StackBuf {
            bytes: [0; 40],
            len: 0,
        }
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

impl Write for StackBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let slot = self.bytes.get_mut(self.len..end).ok_or(fmt::Error)?;
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn java(d: f64) -> String {
        let mut s = String::new();
        write_java_double(&mut s, d).unwrap();
        s
    }

    #[test]
    fn doubles_use_java_layout() {
        let cases = [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (100.0, "100.0"),
            (1234567.0, "1234567.0"),
            (1.0e7, "1.0E7"),
            (12345678.9, "1.23456789E7"),
            (0.001, "0.001"),
            (0.0001, "1.0E-4"),
            (-2.5, "-2.5"),
            (-0.0, "-0.0"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::MAX, "1.7976931348623157E308"),
            (f64::MIN_POSITIVE * f64::EPSILON, "4.9E-324"),
            (1.0e23, "1.0E23"),
            (2.0e-5, "2.0E-5"),
        ];
        for (d, want) in cases {
            assert_eq!(java(d), want, "{d:e}");
        }
    }
}
