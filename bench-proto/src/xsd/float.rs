//! xsd:float and xsd:double: decimal and exponent forms, `INF`, `-INF`, `NaN`; written as the shortest text
//! that reads back to the same value (the form Java's `Float.toString` gives for the same numbers).

use std::str::FromStr;

use super::{collapse, XsdError};

/// Whether `s` starts as a number does: a digit or `.` after an optional sign. Of such texts Rust's `FromStr`
/// takes exactly those of the xsd lexical pattern `[+-]?(digits[.digits?]|.digits)([eE][+-]?digits)?`; the
/// others it takes (`inf`, `infinity`, `nan` in any case) start with a letter. (Tested against the pattern.)
fn starts_as_number(s: &str) -> bool {
    let b = s.as_bytes();
    let first = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    b.get(first)
        .is_some_and(|&c| c.is_ascii_digit() || c == b'.')
}

/// The xsd lexical pattern `[+-]?(digits[.digits?]|.digits)([eE][+-]?digits)?`, checked by hand: the oracle
/// for [`starts_as_number`].
#[cfg(test)]
fn is_decimal_or_exponent(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let frac_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        digits += i - frac_start;
    }
    if digits == 0 {
        return false;
    }
    if i < b.len() && matches!(b[i], b'e' | b'E') {
        i += 1;
        if i < b.len() && matches!(b[i], b'+' | b'-') {
            i += 1;
        }
        let exp_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp_start {
            return false;
        }
    }
    i == b.len()
}

trait Ieee: FromStr + Copy {
    const INFINITY: Self;
    const NEG_INFINITY: Self;
    const NAN: Self;
    fn is_nan(self) -> bool;
    fn is_infinite(self) -> bool;
    fn is_sign_negative(self) -> bool;
    fn abs_f64(self) -> f64;
    /// The shortest text that reads back to `self` (finite), in ryu's own layout.
    fn shortest(self, buf: &mut ryu::Buffer) -> &str;
}

macro_rules! ieee {
    ($t:ty) => {
        impl Ieee for $t {
            const INFINITY: Self = <$t>::INFINITY;
            const NEG_INFINITY: Self = <$t>::NEG_INFINITY;
            const NAN: Self = <$t>::NAN;
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn is_infinite(self) -> bool {
                <$t>::is_infinite(self)
            }
            fn is_sign_negative(self) -> bool {
                <$t>::is_sign_negative(self)
            }
            fn abs_f64(self) -> f64 {
                f64::from(self.abs())
            }
            fn shortest(self, buf: &mut ryu::Buffer) -> &str {
                buf.format_finite(self)
            }
        }
    };
}
ieee!(f32);
ieee!(f64);

fn parse<T: Ieee>(ty: &'static str, raw: &str) -> Result<T, XsdError> {
    match collapse(raw) {
        "INF" | "+INF" => Ok(T::INFINITY),
        "-INF" => Ok(T::NEG_INFINITY),
        "NaN" => Ok(T::NAN),
        // Out-of-range magnitudes round to ±INF or ±0, as XSD 1.1 specifies.
        s if starts_as_number(s) => s.parse().map_err(|_| XsdError::new(ty, raw)),
        _ => Err(XsdError::new(ty, raw)),
    }
}

pub fn parse_float(s: &str) -> Result<f32, XsdError> {
    parse("float", s)
}

pub fn parse_double(s: &str) -> Result<f64, XsdError> {
    parse("double", s)
}

fn write<T: Ieee>(out: &mut Vec<u8>, v: T) {
    if v.is_nan() {
        return out.extend_from_slice(b"NaN");
    }
    if v.is_infinite() {
        return out.extend_from_slice(if v.is_sign_negative() {
            b"-INF"
        } else {
            b"INF"
        });
    }
    if v.is_sign_negative() {
        out.push(b'-');
    }
    let a = v.abs_f64();
    if a == 0.0 {
        return out.push(b'0');
    }
    let mut buf = ryu::Buffer::new();
    let text = v.shortest(&mut buf);
    let plain = (1e-3..1e7).contains(&a);
    // ryu's scientific form is already ours but for `E` and a fraction digit: 3.4028235e38, 1e-7.
    let bytes = text.as_bytes();
    if let (false, Some(e)) = (plain, bytes.iter().position(|&b| b == b'e')) {
        let (mantissa, exp) = (&bytes[..e], &bytes[e + 1..]);
        let mantissa = mantissa.strip_prefix(b"-").unwrap_or(mantissa);
        out.extend_from_slice(mantissa);
        if !mantissa.contains(&b'.') {
            out.extend_from_slice(b".0");
        }
        out.push(b'E');
        out.extend_from_slice(exp);
        return;
    }
    layout(out, text, plain);
}

