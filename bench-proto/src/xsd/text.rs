//! Character-level helpers shared by every type: whitespace collapse, XML character checks, escaping into a
//! byte buffer, and a `fmt::Write` adapter so numbers format straight into that buffer.

use std::fmt;

use crate::swar;

/// XML whitespace (S production): what `collapse` removes around non-string values.
fn is_xml_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The value of a non-string type after the `collapse` whitespace facet. None of our types allow inner
/// whitespace, so trimming is all that is left to do.
pub fn collapse(s: &str) -> &str {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(&first), Some(&last)) if !is_xml_space(first) && !is_xml_space(last) => s,
        // Whitespace is ASCII, so cutting it off leaves `s` cut at character boundaries.
        _ => s.trim_matches(|c: char| c.is_ascii() && is_xml_space(c as u8)),
    }
}

/// [`collapse`] for raw bytes (attribute values before decoding).
pub fn collapse_bytes(b: &[u8]) -> &[u8] {
    let start = b.iter().position(|&c| !is_xml_space(c)).unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|&c| !is_xml_space(c))
        .map_or(start, |e| e + 1);
    &b[start..end]
}

/// Checks that `s` holds only characters allowed in an XML 1.0 document, so what we parse can always be
/// written back as well-formed XML.
pub fn check_chars(s: &str) -> Result<(), char> {
    // Suspect: control characters other than whitespace, or 0xEF, the lead byte of U+FFFE/U+FFFF (and of many
    // valid characters, which then take the slow path). Long texts in one branch-free pass, which the compiler
    // vectorises; short ones (a field) eight bytes at a time, a word being looked at byte by byte only when it
    // holds a byte below 0x20 or 0xEF.
    let suspect = |b: &[u8]| {
        b.iter().fold(false, |acc, &b| {
            acc | ((b < 0x20) & !is_xml_space(b)) | (b == 0xEF)
        })
    };
    let suspicious = if s.len() >= 64 {
        suspect(s.as_bytes())
    } else {
        let mut words = s.as_bytes().chunks_exact(8);
        let mut any = false;
        for w in &mut words {
            let x = swar::word(w, 0);
            if swar::below(x, 0x20) | swar::equal(x, 0xEF) != 0 {
                any |= suspect(w);
            }
        }
        any | suspect(words.remainder())
    };
    if !suspicious {
        return Ok(());
    }
    match s.chars().find(|&c| {
        (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{FFFE}' | '\u{FFFF}')
    }) {
        Some(c) => Err(c),
        None => Ok(()),
    }
}

/// Bytes escaped in element content (1) and, beyond those, in attribute values (2).
const SPECIAL: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'&' as usize] = 3;
    t[b'<' as usize] = 3;
    t[b'>' as usize] = 3;
    t[b'\r' as usize] = 3;
    t[b'"' as usize] = 2;
    t[b'\t' as usize] = 2;
    t[b'\n' as usize] = 2;
    t
};

/// Appends `s` escaped for element content. `\r` is written as a character reference so that it survives
/// the reader's line-end normalisation.
pub fn write_text(out: &mut Vec<u8>, s: &str) {
    write_escaped(out, s, 1);
}

/// Appends `s` escaped for a double-quoted attribute value (whitespace kept through attribute normalisation).
pub fn write_attr(out: &mut Vec<u8>, s: &str) {
    write_escaped(out, s, 2);
}

fn escape(b: u8) -> &'static [u8] {
    match b {
        b'&' => b"&amp;",
        b'<' => b"&lt;",
        b'>' => b"&gt;",
        b'"' => b"&quot;",
        b'\t' => b"&#9;",
        b'\n' => b"&#10;",
        b'\r' => b"&#13;",
        _ => b"",
    }
}

/// Bytes whose [`SPECIAL`] class has bit `class` are escaped. Eight bytes at a time, a word test finds those
/// that may hold one (a control character, `"`, `&`, `<` or `>`); only those are looked at byte by byte, and
/// the text between escapes is copied in whole runs. (A table look-up per byte cost ~16 instructions a byte
/// on the 1 KiB echoStringDoc text, which has an escape every 21 bytes.)
#[inline]
fn write_escaped(out: &mut Vec<u8>, s: &str, class: u8) {
    let bytes = s.as_bytes();
    let mut run = 0;
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for w in &mut words {
        if may_need_escape(swar::word(w, 0)) {
            escape_range(out, bytes, at..at + 8, class, &mut run);
        }
        at += 8;
    }
    // The last few bytes: one branch-free pass of table look-ups says whether any needs escaping.
    let tail = words.remainder();
    if tail
        .iter()
        .fold(0u8, |any, &b| any | SPECIAL[usize::from(b)])
        & class
        != 0
    {
        escape_range(out, bytes, at..bytes.len(), class, &mut run);
    }
    out.extend_from_slice(&bytes[run..]);
}

