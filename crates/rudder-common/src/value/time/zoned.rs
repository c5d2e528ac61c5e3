//! Times with an offset or a zone, and `Period`.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use super::text::Cursor;
use super::{LocalDateTime, LocalTime};
use crate::value::ParseError;

/// A `java.time.ZoneOffset`: a fixed offset from UTC, within ±18:00.
///
/// ```
/// use rudder_common::value::ZoneOffset;
/// assert_eq!(ZoneOffset::of_seconds(19_800).unwrap().to_string(), "+05:30");
/// assert_eq!(ZoneOffset::UTC.to_string(), "Z");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ZoneOffset {
    seconds: i32,
}

impl ZoneOffset {
    /// UTC, `Z`.
    pub const UTC: ZoneOffset = ZoneOffset { seconds: 0 };

    /// The offset of `seconds` east of UTC, if within ±18 hours.
    pub fn of_seconds(seconds: i32) -> Option<ZoneOffset> {
        (seconds.abs() <= 18 * 3600).then_some(ZoneOffset { seconds })
    }

    /// Seconds east of UTC (Java's `getTotalSeconds`).
    pub fn total_seconds(self) -> i32 {
        self.seconds
    }

    /// `Z`, `+HH:MM` or `+HH:MM:SS`.
    pub(super) fn parse_from(c: &mut Cursor<'_>) -> Option<ZoneOffset> {
        if c.eat(b'Z') || c.eat(b'z') {
            return Some(ZoneOffset::UTC);
        }
        let negative = c.eat(b'-');
        if !negative {
            c.expect(b'+')?;
        }
        let hours = c.number(2)?;
        c.expect(b':')?;
        let minutes = c.number(2)?;
        let seconds = if c.eat(b':') { c.number(2)? } else { 0 };
        if hours > 18 || minutes > 59 || seconds > 59 {
            return None;
        }
        let total = (hours * 3600 + minutes * 60 + seconds) as i32;
        ZoneOffset::of_seconds(if negative { -total } else { total })
    }
}

impl fmt::Display for ZoneOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.seconds == 0 {
            return f.write_str("Z");
        }
        let abs = self.seconds.unsigned_abs();
        let sign = if self.seconds < 0 { '-' } else { '+' };
        write!(f, "{sign}{:02}:{:02}", abs / 3600, abs / 60 % 60)?;
        let seconds = abs % 60;
        if seconds != 0 {
            write!(f, ":{seconds:02}")?;
        }
        Ok(())
    }
}

/// A `java.time.OffsetDateTime`: a local date-time and its offset from UTC.
///
/// ```
/// use rudder_common::value::OffsetDateTime;
/// let t: OffsetDateTime = "2026-12-01T23:30:00+05:30".parse()?;
/// assert_eq!(t.offset().total_seconds(), 19_800);
/// assert_eq!(t.to_string(), "2026-12-01T23:30:00+05:30");
/// # Ok::<(), rudder_common::value::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OffsetDateTime {
    date_time: LocalDateTime,
    offset: ZoneOffset,
}

impl OffsetDateTime {
    /// The local date-time at the offset.
    pub fn new(date_time: LocalDateTime, offset: ZoneOffset) -> OffsetDateTime {
        OffsetDateTime { date_time, offset }
    }
    /// The wall-clock date and time.
    pub fn date_time(self) -> LocalDateTime {
        self.date_time
    }
    /// The offset from UTC.
    pub fn offset(self) -> ZoneOffset {
        self.offset
    }

    fn parse_from(c: &mut Cursor<'_>) -> Option<OffsetDateTime> {
        let date_time = LocalDateTime::parse_from(c)?;
        let offset = ZoneOffset::parse_from(c)?;
        Some(OffsetDateTime { date_time, offset })
    }
}

impl fmt::Display for OffsetDateTime {
    /// ISO-8601; `{:#}` is Java's `toString()`, which drops zero seconds.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.date_time.fmt(f)?;
        self.offset.fmt(f)
    }
}

/// A `java.time.OffsetTime`: a time of day and its offset from UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OffsetTime {
    time: LocalTime,
    offset: ZoneOffset,
}

