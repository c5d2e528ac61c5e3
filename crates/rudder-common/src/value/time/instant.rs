//! Points and lengths on the time line: `Instant`, `Duration`, and `java.util.Date`.

use std::fmt;
use std::str::FromStr;

use super::text::Cursor;
use super::zoned::ZoneOffset;
use super::LocalDateTime;
use crate::value::ParseError;

const NANOS: i128 = 1_000_000_000;

/// A `java.time.Instant`: seconds and nanoseconds since 1970-01-01T00:00:00Z.
///
/// ```
/// use rudder_common::value::Instant;
/// let t: Instant = "2026-12-01T23:30:00.000000123Z".parse()?;
/// assert_eq!((t.epoch_second(), t.nano()), (1_796_167_800, 123));
/// assert_eq!(t.to_string(), "2026-12-01T23:30:00.000000123Z");
/// // An offset is accepted and folded in.
/// assert_eq!("2026-12-02T01:30:00.000000123+02:00".parse::<Instant>()?, t);
/// # Ok::<(), rudder_common::value::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Instant {
    seconds: i64,
    nanos: u32,
}

impl Instant {
    /// The instant `seconds` + `nanos` after the epoch; `None` if `nanos` is a second or more, or
    /// the instant is outside the years Java's `LocalDate` holds.
    pub fn new(seconds: i64, nanos: u32) -> Option<Instant> {
        (nanos < 1_000_000_000 && LocalDateTime::from_epoch_second(seconds, nanos).is_some())
            .then_some(Instant { seconds, nanos })
    }

    /// Whole seconds since the epoch (Java's `getEpochSecond`).
    pub fn epoch_second(self) -> i64 {
        self.seconds
    }

    /// Nanoseconds within the second, 0-999,999,999 (Java's `getNano`).
    pub fn nano(self) -> u32 {
        self.nanos
    }

    /// The UTC wall-clock time of this instant.
    pub fn to_utc(self) -> LocalDateTime {
        // `new` checked the range.
        LocalDateTime::from_epoch_second(self.seconds, self.nanos).unwrap_or(LocalDateTime::new(
            super::LocalDate::EPOCH,
            super::LocalTime::MIDNIGHT,
        ))
    }

    pub(super) fn parse_from(c: &mut Cursor<'_>) -> Option<Instant> {
        let local = LocalDateTime::parse_from(c)?;
        let offset = ZoneOffset::parse_from(c)?;
        let seconds = local.epoch_second() - i64::from(offset.total_seconds());
        Instant::new(seconds, local.time().nano())
    }
}

impl fmt::Display for Instant {
    /// Java's `Instant.toString()` (ISO-8601, UTC, `Z`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}Z", self.to_utc())
    }
}

/// A `java.time.Duration`: a signed length of time, seconds and nanoseconds.
///
/// Like Java's, the nanoseconds are always positive: -1.5 s is -2 s + 500,000,000 ns.
///
/// ```
/// use rudder_common::value::Duration;
/// let d: Duration = "PT1H30M".parse()?;
/// assert_eq!(d.seconds(), 5400);
/// assert_eq!(d.to_string(), "PT1H30M");
/// assert_eq!(Duration::new(-90, 5).unwrap().to_string(), "PT-1M-29.999999995S");
/// assert_eq!(std::time::Duration::try_from(d).unwrap().as_secs(), 5400);
/// # Ok::<(), rudder_common::value::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Duration {
    seconds: i64,
    nanos: u32,
}

impl Duration {
    /// Zero.
    pub const ZERO: Duration = Duration {
        seconds: 0,
        nanos: 0,
    };

    /// `seconds` + `nanos` (`nanos` below one second), as Java's `getSeconds` and `getNano`.
    pub fn new(seconds: i64, nanos: u32) -> Option<Duration> {
        (nanos < 1_000_000_000).then_some(Duration { seconds, nanos })
    }

    /// Whole seconds, rounded down (Java's `getSeconds`).
    pub fn seconds(self) -> i64 {
        self.seconds
    }

    /// Nanoseconds added to [`Duration::seconds`], 0-999,999,999 (Java's `getNano`).
    pub fn nano(self) -> u32 {
        self.nanos
    }

    fn from_total_nanos(total: i128) -> Option<Duration> {
        let seconds = i64::try_from(total.div_euclid(NANOS)).ok()?;
        Duration::new(seconds, total.rem_euclid(NANOS) as u32)
    }

