//! xsd:base64Binary (whitespace tolerant, as the lexical space allows line-wrapped data) and xsd:hexBinary.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use super::{base64_groups, collapse_bytes, XsdError};

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
    // Whole groups by table; the last one or two bytes (with padding) by the crate.
    let (body, rest) = data.split_at(data.len() - data.len() % 3);
    base64_groups::encode_groups(out, body);
    let start = out.len();
    let len = base64::encoded_len(rest.len(), true).unwrap_or(0);
    out.resize(start + len, 0);
    // The slice is exactly the encoded length, so encoding cannot fail.
    let written = STANDARD.encode_slice(rest, &mut out[start..]).unwrap_or(0);
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
    let mut valid = true;
    // Eight digits at a time in a `u64` (checked and converted with word arithmetic), the rest by table.
    let mut outs = out.chunks_exact_mut(4);
    let mut ins = s.chunks_exact(8);
    for (o, d) in (&mut outs).zip(&mut ins) {
        let mut w = [0u8; 8];
        w.copy_from_slice(d);
        let (four, ok) = hex_word(u64::from_le_bytes(w));
        valid &= ok;
        o.copy_from_slice(&four.to_le_bytes());
    }
    let mut invalid = 0u8;
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
    if !valid || invalid & 0xF0 != 0 {
        return Err(XsdError::new("hexBinary", &lossy()));
    }
    Ok(out)
}

/// Eight hex digits (the first in the lowest byte) as the four bytes they spell (the first in the lowest
/// byte), and whether all eight are digits.
#[inline]
fn hex_word(x: u64) -> (u32, bool) {
    const fn rep(b: u8) -> u64 {
        u64::from_le_bytes([b; 8])
    }
    const HIGH: u64 = rep(0x80);
    // For bytes below 0x80, bit 7 of each byte of `at_least(x, lo)` says whether that byte is ≥ lo (no
    // carry crosses bytes; a byte at or above 0x80 fails the whole word anyway).
    let at_least = |y: u64, lo: u8| y.wrapping_add(rep(0x80 - lo)) & HIGH;
    let digit = at_least(x, b'0') & !at_least(x, b'9' + 1);
    let folded = x | rep(0x20);
    let letter = at_least(folded, b'a') & !at_least(folded, b'f' + 1);
    let ok = (digit | letter) & !x & HIGH == HIGH;
    // '0'-'9' → low nibble; 'A'-'F' and 'a'-'f' (bit 6 set) → low nibble + 9.
    let v = (x & rep(0x0F)) + ((x >> 6) & rep(0x01)) * 9;
    // Each 16-bit lane holds (high digit, low digit): make its low byte the value, then pack the lanes.
    let t = ((v << 4) | (v >> 8)) & 0x00FF_00FF_00FF_00FF;
    let t = (t | (t >> 8)) & 0x0000_FFFF_0000_FFFF;
    let t = (t | (t >> 16)) & 0xFFFF_FFFF;
    (t as u32, ok)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The table paths write and accept exactly what the crate does.
    #[test]
    fn base64_matches_the_crate() {
        let data: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
        for len in 0..40 {
            for from in [0, 7, 200] {
                let d = &data[from..from + len];
                let mut ours = Vec::new();
                write_base64(&mut ours, d);
                assert_eq!(ours, STANDARD.encode(d).into_bytes(), "{len} from {from}");
                assert_eq!(parse_base64_bytes(&ours).as_deref(), Ok(d));
            }
        }
        let text = STANDARD.encode(&data[..30]).into_bytes();
        for at in 0..text.len() {
            for b in 0..=255u8 {
                let mut t = text.clone();
                t[at] = b;
                let want = STANDARD.decode(xsd_trim(&t)).ok();
                let got = parse_base64_bytes(&t).ok();
                if want.is_some() || got.is_some() {
                    assert_eq!(got, want, "byte {b:#x} at {at}");
                }
            }
        }
    }

    fn xsd_trim(t: &[u8]) -> Vec<u8> {
        collapse_bytes(t)
            .iter()
            .copied()
            .filter(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .collect()
    }

    /// The word path agrees with the table on every byte in every position.
    #[test]
    fn hex_words_match_the_table() {
        let base = *b"0aF93cE7";
        for at in 0..8 {
            for b in 0..=255u8 {
                let mut w = base;
                w[at] = b;
                let (four, ok) = hex_word(u64::from_le_bytes(w));
                let table: Vec<u8> = w.iter().map(|&c| HEX_VALUE[usize::from(c)]).collect();
                assert_eq!(ok, table.iter().all(|&v| v < 16), "byte {b:#x} at {at}");
                if ok {
                    let want: Vec<u8> = table.chunks(2).map(|p| p[0] << 4 | p[1]).collect();
                    assert_eq!(four.to_le_bytes().to_vec(), want, "byte {b:#x} at {at}");
                }
            }
        }
    }
}
