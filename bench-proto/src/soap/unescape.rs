//! Expanding references in text: the five predefined entities and plain character references, which is what
//! writers emit, by hand; any other reference (unknown, broken or unusual ones) sends the whole text to
//! quick-xml's `unescape`, so what is accepted and what it means stay quick-xml's. (quick-xml cost ~230 instructions a reference on
//! the 1 KiB echoStringDoc text; this about a third of that.)

use std::borrow::Cow;

use bumpalo::Bump;

use super::find;

/// `text` with its references expanded (borrowed when it has none), or quick-xml's error.
pub(super) fn unescape(text: &str) -> Result<Cow<'_, str>, quick_xml::escape::EscapeError> {
    let Some(first) = find::byte(b'&', text.as_bytes()) else {
        return Ok(Cow::Borrowed(text));
    };
    let mut out = String::with_capacity(text.len());
    if expand(text, first, &mut out) {
        Ok(Cow::Owned(out))
    } else {
        quick_xml::escape::unescape(text)
    }
}

/// [`unescape`] into `arena`: `text` itself when it has no references, else its expansion, written into the
/// arena (no heap allocation but for the references only quick-xml reads).
pub(super) fn unescape_in<'a>(
    text: &'a str,
    arena: &'a Bump,
) -> Result<&'a str, quick_xml::escape::EscapeError> {
    let Some(first) = find::byte(b'&', text.as_bytes()) else {
        return Ok(text);
    };
    let mut out = bumpalo::collections::String::with_capacity_in(text.len(), arena);
    if expand(text, first, &mut out) {
        Ok(out.into_bump_str())
    } else {
        quick_xml::escape::unescape(text).map(|v| &*arena.alloc_str(&v))
    }
}

/// Where [`expand`] writes: a `String`, or one in an arena.
trait Sink {
    fn push_str(&mut self, s: &str);
    fn push(&mut self, c: char);
}

impl Sink for String {
    #[inline]
    fn push_str(&mut self, s: &str) {
        String::push_str(self, s);
    }
    #[inline]
    fn push(&mut self, c: char) {
        String::push(self, c);
    }
}

// Inlined into `expand`, as std's `String` methods are: a call a reference cost ~12 instructions on echoStringDoc.
impl Sink for bumpalo::collections::String<'_> {
    #[inline]
    fn push_str(&mut self, s: &str) {
        bumpalo::collections::String::push_str(self, s);
    }
    #[inline]
    fn push(&mut self, c: char) {
        bumpalo::collections::String::push(self, c);
    }
}

/// Appends `text`, whose first `&` is at `first`, to `out` with its references expanded; false (`out` then
/// holds a part) at a reference only quick-xml decides on.
fn expand(text: &str, first: usize, out: &mut impl Sink) -> bool {
    let mut rest = text;
    let mut amp = first;
    loop {
        // References often follow one another: no empty copy between them.
        if amp > 0 {
            out.push_str(&rest[..amp]);
        }
        let after = &rest[amp + 1..];
        let (ch, len) = match after.as_bytes() {
            [b'a', b'm', b'p', b';', ..] => ('&', 4),
            [b'l', b't', b';', ..] => ('<', 3),
            [b'g', b't', b';', ..] => ('>', 3),
            [b'q', b'u', b'o', b't', b';', ..] => ('"', 5),
            [b'a', b'p', b'o', b's', b';', ..] => ('\'', 5),
            [b'#', num @ ..] => match char_ref(num) {
                Some(found) => found,
                None => return false,
            },
            _ => return false,
        };
        out.push(ch);
        rest = &after[len..];
        let next = match rest.as_bytes().first() {
            Some(b'&') => Some(0),
            _ => find::byte(b'&', rest.as_bytes()),
        };
        match next {
            Some(i) => amp = i,
            None => {
                out.push_str(rest);
                return true;
            }
        }
    }
}

/// After `&#`: the character of a reference quick-xml takes (`x` and hex digits or decimal digits, then `;`;
/// neither 0 nor a surrogate nor beyond U+10FFFF) and the bytes it spans after the `&`; `None` for anything
/// else, including references too long to be sure of (quick-xml then decides).
fn char_ref(num: &[u8]) -> Option<(char, usize)> {
    let (hex, digits) = match num {
        [b'x', rest @ ..] => (true, rest),
        _ => (false, num),
    };
    // Nine digits at most: a u64 holds them in either base, so no step can overflow.
    let mut code = 0u64;
    for (i, &b) in digits.iter().enumerate().take(9) {
        if b == b';' {
            let c = (i > 0 && code != 0)
                .then(|| u32::try_from(code).ok().and_then(char::from_u32))
                .flatten()?;
            return Some((c, 1 + usize::from(hex) + i + 1));
        }
        code = if hex {
            code * 16 + u64::from(hex_digit(b)?)
        } else {
            let d = b.wrapping_sub(b'0');
            code * 10 + u64::from((d < 10).then_some(d)?)
        };
    }
    None
}

/// The value of an ASCII hex digit.
#[inline]
fn hex_digit(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever the text, the answer is quick-xml's.
    #[test]
    fn agrees_with_quick_xml() {
        let pieces = [
            "",
            "a",
            "&amp;",
            "&lt;",
            "&gt;",
            "&quot;",
            "&apos;",
            "&#65;",
            "&#x42;",
            "&",
            "&am",
            "&amp",
            "&nbsp;",
            ";",
            "é",
            "&&",
            "x&lt;y",
            "&#0;",
            "&#x0;",
            "&#;",
            "&#x;",
            "&#xD800;",
            "&#x10FFFF;",
            "&#x110000;",
            "&#+1;",
            "&#-1;",
            "&#00000065;",
            "&#000000065;",
            "&#x0000041;",
            "&#99999999;",
            "&#4294967296;",
            "&#xFFFFFFFF;",
            "&#xFFFFFFFFF;",
            "&#X41;",
            "&#xg;",
            "&#1a;",
            "&#65",
        ];
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    let t = format!("{a}{b}{c}");
                    let ours = unescape(&t).map(Cow::into_owned).map_err(|e| e.to_string());
                    let theirs = quick_xml::escape::unescape(&t)
                        .map(Cow::into_owned)
                        .map_err(|e| e.to_string());
                    assert_eq!(ours, theirs, "{t:?}");
                    let arena = Bump::new();
                    let in_arena = unescape_in(&t, &arena)
                        .map(str::to_owned)
                        .map_err(|e| e.to_string());
                    assert_eq!(in_arena, theirs, "{t:?} in an arena");
                }
            }
        }
    }
}
