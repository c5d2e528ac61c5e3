//! The object forms hessian-lite gives `BigDecimal`, `BigInteger` and `java.time`, and the typed
//! [`Value`]s rudder reads them as.
//!
//! hessian-lite (Dubbo's hessian) writes:
//! - `java.math.BigDecimal` as an object with one field, `value`, its `toString()`;
//! - `java.math.BigInteger` field by field, as Java's default serialization sees it: `mag` (the
//!   magnitude as big-endian `int[]`), four cached values written as 0, and `signum`;
//! - each `java.time` value through `writeReplace` as a `com.alibaba.com.caucho.hessian.io.java8.*Handle`
//!   object whose fields are the value's parts (a `LocalDateTimeHandle` holds a `LocalDateHandle`
//!   and a `LocalTimeHandle`).
//!
//! The field orders below are the ones Java writes (captured from `Hessian2ObjectOutput`, see
//! `tests/java_types.rs`); Java reads fields by name, the reader here too. A handle whose parts
//! are out of range (which Java would read as `null`) stays an object, as does a `BigInteger`
//! over [`MAX_BIG_INTEGER_WORDS`]: nothing is lost, it is only not typed. hessian-lite's opt-in
//! "compact mode" for `java.time` (`-Dcom.caucho.hessian.io.java.time.serializer.compactMode`) is
//! not understood.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use rudder_common::value::{
    BigInteger, Duration, Instant, JavaTime, LocalDate, LocalDateTime, LocalTime, OffsetDateTime,
    OffsetTime, Period, ZoneOffset, ZonedDateTime,
};
use rudder_common::Value;

/// Largest `BigInteger` magnitude (in 32-bit words: 4096 bits) read as a typed value. Turning
/// words into decimal digits costs time quadratic in their number, so a long one from a peer
/// stays an object rather than costing a millisecond per kilobyte.
pub(crate) const MAX_BIG_INTEGER_WORDS: usize = 128;

const HANDLE_PACKAGE: &str = "com.alibaba.com.caucho.hessian.io.java8.";
const BIG_DECIMAL: &str = "java.math.BigDecimal";
const BIG_INTEGER: &str = "java.math.BigInteger";

/// The typed value of a decoded object, if it is one of hessian-lite's forms and well formed.
pub(crate) fn from_object(class: &str, fields: &[(Arc<str>, Value)]) -> Option<Value> {
    let get = |name: &str| fields.iter().find(|(k, _)| &**k == name).map(|(_, v)| v);
    let int = |name: &str| get(name).and_then(Value::as_i32);
    let uint = |name: &str| int(name).and_then(|v| u32::try_from(v).ok());
    let time = |name: &str| match get(name) {
        Some(Value::Time(t)) => Some(t),
        _ => None,
    };
    if let Some(handle) = class.strip_prefix(HANDLE_PACKAGE) {
        let t = match handle {
            "LocalDateHandle" => {
                JavaTime::LocalDate(LocalDate::new(int("year")?, uint("month")?, uint("day")?)?)
            }
            "LocalTimeHandle" => JavaTime::LocalTime(LocalTime::new(
                uint("hour")?,
                uint("minute")?,
                uint("second")?,
                uint("nano")?,
            )?),
            "LocalDateTimeHandle" => match (time("date")?, time("time")?) {
                (JavaTime::LocalDate(d), JavaTime::LocalTime(t)) => {
                    JavaTime::LocalDateTime(LocalDateTime::new(*d, *t))
                }
                _ => return None,
            },
            "InstantHandle" => {
                JavaTime::Instant(Instant::new(get("seconds")?.as_i64()?, uint("nanos")?)?)
            }
            "DurationHandle" => {
                JavaTime::Duration(Duration::new(get("seconds")?.as_i64()?, uint("nanos")?)?)
            }
            "ZoneOffsetHandle" => JavaTime::ZoneOffset(ZoneOffset::of_seconds(int("seconds")?)?),
            "OffsetDateTimeHandle" => match (time("dateTime")?, time("offset")?) {
                (JavaTime::LocalDateTime(d), JavaTime::ZoneOffset(o)) => {
                    JavaTime::OffsetDateTime(OffsetDateTime::new(*d, *o))
                }
                _ => return None,
            },
            "OffsetTimeHandle" => match (time("localTime")?, time("zoneOffset")?) {
                (JavaTime::LocalTime(t), JavaTime::ZoneOffset(o)) => {
                    JavaTime::OffsetTime(OffsetTime::new(*t, *o))
                }
                _ => return None,
            },
            "ZonedDateTimeHandle" => match (time("dateTime")?, time("offset")?, get("zoneId")?) {
                (JavaTime::LocalDateTime(d), JavaTime::ZoneOffset(o), Value::String(zone))
                    if !zone.is_empty() =>
                {
                    JavaTime::ZonedDateTime(ZonedDateTime::new(*d, *o, zone))
                }
                _ => return None,
            },
            "PeriodHandle" => {
                JavaTime::Period(Period::new(int("years")?, int("months")?, int("days")?))
            }
            _ => return None,
        };
        return Some(Value::Time(t));
    }
    match class {
        BIG_DECIMAL => match get("value")? {
            Value::String(text) => text.parse().ok().map(Value::Decimal),
            _ => None,
        },
        BIG_INTEGER => {
            let Value::List { items, .. } = get("mag")? else {
                return None;
            };
            if items.len() > MAX_BIG_INTEGER_WORDS {
                return None;
            }
            let words = items
                .iter()
                .map(|w| w.as_i32().map(|w| w as u32))
                .collect::<Option<Vec<u32>>>()?;
            BigInteger::from_java_magnitude(int("signum")?, &words).map(Value::BigInteger)
        }
        _ => None,
    }
}

