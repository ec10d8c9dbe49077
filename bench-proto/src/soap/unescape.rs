//! Expanding references in text: the five predefined entities, which is what writers emit, by hand; any other
//! reference (character references, unknown or broken ones) sends the whole text to quick-xml's `unescape`,
//! so what is accepted and what it means stay quick-xml's. (quick-xml cost ~230 instructions a reference on
//! the 1 KiB echoStringDoc text; this about a third of that.)

use std::borrow::Cow;

use memchr::memchr;

/// `text` with its references expanded (borrowed when it has none), or quick-xml's error.
pub(super) fn unescape(text: &str) -> Result<Cow<'_, str>, quick_xml::escape::EscapeError> {
    let Some(first) = memchr(b'&', text.as_bytes()) else {
        return Ok(Cow::Borrowed(text));
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut amp = first;
    loop {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        let (ch, len) = match after.as_bytes() {
            [b'a', b'm', b'p', b';', ..] => ('&', 4),
            [b'l', b't', b';', ..] => ('<', 3),
            [b'g', b't', b';', ..] => ('>', 3),
            [b'q', b'u', b'o', b't', b';', ..] => ('"', 5),
            [b'a', b'p', b'o', b's', b';', ..] => ('\'', 5),
            _ => return quick_xml::escape::unescape(text),
        };
        out.push(ch);
        rest = &after[len..];
        match memchr(b'&', rest.as_bytes()) {
            Some(i) => amp = i,
            None => {
                out.push_str(rest);
                return Ok(Cow::Owned(out));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever the text, the answer is quick-xml's.
    #[test]
    fn agrees_with_quick_xml() {
        let pieces = [
            "", "a", "&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&#65;", "&#x42;", "&", "&am", "&amp",
            "&nbsp;", ";", "é", "&&", "x&lt;y",
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
                }
            }
        }
    }
}
