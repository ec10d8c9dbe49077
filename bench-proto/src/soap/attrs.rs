//! The attributes of a start tag, read straight from the input: each `name="value"` checked for syntax in one
//! pass (no duplicate check here: the reader does that once per tag, bounded by its limits).

use std::borrow::Cow;

use super::find;
use super::unescape::unescape;

/// One attribute: its qualified name and its raw value (between the quotes, references not yet expanded).
#[derive(Debug, Clone, Copy)]
pub(super) struct Attr<'a> {
    pub(super) name: &'a [u8],
    pub(super) value: &'a [u8],
    /// Offset of the name in the attribute bytes of the tag.
    pub(super) offset: usize,
    /// Where the local part starts in `name` (after the prefix's colon; 0 if unprefixed).
    pub(super) local: usize,
}

impl<'a> Attr<'a> {
    /// The local part of the name and its prefix, if any.
    pub(super) fn split_name(&self) -> (Option<&'a [u8]>, &'a [u8]) {
        let prefix = (self.local > 0).then(|| &self.name[..self.local - 1]);
        (prefix, &self.name[self.local..])
    }

    /// The attribute value after reference expansion and attribute-value normalisation (each literal tab,
    /// newline or carriage return becomes a space; character references keep what they name).
    pub(super) fn normalized_value(&self) -> Result<Cow<'a, str>, String> {
        let raw = std::str::from_utf8(self.value).map_err(|e| e.to_string())?;
        normalize(raw)
    }
}

/// [`Attr::normalized_value`] of a value already known to be text.
pub(super) fn normalize(raw: &str) -> Result<Cow<'_, str>, String> {
    if !raw.bytes().any(|b| matches!(b, b'\t' | b'\n' | b'\r')) {
        return unescape(raw).map_err(|e| e.to_string());
    }
    let spaced = raw.replace("\r\n", " ").replace(['\t', '\n', '\r'], " ");
    match unescape(&spaced) {
        Ok(Cow::Borrowed(_)) => Ok(Cow::Owned(spaced)),
        Ok(Cow::Owned(v)) => Ok(Cow::Owned(v)),
        Err(e) => Err(e.to_string()),
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Byte classes of XML names: 2 may start a name, 1 may only follow, 0 may not appear. ASCII is checked
/// exactly; every non-ASCII byte is let through (the full Unicode classes buy nothing here).
const NAME_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            2
        } else if c.is_ascii_digit() || c == b'-' || c == b'.' {
            1
        } else {
            0
        };
        b += 1;
    }
    t
};

/// [`NAME_CLASS`] with the colon as 4: an attribute's name is read in one pass that also notes whether it
/// has a colon.
const ATTR_NAME_CLASS: [u8; 256] = {
    let mut t = NAME_CLASS;
    t[b':' as usize] = 4;
    t
};

/// If `name` is a namespace-valid QName, where its colon is (`Some(None)`: unprefixed).
#[inline]
pub(super) fn qname_colon(name: &[u8]) -> Option<Option<usize>> {
    let first = *name.first()?;
    // The usual name has no colon: one table pass, no branches per byte.
    if NAME_CLASS[usize::from(first)] == 2
        && name
            .iter()
            .fold(true, |ok, &b| ok & (NAME_CLASS[usize::from(b)] != 0))
    {
        return Some(None);
    }
    let mut colon = None;
    for (i, &b) in name.iter().enumerate() {
        if NAME_CLASS[usize::from(b)] == 0 {
            if b != b':' || colon.is_some() {
                return None;
            }
            colon = Some(i);
        }
    }
    let starts = |b: Option<&u8>| b.is_some_and(|&b| NAME_CLASS[usize::from(b)] == 2);
    (starts(Some(&first)) && colon.map_or(true, |i| starts(name.get(i + 1)))).then_some(colon)
}

/// Iterates the attributes in the bytes that follow an element's name inside its start tag. An item is an
/// error (offset, what is wrong) when the syntax is broken; iteration should stop there.
#[derive(Debug, Clone)]
pub(super) struct Attrs<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Attrs<'a> {
    pub(super) fn new(b: &'a [u8]) -> Self {
        Self { b, i: 0 }
    }

    #[inline]
    fn skip_space(&mut self) {
        while self.i < self.b.len() && is_space(self.b[self.i]) {
            self.i += 1;
        }
    }

    fn fail(&mut self, why: &'static str) -> Option<Result<Attr<'a>, (usize, &'static str)>> {
        let at = self.i;
        self.i = self.b.len();
        Some(Err((at, why)))
    }
}