/// Escapes what needs it in `bytes[range]`, copying the run of plain bytes before each escape (from `*run`).
#[inline(always)]
fn escape_range(
    out: &mut Vec<u8>,
    bytes: &[u8],
    range: std::ops::Range<usize>,
    class: u8,
    run: &mut usize,
) {
    for i in range {
        let b = bytes[i];
        if SPECIAL[usize::from(b)] & class != 0 {
            if *run < i {
                out.extend_from_slice(&bytes[*run..i]);
            }
            // Eight bytes stored at once and the excess cut off: no copy of a variable length.
            let esc = escape(b);
            let mut word = [0u8; 8];
            word[..esc.len()].copy_from_slice(esc);
            let len = out.len();
            out.extend_from_slice(&word);
            out.truncate(len + esc.len());
            *run = i + 1;
        }
    }
}

/// Whether any byte of `x` is below 0x20 or is `"`, `&`, `<` or `>`: every byte [`SPECIAL`] names is.
#[inline]
fn may_need_escape(x: u64) -> bool {
    use swar::{below, equal};
    (below(x, 0x20) | equal(x, b'"') | equal(x, b'&') | equal(x, b'<') | equal(x, b'>')) != 0
}

/// Lets `write!` format straight into a byte buffer (no intermediate `String`).
#[derive(Debug)]
pub struct WriteFmt<'a>(pub &'a mut Vec<u8>);

impl fmt::Write for WriteFmt<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of character in every position of texts around the word size: the word check agrees with a
    /// character by character one.
    #[test]
    fn check_chars_finds_what_a_char_scan_finds() {
        let slow = |s: &str| {
            s.chars()
                .find(|&c| {
                    (c < ' ' && !matches!(c, '\t' | '\n' | '\r'))
                        || matches!(c, '\u{FFFE}' | '\u{FFFF}')
                })
                .map_or(Ok(()), Err)
        };
        let odd = [
            '\u{0}', '\u{1}', '\t', '\n', '\r', '\u{1F}', ' ', 'é', '\u{F000}', '\u{FFFD}',
            '\u{FFFE}', '\u{FFFF}',
        ];
        for n in (0..=20).chain([63, 64, 65, 100]) {
            for at in 0..n {
                for &c in &odd {
                    let s: String = (0..n).map(|i| if i == at { c } else { 'a' }).collect();
                    assert_eq!(check_chars(&s), slow(&s), "{c:?} at {at} of {n}");
                }
            }
        }
    }

    /// The word test never misses a byte that needs escaping, and escaping is byte by byte what it says.
    #[test]
    fn escaping_matches_the_byte_rule() {
        let slow = |s: &str, class: u8| -> Vec<u8> {
            let mut out = Vec::new();
            for &b in s.as_bytes() {
                if SPECIAL[usize::from(b)] & class != 0 {
                    out.extend_from_slice(escape(b));
                } else {
                    out.push(b);
                }
            }
            out
        };
        let base = "abcdefghijklmnopqrstuvw";
        for len in [0, 1, 7, 8, 9, 16, 23] {
            for at in 0..len {
                for b in 0..0x80u8 {
                    let mut t = base.as_bytes()[..len].to_vec();
                    t[at] = b;
                    let t = String::from_utf8(t).expect("ASCII");
                    for class in [1, 2] {
                        let mut fast = Vec::new();
                        write_escaped(&mut fast, &t, class);
                        assert_eq!(
                            fast,
                            slow(&t, class),
                            "{b:#x} at {at} of {len}, class {class}"
                        );
                    }
                }
            }
        }
        let mut out = Vec::new();
        write_text(&mut out, "é<\u{1F600}>&\r\"\t");
        assert_eq!(out, "é&lt;\u{1F600}&gt;&amp;&#13;\"\t".as_bytes());
    }
}
