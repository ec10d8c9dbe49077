//! The response of a one-pass echo as it is written: pieces of the request that are, byte for byte, what the
//! serialiser writes (plain tags, text that is its own escaped form) are copied, in runs while they follow one
//! another in the request; everything else is written as the serialiser writes it.

use std::ops::Range;

use crate::xsd::write_text;

/// Appends to `out`, copying from `input`.
pub(super) struct Echo<'o, 'a> {
    out: &'o mut Vec<u8>,
    input: &'a [u8],
    /// The part of the input still to be copied: it grows while copied pieces follow one another.
    run: Range<usize>,
}

impl<'o, 'a> Echo<'o, 'a> {
    pub(super) fn new(input: &'a [u8], out: &'o mut Vec<u8>) -> Self {
        Self {
            out,
            input,
            run: 0..0,
        }
    }

    /// Appends `input[at..at + len]`, which the caller knows to be the serialiser's output for what it read.
    #[inline]
    pub(super) fn copy(&mut self, at: usize, len: usize) {
        if at != self.run.end {
            self.flush();
            self.run.start = at;
        }
        self.run.end = at + len;
    }

    /// Appends `expected`, a tag the serialiser writes for what was read from `input[from..to]`: copied when
    /// it is what was read (no prefix, no whitespace, nothing else in between).
    #[inline]
    pub(super) fn markup(&mut self, from: usize, to: usize, expected: &[u8]) {
        if self.input.get(from..to) == Some(expected) {
            self.copy(from, expected.len());
        } else {
            self.out().extend_from_slice(expected);
        }
    }

    /// Appends `text` escaped and then `end`, for `input[from..to]`, which held the text and its end tag:
    /// copied when `text` lies right at `from` as written (not expanded from references, nothing but `end`
    /// after it) and needs no escaping.
    #[inline]
    pub(super) fn text_then(&mut self, from: usize, to: usize, text: &str, end: &[u8]) {
        let as_written = self.input.get(from..to).is_some_and(|read| {
            // `read` is the text and then at least the end tag, `end.len()` bytes: the same length means
            // nothing else.
            read.as_ptr() == text.as_ptr() && read.len() == text.len() + end.len()
        });
        if as_written && is_verbatim(text.as_bytes()) {
            self.copy(from, to - from);
        } else {
            let out = self.out();
            write_text(out, text);
            out.extend_from_slice(end);
        }
    }

    /// The buffer, for writing at its end (what is left to copy first copied).
    #[inline]
    pub(super) fn out(&mut self) -> &mut Vec<u8> {
        self.flush();
        self.out
    }

    /// Copies what is left to copy.
    #[inline]
    pub(super) fn flush(&mut self) {
        if !self.run.is_empty() {
            self.out.extend_from_slice(&self.input[self.run.clone()]);
            self.run.start = self.run.end;
        }
    }
}

/// Whether text as written in a well-formed message is its own value and its own escaped form (what
/// `write_text` writes for it): no reference (`&`), no `>` (which `write_text` escapes; `<` cannot be in text),
/// no control character (the reader normalises `\r`, `write_text` escapes it), and no 0xEF byte (the lead
/// byte of U+FFFE and U+FFFF, which the reader refuses, and of other characters, which then take the general
/// path). Eight bytes at a time.
#[inline]
pub(super) fn is_verbatim(raw: &[u8]) -> bool {
    use crate::swar::{below, equal, word, HI};
    let byte_ok = |b: u8| b >= 0x20 && b != b'&' && b != b'>' && b != 0xEF;
    let mut chunks = raw.chunks_exact(8);
    let mut bad = 0u64;
    for c in &mut chunks {
        let x = word(c, 0);
        bad |= below(x, 0x20) | equal(x, b'&') | equal(x, b'>') | equal(x, 0xEF);
    }
    bad & HI == 0 && chunks.remainder().iter().all(|&b| byte_ok(b))
}

#[cfg(test)]
mod tests {
    use super::is_verbatim;

    #[test]
    fn verbatim_text_is_the_byte_rule_eight_at_a_time() {
        let slow = |b: &[u8]| {
            b.iter()
                .all(|&c| c >= 0x20 && c != b'&' && c != b'>' && c != 0xEF)
        };
        for len in [0, 1, 7, 8, 9, 16, 23] {
            let base = vec![b'a'; len];
            assert!(is_verbatim(&base));
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut t = base.clone();
                    t[at] = b;
                    assert_eq!(is_verbatim(&t), slow(&t), "byte {b:#x} at {at} of {len}");
                }
            }
        }
    }
}
