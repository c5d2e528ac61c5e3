//! `java.math.BigInteger` and `java.math.BigDecimal`, exact: digits, never an `f64`.

use std::fmt;
use std::str::FromStr;

use super::ParseError;

/// A `java.math.BigInteger`: an integer of any size, held as its decimal digits.
///
/// ```
/// use rudder_common::value::BigInteger;
/// let n: BigInteger = "-123456789012345678901234567890".parse()?;
/// assert!(n.is_negative());
/// assert_eq!(n.to_string(), "-123456789012345678901234567890");
/// assert_eq!(BigInteger::from(42i64).to_i64(), Some(42));
/// # Ok::<(), rudder_common::value::ParseError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BigInteger {
    negative: bool,
    /// ASCII digits, no leading zero (zero is "0", never negative).
    digits: String,
}

impl BigInteger {
    /// Zero.
    pub fn zero() -> Self {
        BigInteger {
            negative: false,
            digits: "0".into(),
        }
    }

    /// Whether this is below zero.
    pub fn is_negative(&self) -> bool {
        self.negative
    }

    /// Whether this is zero.
    pub fn is_zero(&self) -> bool {
        self.digits == "0"
    }

    /// The decimal digits of the magnitude, without sign or leading zeros.
    pub fn digits(&self) -> &str {
        &self.digits
    }

    /// The value as an `i64`, if it fits.
    pub fn to_i64(&self) -> Option<i64> {
        self.to_i128().and_then(|v| i64::try_from(v).ok())
    }

    /// The value as an `i128`, if it fits.
    pub fn to_i128(&self) -> Option<i128> {
        let magnitude: u128 = self.digits.parse().ok()?;
        if self.negative {
            0i128.checked_sub_unsigned(magnitude)
        } else {
            i128::try_from(magnitude).ok()
        }
    }

    /// Builds one from a sign and magnitude digits (ASCII `0-9`, leading zeros allowed).
    fn from_sign_digits(negative: bool, digits: &str) -> Self {
        let trimmed = digits.trim_start_matches('0');
        if trimmed.is_empty() {
            return BigInteger::zero();
        }
        BigInteger {
            negative,
            digits: trimmed.to_owned(),
        }
    }

    /// The magnitude as big-endian 32-bit words without leading zero words (Java's `mag` field),
    /// and the sign as Java's `signum` (-1, 0, 1).
    ///
    /// Costs time quadratic in the number of digits; Java numbers are short.
    pub fn to_java_magnitude(&self) -> (i32, Vec<u32>) {
        if self.is_zero() {
            return (0, Vec::new());
        }
        // Little-endian words; multiply by 10^9 and add, nine digits at a time.
        let mut words: Vec<u32> = Vec::with_capacity(self.digits.len() / 9 + 1);
        let head = self.digits.len() % 9;
        let chunks = std::iter::once(&self.digits[..head])
            .filter(|c| !c.is_empty())
            .chain(self.digits.as_bytes()[head..].chunks(9).map(|c| {
                // Always ASCII digits: checked when the value was built.
                std::str::from_utf8(c).unwrap_or("0")
            }));
        for chunk in chunks {
            let scale = 10u64.pow(chunk.len() as u32);
            let mut carry: u64 = chunk.parse().unwrap_or(0);
            for word in &mut words {
                let v = u64::from(*word) * scale + carry;
                *word = v as u32;
                carry = v >> 32;
            }
            if carry > 0 {
                words.push(carry as u32);
            }
        }
        words.reverse();
        (if self.negative { -1 } else { 1 }, words)
    }

    /// The inverse of [`BigInteger::to_java_magnitude`]: from Java's `signum` and big-endian `mag`
    /// words. `None` if the sign is not -1, 0 or 1, or is 0 for a non-zero magnitude.
    pub fn from_java_magnitude(signum: i32, magnitude: &[u32]) -> Option<Self> {
        let first = magnitude.iter().position(|w| *w != 0);
        match (signum, first) {
            (0, None) | (-1 | 1, None) => return Some(BigInteger::zero()),
            (0, Some(_)) => return None,
            (-1 | 1, Some(_)) => {}
            _ => return None,
        }
        let mut words: Vec<u32> = magnitude[first.unwrap_or(0)..].to_vec();
        // Repeated division by 10^9, collecting nine-digit groups from the lowest.
        let mut groups = Vec::with_capacity(words.len() * 10 / 9 + 1);
        while !words.is_empty() {
            let mut rem: u64 = 0;
            for word in &mut words {
                let v = (rem << 32) | u64::from(*word);
                *word = (v / 1_000_000_000) as u32;
                rem = v % 1_000_000_000;
            }
            groups.push(rem as u32);
            let lead = words.iter().position(|w| *w != 0).unwrap_or(words.len());
            words.drain(..lead);
        }
        let mut digits = String::with_capacity(groups.len() * 9);
        for (i, group) in groups.iter().rev().enumerate() {
            if i == 0 {
                digits.push_str(&group.to_string());
            } else {
                digits.push_str(&format!("{group:09}"));
            }
        }
        Some(BigInteger {
            negative: signum < 0,
            digits,
        })
    }
}

