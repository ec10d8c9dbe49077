//! xsd:dateTime: `[-]yyyy-mm-ddThh:mm:ss[.fffffffff][Z|(+|-)hh:mm]`, with every field range-checked.

use std::fmt;
use std::str::FromStr;

use super::{collapse, XsdError};

/// A dateTime as written: local fields plus an optional timezone offset. Equality is of the fields, so
/// `00:00:00Z` and `01:00:00+01:00` are different values here (they name the same instant).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DateTime {
    /// Proleptic Gregorian year; 0 is 1 BCE as in XSD 1.1.
    pub year: i32,
    pub month: u8,
    pub day: u8,
    /// 0..=23, or 24 for `24:00:00` (end of day), which XSD allows.
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    /// Fraction of the second in nanoseconds (up to 9 fraction digits are accepted).
    pub nanos: u32,
    /// Offset from UTC in minutes (`Z` is `Some(0)`); `None` when the lexical form had no timezone.
    pub offset_minutes: Option<i16>,
}

fn is_leap(year: i32) -> bool {
    year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0)
}

fn days_in_month(year: i32, month: u8) -> u8 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

const TY: &str = "dateTime";

/// Reads exactly `n` ASCII digits at `*i`.
fn digits(b: &[u8], i: &mut usize, n: usize) -> Option<u32> {
    let part = b.get(*i..*i + n)?;
    let mut v = 0u32;
    for &d in part {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u32::from(d - b'0');
    }
    *i += n;
    Some(v)
}

fn expect(b: &[u8], i: &mut usize, c: u8) -> Option<()> {
    (b.get(*i) == Some(&c)).then(|| *i += 1)
}

impl DateTime {
    /// Builds a value, checking every field's range.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        year: i32,
        month: u8,
        day: u8,
        hour: u8,
        minute: u8,
        second: u8,
        nanos: u32,
        offset_minutes: Option<i16>,
    ) -> Result<Self, &'static str> {
        let v = Self {
            year,
            month,
            day,
            hour,
            minute,
            second,
            nanos,
            offset_minutes,
        };
        v.check()?;
        Ok(v)
    }

    fn check(&self) -> Result<(), &'static str> {
        if !(1..=12).contains(&self.month) {
            return Err("month out of range");
        }
        if self.day == 0 || self.day > days_in_month(self.year, self.month) {
            return Err("day out of range");
        }
        if self.hour == 24 {
            if self.minute != 0 || self.second != 0 || self.nanos != 0 {
                return Err("24:00:00 is the only time allowed with hour 24");
            }
        } else if self.hour > 23 {
            return Err("hour out of range");
        }
        if self.minute > 59 {
            return Err("minute out of range");
        }
        if self.second > 59 {
            return Err("second out of range");
        }
        if self.nanos > 999_999_999 {
            return Err("fraction out of range");
        }
        if let Some(off) = self.offset_minutes {
            if !(-14 * 60..=14 * 60).contains(&off) {
                return Err("timezone offset beyond ±14:00");
            }
        }
        Ok(())
    }

    pub fn parse(raw: &str) -> Result<Self, XsdError> {
        let s = collapse(raw);
        match Self::usual(s.as_bytes()) {
            Some(v) => Ok(v),
            None => Self::parse_any(raw, s),
        }
    }

    /// The form nearly every writer uses, `YYYY-MM-DDThh:mm:ssZ`, read at fixed offsets: the value, or `None`
    /// for anything else (also for a value out of range, which [`parse_any`](Self::parse_any) then names).
    #[inline]
    fn usual(b: &[u8]) -> Option<Self> {
        let b: &[u8; 20] = b.try_into().ok()?;
        let layout = [
            (4, b'-'),
            (7, b'-'),
            (10, b'T'),
            (13, b':'),
            (16, b':'),
            (19, b'Z'),
        ];
        if layout.iter().any(|&(i, c)| b[i] != c) {
            return None;
        }
        let digit = |i: usize| {
            let d = b[i].wrapping_sub(b'0');
            (d < 10).then_some(d)
        };
        let two = |i: usize| Some(digit(i)? * 10 + digit(i + 1)?);
        let year = i32::from(two(0)?) * 100 + i32::from(two(2)?);
        let (month, day, hour) = (two(5)?, two(8)?, two(11)?);
        Self::new(year, month, day, hour, two(14)?, two(17)?, 0, Some(0)).ok()
    }

    /// Any lexical form of xsd:dateTime, `s` being `raw` collapsed.
    fn parse_any(raw: &str, s: &str) -> Result<Self, XsdError> {
        let bad = || XsdError::new(TY, raw);
        let b = s.as_bytes();
        let mut i = 0;
        let negative = b.first() == Some(&b'-');
        if negative {
            i = 1;
        }
        // Year: four or more digits, no leading zero beyond four.
        let year_len = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if year_len < 4 {
            return Err(bad());
        }
        if (year_len > 4 && b[i] == b'0') || year_len > 9 {
            return Err(XsdError::because(
                TY,
                raw,
                "year must have 4 to 9 digits, no leading zero",
            ));
        }
        let year = digits(b, &mut i, year_len).ok_or_else(bad)? as i32;
        let year = if negative { -year } else { year };
        let mut fields = || -> Option<(u8, u8, u8, u8, u8)> {
            expect(b, &mut i, b'-')?;
            let month = digits(b, &mut i, 2)? as u8;
            expect(b, &mut i, b'-')?;
            let day = digits(b, &mut i, 2)? as u8;
            expect(b, &mut i, b'T')?;
            let hour = digits(b, &mut i, 2)? as u8;
            expect(b, &mut i, b':')?;
            let minute = digits(b, &mut i, 2)? as u8;
            expect(b, &mut i, b':')?;
            let second = digits(b, &mut i, 2)? as u8;
            Some((month, day, hour, minute, second))
        };
        let (month, day, hour, minute, second) = fields().ok_or_else(bad)?;
        let mut nanos = 0;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let n = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
            if n == 0 {
                return Err(bad());
            }
            if n > 9 {
                return Err(XsdError::because(TY, raw, "more than 9 fraction digits"));
            }
            nanos = digits(b, &mut i, n).ok_or_else(bad)? * 10u32.pow(9 - n as u32);
        }
        let offset_minutes = match b.get(i) {
            None => None,
            Some(b'Z') => {
                i += 1;
                Some(0)
            }
            Some(&sign @ (b'+' | b'-')) => {
                i += 1;
                let mut tz = || -> Option<i16> {
                    let h = digits(b, &mut i, 2)? as i16;
                    expect(b, &mut i, b':')?;
                    let m = digits(b, &mut i, 2)? as i16;
                    (m < 60).then_some(h * 60 + m)
                };
                let off = tz().ok_or_else(|| XsdError::because(TY, raw, "bad timezone"))?;
                Some(if sign == b'-' { -off } else { off })
            }
            Some(_) => return Err(bad()),
        };
        if i != b.len() {
            return Err(bad());
        }
        Self::new(
            year,
            month,
            day,
            hour,
            minute,
            second,
            nanos,
            offset_minutes,
        )
        .map_err(|why| XsdError::because(TY, raw, why))
    }

    /// Appends the canonical form: fraction without trailing zeros, UTC offset as `Z`.
    pub fn write(&self, out: &mut Vec<u8>) {
        if self.year < 0 {
            out.push(b'-');
        }
        let year = self.year.unsigned_abs();
        if year < 10_000 {
            two(out, (year / 100) as u8);
            two(out, (year % 100) as u8);
        } else {
            out.extend_from_slice(itoa::Buffer::new().format(year).as_bytes());
        }
        for (sep, v) in [
            (b'-', self.month),
            (b'-', self.day),
            (b'T', self.hour),
            (b':', self.minute),
            (b':', self.second),
        ] {
            out.push(sep);
            two(out, v);
        }
        if self.nanos != 0 {
            let mut frac = self.nanos;
            let mut width = 9;
            while frac % 10 == 0 {
                frac /= 10;
                width -= 1;
            }
            out.push(b'.');
            let mut digits = [b'0'; 9];
            for d in digits[..width].iter_mut().rev() {
                *d = b'0' + (frac % 10) as u8;
                frac /= 10;
            }
            out.extend_from_slice(&digits[..width]);
        }
        match self.offset_minutes {
            None => {}
            Some(0) => out.push(b'Z'),
            Some(off) => {
                out.push(if off < 0 { b'-' } else { b'+' });
                let off = off.unsigned_abs();
                two(out, (off / 60) as u8);
                out.push(b':');
                two(out, (off % 60) as u8);
            }
        }
    }
}

