//! The tokenizer under [`BodyReader`](super::BodyReader): tags and text, which are all a SOAP call is made of,
//! are cut straight from the input slice here, and so is the XML declaration every message starts with; the
//! rare constructs (`<!…>`: comments, DOCTYPE; `<?…?>`: processing instructions) are read by quick-xml's
//! `Reader`, one at a time, from where they start (CDATA sections too, but by hand: see `cdata`). It checks what quick-xml's tokenizer checks
//! (names, attributes and nesting are the reader's), so the reader's checks and limits are unchanged; it only
//! costs less per token (quick-xml's state machine and copies were ~40 % of a 1.8 KB call).

use std::borrow::Cow;

use quick_xml::events::Event;
use quick_xml::Reader;

use super::attrs::Attrs;
use super::find;

/// One piece of markup or text, borrowed from the input.
#[derive(Debug)]
pub(super) enum Token<'a> {
    /// `<name attrs>` or `<name attrs/>` (an empty element, whose [`Token::End`] comes next). `tag` is what
    /// lies between `<` and `>` (or `/>`), `name_len` the length of the name at its start, `pos` the offset of
    /// `tag` in the input.
    Start {
        tag: &'a [u8],
        name_len: usize,
        pos: usize,
    },
    /// `</name>` (trailing whitespace dropped), or the end of an empty element.
    End(&'a [u8]),
    /// Character data as written, references not yet expanded.
    Text(&'a [u8]),
    /// The content of a CDATA section.
    CData(Cow<'a, [u8]>),
    Comment,
    Pi,
    /// The XML declaration, with its encoding if it names one.
    Decl(Option<Cow<'a, [u8]>>),
    DocType,
    Eof,
}

/// A syntax error: its offset in the input and what is wrong.
#[derive(Debug)]
pub(super) struct ScanError {
    pub(super) pos: usize,
    pub(super) msg: String,
}

#[derive(Debug)]
pub(super) struct Scanner<'a> {
    input: &'a [u8],
    pos: usize,
    /// The name of an empty element just read, whose end is the next token.
    pending_end: Option<&'a [u8]>,
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl<'a> Scanner<'a> {
    pub(super) fn new(input: &'a [u8]) -> Self {
        // A UTF-8 byte order mark is not content (quick-xml drops it too).
        let pos = if input.starts_with(b"\xEF\xBB\xBF") {
            3
        } else {
            0
        };
        Self {
            input,
            pos,
            pending_end: None,
        }
    }

    /// Offset of the next unread byte.
    pub(super) fn position(&self) -> usize {
        self.pos
    }

    /// Whether `<name>` is what follows: the name as a slice of the input and its offset, consumed.
    #[inline]
    pub(super) fn open_plain(&mut self, name: &[u8]) -> Option<(&'a [u8], usize)> {
        let after = self.plain_start_tag(name)?;
        let from = self.pos + 1;
        self.pos = after;
        Some((&self.input[from..from + name.len()], from))
    }

    /// Whether the empty element `<name/>` is what follows: the name as a slice of the input and its
    /// offset, consumed; its end is then the next token, as [`next_token`](Self::next_token) leaves it.
    pub(super) fn open_plain_empty(&mut self, name: &[u8]) -> Option<(&'a [u8], usize)> {
        let after = self.plain_empty_tag(name)?;
        let from = self.pos + 1;
        self.pos = after;
        let name = &self.input[from..from + name.len()];
        self.pending_end = Some(name);
        Some((name, from))
    }

    /// Whether `<name>` is what follows (nothing pending): the offset after it, nothing consumed.
    #[inline]
    fn plain_start_tag(&self, name: &[u8]) -> Option<usize> {
        if self.pending_end.is_some() {
            return None;
        }
        let after = self.pos + name.len() + 2;
        let tag = self.input.get(self.pos..after)?;
        (tag[0] == b'<' && tag[tag.len() - 1] == b'>' && same(&tag[1..tag.len() - 1], name))
            .then_some(after)
    }

    /// Whether `<name/>` is what follows (nothing pending): the offset after it, nothing consumed.
    fn plain_empty_tag(&self, name: &[u8]) -> Option<usize> {
        if self.pending_end.is_some() {
            return None;
        }
        let after = self.pos + name.len() + 3;
        let tag = self.input.get(self.pos..after)?;
        (tag[0] == b'<' && tag.ends_with(b"/>") && same(&tag[1..tag.len() - 2], name))
            .then_some(after)
    }

    /// Whether the end of an empty element just read is the next token.
    #[inline]
    pub(super) fn end_pending(&self) -> bool {
        self.pending_end.is_some()
    }

    /// Takes the end of the empty element just read (see [`end_pending`](Self::end_pending)).
    #[inline]
    pub(super) fn take_pending_end(&mut self) -> Option<&'a [u8]> {
        self.pending_end.take()
    }

    /// Whether `</name>` is what follows: the offset after it (nothing is consumed; see
    /// [`seek`](Self::seek)).
    #[inline]
    pub(super) fn close_here(&self, name: &[u8]) -> Option<usize> {
        if self.pending_end.is_some() {
            return None;
        }
        let end = self.pos + name.len() + 3;
        let tag = self.input.get(self.pos..end)?;
        (tag.starts_with(b"</") && tag[tag.len() - 1] == b'>' && same(&tag[2..tag.len() - 1], name))
            .then_some(end)
    }

    /// Whether what follows is text without markup (perhaps none) and then `</name>`: the text and the
    /// offset after the end tag (nothing is consumed; see [`seek`](Self::seek)).
    #[inline]
    pub(super) fn text_then_close(&self, name: &[u8]) -> Option<(&'a [u8], usize)> {
        if self.pending_end.is_some() {
            return None;
        }
        let rest = self.input.get(self.pos..)?;
        let lt = find_lt(rest)?;
        let end = Scanner {
            input: self.input,
            pos: self.pos + lt,
            pending_end: None,
        }
        .close_here(name)?;
        Some((&rest[..lt], end))
    }

    /// Whether `<name>`, text without markup (perhaps none) and `</name>` are what follows: the text and the
    /// offset after the end tag (nothing is consumed; see [`seek`](Self::seek)). Every field of a message goes
    /// through here: one bounds check per tag, the name compared a word at a time.
    #[inline]
    pub(super) fn leaf_here(&self, name: &[u8]) -> Option<(&'a [u8], usize)> {
        if self.pending_end.is_some() {
            return None;
        }
        let (input, n) = (self.input, name.len());
        let text_at = self.pos + n + 2;
        let open = input.get(self.pos..text_at)?;
        if open[0] != b'<' || open[n + 1] != b'>' || !same(&open[1..=n], name) {
            return None;
        }
        let close_at = text_at + find_lt(&input[text_at..])?;
        let next = close_at + n + 3;
        let close = input.get(close_at..next)?;
        if close[1] != b'/' || close[n + 2] != b'>' || !same(&close[2..n + 2], name) {
            return None;
        }
        Some((&input[text_at..close_at], next))
    }

    /// The unread input, unless an empty element's end is pending (then the next token is not in it).
    #[inline]
    pub(super) fn rest(&self) -> Option<&'a [u8]> {
        match self.pending_end {
            Some(_) => None,
            None => self.input.get(self.pos..),
        }
    }

    /// Moves to `pos`, an offset [`text_then_end`](Self::text_then_end) returned.
    pub(super) fn seek(&mut self, pos: usize) {
        self.pos = pos;
    }

    fn error(&self, pos: usize, msg: &str) -> ScanError {
        ScanError {
            pos,
            msg: msg.to_owned(),
        }
    }

    #[inline]
    pub(super) fn next_token(&mut self) -> Result<Token<'a>, ScanError> {
        if let Some(name) = self.pending_end.take() {
            return Ok(Token::End(name));
        }
        let input = self.input;
        let start = self.pos;
        let Some(&first) = input.get(start) else {
            return Ok(Token::Eof);
        };
        if first != b'<' {
            let end = find_lt(&input[start..]).map_or(input.len(), |i| start + i);
            self.pos = end;
            return Ok(Token::Text(&input[start..end]));
        }
        match input.get(start + 1) {
            Some(b'/') => self.end_tag(start),
            Some(b'?') if self.is_decl(start) => self.decl(start),
            Some(b'!') if input[start..].starts_with(CDATA_OPEN) => self.cdata(start),
            Some(b'!' | b'?') => self.by_quick_xml(start),
            _ => self.start_tag(start),
        }
    }

    fn end_tag(&mut self, start: usize) -> Result<Token<'a>, ScanError> {
        let Some((name, used)) = end_name(&self.input[start + 2..]) else {
            return Err(self.error(start, "unclosed end tag"));
        };
        self.pos = start + 2 + used;
        Ok(Token::End(name))
    }

    fn start_tag(&mut self, start: usize) -> Result<Token<'a>, ScanError> {
        let from = start + 1;
        let body = &self.input[from..];
        // The tag ends at the first `>` outside quoted attribute values: usually the first `>` of all, when
        // what precedes it holds no `'` and an even number of `"` (then every value before it is closed).
        let first_gt = find::byte(b'>', body).filter(|&gt| quotes_are_closed(&body[..gt]));
        let gt = match first_gt {
            Some(gt) => gt,
            None => self.tag_end_past_quotes(start, body)?,
        };
        self.pos = from + gt + 1;
        let (tag, empty) = match body[..gt].strip_suffix(b"/") {
            Some(tag) => (tag, true),
            None => (&body[..gt], false),
        };
        let name_len = tag.iter().position(|&b| is_space(b)).unwrap_or(tag.len());
        if empty {
            self.pending_end = Some(&tag[..name_len]);
        }
        Ok(Token::Start {
            tag,
            name_len,
            pos: from,
        })
    }

    /// Where the start tag at `start` (whose bytes after `<` are `body`) ends, jumping over each quoted value.
    fn tag_end_past_quotes(&self, start: usize, body: &[u8]) -> Result<usize, ScanError> {
        let mut i = 0;
        loop {
            let Some(at) = find_tag_end(&body[i..]) else {
                return Err(self.error(start, "unclosed start tag"));
            };
            let at = i + at;
            let quote = body[at];
            if quote == b'>' {
                return Ok(at);
            }
            let Some(close) = find::byte(quote, &body[at + 1..]) else {
                return Err(self.error(start, "unclosed attribute value"));
            };
            i = at + 1 + close + 1;
        }
    }

    /// Whether `<?xml` followed by whitespace or `?` starts at `start` (as for quick-xml: `<?xml-x` is a PI).
    fn is_decl(&self, start: usize) -> bool {
        let rest = &self.input[start..];
        rest.starts_with(b"<?xml") && rest.get(5).is_some_and(|&b| is_space(b) || b == b'?')
    }

    /// The XML declaration that starts every message: its pseudo-attributes read as attributes are.
    fn decl(&mut self, start: usize) -> Result<Token<'a>, ScanError> {
        // The declaration nearly every client writes, as written: one comparison.
        const USUAL: &[u8] = b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>";
        if self.input[start..].starts_with(USUAL) {
            self.pos = start + USUAL.len();
            let encoding = &self.input[start + USUAL.len() - 8..start + USUAL.len() - 3];
            return Ok(Token::Decl(Some(Cow::Borrowed(encoding))));
        }
        let content = &self.input[start + 5..];
        let Some(end) = closed_by(content, b"?>") else {
            return Err(self.error(start, "unclosed XML declaration"));
        };
        self.pos = start + 5 + end + 2;
        let encoding = Attrs::new(&content[..end])
            .map_while(Result::ok)
            .find(|a| a.name == b"encoding")
            .map(|a| Cow::Borrowed(a.value));
        Ok(Token::Decl(encoding))
    }

    /// A CDATA section: its content as written, up to the first `]]>` (as quick-xml reads it, at a fraction of
    /// the cost: a flood of tiny sections would otherwise cost ~450 instructions each).
    fn cdata(&mut self, start: usize) -> Result<Token<'a>, ScanError> {
        let from = start + CDATA_OPEN.len();
        let content = &self.input[from..];
        let Some(end) = closed_by(content, b"]]>") else {
            return Err(self.error(start, "unterminated CDATA section"));
        };
        self.pos = from + end + 3;
        Ok(Token::CData(Cow::Borrowed(&content[..end])))
    }

    /// Comments, DOCTYPE and PIs: quick-xml reads the one that starts at `start`.
    #[cold]
    fn by_quick_xml(&mut self, start: usize) -> Result<Token<'a>, ScanError> {
        let mut r = Reader::from_reader(&self.input[start..]);
        let event = r.read_event().map_err(|e| ScanError {
            pos: start + usize::try_from(r.error_position()).unwrap_or(0),
            msg: e.to_string(),
        })?;
        self.pos = start + usize::try_from(r.buffer_position()).unwrap_or(0);
        Ok(match event {
            Event::Comment(_) => Token::Comment,
            Event::PI(_) => Token::Pi,
            Event::CData(c) => Token::CData(c.into_inner()),
            Event::DocType(_) => Token::DocType,
            Event::Decl(d) => Token::Decl(match d.encoding() {
                Some(Ok(enc)) => Some(Cow::Owned(enc.into_owned())),
                _ => None,
            }),
            // `<!` or `<?` starts nothing else; quick-xml reports the rest as errors.
            _ => return Err(self.error(start, "unexpected markup")),
        })
    }
}

