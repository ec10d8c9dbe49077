//! xsd:base64Binary (whitespace tolerant, as the lexical space allows line-wrapped data) and xsd:hexBinary.

use base64_simd::Out;
use bumpalo::Bump;

use super::{collapse_bytes, XsdError};

/// Decodes base64, ignoring XML whitespace anywhere in the text.
pub fn parse_base64(raw: &str) -> Result<Vec<u8>, XsdError> {
    parse_base64_bytes(raw.as_bytes())
}

/// [`parse_base64`] of raw bytes (text the reader has not turned into `str`: what is not base64 is refused
/// all the same). Padding is required and the unused bits of the last group must be zero (the lexical space
/// of xsd:base64Binary), as the `base64` crate's strict engine checks them.
pub fn parse_base64_bytes(raw: &[u8]) -> Result<Vec<u8>, XsdError> {
    let s = collapse_bytes(raw);
    let bad = || XsdError::new("base64Binary", &String::from_utf8_lossy(raw));
    base64_simd::STANDARD.decode_to_vec(s).or_else(|_| {
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
        base64_simd::STANDARD
            .decode_to_vec(compact)
            .map_err(|_| bad())
    })
}

/// [`parse_base64_bytes`] into `arena` (text wrapped over lines takes a heap copy without its whitespace).
pub fn parse_base64_in<'a>(raw: &[u8], arena: &'a Bump) -> Result<&'a [u8], XsdError> {
    let s = collapse_bytes(raw);
    let engine = &base64_simd::STANDARD;
    let decoded = engine.decoded_length(s).ok().and_then(|n| {
        let buf = arena.alloc_slice_fill_copy(n, 0u8);
        engine.decode(s, Out::from_slice(buf)).ok().map(|d| &*d)
    });
    match decoded {
        Some(d) => Ok(d),
        None => parse_base64_bytes(raw).map(|v| &*arena.alloc_slice_copy(&v)),
    }
}

/// Appends `data` as unwrapped, padded base64.
pub fn write_base64(out: &mut Vec<u8>, data: &[u8]) {
    base64_simd::STANDARD.encode_append(data, out);
}

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
    hex_simd::decode_to_vec(s).map_err(|_| XsdError::new("hexBinary", &lossy()))
}

/// [`parse_hex_bytes`] into `arena`.
pub fn parse_hex_in<'a>(raw: &[u8], arena: &'a Bump) -> Result<&'a [u8], XsdError> {
    let s = collapse_bytes(raw);
    if s.len() % 2 != 0 {
        return parse_hex_bytes(raw).map(|v| &*arena.alloc_slice_copy(&v));
    }
    let buf = arena.alloc_slice_fill_copy(s.len() / 2, 0u8);
    match hex_simd::decode(s, Out::from_slice(buf)) {
        Ok(d) => Ok(d),
        Err(_) => Err(XsdError::new("hexBinary", &String::from_utf8_lossy(raw))),
    }
}

/// Appends `data` as upper-case hex (the canonical form).
pub fn write_hex(out: &mut Vec<u8>, data: &[u8]) {
    hex_simd::encode_append(data, out, hex_simd::AsciiCase::Upper);
}

#[cfg(test)]
mod tests {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine as _;

    use super::*;

    /// The SIMD crate writes and accepts exactly what the `base64` crate's strict engine does.
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
                assert_eq!(parse_base64_in(&ours, &Bump::new()), Ok(d));
            }
        }
        let text = STANDARD.encode(&data[..30]).into_bytes();
        for at in 0..text.len() {
            for b in 0..=255u8 {
                let mut t = text.clone();
                t[at] = b;
                let want = STANDARD.decode(xsd_trim(&t)).ok();
                let got = parse_base64_bytes(&t).ok();
                assert_eq!(
                    parse_base64_in(&t, &Bump::new()).ok(),
                    got.as_deref(),
                    "byte {b:#x} at {at} in an arena"
                );
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

    /// hexBinary is read digit by digit by a plain rule: any byte in any position of a text long enough for
    /// the crate's wide path (and of a short tail) is accepted exactly when it is a hex digit.
    #[test]
    fn hex_matches_the_digit_rule() {
        let digit = |c: u8| char::from(c).to_digit(16).map(|v| v as u8);
        let reference = |t: &[u8]| -> Option<Vec<u8>> {
            let v: Option<Vec<u8>> = t.iter().map(|&c| digit(c)).collect();
            Some(v?.chunks(2).map(|p| p[0] << 4 | p[1]).collect())
        };
        let base: Vec<u8> = b"0aF93cE7".iter().copied().cycle().take(70).collect();
        for len in [2, 8, 32, 64, 70] {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut t = base[..len].to_vec();
                    t[at] = b;
                    if matches!(b, b' ' | b'\t' | b'\n' | b'\r') && (at == 0 || at == len - 1) {
                        continue; // collapsed away: then the count is odd, tested below
                    }
                    assert_eq!(
                        parse_hex_in(&t, &Bump::new()).ok().map(<[u8]>::to_vec),
                        reference(&t),
                        "byte {b:#x} at {at} of {len} in an arena"
                    );
                    assert_eq!(
                        parse_hex_bytes(&t).ok(),
                        reference(&t),
                        "byte {b:#x} at {at} of {len}"
                    );
                }
            }
        }
        assert!(parse_hex_bytes(b" 0aF1 ").is_ok());
        assert!(parse_hex_bytes(b"0aF").is_err());
        let data: Vec<u8> = (0..=255u8).collect();
        let mut text = Vec::new();
        write_hex(&mut text, &data);
        assert_eq!(parse_hex_bytes(&text).ok(), Some(data));
    }
}