    fn parse_from(c: &mut Cursor<'_>) -> Option<Duration> {
        let negative = c.eat(b'-');
        if !negative {
            c.eat(b'+');
        }
        if !(c.eat(b'P') || c.eat(b'p')) {
            return None;
        }
        let mut total: i128 = 0;
        let mut any = false;
        // Each part: an optionally signed number and its unit; seconds may have a fraction.
        let part = |c: &mut Cursor<'_>| -> Option<(i128, u8)> {
            let minus = c.eat(b'-');
            if !minus {
                c.eat(b'+');
            }
            let whole: i128 = c.digits(1, 19)?.parse().ok()?;
            let mut nanos: i128 = 0;
            if c.eat(b'.') || c.eat(b',') {
                nanos = i128::from(c.nanos()?);
            }
            let unit = c.peek()?.to_ascii_uppercase();
            if nanos != 0 && unit != b'S' {
                return None;
            }
            c.eat(c.peek()?);
            let scale = match unit {
                b'D' => 86_400 * NANOS,
                b'H' => 3600 * NANOS,
                b'M' => 60 * NANOS,
                b'S' => NANOS,
                _ => return None,
            };
            let value = whole.checked_mul(scale)?.checked_add(nanos)?;
            Some((if minus { -value } else { value }, unit))
        };
        if !matches!(c.peek(), Some(b'T' | b't')) {
            let (days, unit) = part(c)?;
            if unit != b'D' {
                return None;
            }
            total += days;
            any = true;
        }
        if c.eat(b'T') || c.eat(b't') {
            let mut last = 0u8;
            while !c.is_empty() {
                let (value, unit) = part(c)?;
                let rank = match unit {
                    b'H' => 1,
                    b'M' => 2,
                    b'S' => 3,
                    _ => return None,
                };
                if rank <= last {
                    return None;
                }
                last = rank;
                total = total.checked_add(value)?;
            }
            if last == 0 {
                return None;
            }
            any = true;
        }
        if !any {
            return None;
        }
        Duration::from_total_nanos(if negative { -total } else { total })
    }
}

impl fmt::Display for Duration {
    /// Java's `Duration.toString()`, quirks included (`PT-0.5S`, `PT-1M-29.999999995S`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Duration::ZERO {
            return f.write_str("PT0S");
        }
        let mut effective = self.seconds;
        if self.seconds < 0 && self.nanos > 0 {
            effective += 1;
        }
        let hours = effective / 3600;
        let minutes = (effective % 3600) / 60;
        let secs = effective % 60;
        f.write_str("PT")?;
        if hours != 0 {
            write!(f, "{hours}H")?;
        }
        if minutes != 0 {
            write!(f, "{minutes}M")?;
        }
        if secs == 0 && self.nanos == 0 && (hours != 0 || minutes != 0) {
            return Ok(());
        }
        if self.seconds < 0 && self.nanos > 0 && secs == 0 {
            f.write_str("-0")?;
        } else {
            write!(f, "{secs}")?;
        }
        if self.nanos > 0 {
            let nanos = if self.seconds < 0 {
                1_000_000_000 - self.nanos
            } else {
                self.nanos
            };
            let digits = format!("{nanos:09}");
            write!(f, ".{}", digits.trim_end_matches('0'))?;
        }
        f.write_str("S")
    }
}

impl TryFrom<Duration> for std::time::Duration {
    type Error = Duration;
    /// A non-negative duration; a negative one is given back.
    fn try_from(d: Duration) -> Result<Self, Duration> {
        u64::try_from(d.seconds)
            .map(|s| std::time::Duration::new(s, d.nanos))
            .map_err(|_| d)
    }
}

impl TryFrom<std::time::Duration> for Duration {
    type Error = std::time::Duration;
    /// Any duration up to `i64::MAX` seconds; a longer one is given back.
    fn try_from(d: std::time::Duration) -> Result<Self, std::time::Duration> {
        i64::try_from(d.as_secs())
            .map(|s| Duration {
                seconds: s,
                nanos: d.subsec_nanos(),
            })
            .map_err(|_| d)
    }
}