/// Appends `v` (below 100) as two digits.
fn two(out: &mut Vec<u8>, v: u8) {
    out.extend_from_slice(&[b'0' + v / 10 % 10, b'0' + v % 10]);
}

impl FromStr for DateTime {
    type Err = XsdError;
    fn from_str(s: &str) -> Result<Self, XsdError> {
        Self::parse(s)
    }
}

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = Vec::with_capacity(40);
        self.write(&mut buf);
        f.write_str(std::str::from_utf8(&buf).map_err(|_| fmt::Error)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each byte of the usual form changed to each of a few others: whatever the fixed-offset reading accepts,
    /// the general reading accepts as the same value.
    #[test]
    fn the_usual_form_reads_as_the_general_path_reads_it() {
        let base = b"2005-12-03T00:00:09Z";
        let mut accepted = 0;
        for at in 0..base.len() {
            for c in b"0129-:TZ+. x".iter().chain(b"5678") {
                let mut b = *base;
                b[at] = *c;
                let s = std::str::from_utf8(&b).unwrap();
                let general = DateTime::parse_any(s, s).ok();
                if let Some(v) = DateTime::usual(&b) {
                    assert_eq!(Some(v), general, "{s}");
                    accepted += 1;
                }
            }
        }
        for s in [
            "2005-02-29T00:00:00Z",
            "2004-02-29T24:00:00Z",
            "2005-13-01T00:00:00Z",
            "0000-01-01T00:00:00Z",
        ] {
            assert_eq!(
                DateTime::usual(s.as_bytes()),
                DateTime::parse_any(s, s).ok(),
                "{s}"
            );
        }
        assert!(accepted > 50, "{accepted}");
    }
}