impl fmt::Display for BigInteger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.negative {
            f.write_str("-")?;
        }
        f.write_str(&self.digits)
    }
}

impl FromStr for BigInteger {
    type Err = ParseError;

    /// Java's `new BigInteger(String)`: an optional sign, then decimal digits.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (negative, digits) = split_sign(s);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ParseError::new(s, "BigInteger"));
        }
        Ok(BigInteger::from_sign_digits(negative, digits))
    }
}

fn split_sign(s: &str) -> (bool, &str) {
    match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    }
}

macro_rules! big_integer_from {
    ($($t:ty),*) => {$(
        impl From<$t> for BigInteger {
            fn from(v: $t) -> Self {
                let negative = v < 0 as $t;
                BigInteger::from_sign_digits(negative, &v.unsigned_abs().to_string())
            }
        }
    )*};
}
big_integer_from!(i32, i64, i128);

impl From<u64> for BigInteger {
    fn from(v: u64) -> Self {
        BigInteger::from_sign_digits(false, &v.to_string())
    }
}

impl From<u128> for BigInteger {
    fn from(v: u128) -> Self {
        BigInteger::from_sign_digits(false, &v.to_string())
    }
}

/// A `java.math.BigDecimal`: an unscaled integer and a scale, `unscaled × 10^-scale`, exact.
///
/// Two values of the same number but different scales (`1.0`, `1.00`) differ, as in Java's
/// `equals`. [`Display`](fmt::Display) and [`FromStr`] are Java's `toString()` and
/// `new BigDecimal(String)`, which is also how hessian carries it (a `value` string), so a
/// decimal crosses the wire and comes back with its digits and scale intact.
///
/// ```
/// use rudder_common::value::BigDecimal;
/// let price: BigDecimal = "12.340".parse()?;
/// assert_eq!(price.scale(), 3);
/// assert_eq!(price.unscaled().to_string(), "12340");
/// assert_eq!(price.to_string(), "12.340");
/// // Java's notation for a negative scale or a small number:
/// assert_eq!("1E+3".parse::<BigDecimal>()?.scale(), -3);
/// assert_eq!(BigDecimal::new(1.into(), 8).to_string(), "1E-8");
/// # Ok::<(), rudder_common::value::ParseError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BigDecimal {
    unscaled: BigInteger,
    scale: i32,
}

impl BigDecimal {
    /// `unscaled × 10^-scale`.
    pub fn new(unscaled: BigInteger, scale: i32) -> Self {
        BigDecimal { unscaled, scale }
    }

    /// The unscaled value.
    pub fn unscaled(&self) -> &BigInteger {
        &self.unscaled
    }

    /// The scale: digits after the decimal point (negative: zeros before it).
    pub fn scale(&self) -> i32 {
        self.scale
    }
}

impl From<i64> for BigDecimal {
    fn from(v: i64) -> Self {
        BigDecimal::new(v.into(), 0)
    }
}

impl From<BigInteger> for BigDecimal {
    fn from(v: BigInteger) -> Self {
        BigDecimal::new(v, 0)
    }
}

impl fmt::Display for BigDecimal {
    /// Java's `BigDecimal.toString()`: plain notation unless the scale is negative or the number
    /// is below 10^-6, then scientific (`1E+3`, `1.5E-7`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.unscaled.digits();
        if self.unscaled.is_negative() {
            f.write_str("-")?;
        }
        let scale = i64::from(self.scale);
        if scale == 0 {
            return f.write_str(digits);
        }
        let adjusted = (digits.len() as i64 - 1) - scale;
        if scale > 0 && adjusted >= -6 {
            let point = digits.len() as i64 - scale;
            if point > 0 {
                let (int, frac) = digits.split_at(point as usize);
                write!(f, "{int}.{frac}")
            } else {
                // At most six zeros here: adjusted >= -6.
                f.write_str("0.")?;
                for _ in 0..(-point) {
                    f.write_str("0")?;
                }
                f.write_str(digits)
            }
        } else {
            let (first, rest) = digits.split_at(1);
            f.write_str(first)?;
            if !rest.is_empty() {
                write!(f, ".{rest}")?;
            }
            if adjusted != 0 {
                write!(f, "E{}{adjusted}", if adjusted > 0 { "+" } else { "" })?;
            }
            Ok(())
        }
    }
}

