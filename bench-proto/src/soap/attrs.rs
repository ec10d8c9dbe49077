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
    prefixed(name).map(Some)
}

/// Whether every byte of `part` may be in a name (a colon may not): no branches per byte.
#[inline]
fn names_only(part: &[u8]) -> bool {
    part.iter()
        .fold(true, |ok, &b| ok & (NAME_CLASS[usize::from(b)] != 0))
}

/// If `name` is a prefixed QName, `prefix:local`, where its colon is: the colon found in one search, each
/// part checked in one table pass. Out of line: the usual name has no prefix.
#[inline(never)]
fn prefixed(name: &[u8]) -> Option<usize> {
    let colon = find::byte(b':', name)?;
    let (prefix, local) = (&name[..colon], &name[colon + 1..]);
    let starts = |part: &[u8]| {
        part.first()
            .is_some_and(|&b| NAME_CLASS[usize::from(b)] == 2)
    };
    (starts(prefix) && starts(local) && names_only(prefix) && names_only(local)).then_some(colon)
}

/// Where the local part of `name` (name bytes and colons only) starts, if it is a QName: 0 unprefixed, or
/// after its one colon (both parts need only start as a name does).
#[inline]
fn local_part(name: &[u8]) -> Option<usize> {
    let starts = |b: Option<&u8>| b.is_some_and(|&b| NAME_CLASS[usize::from(b)] == 2);
    if !starts(name.first()) {
        return None;
    }
    match find::byte(b':', name) {
        None => Some(0),
        Some(colon) => (starts(name.get(colon + 1))
            && find::byte(b':', &name[colon + 1..]).is_none())
        .then_some(colon + 1),
    }
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
        // Bytes above the space are never whitespace: one comparison for the usual byte after a space.
        while let Some(&c) = self.b.get(self.i) {
            if c > b' ' || !is_space(c) {
                break;
            }
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
        // The name ends at the first byte no name may hold, which must be whitespace, '=' or the end of the
        // tag (anything else makes the whole run before it no name); its colon, if any, is looked for after.
        let rest = &self.b[offset..];
        let len = rest
            .iter()
            .position(|&c| ATTR_NAME_CLASS[usize::from(c)] == 0)
            .unwrap_or(rest.len());
        let (name, end) = (&rest[..len], offset + len);
        let ends_well = rest.get(len).is_none_or(|&c| c == b'=' || is_space(c));
        let local = if ends_well { local_part(name) } else { None };
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
        #[cfg(test)]
        super::work::scanned_attribute();
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