/// Writes ryu's `text` (of a finite, non-zero number) in our layout: plain notation if `plain`, else
/// scientific with one fraction digit at least.
fn layout(out: &mut Vec<u8>, text: &str, plain: bool) {
    let (digits, exp) = Digits::of(text);
    let digits = digits.as_slice();
    // Plain notation in the range where it is short (as Java does), scientific elsewhere so f64::MAX is 23
    // characters and not 309.
    if plain {
        // value = 0.DIGITS × 10^exp
        if exp <= 0 {
            out.extend_from_slice(b"0.");
            out.extend(std::iter::repeat(b'0').take(exp.unsigned_abs() as usize));
            out.extend_from_slice(digits);
        } else if exp as usize >= digits.len() {
            out.extend_from_slice(digits);
            out.extend(std::iter::repeat(b'0').take(exp as usize - digits.len()));
        } else {
            let (int, frac) = digits.split_at(exp as usize);
            out.extend_from_slice(int);
            out.push(b'.');
            out.extend_from_slice(frac);
        }
    } else {
        // Java and the XSD canonical form keep one fraction digit: 1.0E10, not 1E10.
        out.push(digits[0]);
        out.push(b'.');
        if digits.len() > 1 {
            out.extend_from_slice(&digits[1..]);
        } else {
            out.push(b'0');
        }
        out.push(b'E');
        out.extend_from_slice(itoa::Buffer::new().format(exp - 1).as_bytes());
    }
}

/// The significant digits of a number (no leading or trailing zeros), at most 17 for a double.
struct Digits {
    buf: [u8; 24],
    len: usize,
}

impl Digits {
    fn as_slice(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// The digits and decimal exponent of ryu's text for a finite, non-zero number: value = 0.DIGITS × 10^exp.
    fn of(text: &str) -> (Digits, i32) {
        let mut d = Digits {
            buf: [b'0'; 24],
            len: 0,
        };
        let (mut int_len, mut seen_point, mut leading, mut exp) = (0i32, false, 0i32, 0i32);
        let mut bytes = text.bytes();
        for b in bytes.by_ref() {
            match b {
                b'-' => {}
                b'.' => seen_point = true,
                b'e' => break,
                _ => {
                    int_len += i32::from(!seen_point);
                    if d.len == 0 && b == b'0' {
                        leading += 1;
                    } else if d.len < d.buf.len() {
                        d.buf[d.len] = b;
                        d.len += 1;
                    }
                }
            }
        }
        // The exponent after `e`, if any.
        let mut negative = false;
        for b in bytes {
            match b {
                b'-' => negative = true,
                _ => exp = exp * 10 + i32::from(b - b'0'),
            }
        }
        if negative {
            exp = -exp;
        }
        while d.len > 1 && d.buf[d.len - 1] == b'0' {
            d.len -= 1;
        }
        (d, int_len - leading + exp)
    }
}

/// Appends the shortest round-trip form of an xsd:float.
pub fn write_float(out: &mut Vec<u8>, v: f32) {
    write(out, v);
}

/// Appends the shortest round-trip form of an xsd:double.
pub fn write_double(out: &mut Vec<u8>, v: f64) {
    write(out, v);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every text of up to five characters from those a number is made of (and some it is not): Rust's parser
    /// behind `starts_as_number` takes exactly what the xsd pattern does.
    #[test]
    fn parser_takes_exactly_the_xsd_pattern() {
        fn every(text: &mut String, left: usize, checked: &mut usize) {
            let ours = starts_as_number(text) && text.parse::<f64>().is_ok();
            assert_eq!(ours, is_decimal_or_exponent(text), "{text:?}");
            assert_eq!(
                ours,
                starts_as_number(text) && text.parse::<f32>().is_ok(),
                "{text:?}"
            );
            *checked += 1;
            if left > 0 {
                for c in "01.eE+-infaxN ".chars() {
                    text.push(c);
                    every(text, left - 1, checked);
                    text.pop();
                }
            }
        }
        let mut checked = 0;
        every(&mut String::new(), 5, &mut checked);
        assert_eq!(checked, (0..=5).map(|n| 14usize.pow(n)).sum::<usize>());
    }

    /// The shortcut for ryu's scientific form writes what the general layout does.
    #[test]
    fn scientific_shortcut_matches_the_layout() {
        let mut x = 1.0e-300f64;
        while x < 1e300 {
            for v in [x, -x, x * 1.2345, x * 7.0] {
                let mut fast = Vec::new();
                write_double(&mut fast, v);
                let mut buf = ryu::Buffer::new();
                let mut slow = Vec::new();
                if v < 0.0 {
                    slow.push(b'-');
                }
                layout(
                    &mut slow,
                    buf.format_finite(v),
                    (1e-3..1e7).contains(&v.abs()),
                );
                assert_eq!(String::from_utf8(fast), String::from_utf8(slow), "{v:e}");
            }
            x *= 13.0;
        }
        let mut out = Vec::new();
        write_float(&mut out, f32::MAX);
        assert_eq!(out, b"3.4028235E38");
    }
}