impl FromStr for BigDecimal {
    type Err = ParseError;

    /// Java's `new BigDecimal(String)`: `[sign] digits [. digits] [(e|E) [sign] digits]`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || ParseError::new(s, "BigDecimal");
        let (negative, rest) = split_sign(s);
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(i) => {
                let (neg, exp) = split_sign(&rest[i + 1..]);
                if exp.is_empty() || !exp.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad());
                }
                let exp = exp.trim_start_matches('0');
                // Java's exponent is an int; more digits than a long holds is malformed anyway.
                if exp.len() > 18 {
                    return Err(bad());
                }
                let exp: i64 = if exp.is_empty() {
                    0
                } else {
                    exp.parse().map_err(|_| bad())?
                };
                (&rest[..i], if neg { -exp } else { exp })
            }
            None => (rest, 0),
        };
        let (int, frac) = match mantissa.split_once('.') {
            Some((int, frac)) => (int, frac),
            None => (mantissa, ""),
        };
        let all_digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
        if (int.is_empty() && frac.is_empty()) || !all_digits(int) || !all_digits(frac) {
            return Err(bad());
        }
        let scale = i64::try_from(frac.len()).map_err(|_| bad())? - exponent;
        let scale = i32::try_from(scale).map_err(|_| bad())?;
        let mut digits = String::with_capacity(int.len() + frac.len());
        digits.push_str(int);
        digits.push_str(frac);
        Ok(BigDecimal::new(
            BigInteger::from_sign_digits(negative, &digits),
            scale,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_print_as_java_does() {
        // Pairs checked against Java 17's BigDecimal.toString().
        for (text, java) in [
            ("12.340", "12.340"),
            ("-0.00000001", "-1E-8"),
            ("0.000001", "0.000001"),
            ("0.0000001", "1E-7"),
            ("1E+3", "1E+3"),
            ("1.5e-7", "1.5E-7"),
            ("123.45E+2", "12345"),
            ("-0", "0"),
            ("0.00", "0.00"),
            ("+7", "7"),
            (
                "12345678901234567890.123456789",
                "12345678901234567890.123456789",
            ),
            ("1.23E+10", "1.23E+10"),
        ] {
            let d: BigDecimal = text.parse().unwrap();
            assert_eq!(d.to_string(), java, "{text}");
            assert_eq!(d.to_string().parse::<BigDecimal>().unwrap(), d, "{text}");
        }
        assert_eq!("1.0".parse::<BigDecimal>().unwrap().scale(), 1);
        assert_ne!(
            "1.0".parse::<BigDecimal>().unwrap(),
            "1.00".parse::<BigDecimal>().unwrap()
        );
    }

    #[test]
    fn malformed_decimals_are_refused() {
        for bad in [
            "",
            "-",
            ".",
            "1.2.3",
            "1e",
            "1e+",
            "abc",
            "1,5",
            "1e99999999999",
            " 1",
            "NaN",
        ] {
            assert!(bad.parse::<BigDecimal>().is_err(), "{bad:?}");
        }
        assert!("1e-2147483648".parse::<BigDecimal>().is_err());
    }

    #[test]
    fn big_integers_convert_to_and_from_java_words() {
        // Java's mag for -123456789012345678901234567890 (captured from hessian-lite's bytes).
        let words = [1, 0x8ee9_0ff6, 0xc373_e0ee, 0x4e3f_0ad2];
        let n = BigInteger::from_java_magnitude(-1, &words).unwrap();
        assert_eq!(n.to_string(), "-123456789012345678901234567890");
        assert_eq!(n.to_java_magnitude(), (-1, words.to_vec()));
        assert_eq!(
            BigInteger::from_java_magnitude(0, &[]).unwrap(),
            BigInteger::zero()
        );
        assert_eq!(BigInteger::zero().to_java_magnitude(), (0, vec![]));
        assert_eq!(BigInteger::from_java_magnitude(0, &[5]), None);
        assert_eq!(BigInteger::from_java_magnitude(2, &[5]), None);
        for v in [
            1i128,
            -1,
            4_294_967_296,
            i128::MAX,
            i128::MIN + 1,
            999_999_999,
        ] {
            let n = BigInteger::from(v);
            let (sign, mag) = n.to_java_magnitude();
            assert_eq!(BigInteger::from_java_magnitude(sign, &mag).unwrap(), n);
            assert_eq!(n.to_i128(), Some(v));
        }
        assert_eq!(BigInteger::from(i128::MIN).to_i128(), Some(i128::MIN));
        assert!("12a".parse::<BigInteger>().is_err());
        assert_eq!("-000".parse::<BigInteger>().unwrap(), BigInteger::zero());
    }
}