/// A `java.util.Date`: milliseconds since 1970-01-01T00:00:00Z.
///
/// Written as ISO-8601 in UTC with milliseconds when there are any, as Java's
/// `date.toInstant().toString()` does.
///
/// ```
/// use rudder_common::value::Date;
/// let d = Date::from_millis(1_796_167_800_123);
/// assert_eq!(d.to_string(), "2026-12-01T23:30:00.123Z");
/// assert_eq!("2026-12-01T23:30:00.123Z".parse::<Date>()?, d);
/// # Ok::<(), rudder_common::value::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Date {
    millis: i64,
}

impl Date {
    /// The date `millis` after the epoch (Java's `new Date(millis)`).
    pub fn from_millis(millis: i64) -> Date {
        Date { millis }
    }

    /// Milliseconds since the epoch (Java's `getTime`).
    pub fn millis(self) -> i64 {
        self.millis
    }

    /// The same point as an [`Instant`], if Java's `LocalDate` range holds it.
    pub fn to_instant(self) -> Option<Instant> {
        Instant::new(
            self.millis.div_euclid(1000),
            self.millis.rem_euclid(1000) as u32 * 1_000_000,
        )
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_instant() {
            Some(instant) => instant.fmt(f),
            // Past year 999,999,999: no calendar form; say what it is.
            None => write!(f, "{}ms", self.millis),
        }
    }
}

impl FromStr for Date {
    type Err = ParseError;
    /// An ISO-8601 instant (`Z` or an offset), to the millisecond.
    fn from_str(s: &str) -> Result<Self, ParseError> {
        let instant: Instant = s.parse().map_err(|_| ParseError::new(s, "Date"))?;
        // (`%` with a binding, not `is_multiple_of`: the crates' MSRV predates it.)
        let below_millis = instant.nanos % 1_000_000;
        if below_millis != 0 {
            return Err(ParseError::new(s, "Date (milliseconds at most)"));
        }
        let millis = instant
            .seconds
            .checked_mul(1000)
            .and_then(|m| m.checked_add(i64::from(instant.nanos / 1_000_000)))
            .ok_or_else(|| ParseError::new(s, "Date"))?;
        Ok(Date { millis })
    }
}

impl FromStr for Instant {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        Cursor::whole(s, Instant::parse_from).ok_or_else(|| ParseError::new(s, "Instant"))
    }
}

impl FromStr for Duration {
    type Err = ParseError;
    /// Java's `Duration.parse`: `PnDTnHnMn.nS`, every number optionally signed.
    fn from_str(s: &str) -> Result<Self, ParseError> {
        Cursor::whole(s, Duration::parse_from).ok_or_else(|| ParseError::new(s, "Duration"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_as_java_does() {
        // Pairs from Java 17's Duration.toString().
        for (seconds, nanos, java) in [
            (0, 0, "PT0S"),
            (5400, 0, "PT1H30M"),
            (-90, 5, "PT-1M-29.999999995S"),
            (-1, 500_000_000, "PT-0.5S"),
            (59, 100_000_000, "PT59.1S"),
            (86_400, 0, "PT24H"),
            (3661, 0, "PT1H1M1S"),
        ] {
            let d = Duration::new(seconds, nanos).unwrap();
            assert_eq!(d.to_string(), java);
            assert_eq!(java.parse::<Duration>().unwrap(), d, "{java}");
        }
        assert_eq!(
            "P2DT-1H".parse::<Duration>().unwrap().seconds(),
            2 * 86_400 - 3600
        );
        assert_eq!(
            "-PT1.5S".parse::<Duration>().unwrap(),
            Duration::new(-2, 500_000_000).unwrap()
        );
        for bad in ["", "P", "PT", "PT1", "PT1S1M", "PT1.5M", "1S", "P1H"] {
            assert!(bad.parse::<Duration>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn instants_and_dates() {
        let t = Instant::new(-1, 999_000_000).unwrap();
        assert_eq!(t.to_string(), "1969-12-31T23:59:59.999Z");
        assert_eq!(
            Date::from_millis(-1).to_string(),
            "1969-12-31T23:59:59.999Z"
        );
        assert_eq!(Date::from_millis(0).to_string(), "1970-01-01T00:00:00Z");
        assert!("2026-12-01T23:30:00.0001Z".parse::<Date>().is_err());
        assert!("2026-12-01T23:30:00".parse::<Instant>().is_err());
        assert_eq!(Instant::new(0, 1_000_000_000), None);
    }
}
