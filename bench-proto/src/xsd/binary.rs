//! xsd:base64Binary (whitespace tolerant, as the lexical space allows line-wrapped data) and xsd:hexBinary.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use super::{collapse_bytes, XsdError};

/// Decodes base64, ignoring XML whitespace anywhere in the text.
pub fn parse_base64(raw: &str) -> Result<Vec<u8>, XsdError> {
    parse_base64_bytes(raw.as_bytes())
}

/// [`parse_base64`] of raw bytes (text the reader has not turned into `str`: what is not base64 is refused
/// all the same).
pub fn parse_base64_bytes(raw: &[u8]) -> Result<Vec<u8>, XsdError> {
    let s = collapse_bytes(raw);
    let bad = || XsdError::new("base64Binary", &String::from_utf8_lossy(raw));
    STANDARD.decode(s).or_else(|_| {
        // Wrapped data is the exception: only when the text does not decode as it is, pay for a copy
        // without whitespace.
        let compact: Vec<u8> = s
            .iter()
            .copied()
            .filter(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .collect();
        if compact.len() == s.len() {
            return Err(bad());
        }
        STANDARD.decode(compact).map_err(|_| bad())
    })
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

/// The value of each hex digit; 0xFF for other bytes.
const HEX_VALUE: [u8; 256] = {
    let mut t = [0xFFu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// Decodes hex digits in either case; an odd count is an error.
pub fn parse_hex(raw: &str) -> Result<Vec<u8>, XsdError> {
    parse_hex_bytes(raw.as_bytes())
}

/// [`parse_hex`] of raw bytes.
pub fn parse_hex_bytes(raw: &[u8]) -> Result<Vec<u8>, XsdError> {
    let s = collapse_bytes(raw);
    let lossy = || String::from_utf8_lossy(raw);
    if s.len() % 2 != 0 {
        return Err(XsdError::because(
            "hexBinary",
            &lossy(),
            "odd number of digits",
        ));
    }
    let mut out = vec![0u8; s.len() / 2];
    let mut invalid = 0u8;
    // Four bytes from eight digits per step: fewer loop checks, the look-ups independent.
    let mut outs = out.chunks_exact_mut(4);
    let mut ins = s.chunks_exact(8);
    for (o, d) in (&mut outs).zip(&mut ins) {
        let v = |i: usize| HEX_VALUE[usize::from(d[i])];
        let (a, b, c, e) = (
            v(0) << 4 | v(1),
            v(2) << 4 | v(3),
            v(4) << 4 | v(5),
            v(6) << 4 | v(7),
        );
        invalid |= v(0) | v(1) | v(2) | v(3) | v(4) | v(5) | v(6) | v(7);
        o.copy_from_slice(&[a, b, c, e]);
    }
    for (o, pair) in outs
        .into_remainder()
        .iter_mut()
        .zip(ins.remainder().chunks_exact(2))
    {
        let (hi, lo) = (
            HEX_VALUE[usize::from(pair[0])],
            HEX_VALUE[usize::from(pair[1])],
        );
        invalid |= hi | lo;
        *o = hi << 4 | (lo & 15);
    }
    // Digits are below 16: any bit above says some byte was not a digit.
    if invalid & 0xF0 != 0 {
        return Err(XsdError::new("hexBinary", &lossy()));
    }
    Ok(out)
}

/// The two upper-case hex digits of every byte.
const HEX_PAIRS: [[u8; 2]; 256] = {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    let mut t = [[0u8; 2]; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = [DIGITS[b >> 4], DIGITS[b & 15]];
        b += 1;
    }
    t
};

/// Appends `data` as upper-case hex (the canonical form).
pub fn write_hex(out: &mut Vec<u8>, data: &[u8]) {
    let start = out.len();
    out.resize(start + data.len() * 2, 0);
    for (pair, &b) in out[start..].chunks_exact_mut(2).zip(data) {
        pair.copy_from_slice(&HEX_PAIRS[usize::from(b)]);
    }
}