/// The object hessian-lite writes for a typed value, fields in Java's order; `None` for any
/// other value.
pub(crate) fn to_object(value: &Value) -> Option<Value> {
    let object = match value {
        Value::Decimal(d) => object(BIG_DECIMAL, vec![("value", Value::String(d.to_string()))]),
        Value::BigInteger(i) => {
            let (signum, words) = i.to_java_magnitude();
            let mag = Value::List {
                type_name: Some(name("[int")),
                items: words.into_iter().map(|w| Value::Int(w as i32)).collect(),
            };
            object(
                BIG_INTEGER,
                vec![
                    ("mag", mag),
                    // Java's caches of derived values; 0 means "not computed yet".
                    ("firstNonzeroIntNumPlusTwo", Value::Int(0)),
                    ("lowestSetBitPlusTwo", Value::Int(0)),
                    ("bitLengthPlusOne", Value::Int(0)),
                    ("bitCountPlusOne", Value::Int(0)),
                    ("signum", Value::Int(signum)),
                ],
            )
        }
        Value::Time(t) => time_object(t),
        _ => return None,
    };
    Some(object)
}

fn time_object(t: &JavaTime) -> Value {
    let int = |v: u32| Value::Int(v as i32);
    match t {
        JavaTime::LocalDate(d) => handle(
            "LocalDateHandle",
            vec![
                ("day", int(d.day())),
                ("month", int(d.month())),
                ("year", Value::Int(d.year())),
            ],
        ),
        JavaTime::LocalTime(t) => handle(
            "LocalTimeHandle",
            vec![
                ("nano", int(t.nano())),
                ("second", int(t.second())),
                ("minute", int(t.minute())),
                ("hour", int(t.hour())),
            ],
        ),
        JavaTime::LocalDateTime(dt) => handle(
            "LocalDateTimeHandle",
            vec![
                ("time", time_object(&JavaTime::LocalTime(dt.time()))),
                ("date", time_object(&JavaTime::LocalDate(dt.date()))),
            ],
        ),
        JavaTime::Instant(i) => handle(
            "InstantHandle",
            vec![
                ("nanos", int(i.nano())),
                ("seconds", Value::Long(i.epoch_second())),
            ],
        ),
        JavaTime::Duration(d) => handle(
            "DurationHandle",
            vec![
                ("nanos", int(d.nano())),
                ("seconds", Value::Long(d.seconds())),
            ],
        ),
        JavaTime::ZoneOffset(o) => handle(
            "ZoneOffsetHandle",
            vec![("seconds", Value::Int(o.total_seconds()))],
        ),
        JavaTime::OffsetDateTime(t) => handle(
            "OffsetDateTimeHandle",
            vec![
                ("offset", time_object(&JavaTime::ZoneOffset(t.offset()))),
                (
                    "dateTime",
                    time_object(&JavaTime::LocalDateTime(t.date_time())),
                ),
            ],
        ),
        JavaTime::OffsetTime(t) => handle(
            "OffsetTimeHandle",
            vec![
                ("zoneOffset", time_object(&JavaTime::ZoneOffset(t.offset()))),
                ("localTime", time_object(&JavaTime::LocalTime(t.time()))),
            ],
        ),
        JavaTime::ZonedDateTime(t) => handle(
            "ZonedDateTimeHandle",
            vec![
                ("offset", time_object(&JavaTime::ZoneOffset(t.offset()))),
                (
                    "dateTime",
                    time_object(&JavaTime::LocalDateTime(t.date_time())),
                ),
                ("zoneId", Value::from(t.zone())),
            ],
        ),
        JavaTime::Period(p) => handle(
            "PeriodHandle",
            vec![
                ("days", Value::Int(p.days())),
                ("months", Value::Int(p.months())),
                ("years", Value::Int(p.years())),
            ],
        ),
        // `JavaTime` may grow; a kind this codec does not know yet travels as its ISO text.
        other => Value::String(other.to_string()),
    }
}

