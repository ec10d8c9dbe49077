//! Finding one of a few bytes in the short slices XML is made of (names, tags, attribute values, the gaps
//! between references): a plain loop over the first bytes beats `memchr`'s set-up there, and `memchr` serves
//! beyond them. A leaf module, so the tokenizer, the attribute reader and the unescaper can all share it.

use memchr::{memchr, memchr2, memchr3};

/// How many bytes the plain loop looks at before handing over to `memchr` (8 measured best on the CXF call
/// and the 100 KB Customer message, against 16, 24 and 32).
const SHORT: usize = 8;

/// The position of the first `needle` in `hay`.
#[inline]
pub(super) fn byte(needle: u8, hay: &[u8]) -> Option<usize> {
    let head = &hay[..hay.len().min(SHORT)];
    if let Some(i) = head.iter().position(|&c| c == needle) {
        return Some(i);
    }
    if hay.len() <= SHORT {
        return None;
    }
    memchr(needle, &hay[SHORT..]).map(|i| i + SHORT)
}

/// The position of the first `a` or `b` in `hay`.
#[inline]
pub(super) fn either(a: u8, b: u8, hay: &[u8]) -> Option<usize> {
    let head = &hay[..hay.len().min(SHORT)];
    if let Some(i) = head.iter().position(|&c| c == a || c == b) {
        return Some(i);
    }
    if hay.len() <= SHORT {
        return None;
    }
    memchr2(a, b, &hay[SHORT..]).map(|i| i + SHORT)
}

/// The position of the first `a`, `b` or `c` in `hay`.
#[inline]
pub(super) fn any_of3(a: u8, b: u8, c: u8, hay: &[u8]) -> Option<usize> {
    let head = &hay[..hay.len().min(SHORT)];
    if let Some(i) = head.iter().position(|&x| x == a || x == b || x == c) {
        return Some(i);
    }
    if hay.len() <= SHORT {
        return None;
    }
    memchr3(a, b, c, &hay[SHORT..]).map(|i| i + SHORT)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every position on both sides of the hand-over, against the obvious answer.
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
}
