//! Calendar dates and wall-clock times without a zone: `LocalDate`, `LocalTime`, `LocalDateTime`.

use std::fmt;
use std::str::FromStr;

use super::text::{fraction, Cursor};
use crate::value::ParseError;

/// Java's `LocalDate` range: years -999,999,999 to 999,999,999.
const MAX_YEAR: i32 = 999_999_999;

/// A `java.time.LocalDate`: a proleptic Gregorian calendar date.
///
/// ```
/// use rudder_common::value::LocalDate;
/// let d = LocalDate::new(2026, 12, 31).unwrap();
/// assert_eq!(d.to_string(), "2026-12-31");
/// assert_eq!("2026-12-31".parse::<LocalDate>(), Ok(d));
/// assert_eq!(LocalDate::new(2026, 2, 29), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalDate {
    year: i32,
    month: u8,
    day: u8,
}

impl LocalDate {
    /// 1970-01-01.
    pub const EPOCH: LocalDate = LocalDate {
        year: 1970,
        month: 1,
        day: 1,
    };

    /// The date, if it exists (month 1-12, a day the month has, a year Java's range holds).
    pub fn new(year: i32, month: u32, day: u32) -> Option<LocalDate> {
        let valid = (-MAX_YEAR..=MAX_YEAR).contains(&year)
            && (1..=12).contains(&month)
            && day >= 1
            && day <= days_in_month(year, month);
        valid.then_some(LocalDate {
            year,
            month: month as u8,
            day: day as u8,
        })
    }

    /// The year.
    pub fn year(self) -> i32 {
        self.year
    }

    /// The month, 1-12.
    pub fn month(self) -> u32 {
        self.month.into()
    }

    /// The day of the month, 1-31.
    pub fn day(self) -> u32 {
        self.day.into()
    }

    /// Days since 1970-01-01 (Java's `toEpochDay`).
    pub fn to_epoch_day(self) -> i64 {
        // Howard Hinnant's days_from_civil.
        let (m, d) = (i64::from(self.month), i64::from(self.day));
        let y = i64::from(self.year) - i64::from(m <= 2);
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    /// The date `days` after 1970-01-01, if Java's range holds it.
    pub fn from_epoch_day(days: i64) -> Option<LocalDate> {
        let z = days.checked_add(719_468)?;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        LocalDate::new(i32::try_from(year).ok()?, month as u32, day as u32)
    }

    pub(super) fn parse_from(c: &mut Cursor<'_>) -> Option<LocalDate> {
        let negative = c.eat(b'-');
        let signed = negative || c.eat(b'+');
        let digits = c.digits(4, 9)?;
        // Like Java: more than four year digits need a sign.
        if digits.len() > 4 && !signed {
            return None;
        }
        let year: i32 = digits.parse().ok()?;
        c.expect(b'-')?;
        let month = c.number(2)?;
        c.expect(b'-')?;
        let day = c.number(2)?;
        LocalDate::new(if negative { -year } else { year }, month, day)
    }
}

fn is_leap(year: i32) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

impl fmt::Display for LocalDate {
    /// Java's `LocalDate.toString()`: `2026-12-31`; years past 9999 get a `+`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let year = self.year;
        if year.unsigned_abs() < 1000 {
            let sign = if year < 0 { "-" } else { "" };
            write!(f, "{sign}{:04}", year.unsigned_abs())?;
        } else if year > 9999 {
            write!(f, "+{year}")?;
        } else {
            write!(f, "{year}")?;
        }
        write!(f, "-{:02}-{:02}", self.month, self.day)
    }
}

/// A `java.time.LocalTime`: a time of day, to the nanosecond.
///
/// ```
/// use rudder_common::value::LocalTime;
/// let t = LocalTime::new(23, 30, 5, 120_000_000).unwrap();
/// assert_eq!(t.to_string(), "23:30:05.120");
/// assert_eq!("23:30".parse::<LocalTime>()?.to_string(), "23:30:00");
/// # Ok::<(), rudder_common::value::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalTime {
    hour: u8,
    minute: u8,
    second: u8,
    nano: u32,
}

impl LocalTime {
    /// Midnight.
    pub const MIDNIGHT: LocalTime = LocalTime {
        hour: 0,
        minute: 0,
        second: 0,
        nano: 0,
    };

    /// The time, if every part is in range.
    pub fn new(hour: u32, minute: u32, second: u32, nano: u32) -> Option<LocalTime> {
        (hour < 24 && minute < 60 && second < 60 && nano < 1_000_000_000).then_some(LocalTime {
            hour: hour as u8,
            minute: minute as u8,
            second: second as u8,
            nano,
        })
    }

    /// The hour, 0-23.
    pub fn hour(self) -> u32 {
        self.hour.into()
    }
    /// The minute, 0-59.
    pub fn minute(self) -> u32 {
        self.minute.into()
    }
    /// The second, 0-59.
    pub fn second(self) -> u32 {
        self.second.into()
    }
    /// The nanosecond, 0-999,999,999.
    pub fn nano(self) -> u32 {
        self.nano
    }

    pub(super) fn second_of_day(self) -> i64 {
        i64::from(self.hour) * 3600 + i64::from(self.minute) * 60 + i64::from(self.second)
    }

    pub(super) fn from_second_of_day(seconds: i64, nano: u32) -> Option<LocalTime> {
        let s = u32::try_from(seconds).ok()?;
        LocalTime::new(s / 3600, s / 60 % 60, s % 60, nano)
    }