impl OffsetTime {
    /// The time at the offset.
    pub fn new(time: LocalTime, offset: ZoneOffset) -> OffsetTime {
        OffsetTime { time, offset }
    }
    /// The time of day.
    pub fn time(self) -> LocalTime {
        self.time
    }
    /// The offset from UTC.
    pub fn offset(self) -> ZoneOffset {
        self.offset
    }
}

impl fmt::Display for OffsetTime {
    /// ISO-8601; `{:#}` is Java's `toString()`, which drops zero seconds.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.time.fmt(f)?;
        self.offset.fmt(f)
    }
}

/// A `java.time.ZonedDateTime`: a local date-time, its offset, and the zone's id.
///
/// rudder has no time-zone database: it carries the offset it is given (Java sends the one in
/// force) and the zone id (`Europe/Paris`) as text, and the receiving Java side resolves them.
///
/// ```
/// use rudder_common::value::ZonedDateTime;
/// let t: ZonedDateTime = "2026-03-29T01:30:00+01:00[Europe/Paris]".parse()?;
/// assert_eq!(t.zone(), "Europe/Paris");
/// assert_eq!(t.to_string(), "2026-03-29T01:30:00+01:00[Europe/Paris]");
/// // Without a zone the offset is the zone, as in Java.
/// assert_eq!("2026-03-29T01:30:00Z".parse::<ZonedDateTime>()?.zone(), "Z");
/// # Ok::<(), rudder_common::value::ParseError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ZonedDateTime {
    date_time: LocalDateTime,
    offset: ZoneOffset,
    zone: Arc<str>,
}

impl ZonedDateTime {
    /// The local date-time in `zone` (a region id such as `Europe/Paris`, or an offset id), at
    /// `offset`.
    pub fn new(date_time: LocalDateTime, offset: ZoneOffset, zone: &str) -> ZonedDateTime {
        ZonedDateTime {
            date_time,
            offset,
            zone: zone.into(),
        }
    }
    /// The wall-clock date and time.
    pub fn date_time(&self) -> LocalDateTime {
        self.date_time
    }
    /// The offset from UTC in force.
    pub fn offset(&self) -> ZoneOffset {
        self.offset
    }
    /// The zone id (Java's `getZone().getId()`).
    pub fn zone(&self) -> &str {
        &self.zone
    }

    fn parse_from(c: &mut Cursor<'_>) -> Option<ZonedDateTime> {
        let date_time = LocalDateTime::parse_from(c)?;
        let offset = ZoneOffset::parse_from(c)?;
        let zone = if c.eat(b'[') {
            let zone = c.until(b']')?;
            let valid = !zone.is_empty()
                && zone.len() <= 64
                && zone
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"/_+-:.~".contains(&b));
            valid.then(|| Arc::from(zone))?
        } else {
            Arc::from(offset.to_string())
        };
        Some(ZonedDateTime {
            date_time,
            offset,
            zone,
        })
    }
}

impl fmt::Display for ZonedDateTime {
    /// ISO-8601 with the zone in brackets unless it is the offset itself, as Java prints it; `{:#}`
    /// is exactly Java's `toString()`, which drops zero seconds.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.date_time.fmt(f)?;
        self.offset.fmt(f)?;
        if *self.zone != *self.offset.to_string() {
            write!(f, "[{}]", self.zone)?;
        }
        Ok(())
    }
}

/// A `java.time.Period`: years, months and days, each signed, not normalized (`P1Y-2M3D`).
///
/// ```
/// use rudder_common::value::Period;
/// let p = Period::new(1, -2, 3);
/// assert_eq!(p.to_string(), "P1Y-2M3D");
/// assert_eq!("P2W".parse::<Period>()?.days(), 14);
/// # Ok::<(), rudder_common::value::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Period {
    years: i32,
    months: i32,
    days: i32,
}

impl Period {
    /// The period of the given parts.
    pub fn new(years: i32, months: i32, days: i32) -> Period {
        Period {
            years,
            months,
            days,
        }
    }
    /// Years.
    pub fn years(self) -> i32 {
        self.years
    }
    /// Months.
    pub fn months(self) -> i32 {
        self.months
    }
    /// Days.
    pub fn days(self) -> i32 {
        self.days
    }