/// Where the first `close` (which ends in `>`) starts in `hay`: each `>` found, then the bytes before it
/// compared (a plain search; `memmem` costs more to set up than the short markup it ends takes).
fn closed_by(hay: &[u8], close: &[u8]) -> Option<usize> {
    let before = close.len() - 1;
    let mut from = 0;
    loop {
        let gt = from + find::byte(b'>', &hay[from..])?;
        if gt >= before && hay[gt - before..gt] == close[..before] {
            return Some(gt - before);
        }
        from = gt + 1;
    }
}

/// What opens a CDATA section.
const CDATA_OPEN: &[u8] = b"<![CDATA[";

/// `a == b` for names: those of up to 16 bytes in two overlapping words, not a `memcmp` call.
#[inline(always)]
pub(super) fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = crate::swar::word;
    match n {
        0 => true,
        // Bytes 0, n / 2 and n - 1 are every byte of a name this short.
        1..=3 => (a[0] == b[0]) & (a[n / 2] == b[n / 2]) & (a[n - 1] == b[n - 1]),
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
    }
}

/// The four bytes of `bytes` at `at`.
#[inline(always)]
fn half(bytes: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(w)
}

/// The position of the first `<`.
#[inline]
fn find_lt(hay: &[u8]) -> Option<usize> {
    find::byte(b'<', hay)
}

