//! serde for the typed Java values: ISO-8601 or digit strings in any format, typed [`Value`]s in
//! rudder's.
//!
//! Each type serializes as a newtype struct named `$rudder::<Java class>` around its text. Every
//! other serde format sees through a newtype, so `serde_json` writes `"12.34"` or `"2026-12-31"`;
//! rudder's own serializer knows the name and makes the typed [`Value`] (and its deserializer
//! hands the text back), so a struct field of type [`BigDecimal`] reaches Java as a
//! `java.math.BigDecimal`. This is how `toml` carries its datetimes.

use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::{
    BigDecimal, BigInteger, Date, Duration, Instant, LocalDate, LocalDateTime, LocalTime,
    OffsetDateTime, OffsetTime, ParseError, Period, Value, ZoneOffset, ZonedDateTime,
};

/// The newtype-struct name prefix that marks a typed Java value.
pub(super) const MAGIC_PREFIX: &str = "$rudder::";

/// A type written as text; some also accept a whole number.
trait TextForm: FromStr<Err = ParseError> + Sized {
    fn from_i64(_: i64) -> Option<Self> {
        None
    }
}

struct TextVisitor<T>(&'static str, PhantomData<T>);

impl<'de, T: TextForm> Visitor<'de> for TextVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a {} as text", self.0)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        v.parse().map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        T::from_i64(v).ok_or_else(|| E::invalid_type(de::Unexpected::Signed(v), &self))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        i64::try_from(v)
            .ok()
            .and_then(T::from_i64)
            .ok_or_else(|| E::invalid_type(de::Unexpected::Unsigned(v), &self))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        d.deserialize_any(self)
    }
}

macro_rules! text_serde {
    ($($t:ty => $class:literal),* $(,)?) => {$(
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_newtype_struct(concat!("$rudder::", $class), &self.to_string())
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_newtype_struct(
                    concat!("$rudder::", $class),
                    TextVisitor::<$t>($class, PhantomData),
                )
            }
        }
    )*};
}

text_serde! {
    BigDecimal => "java.math.BigDecimal",
    BigInteger => "java.math.BigInteger",
    Date => "java.util.Date",
    LocalDate => "java.time.LocalDate",
    LocalTime => "java.time.LocalTime",
    LocalDateTime => "java.time.LocalDateTime",
    Instant => "java.time.Instant",
    Duration => "java.time.Duration",
    OffsetDateTime => "java.time.OffsetDateTime",
    OffsetTime => "java.time.OffsetTime",
    ZonedDateTime => "java.time.ZonedDateTime",
    Period => "java.time.Period",
    ZoneOffset => "java.time.ZoneOffset",
}

impl TextForm for BigDecimal {
    fn from_i64(v: i64) -> Option<Self> {
        Some(v.into())
    }
}
impl TextForm for BigInteger {
    fn from_i64(v: i64) -> Option<Self> {
        Some(v.into())
    }
}
/// A `Date` also reads from its milliseconds, as `Value::Date` holds it.
impl TextForm for Date {
    fn from_i64(v: i64) -> Option<Self> {
        Some(Date::from_millis(v))
    }
}
impl TextForm for LocalDate {}
impl TextForm for LocalTime {}
impl TextForm for LocalDateTime {}
impl TextForm for Instant {}
impl TextForm for Duration {}
impl TextForm for OffsetDateTime {}
impl TextForm for OffsetTime {}
impl TextForm for ZonedDateTime {}
impl TextForm for Period {}
impl TextForm for ZoneOffset {}

/// What rudder's deserializer hands a typed value's visitor: its text (a `Date` its millis).
pub(super) fn text_form(value: Value) -> Value {
    match value {
        Value::Decimal(d) => Value::String(d.to_string()),
        Value::BigInteger(i) => Value::String(i.to_string()),
        Value::Time(t) => Value::String(t.to_string()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{from_value, to_value, JavaTime};
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(rename = "com.example.Invoice")]
    struct Invoice {
        amount: BigDecimal,
        due: LocalDate,
        created: Date,
        grace: Option<Duration>,
    }

    #[test]
    fn typed_fields_become_typed_values_and_come_back() {
        let invoice = Invoice {
            amount: "12.34".parse().unwrap(),
            due: "2026-12-31".parse().unwrap(),
            created: Date::from_millis(1_796_167_800_123),
            grace: Some("PT1H".parse().unwrap()),
        };
        let v = to_value(&invoice).unwrap();
        assert_eq!(
            v.get("amount"),
            Some(&Value::Decimal("12.34".parse().unwrap()))
        );
        assert_eq!(
            v.get("due"),
            Some(&Value::Time(JavaTime::LocalDate(
                "2026-12-31".parse().unwrap()
            )))
        );
        assert_eq!(v.get("created"), Some(&Value::Date(1_796_167_800_123)));
        assert_eq!(from_value::<Invoice>(v).unwrap(), invoice);
    }

    /// Any other serde format sees the text: a struct with money and dates is plain JSON.
    #[test]
    fn other_formats_see_digit_and_iso_strings() {
        let invoice = Invoice {
            amount: "12.340".parse().unwrap(),
            due: "2026-12-31".parse().unwrap(),
            created: Date::from_millis(1_796_167_800_123),
            grace: None,
        };
        let json = serde_json::to_value(&invoice).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "amount": "12.340",
                "due": "2026-12-31",
                "created": "2026-12-01T23:30:00.123Z",
                "grace": null,
            })
        );
        assert_eq!(serde_json::from_value::<Invoice>(json).unwrap(), invoice);
        // A date as epoch milliseconds and a whole number as a decimal read too; a float does not.
        let loose =
            serde_json::json!({"amount": 7, "due": "2026-12-31", "created": 0, "grace": "PT0S"});
        assert_eq!(
            serde_json::from_value::<Invoice>(loose)
                .unwrap()
                .created
                .millis(),
            0
        );
        let float =
            serde_json::json!({"amount": 0.1, "due": "2026-12-31", "created": 0, "grace": null});
        assert!(serde_json::from_value::<Invoice>(float).is_err());
    }

    #[test]
    fn a_java_string_fills_a_typed_field_when_it_parses() {
        let v = Value::map(vec![
            (Value::from("amount"), Value::from("0.10")),
            (Value::from("due"), Value::from("2026-01-01")),
            (Value::from("created"), Value::from("1970-01-01T00:00:00Z")),
            (Value::from("grace"), Value::Null),
        ]);
        let invoice: Invoice = from_value(v).unwrap();
        assert_eq!(invoice.amount.scale(), 2);
        assert_eq!(invoice.created.millis(), 0);
        let bad = Value::map(vec![(Value::from("amount"), Value::Double(0.1))]);
        assert!(
            from_value::<Invoice>(bad).is_err(),
            "a double is never money"
        );
    }
}