    fn parse_from(c: &mut Cursor<'_>) -> Option<Period> {
        let negative = c.eat(b'-');
        if !negative {
            c.eat(b'+');
        }
        if !(c.eat(b'P') || c.eat(b'p')) {
            return None;
        }
        let mut parts = [0i32; 4];
        let mut last = None;
        while !c.is_empty() {
            let minus = c.eat(b'-');
            if !minus {
                c.eat(b'+');
            }
            let n: i32 = c.digits(1, 10)?.parse().ok()?;
            let n = if minus { n.checked_neg()? } else { n };
            let slot = match c.peek()?.to_ascii_uppercase() {
                b'Y' => 0,
                b'M' => 1,
                b'W' => 2,
                b'D' => 3,
                _ => return None,
            };
            c.eat(c.peek()?);
            if last.is_some_and(|l| slot <= l) {
                return None;
            }
            last = Some(slot);
            parts[slot] = n;
        }
        last?;
        let days = parts[2].checked_mul(7)?.checked_add(parts[3])?;
        let sign = if negative { -1 } else { 1 };
        Some(Period {
            years: parts[0].checked_mul(sign)?,
            months: parts[1].checked_mul(sign)?,
            days: days.checked_mul(sign)?,
        })
    }
}

impl fmt::Display for Period {
    /// Java's `Period.toString()`: `P0D` for zero.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if (self.years, self.months, self.days) == (0, 0, 0) {
            return f.write_str("P0D");
        }
        f.write_str("P")?;
        if self.years != 0 {
            write!(f, "{}Y", self.years)?;
        }
        if self.months != 0 {
            write!(f, "{}M", self.months)?;
        }
        if self.days != 0 {
            write!(f, "{}D", self.days)?;
        }
        Ok(())
    }
}

macro_rules! from_str_whole {
    ($t:ty, $what:literal) => {
        impl FromStr for $t {
            type Err = ParseError;
            fn from_str(s: &str) -> Result<Self, ParseError> {
                Cursor::whole(s, <$t>::parse_from).ok_or_else(|| ParseError::new(s, $what))
            }
        }
    };
}
from_str_whole!(ZoneOffset, "ZoneOffset");
from_str_whole!(OffsetDateTime, "OffsetDateTime");
from_str_whole!(ZonedDateTime, "ZonedDateTime");
from_str_whole!(Period, "Period");

impl OffsetTime {
    fn parse_from(c: &mut Cursor<'_>) -> Option<OffsetTime> {
        let time = LocalTime::parse_from(c)?;
        let offset = ZoneOffset::parse_from(c)?;
        Some(OffsetTime { time, offset })
    }
}
from_str_whole!(OffsetTime, "OffsetTime");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_zones_and_periods() {
        assert_eq!(
            "-03:00".parse::<ZoneOffset>().unwrap().total_seconds(),
            -10_800
        );
        assert_eq!(
            ZoneOffset::of_seconds(3661).unwrap().to_string(),
            "+01:01:01"
        );
        assert!("+19:00".parse::<ZoneOffset>().is_err());
        assert!("+0530".parse::<ZoneOffset>().is_err());
        let t: OffsetTime = "08:00-03:00".parse().unwrap();
        assert_eq!(t.to_string(), "08:00:00-03:00");
        let z: ZonedDateTime = "2026-01-01T00:00:00+08:00[Asia/Shanghai]".parse().unwrap();
        assert_eq!(format!("{z:#}"), "2026-01-01T00:00+08:00[Asia/Shanghai]");
        assert_eq!(z.offset().total_seconds(), 28_800);
        assert!("2026-01-01T00:00:00+08:00[]"
            .parse::<ZonedDateTime>()
            .is_err());
        assert!("2026-01-01T00:00:00+08:00[Asia/Shanghai"
            .parse::<ZonedDateTime>()
            .is_err());
        assert!("2026-01-01T00:00:00[UTC]".parse::<ZonedDateTime>().is_err());
        for (text, java) in [
            ("P0D", "P0D"),
            ("P1Y-2M3D", "P1Y-2M3D"),
            ("-P1Y2M", "P-1Y-2M"),
            ("P1W2D", "P9D"),
        ] {
            assert_eq!(text.parse::<Period>().unwrap().to_string(), java, "{text}");
        }
        for bad in ["P", "P1", "P1D1Y", "1Y", "P1H", "P99999999999Y"] {
            assert!(bad.parse::<Period>().is_err(), "{bad:?}");
        }
    }
}