    pub(super) fn parse_from(c: &mut Cursor<'_>) -> Option<LocalTime> {
        let hour = c.number(2)?;
        c.expect(b':')?;
        let minute = c.number(2)?;
        let (mut second, mut nano) = (0, 0);
        if c.eat(b':') {
            second = c.number(2)?;
            if c.eat(b'.') || c.eat(b',') {
                nano = c.nanos()?;
            }
        }
        LocalTime::new(hour, minute, second, nano)
    }
}

impl fmt::Display for LocalTime {
    /// ISO-8601 `HH:mm:ss` with the fraction in groups of three digits (`.120`, `.000001`), as
    /// Java's `DateTimeFormatter.ISO_LOCAL_TIME` prints it (Java's `toString()` drops `:00`
    /// seconds; both parse back the same). The alternate form (`{:#}`) is Java's `toString()`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}:{:02}", self.hour, self.minute)?;
        if f.alternate() && self.second == 0 && self.nano == 0 {
            return Ok(());
        }
        write!(f, ":{:02}", self.second)?;
        fraction(f, self.nano)
    }
}

/// A `java.time.LocalDateTime`: a date and a time of day, no zone.
///
/// ```
/// use rudder_common::value::LocalDateTime;
/// let t: LocalDateTime = "2026-12-01T23:30:00".parse()?;
/// assert_eq!(t.date().day(), 1);
/// assert_eq!(t.to_string(), "2026-12-01T23:30:00");
/// # Ok::<(), rudder_common::value::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalDateTime {
    date: LocalDate,
    time: LocalTime,
}

impl LocalDateTime {
    /// The date at the time.
    pub fn new(date: LocalDate, time: LocalTime) -> LocalDateTime {
        LocalDateTime { date, time }
    }
    /// The date.
    pub fn date(self) -> LocalDate {
        self.date
    }
    /// The time of day.
    pub fn time(self) -> LocalTime {
        self.time
    }

    /// Seconds since 1970-01-01T00:00 of this wall-clock time read as UTC.
    pub(super) fn epoch_second(self) -> i64 {
        self.date.to_epoch_day() * 86_400 + self.time.second_of_day()
    }

    pub(super) fn from_epoch_second(seconds: i64, nano: u32) -> Option<LocalDateTime> {
        let date = LocalDate::from_epoch_day(seconds.div_euclid(86_400))?;
        let time = LocalTime::from_second_of_day(seconds.rem_euclid(86_400), nano)?;
        Some(LocalDateTime { date, time })
    }

    pub(super) fn parse_from(c: &mut Cursor<'_>) -> Option<LocalDateTime> {
        let date = LocalDate::parse_from(c)?;
        if !(c.eat(b'T') || c.eat(b't')) {
            return None;
        }
        Some(LocalDateTime {
            date,
            time: LocalTime::parse_from(c)?,
        })
    }
}

impl fmt::Display for LocalDateTime {
    /// ISO-8601; the alternate form (`{:#}`) is Java's `toString()` (`2026-12-01T23:30`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            write!(f, "{}T{:#}", self.date, self.time)
        } else {
            write!(f, "{}T{}", self.date, self.time)
        }
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
from_str_whole!(LocalDate, "LocalDate");
from_str_whole!(LocalTime, "LocalTime");
from_str_whole!(LocalDateTime, "LocalDateTime");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_days_match_java() {
        // LocalDate.of(2026, 12, 31).toEpochDay() == 20818 (hessian-lite's compact form writes it).
        let d = LocalDate::new(2026, 12, 31).unwrap();
        assert_eq!(d.to_epoch_day(), 20_818);
        assert_eq!(LocalDate::from_epoch_day(0), LocalDate::new(1970, 1, 1));
        for days in [-719_528, -1, 0, 59, 60, 11_016, 2_932_896, -2_932_897] {
            let d = LocalDate::from_epoch_day(days).unwrap();
            assert_eq!(d.to_epoch_day(), days);
        }
        assert_eq!(LocalDate::new(2000, 2, 29).unwrap().day(), 29);
        assert_eq!(LocalDate::new(1900, 2, 29), None);
    }

    #[test]
    fn dates_and_times_print_and_parse_as_iso() {
        for (text, printed) in [
            ("2026-12-31", "2026-12-31"),
            ("0005-01-01", "0005-01-01"),
            ("-0001-03-01", "-0001-03-01"),
            ("+12345-06-07", "+12345-06-07"),
        ] {
            assert_eq!(text.parse::<LocalDate>().unwrap().to_string(), printed);
        }
        for (text, printed) in [
            ("23:30", "23:30:00"),
            ("00:00:01", "00:00:01"),
            ("23:30:05.12", "23:30:05.120"),
            ("23:30:05.000001", "23:30:05.000001"),
            ("23:30:05.000000001", "23:30:05.000000001"),
        ] {
            assert_eq!(text.parse::<LocalTime>().unwrap().to_string(), printed);
        }
        // Java's toString() drops zero seconds: the alternate form.
        let t: LocalDateTime = "2026-12-01T23:30:00".parse().unwrap();
        assert_eq!(format!("{t:#}"), "2026-12-01T23:30");
        assert_eq!(format!("{:#}", t.time()), "23:30");
        assert_eq!(
            format!("{:#}", LocalTime::new(23, 30, 0, 5).unwrap()),
            "23:30:00.000000005"
        );
        for bad in [
            "2026-13-01",
            "2026-1-01",
            "12345-01-01",
            "2026-12-31T",
            "24:00",
            "23:60",
        ] {
            assert!(bad.parse::<LocalDate>().is_err() && bad.parse::<LocalTime>().is_err());
        }
        assert!("2026-12-01 23:30".parse::<LocalDateTime>().is_err());
        assert!("23:30:05.1234567890".parse::<LocalTime>().is_err());
    }
}
