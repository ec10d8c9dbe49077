//! Eight bytes at a time in a `u64` (SWAR): the word tests the XML reader, tokenizer and writer (and
//! bench-client's response-head reader) use to pass over plain bytes without a branch per byte. A leaf
//! module.

/// 0x01 in every byte.
pub(crate) const LO: u64 = u64::from_le_bytes([0x01; 8]);
/// 0x80 in every byte.
pub(crate) const HI: u64 = u64::from_le_bytes([0x80; 8]);

/// The eight bytes of `bytes` at `at`, the first in the lowest bits.
#[inline]
pub fn word(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Up to eight bytes as a little-endian number, the missing high bytes zero: from word loads (a copy of a
/// variable length is a `memcpy` call).
#[inline]
pub fn short(b: &[u8]) -> u64 {
    let n = b.len();
    let byte = |at: usize| u64::from(b[at]);
    match n {
        0 => 0,
        1 => byte(0),
        2 => byte(0) | byte(1) << 8,
        3 => byte(0) | byte(1) << 8 | byte(2) << 16,
        4..=7 => {
            // Two overlapping four-byte loads: the bytes they share are the same in both.
            let half =
                |at: usize| u64::from(u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]));
            half(0) | half(n - 4) << (8 * (n - 4))
        }
        _ => word(b, 0),
    }
}

/// The high bit of each byte of `x` below `n` (at most 0x80). A borrow can also mark a byte above a marked
/// one, never one below: the lowest marked byte is the first such byte, and a word is marked at all exactly
/// when it holds one.
#[inline]
pub fn below(x: u64, n: u8) -> u64 {
    x.wrapping_sub(LO * u64::from(n)) & !x & HI
}

/// The high bit of each byte of `x` equal to `b`, marked as [`below`] marks.
#[inline]
pub fn equal(x: u64, b: u8) -> u64 {
    below(x ^ (LO * u64::from(b)), 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_loads_up_to_eight_bytes_little_endian() {
        let bytes: Vec<u8> = (1..=8).collect();
        for n in 0..=8 {
            let mut w = [0u8; 8];
            w[..n].copy_from_slice(&bytes[..n]);
            assert_eq!(short(&bytes[..n]), u64::from_le_bytes(w), "{n}");
        }
    }

    /// Every byte value in every position, beside bytes that borrow (0x00, 0x01) or not: the word answer and
    /// the lowest marked byte agree with a byte-by-byte look.
    #[test]
    fn marks_agree_with_the_bytes() {
        for at in 0..8 {
            for v in 0..=255u8 {
                for filler in [0x00, 0x01, 0x20, 0x7F, 0xFF] {
                    let mut bytes = [filler; 8];
                    bytes[at] = v;
                    let x = word(&bytes, 0);
                    let first = |m: u64| (m != 0).then(|| (m.trailing_zeros() / 8) as usize);
                    let want_eq = bytes.iter().position(|&c| c == b'<');
                    let want_below = bytes.iter().position(|&c| c < 0x20);
                    assert_eq!(first(equal(x, b'<')), want_eq, "{bytes:?}");
                    assert_eq!(first(below(x, 0x20)), want_below, "{bytes:?}");
                }
            }
        }
    }
}
