//! xsd:base64Binary (whitespace tolerant, as the lexical space allows line-wrapped data) and xsd:hexBinary.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use super::{collapse, XsdError};

/// Decodes base64, ignoring XML whitespace anywhere in the text.
pub fn parse_base64(raw: &str) -> Result<Vec<u8>, XsdError> {
    let s = collapse(raw);
    let bad = || XsdError::new("base64Binary", raw);
    if s.bytes().any(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
        // Wrapped data is the exception: only then pay for a filtered copy.
        let compact: Vec<u8> = s
            .bytes()
            .filter(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .collect();
        return STANDARD.decode(compact).map_err(|_| bad());
    }
    STANDARD.decode(s).map_err(|_| bad())
}

/// Appends `data` as unwrapped, padded base64.
pub fn write_base64(out: &mut Vec<u8>, data: &[u8]) {
    let start = out.len();
    let len = base64::encoded_len(data.len(), true).unwrap_or(0);
    out.resize(start + len, 0);
    // The slice is exactly the encoded length, so encoding cannot fail.
    let written = STANDARD.encode_slice(data, &mut out[start..]).unwrap_or(0);
    out.truncate(start + written);
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Decodes hex digits in either case; an odd count is an error.
pub fn parse_hex(raw: &str) -> Result<Vec<u8>, XsdError> {
    let s = collapse(raw).as_bytes();
    if s.len() % 2 != 0 {
        return Err(XsdError::because("hexBinary", raw, "odd number of digits"));
    }
    let mut out = Vec::with_capacity(s.len() / 2);
    for pair in s.chunks_exact(2) {
        match (hex_value(pair[0]), hex_value(pair[1])) {
            (Some(hi), Some(lo)) => out.push(hi << 4 | lo),
            _ => return Err(XsdError::new("hexBinary", raw)),
        }
    }
    Ok(out)
}

/// Appends `data` as upper-case hex (the canonical form).
pub fn write_hex(out: &mut Vec<u8>, data: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    out.reserve(data.len() * 2);
    for &b in data {
        out.push(DIGITS[usize::from(b >> 4)]);
        out.push(DIGITS[usize::from(b & 15)]);
    }
}
