//! The `java.time` values Dubbo's hessian carries, as small exact Rust types with ISO-8601 text.
//!
//! Each type's [`Display`](std::fmt::Display) is the ISO-8601 form Java prints and its
//! [`FromStr`](std::str::FromStr) the form Java parses; no time-zone database is involved (a
//! [`ZonedDateTime`] carries its zone as an id and its offset as given).

mod civil;
mod instant;
mod text;
mod zoned;

use std::fmt;

pub use civil::{LocalDate, LocalDateTime, LocalTime};
pub use instant::{Date, Duration, Instant};
pub use zoned::{OffsetDateTime, OffsetTime, Period, ZoneOffset, ZonedDateTime};

use super::ParseError;

/// One `java.time` value, as [`Value::Time`](super::Value::Time) holds it.
///
/// ```
/// use rudder_common::value::{JavaTime, LocalDate, Value};
/// let v = Value::Time(JavaTime::LocalDate(LocalDate::new(2026, 12, 31).unwrap()));
/// let Value::Time(t) = &v else { unreachable!() };
/// assert_eq!(t.class_name(), "java.time.LocalDate");
/// assert_eq!(t.to_string(), "2026-12-31");
/// assert_eq!(JavaTime::parse("java.time.LocalDate", "2026-12-31"), Some(Ok(t.clone())));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum JavaTime {
    /// `java.time.LocalDate`.
    LocalDate(LocalDate),
    /// `java.time.LocalTime`.
    LocalTime(LocalTime),
    /// `java.time.LocalDateTime`.
    LocalDateTime(LocalDateTime),
    /// `java.time.Instant`.
    Instant(Instant),
    /// `java.time.Duration`.
    Duration(Duration),
    /// `java.time.OffsetDateTime`.
    OffsetDateTime(OffsetDateTime),
    /// `java.time.OffsetTime`.
    OffsetTime(OffsetTime),
    /// `java.time.ZonedDateTime`.
    ZonedDateTime(ZonedDateTime),
    /// `java.time.Period`.
    Period(Period),
    /// `java.time.ZoneOffset`.
    ZoneOffset(ZoneOffset),
}

impl JavaTime {
    /// The Java class, e.g. `java.time.LocalDate`.
    pub fn class_name(&self) -> &'static str {
        match self {
            JavaTime::LocalDate(_) => "java.time.LocalDate",
            JavaTime::LocalTime(_) => "java.time.LocalTime",
            JavaTime::LocalDateTime(_) => "java.time.LocalDateTime",
            JavaTime::Instant(_) => "java.time.Instant",
            JavaTime::Duration(_) => "java.time.Duration",
            JavaTime::OffsetDateTime(_) => "java.time.OffsetDateTime",
            JavaTime::OffsetTime(_) => "java.time.OffsetTime",
            JavaTime::ZonedDateTime(_) => "java.time.ZonedDateTime",
            JavaTime::Period(_) => "java.time.Period",
            JavaTime::ZoneOffset(_) => "java.time.ZoneOffset",
        }
    }

    /// Parses `text` as the ISO-8601 form of the `java.time` class `class`; `None` if `class` is
    /// not one this enum holds.
    pub fn parse(class: &str, text: &str) -> Option<Result<JavaTime, ParseError>> {
        let name = class.strip_prefix("java.time.")?;
        let parsed = match name {
            "LocalDate" => text.parse().map(JavaTime::LocalDate),
            "LocalTime" => text.parse().map(JavaTime::LocalTime),
            "LocalDateTime" => text.parse().map(JavaTime::LocalDateTime),
            "Instant" => text.parse().map(JavaTime::Instant),
            "Duration" => text.parse().map(JavaTime::Duration),
            "OffsetDateTime" => text.parse().map(JavaTime::OffsetDateTime),
            "OffsetTime" => text.parse().map(JavaTime::OffsetTime),
            "ZonedDateTime" => text.parse().map(JavaTime::ZonedDateTime),
            "Period" => text.parse().map(JavaTime::Period),
            "ZoneOffset" => text.parse().map(JavaTime::ZoneOffset),
            _ => return None,
        };
        Some(parsed)
    }
}

impl fmt::Display for JavaTime {
    /// The ISO-8601 text of the value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JavaTime::LocalDate(v) => v.fmt(f),
            JavaTime::LocalTime(v) => v.fmt(f),
            JavaTime::LocalDateTime(v) => v.fmt(f),
            JavaTime::Instant(v) => v.fmt(f),
            JavaTime::Duration(v) => v.fmt(f),
            JavaTime::OffsetDateTime(v) => v.fmt(f),
            JavaTime::OffsetTime(v) => v.fmt(f),
            JavaTime::ZonedDateTime(v) => v.fmt(f),
            JavaTime::Period(v) => v.fmt(f),
            JavaTime::ZoneOffset(v) => v.fmt(f),
        }
    }
}
