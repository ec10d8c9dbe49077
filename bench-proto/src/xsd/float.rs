//! xsd:float and xsd:double: decimal and exponent forms, `INF`, `-INF`, `NaN`; written as the shortest text
//! that reads back to the same value (the form Java's `Float.toString` gives for the same numbers).

use std::fmt::{Display, LowerExp, Write as _};
use std::str::FromStr;

use super::{collapse, WriteFmt, XsdError};

/// Checks the xsd lexical pattern `[+-]?(digits[.digits?]|.digits)([eE][+-]?digits)?`, which is stricter than
/// Rust's `FromStr` (that also takes `inf`, `infinity`, `nan` in any case).
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

trait Ieee: FromStr + Display + LowerExp + Copy {
    const INFINITY: Self;
    const NEG_INFINITY: Self;
    const NAN: Self;
    fn is_nan(self) -> bool;
    fn is_infinite(self) -> bool;
    fn is_sign_negative(self) -> bool;
    fn abs_f64(self) -> f64;
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
        s if is_decimal_or_exponent(s) => s.parse().map_err(|_| XsdError::new(ty, raw)),
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
    // Both std forms are the shortest digits that round-trip; pick plain notation in the range where it is
    // short (as Java does), scientific elsewhere so f64::MAX is 23 characters and not 309.
    let a = v.abs_f64();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        let _ = write!(WriteFmt(out), "{v}");
        return;
    }
    let start = out.len();
    let _ = write!(WriteFmt(out), "{v:e}");
    if let Some(e) = out[start..].iter().position(|&b| b == b'e') {
        let e = start + e;
        out[e] = b'E';
        // Java and the XSD canonical form keep one fraction digit: 1.0E10, not 1E10.
        if !out[start..e].contains(&b'.') {
            out.splice(e..e, *b".0");
        }
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
