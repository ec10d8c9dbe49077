//! What a service needs to echo a message in one pass (read a field, write it back, read the next): leaves
//! with the bytes they were written as, the input consumed since a position, and a loop over repeated children
//! that collects nothing. Where what the serialiser would write is exactly what was read, it can be copied.

use super::{BodyReader, Element, Limit, SoapError};

/// A leaf field `<name>text</name>` as [`BodyReader::written_leaf`] finds it (not yet consumed).
#[derive(Debug, Clone, Copy)]
pub(crate) struct WrittenLeaf<'a> {
    /// The text as written (references not expanded).
    pub(crate) raw: &'a [u8],
    /// The whole element as written, start tag to end tag.
    pub(crate) whole: &'a [u8],
    /// Where the whole element starts in the input.
    pub(crate) at: usize,
    /// Where it ends (for [`BodyReader::take_written_leaf`]).
    next: usize,
}

impl<'a> BodyReader<'a> {
    /// The usual leaf field `{ns}name` right here (unprefixed, no attributes, text without markup), within
    /// every limit, as the typed-field fast path finds it; nothing consumed. `None`: anything else, for the
    /// general path (`field`, `string_field`).
    #[inline]
    pub(crate) fn written_leaf(&mut self, ns: &str, name: &str) -> Option<WrittenLeaf<'a>> {
        let (raw, next) = self.leaf(ns, name)?;
        let input = self.input();
        let text_at = (raw.as_ptr() as usize).wrapping_sub(input.as_ptr() as usize);
        // `leaf` found `<name>` right before the text.
        let at = text_at - name.len() - 2;
        Some(WrittenLeaf {
            raw,
            whole: &input[at..next],
            at,
            next,
        })
    }

    /// The text of `leaf` as a `str` (it lies in the input, checked as UTF-8 when the message was opened).
    #[inline]
    pub(crate) fn leaf_text(&self, leaf: &WrittenLeaf<'a>) -> Option<&'a str> {
        self.text_of(leaf.raw).ok()
    }

    /// Consumes `leaf`, counted as an element (as the general path counts it).
    #[inline]
    pub(crate) fn take_written_leaf(&mut self, leaf: &WrittenLeaf<'a>) {
        self.take_leaf(leaf.next);
    }

    /// Runs `read` on every remaining child, each of which must be `{ns}name`, as
    /// [`repeated`](Self::repeated) does (it is built on this loop: the same checks, errors and [`Limits::max_items`](super::Limits)),
    /// keeping nothing: `read` gets the reader just past the child's start tag and the offset where the
    /// reading of that tag began. Returns how many there were, and the offset where the reading of the end
    /// tag of the current element (which it consumed) began.
    pub(crate) fn each(
        &mut self,
        ns: &'static str,
        name: &'static str,
        mut read: impl FnMut(&mut Self, usize) -> Result<(), SoapError>,
    ) -> Result<(usize, usize), SoapError> {
        let mut index = 0;
        loop {
            let at = |e: SoapError| e.at(&format!("{name}[{index}]"));
            let from = self.position();
            let el = match self.plain_child(name).map_err(at)? {
                Some(el) => el,
                None => match self.unusual_child(name).map_err(at)? {
                    Some(el) => el,
                    None => return Ok((index, from)),
                },
            };
            if !self.is_in(&el, ns) {
                let found = self.namespace_of(&el);
                return Err(at(SoapError::WrongNamespace {
                    path: String::new(),
                    expected: ns,
                    found,
                }));
            }
            if index == self.limits.max_items {
                return Err(at(self.exceeded(Limit::Items)));
            }
            read(self, from).map_err(at)?;
            index += 1;
        }
    }

    /// The next child of [`each`](Self::each) where the usual `<name>` is not: the empty `<name/>` (a
    /// sequence may be a flood of them), or any other child read the general way, which must be `name`;
    /// `None` at the end. Out of line: a usual sequence comes here once, at its end.
    #[cold]
    fn unusual_child(&mut self, name: &'static str) -> Result<Option<Element<'a>>, SoapError> {
        self.settle();
        // The usual reason to come here: the end of the sequence.
        if let Some(&open) = self.open.last() {
            if let Some(next) = self.scan.close_here(open) {
                self.close_at(next);
                return Ok(None);
            }
        }
        if let Some((tag, pos)) = self.scan.open_plain_empty(name.as_bytes()) {
            return self.enter_plain(tag, pos).map(Some);
        }
        let Some(el) = self.next_child()? else {
            return Ok(None);
        };
        if el.local_name() != name.as_bytes() {
            return Err(self.unexpected(&el));
        }
        Ok(Some(el))
    }
}