impl<'a> Iterator for Attrs<'a> {
    type Item = Result<Attr<'a>, (usize, &'static str)>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let before = self.i;
        self.skip_space();
        if self.i == self.b.len() {
            return None;
        }
        if self.i == before {
            return self.fail("attributes must be separated by whitespace");
        }
        let offset = self.i;
        // The name and its classes in one pass: it ends at the first byte no name may hold, which must be
        // whitespace, '=' or the end of the tag (anything else makes the whole run before them no name).
        let mut classes = 0;
        let mut end = offset;
        while let Some(&c) = self.b.get(end) {
            let class = ATTR_NAME_CLASS[usize::from(c)];
            if class == 0 {
                break;
            }
            classes |= class;
            end += 1;
        }
        let name = &self.b[offset..end];
        let ends_well = self.b.get(end).is_none_or(|&c| c == b'=' || is_space(c));
        let local = match (ends_well, classes & 4 != 0) {
            (true, false)
                if name
                    .first()
                    .is_some_and(|&c| NAME_CLASS[usize::from(c)] == 2) =>
            {
                Some(0)
            }
            (true, true) => qname_colon(name).map(|colon| colon.map_or(0, |i| i + 1)),
            _ => None,
        };
        let Some(local) = local else {
            self.i = offset;
            return self.fail("not a valid attribute name");
        };
        self.i = end;
        self.skip_space();
        if self.b.get(self.i) != Some(&b'=') {
            return self.fail("attribute without '=' and a value");
        }
        self.i += 1;
        self.skip_space();
        let quote = match self.b.get(self.i) {
            Some(&q @ (b'"' | b'\'')) => q,
            _ => return self.fail("attribute value not in quotes"),
        };
        let start = self.i + 1;
        let Some(len) = find::either(quote, b'<', &self.b[start..]) else {
            return self.fail("unterminated attribute value");
        };
        if self.b[start + len] == b'<' {
            self.i = start + len;
            return self.fail("'<' is not allowed in an attribute value");
        }
        let value = &self.b[start..start + len];
        self.i = start + len + 1;
        Some(Ok(Attr {
            name,
            value,
            offset,
            local,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(b: &str) -> Result<Vec<(String, String)>, (usize, &'static str)> {
        Attrs::new(b.as_bytes())
            .map(|a| {
                a.map(|a| {
                    (
                        String::from_utf8_lossy(a.name).into_owned(),
                        String::from_utf8_lossy(a.value).into_owned(),
                    )
                })
            })
            .collect()
    }

    #[test]
    fn attributes_parse_with_either_quote_and_spaces_around_eq() {
        assert_eq!(
            names(" a=\"1\"\tb = '2' p:c=\"x>y\" ").unwrap(),
            [("a", "1"), ("b", "2"), ("p:c", "x>y")].map(|(a, b)| (a.to_owned(), b.to_owned()))
        );
        assert_eq!(names("").unwrap(), []);
        assert_eq!(names("  ").unwrap(), []);
    }

    #[test]
    fn broken_attributes_say_where_and_why() {
        for (bad, at) in [
            (" a", 2),
            (" a=1", 3),
            (" a=\"1", 3),
            (" a=\"1\"b=\"2\"", 6),
            (" =\"1\"", 1),
            (" 1a=\"\"", 1),
            (" a=\"<\"", 4),
            (" a:b:c=\"\"", 1),
            (" a:=\"\"", 1),
        ] {
            assert_eq!(names(bad).unwrap_err().0, at, "{bad}");
        }
    }

    #[test]
    fn values_are_normalised_and_unescaped() {
        let attr = |v: &'static str| Attr {
            name: b"a",
            value: v.as_bytes(),
            offset: 0,
            local: 0,
        };
        assert_eq!(attr("a\tb\r\nc\nd").normalized_value().unwrap(), "a b c d");
        assert_eq!(attr("&lt;&#9;&amp;").normalized_value().unwrap(), "<\t&");
        assert!(matches!(
            attr("plain").normalized_value().unwrap(),
            Cow::Borrowed("plain")
        ));
        assert!(attr("&bogus;").normalized_value().is_err());
    }

    #[test]
    fn xml_names() {
        for good in ["a", "_x", "p:local", "é", "a-b.c1"] {
            assert!(qname_colon(good.as_bytes()).is_some(), "{good}");
            let read = names(&format!(" {good}=\"v\""));
            assert_eq!(read.unwrap()[0].0, good);
        }
        for bad in ["", "1a", "-a", ":a", "a:", "a:b:c", "a/b", "a\"", "a&b"] {
            assert!(qname_colon(bad.as_bytes()).is_none(), "{bad}");
            let read = names(&format!(" {bad}=\"v\""));
            assert_eq!(
                read.unwrap_err(),
                (1, "not a valid attribute name"),
                "{bad}"
            );
        }
    }
}
