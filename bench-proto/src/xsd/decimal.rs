//! xsd:decimal as an exact value: an integer mantissa and a count of fraction digits, never a float.

use std::fmt;
use std::str::FromStr;

use super::{collapse, XsdError};

/// An exact decimal number `mantissa × 10^-scale`. Like Java's `BigDecimal` the scale is kept as written
/// (`12.50` stays `12.50`), so equality is of value *and* scale. Up to 38 significant digits (XSD requires
/// processors to support at least 18).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Decimal {
    mantissa: i128,
    scale: u8,
}

/// The largest number of fraction digits kept.
const MAX_SCALE: usize = 76;

impl Decimal {
    /// `mantissa × 10^-scale`, e.g. `Decimal::new(-1250, 2)` is `-12.50`.
    pub const fn new(mantissa: i128, scale: u8) -> Self {
        Self { mantissa, scale }
    }

    pub const fn mantissa(self) -> i128 {
        self.mantissa
    }

    /// Number of digits after the decimal point.
    pub const fn scale(self) -> u8 {
        self.scale
    }

    /// Parses the xsd:decimal lexical form `[+-]?(digits[.digits?]|.digits)`.
    pub fn parse(raw: &str) -> Result<Self, XsdError> {
        let s = collapse(raw);
        let (negative, body) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        // `.` is ASCII: splitting at its byte cuts at a character boundary.
        let (int, frac) = match body.bytes().position(|b| b == b'.') {
            Some(i) => (&body[..i], &body[i + 1..]),
            None => (body, ""),
        };
        let all_digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
        if int.len() + frac.len() == 0 || !all_digits(int) || !all_digits(frac) {
            return Err(XsdError::new("decimal", raw));
        }
        if frac.len() > MAX_SCALE {
            return Err(XsdError::because(
                "decimal",
                raw,
                "too many fraction digits",
            ));
        }
        // Up to 18 digits fit a u64 whatever they are: no step needs an overflow check (the usual value).
        if int.len() + frac.len() <= 18 {
            let m = int
                .bytes()
                .chain(frac.bytes())
                .fold(0u64, |m, b| m * 10 + u64::from(b - b'0'));
            let m = i128::from(m);
            return Ok(Self {
                mantissa: if negative { -m } else { m },
                scale: frac.len() as u8,
            });
        }
        let mut mantissa: i128 = 0;
        for b in int.bytes().chain(frac.bytes()) {
            let d = i128::from(b - b'0');
            // Accumulate negatively so that i128::MIN's magnitude fits too.
            mantissa = mantissa
                .checked_mul(10)
                .and_then(|m| m.checked_sub(d))
                .ok_or_else(|| XsdError::because("decimal", raw, "too many significant digits"))?;
        }
        if !negative {
            mantissa = mantissa
                .checked_neg()
                .ok_or_else(|| XsdError::because("decimal", raw, "too many significant digits"))?;
        }
        Ok(Self {
            mantissa,
            scale: frac.len() as u8,
        })
    }

    /// Appends the value with exactly `scale` fraction digits (`-0.50`, `3.1415926`, `42`).
    pub fn write(self, out: &mut Vec<u8>) {
        if self.mantissa < 0 {
            out.push(b'-');
        }
        // itoa's digits (u64 arithmetic when the mantissa fits, as it nearly always does: u128 division by
        // ten costs a library call per digit).
        let mut buf = itoa::Buffer::new();
        let n = self.mantissa.unsigned_abs();
        let digits = match u64::try_from(n) {
            Ok(small) => buf.format(small),
            Err(_) => buf.format(n),
        }
        .as_bytes();
        let scale = usize::from(self.scale);
        let len = digits.len();
        if len <= scale {
            // Leading zeros so there is one integer digit: 0.05 has mantissa 5, scale 2.
            out.extend_from_slice(b"0.");
            out.extend(std::iter::repeat(b'0').take(scale - len));
            out.extend_from_slice(digits);
        } else if scale == 0 {
            out.extend_from_slice(digits);
        } else {
            let (int, frac) = digits.split_at(len - scale);
            out.extend_from_slice(int);
            out.push(b'.');
            out.extend_from_slice(frac);
        }
    }
}

impl FromStr for Decimal {
    type Err = XsdError;
    fn from_str(s: &str) -> Result<Self, XsdError> {
        Self::parse(s)
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = Vec::with_capacity(48);
        self.write(&mut buf);
        f.write_str(std::str::from_utf8(&buf).map_err(|_| fmt::Error)?)
    }
}