/// Whether `tag` has no `'` and an even number of `"`.
#[inline]
fn quotes_are_closed(tag: &[u8]) -> bool {
    find::byte(b'\'', tag).is_none() && count_byte(b'"', tag) % 2 == 0
}

/// How many times `needle` occurs in `hay`: a byte counter per 255 bytes, without branches, which the
/// compiler turns into vector code.
fn count_byte(needle: u8, hay: &[u8]) -> usize {
    hay.chunks(255)
        .map(|chunk| {
            let n = chunk.iter().fold(0u8, |n, &c| n + u8::from(c == needle));
            usize::from(n)
        })
        .sum()
}

/// The position of the first `>`, `"` or `'`.
#[inline]
fn find_tag_end(hay: &[u8]) -> Option<usize> {
    find::any_of3(b'>', b'"', b'\'', hay)
}

/// After `</`: the end tag's name (trailing whitespace dropped) and the bytes up to and including `>`.
#[inline]
fn end_name(after: &[u8]) -> Option<(&[u8], usize)> {
    let gt = find::byte(b'>', after)?;
    let mut name = &after[..gt];
    while let [rest @ .., last] = name {
        if !is_space(*last) {
            break;
        }
        name = rest;
    }
    Some((name, gt + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names of every length up to past the word compare, differing in any one byte (or in length): `same`
    /// agrees with `==`.
    #[test]
    fn same_is_equality_at_every_length_and_byte() {
        for n in 0..=20usize {
            let a: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(same(&a, &a.clone()), "{n}");
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!same(&a, &b), "byte {at} of {n}");
            }
            assert!(!same(&a, &a[..n.saturating_sub(1)]) || n == 0, "{n}");
        }
    }

    /// The hand-read CDATA section ends where quick-xml's does, with the same content, and fails where it fails.
    #[test]
    fn cdata_is_read_as_quick_xml_reads_it() {
        let cases = [
            "<![CDATA[]]>",
            "<![CDATA[a]b]]>",
            "<![CDATA[]]]>",
            "<![CDATA[]]]]>",
            "<![CDATA[>]]>",
            "<![CDATA[a]]>b]]>",
            "<![CDATA[<x>&amp;]]>",
            "<![CDATA[x",
            "<![CDATA[]]",
            "<![CDATA[]>",
        ];
        for case in cases {
            let (mut ours, mut theirs) =
                (Scanner::new(case.as_bytes()), Scanner::new(case.as_bytes()));
            let a = ours.cdata(0).map(|t| format!("{t:?}")).map_err(|_| ());
            let b = theirs
                .by_quick_xml(0)
                .map(|t| format!("{t:?}"))
                .map_err(|_| ());
            assert_eq!(a, b, "{case}");
            assert_eq!(ours.pos, theirs.pos, "{case}");
        }
    }

    fn tokens(input: &str) -> Vec<String> {
        let mut s = Scanner::new(input.as_bytes());
        let mut out = Vec::new();
        loop {
            let t = match s.next_token() {
                Ok(Token::Eof) => return out,
                Ok(Token::Start { tag, name_len, .. }) => format!(
                    "S({}|{})",
                    String::from_utf8_lossy(&tag[..name_len]),
                    String::from_utf8_lossy(&tag[name_len..])
                ),
                Ok(Token::End(n)) => format!("E({})", String::from_utf8_lossy(n)),
                Ok(Token::Text(t)) => format!("T({})", String::from_utf8_lossy(t)),
                Ok(Token::CData(c)) => format!("C({})", String::from_utf8_lossy(&c)),
                Ok(Token::Decl(e)) => {
                    format!("D({:?})", e.map(|e| String::from_utf8(e.into_owned())))
                }
                Ok(other) => format!("{other:?}"),
                Err(e) => {
                    out.push(format!("error at {}", e.pos));
                    return out;
                }
            };
            out.push(t);
        }
    }

    #[test]
    fn names_compare_equal_only_when_equal() {
        let names = [
            "",
            "a",
            "ab",
            "varFloat",
            "varStruct",
            "varUnsignedLong",
            "varBase64Binary",
            "a_very_long_element_name",
            "varFloaT",
            "varStrucu",
        ];
        for a in names {
            for b in names {
                assert_eq!(same(a.as_bytes(), b.as_bytes()), a == b, "{a} {b}");
            }
        }
    }

    #[test]
    fn tags_text_and_empty_elements() {
        assert_eq!(
            tokens("\u{FEFF}<a x='>' y=\"'\">t&amp;<b/><c\tz=\"1\" /></a  >"),
            [
                "S(a| x='>' y=\"'\")",
                "T(t&amp;)",
                "S(b|)",
                "E(b)",
                "S(c|\tz=\"1\" )",
                "E(c)",
                "E(a)"
            ]
        );
        assert_eq!(tokens("text only"), ["T(text only)"]);
        // A `>` inside a value, after values that are closed and before others, in either quote.
        assert_eq!(
            tokens("<a p=\"1\" q=\"x>y\" r=\"2\"/><b p='1' q=\"'>\"></b>"),
            [
                "S(a| p=\"1\" q=\"x>y\" r=\"2\")",
                "E(a)",
                "S(b| p='1' q=\"'>\")",
                "E(b)"
            ]
        );
    }

    #[test]
    fn rare_constructs_go_through_quick_xml() {
        assert_eq!(
            tokens("<?xml version=\"1.0\" encoding=\"UTF-8\"?><!-- c --><?pi x?><a><![CDATA[<x>]]></a><?xml ?><?xml-x?><!DOCTYPE d>"),
            [
                "D(Some(Ok(\"UTF-8\")))",
                "Comment",
                "Pi",
                "S(a|)",
                "C(<x>)",
                "E(a)",
                "D(None)",
                "Pi",
                "DocType"
            ]
        );
    }

    #[test]
    fn unclosed_markup_is_an_error_where_it_starts() {
        assert_eq!(tokens("<a>x<b"), ["S(a|)", "T(x)", "error at 4"]);
        assert_eq!(tokens("<a b=\"1>"), ["error at 0"]);
        assert_eq!(tokens("<a></a"), ["S(a|)", "error at 3"]);
        assert_eq!(tokens("<a><!-- x"), ["S(a|)", "error at 3"]);
    }
}