fn handle(simple_name: &'static str, fields: Vec<(&'static str, Value)>) -> Value {
    let class = HANDLES
        .iter()
        .find(|c| c.strip_prefix(HANDLE_PACKAGE) == Some(simple_name))
        .copied()
        .unwrap_or(simple_name);
    object(class, fields)
}

fn object(class: &'static str, fields: Vec<(&'static str, Value)>) -> Value {
    Value::Object {
        class: name(class),
        fields: fields.into_iter().map(|(k, v)| (name(k), v)).collect(),
    }
}

const HANDLES: [&str; 10] = [
    "com.alibaba.com.caucho.hessian.io.java8.LocalDateHandle",
    "com.alibaba.com.caucho.hessian.io.java8.LocalTimeHandle",
    "com.alibaba.com.caucho.hessian.io.java8.LocalDateTimeHandle",
    "com.alibaba.com.caucho.hessian.io.java8.InstantHandle",
    "com.alibaba.com.caucho.hessian.io.java8.DurationHandle",
    "com.alibaba.com.caucho.hessian.io.java8.ZoneOffsetHandle",
    "com.alibaba.com.caucho.hessian.io.java8.OffsetDateTimeHandle",
    "com.alibaba.com.caucho.hessian.io.java8.OffsetTimeHandle",
    "com.alibaba.com.caucho.hessian.io.java8.ZonedDateTimeHandle",
    "com.alibaba.com.caucho.hessian.io.java8.PeriodHandle",
];

const FIELDS: [&str; 25] = [
    BIG_DECIMAL,
    BIG_INTEGER,
    "[int",
    "value",
    "mag",
    "firstNonzeroIntNumPlusTwo",
    "lowestSetBitPlusTwo",
    "bitLengthPlusOne",
    "bitCountPlusOne",
    "signum",
    "day",
    "month",
    "year",
    "nano",
    "second",
    "minute",
    "hour",
    "time",
    "date",
    "nanos",
    "seconds",
    "offset",
    "dateTime",
    "zoneOffset",
    "localTime",
];

/// One shared allocation per class and field name, made once: writing a list of dates neither
/// allocates names per value nor defeats the writer's by-pointer class cache.
fn name(text: &'static str) -> Arc<str> {
    static NAMES: OnceLock<HashMap<&'static str, Arc<str>>> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        HANDLES
            .iter()
            .chain(&FIELDS)
            .chain(&["zoneId", "days", "months", "years"])
            .map(|n| (*n, Arc::from(*n)))
            .collect()
    });
    names.get(text).cloned().unwrap_or_else(|| Arc::from(text))
}
