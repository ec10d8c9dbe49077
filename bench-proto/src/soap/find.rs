//! Finding one of a few bytes in the short slices XML is made of (names, tags, attribute values, the gaps
//! between references): eight bytes at a time in a machine word over the first bytes, where `memchr`'s set-up
//! costs more than the search, and `memchr` beyond them. A leaf module, so the tokenizer, the attribute reader
//! and the unescaper can all share it.

use memchr::{memchr, memchr2, memchr3};

use crate::swar::{equal, word};

/// How many bytes are searched a word at a time before handing over to `memchr` (24 measured best over the CXF
/// call, echoStringDoc and the 100 KB Customer message, against 16, 32 and 64: 4.3 % fewer instructions for the
/// CXF parse, 3.5 % for the Customer one, than a byte loop over 8 bytes and then `memchr`).
const SHORT: usize = 24;

/// The first byte of `hay` that `marks` marks in its word (see [`crate::swar::below`]) or `is` accepts; past
/// [`SHORT`] bytes, `rest` searches what is left.
#[inline]
fn first(
    hay: &[u8],
    is: impl Fn(u8) -> bool,
    marks: impl Fn(u64) -> u64,
    rest: impl FnOnce(&[u8]) -> Option<usize>,
) -> Option<usize> {
    if hay.len() < 8 {
        return hay.iter().position(|&c| is(c));
    }
    let found = |at: usize, m: u64| at + (m.trailing_zeros() / 8) as usize;
    let words = hay.len().min(SHORT);
    let mut at = 0;
    while at + 8 <= words {
        let m = marks(word(hay, at));
        if m != 0 {
            return Some(found(at, m));
        }
        at += 8;
    }
    if hay.len() <= SHORT {
        // The last eight bytes, overlapping some already searched (which hold no match, so cannot be marked).
        if at < hay.len() {
            let last = hay.len() - 8;
            let m = marks(word(hay, last));
            if m != 0 {
                return Some(found(last, m));
            }
        }
        return None;
    }
    rest(&hay[at..]).map(|i| i + at)
}

/// The position of the first `needle` in `hay`.
#[inline]
pub(super) fn byte(needle: u8, hay: &[u8]) -> Option<usize> {
    first(
        hay,
        |c| c == needle,
        |w| equal(w, needle),
        |rest| memchr(needle, rest),
    )
}

/// The position of the first `a` or `b` in `hay`.
#[inline]
pub(super) fn either(a: u8, b: u8, hay: &[u8]) -> Option<usize> {
    first(
        hay,
        |c| c == a || c == b,
        |w| equal(w, a) | equal(w, b),
        |rest| memchr2(a, b, rest),
    )
}

/// The position of the first `a`, `b` or `c` in `hay`.
#[inline]
pub(super) fn any_of3(a: u8, b: u8, c: u8, hay: &[u8]) -> Option<usize> {
    first(
        hay,
        |x| x == a || x == b || x == c,
        |w| equal(w, a) | equal(w, b) | equal(w, c),
        |rest| memchr3(a, b, c, rest),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every position on both sides of each hand-over, against the obvious answer.
    #[test]
    fn finds_the_first_match_wherever_it_is() {
        for len in 0..80 {
            for at in 0..=len {
                let mut hay = vec![b'a'; len];
                let want = (at < len).then_some(at);
                if let Some(i) = want {
                    hay[i] = b'>';
                    if i + 1 < len {
                        hay[i + 1] = b'"';
                    }
                }
                assert_eq!(byte(b'>', &hay), want, "len {len} at {at}");
                assert_eq!(either(b'"', b'>', &hay), want, "len {len} at {at}");
                assert_eq!(any_of3(b'\'', b'"', b'>', &hay), want, "len {len} at {at}");
                assert_eq!(byte(b'<', &hay), None);
            }
        }
    }

    /// Bytes that a word-at-a-time search could confuse with a match (the needle's neighbours, bytes that
    /// borrow or carry: 0x00, 0x01, 0x7F, 0x80, 0xFF), in every arrangement a small generator makes.
    #[test]
    fn near_misses_are_not_matches() {
        let alphabet = [
            0x00,
            0x01,
            b'<' - 1,
            b'<',
            b'<' + 1,
            b'&',
            0x7F,
            0x80,
            0xFF,
            b'a',
        ];
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 72) as usize;
            let hay: Vec<u8> = (0..len)
                .map(|i| alphabet[((state >> (i % 60)) as usize + i * 7) % alphabet.len()])
                .collect();
            let naive = |f: &dyn Fn(u8) -> bool| hay.iter().position(|&c| f(c));
            assert_eq!(byte(b'<', &hay), naive(&|c| c == b'<'), "{hay:?}");
            assert_eq!(byte(0x00, &hay), naive(&|c| c == 0x00), "{hay:?}");
            assert_eq!(byte(0xFF, &hay), naive(&|c| c == 0xFF), "{hay:?}");
            assert_eq!(
                either(b'&', b'<', &hay),
                naive(&|c| c == b'&' || c == b'<'),
                "{hay:?}"
            );
            assert_eq!(
                any_of3(0x01, 0x80, b'a', &hay),
                naive(&|c| c == 0x01 || c == 0x80 || c == b'a'),
                "{hay:?}"
            );
        }
    }
}
