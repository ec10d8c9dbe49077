//! Integer types: int, long, short, byte, unsignedByte, unsignedInt, unsignedLong.

use std::str::FromStr;

use super::{collapse, XsdError};

/// Parses the xsd integer lexical form `[+-]?[0-9]+` into `T`, reporting range errors distinctly.
fn parse<T: FromStr>(ty: &'static str, raw: &str, unsigned: bool) -> Result<T, XsdError> {
    let s = collapse(raw);
    // Rust's parsers take `[+-]?[0-9]+` in range (`+?[0-9]+` for unsigned types), all of it in the xsd
    // lexical space: what they take needs no check first. The rest is told apart below.
    if let Ok(v) = s.parse() {
        return Ok(v);
    }
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(XsdError::new(ty, raw));
    }
    // `-0` is in the lexical space of the unsigned types, but Rust's unsigned parsers refuse any '-'.
    if unsigned && s.starts_with('-') {
        return if digits.bytes().all(|b| b == b'0') {
            digits.parse().map_err(|_| XsdError::new(ty, raw))
        } else {
            Err(XsdError::because(ty, raw, "negative"))
        };
    }
    s.parse()
        .map_err(|_| XsdError::because(ty, raw, "out of range"))
}

pub fn parse_int(s: &str) -> Result<i32, XsdError> {
    parse("int", s, false)
}

pub fn parse_long(s: &str) -> Result<i64, XsdError> {
    parse("long", s, false)
}

pub fn parse_short(s: &str) -> Result<i16, XsdError> {
    parse("short", s, false)
}

pub fn parse_byte(s: &str) -> Result<i8, XsdError> {
    parse("byte", s, false)
}

pub fn parse_unsigned_byte(s: &str) -> Result<u8, XsdError> {
    parse("unsignedByte", s, true)
}

pub fn parse_unsigned_int(s: &str) -> Result<u32, XsdError> {
    parse("unsignedInt", s, true)
}

pub fn parse_unsigned_long(s: &str) -> Result<u64, XsdError> {
    parse("unsignedLong", s, true)
}

/// Appends the canonical form of any integer (no sign for positives, no leading zeros).
pub fn write_int(out: &mut Vec<u8>, v: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}
