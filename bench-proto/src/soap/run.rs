//! A record read in one go when it is written the usual way: its leaves `<name>text</name>`, unprefixed, in
//! the default namespace, without attributes. The limits and the namespace are checked once for the whole
//! record instead of at every element; at the first element that is not usual, everything read is given back
//! and the caller reads the record the general way, so a message is accepted or refused as before.

use bumpalo::Bump;

use super::scan::same;
use super::BodyReader;
use crate::xsd::{QName, XsdError};

/// The reader inside [`BodyReader::usual_run`]: each method reads one usual element, or returns `None`.
#[derive(Debug)]
pub struct UsualRun<'r, 'a> {
    r: &'r mut BodyReader<'a>,
    input: &'a [u8],
    ns: &'static str,
    arena: &'a Bump,
    /// Elements entered and not yet closed by this run (only those may it close).
    entered: usize,
}

impl<'a> BodyReader<'a> {
    /// Runs `read` over the usual form of a record here: elements in the default namespace `ns`, at most
    /// `depth` levels below the current one, with names of at most `longest` bytes. Its value, with what it
    /// read consumed; `None`, nothing consumed, when the limits or the namespace rule such a run out here or
    /// `read` meets an element that is not usual (decoded values it put in `arena` stay there).
    pub fn usual_run<T>(
        &mut self,
        ns: &'static str,
        depth: usize,
        longest: usize,
        arena: &'a Bump,
        read: impl FnOnce(&mut UsualRun<'_, 'a>) -> Option<T>,
    ) -> Option<T> {
        self.settle();
        self.scan.rest()?;
        if !self.fits(depth, longest, 0, 0) || !self.default_is(ns) {
            return None;
        }
        let (start, open, header_left) = (self.position(), self.open.len(), self.header_left);
        let spent = self.work.spent();
        let input = self.input();
        let mut run = UsualRun {
            r: self,
            input,
            ns,
            arena,
            entered: 0,
        };
        let value = read(&mut run);
        if value.is_none() {
            self.scan.seek(start);
            self.open.truncate(open);
            self.header_left = header_left;
            self.work.rewind(spent);
        }
        value
    }
}

impl<'a> UsualRun<'_, 'a> {
    /// `<name>raw</name>` right here: its raw text (references not expanded), consumed.
    #[inline]
    pub fn leaf(&mut self, name: &str) -> Option<&'a [u8]> {
        // `Scanner::leaf_here` matches the same bytes, but a second caller of it changes how the compiler
        // inlines the tokenizer's search into `BodyReader::leaf`: measured, the 100 KB Customer echo cost
        // 3.9 % more (1,682,102 -> 1,747,511 instructions) for 2 % less on the CXF parse.
        let (input, name) = (self.input, name.as_bytes());
        let at = self.r.position();
        let text_at = at + name.len() + 2;
        let open = input.get(at..text_at)?;
        if open[0] != b'<' || open[name.len() + 1] != b'>' || !same(&open[1..=name.len()], name) {
            return None;
        }
        let close_at = text_at + super::find::byte(b'<', &input[text_at..])?;
        let next = close_at + name.len() + 3;
        let close = input.get(close_at..next)?;
        if close[1] != b'/'
            || close[name.len() + 2] != b'>'
            || !same(&close[2..name.len() + 2], name)
        {
            return None;
        }
        self.r.header_left = self.r.header_left.checked_sub(1)?;
        self.r.scan.seek(next);
        Some(&input[text_at..close_at])
    }

    /// The leaf `name` as an xsd:string: borrowed, or (references expanded) put in the arena.
    #[inline]
    pub fn text(&mut self, name: &str) -> Option<&'a str> {
        let raw = self.leaf(name)?;
        self.r.leaf_string_in(raw, self.arena)
    }

    /// The leaf `name` parsed by `parse`, which must refuse what [`BodyReader::field`]'s must.
    #[inline]
    pub fn value<T>(
        &mut self,
        name: &str,
        parse: impl Fn(&str) -> Result<T, XsdError>,
    ) -> Option<T> {
        let raw = self.leaf(name)?;
        parse(self.r.checked_text(raw)?).ok()
    }

    /// The leaf `name` parsed as bytes by `parse` (see [`BodyReader::bytes_field`]).
    #[inline]
    pub fn bytes<T>(
        &mut self,
        name: &str,
        parse: impl Fn(&[u8]) -> Result<T, XsdError>,
    ) -> Option<T> {
        parse(self.leaf(name)?).ok()
    }

    /// The usual QName leaf `<name xmlns:p="uri">p:local</name>`.
    #[inline]
    pub(crate) fn qname(&mut self, name: &str) -> Option<QName<'a>> {
        self.r.usual_qname_leaf(self.ns, name)
    }

    /// `<name attr="value">` right here, entered: the value.
    #[inline]
    pub(crate) fn open_with_attribute(&mut self, name: &str, attr: &str) -> Option<&'a str> {
        let (_, value) = self
            .r
            .usual_child_with_attribute(self.ns, name, attr, self.arena)?;
        self.entered += 1;
        Some(value)
    }

    /// `</name>` of the element the run entered last, right here.
    #[inline]
    pub fn close(&mut self, name: &str) -> Option<()> {
        let innermost = self
            .r
            .open
            .last()
            .is_some_and(|open| same(open, name.as_bytes()));
        if self.entered == 0 || !innermost {
            return None;
        }
        let next = self.r.scan.close_here(name.as_bytes())?;
        // The elements a run enters declare nothing: no scope to leave.
        self.r.open.pop();
        self.entered -= 1;
        self.r.scan.seek(next);
        Some(())
    }
}
