//! Java strings on the wire: `writeUTF`'s modified UTF-8, kept as bytes so a server can relay text
//! without decoding and re-encoding it.
//!
//! Modified UTF-8 differs from UTF-8 in two ways: U+0000 is the two bytes `C0 80`, and a character above
//! U+FFFF is its UTF-16 surrogate pair, three bytes per surrogate. Java's reader accepts any 1-, 2- or
//! 3-byte sequence with the right continuation bytes (overlong forms included); so does [`JStr::new`].

use std::borrow::Cow;
use std::fmt;

use super::error::ChatError;

/// The most bytes `writeUTF` can write (its length prefix is a `u16`).
const MAX_UTF_BYTES: usize = u16::MAX as usize;

/// A borrowed, validated modified-UTF-8 string of at most 65 535 bytes (what `writeUTF` can write).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct JStr<'a>(&'a [u8]);

impl<'a> JStr<'a> {
    /// The empty string.
    pub const EMPTY: JStr<'static> = JStr(b"");

    /// Checks `bytes` the way Java's `DataInputStream.readUTF` does.
    pub fn new(bytes: &'a [u8]) -> Result<JStr<'a>, ChatError> {
        if bytes.len() > MAX_UTF_BYTES {
            return Err(ChatError::StringTooLong(bytes.len()));
        }
        if bytes.is_ascii() {
            return Ok(JStr(bytes));
        }
        let mut i = 0;
        while i < bytes.len() {
            let len = match bytes[i] >> 4 {
                0..=7 => 1,
                12 | 13 => 2,
                14 => 3,
                _ => return Err(ChatError::BadString),
            };
            let tail = bytes.get(i + 1..i + len).ok_or(ChatError::BadString)?;
            if tail.iter().any(|&b| b & 0xC0 != 0x80) {
                return Err(ChatError::BadString);
            }
            i += len;
        }
        Ok(JStr(bytes))
    }

    /// The raw modified-UTF-8 bytes (what goes after the length prefix).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Java's `String.length()`: the number of UTF-16 code units (one per encoded sequence).
    pub fn utf16_len(&self) -> usize {
        self.0.iter().filter(|&&b| b & 0xC0 != 0x80).count()
    }

    /// Java's `String.trim()`: drops leading and trailing characters at or below U+0020.
    pub fn trim(self) -> JStr<'a> {
        let mut s = self.0;
        // Printable ASCII at both ends (every string VolanoMark sends, once trimmed) ends it at once.
        if let (Some(&first), Some(&last)) = (s.first(), s.last()) {
            if (0x21..0x80).contains(&first) && (0x21..0x80).contains(&last) {
                return self;
            }
        }
        while let Some(&lead) = s.first() {
            let len = seq_len(lead);
            if decode_seq(&s[..len]) > 0x20 {
                break;
            }
            s = &s[len..];
        }
        while !s.is_empty() {
            // The last sequence starts at the last byte that is not a continuation byte.
            let start = s.iter().rposition(|&b| b & 0xC0 != 0x80).unwrap_or(0);
            if decode_seq(&s[start..]) > 0x20 {
                break;
            }
            s = &s[..start];
        }
        JStr(s)
    }

    /// The text as a `&str` when the bytes are also plain UTF-8 (no U+0000 as `C0 80`, no surrogates,
    /// no overlong forms), which is every string VolanoMark sends.
    pub fn as_str(&self) -> Option<&'a str> {
        std::str::from_utf8(self.0).ok()
    }

    /// The text, decoding surrogate pairs; an unpaired surrogate becomes U+FFFD.
    pub fn to_string_lossy(&self) -> Cow<'a, str> {
        if let Some(s) = self.as_str() {
            return Cow::Borrowed(s);
        }
        let mut units = Vec::with_capacity(self.0.len());
        let mut i = 0;
        while i < self.0.len() {
            let len = seq_len(self.0[i]);
            units.push(decode_seq(&self.0[i..i + len]));
            i += len;
        }
        Cow::Owned(String::from_utf16_lossy(&units))
    }

    /// True when both strings are equal ignoring ASCII case (VOLANO compares user names this way).
    pub fn eq_ignore_ascii_case(&self, other: &JStr<'_>) -> bool {
        self.0.eq_ignore_ascii_case(other.0)
    }
}

/// The length of the sequence that starts with `lead`, for bytes [`JStr::new`] accepted.
fn seq_len(lead: u8) -> usize {
    match lead >> 4 {
        0..=7 => 1,
        12 | 13 => 2,
        _ => 3,
    }
}

/// The UTF-16 code unit of one validated sequence, computed as Java's `readUTF` does.
fn decode_seq(seq: &[u8]) -> u16 {
    match *seq {
        [a] => u16::from(a),
        [a, b] => (u16::from(a & 0x1F) << 6) | u16::from(b & 0x3F),
        [a, b, c] => (u16::from(a & 0x0F) << 12) | (u16::from(b & 0x3F) << 6) | u16::from(c & 0x3F),
        _ => 0,
    }
}

impl fmt::Debug for JStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.to_string_lossy(), f)
    }
}

impl fmt::Display for JStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_lossy())
    }
}

/// An owned, validated modified-UTF-8 string: what a server keeps (user names, profiles) and a client
/// builds from Rust strings.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct JString(Vec<u8>);

impl JString {
    /// Encodes `s` as modified UTF-8.
    pub fn new(s: &str) -> Result<JString, ChatError> {
        // Plain UTF-8 is already modified UTF-8 unless it holds U+0000 or a 4-byte sequence.
        let bytes = if s.bytes().any(|b| b == 0 || b >= 0xF0) {
            let mut out = Vec::with_capacity(s.len() + 8);
            for unit in s.encode_utf16() {
                push_unit(&mut out, unit);
            }
            out
        } else {
            s.as_bytes().to_vec()
        };
        if bytes.len() > MAX_UTF_BYTES {
            return Err(ChatError::StringTooLong(bytes.len()));
        }
        Ok(JString(bytes))
    }

    pub fn as_jstr(&self) -> JStr<'_> {
        JStr(&self.0)
    }
}

impl From<JStr<'_>> for JString {
    fn from(s: JStr<'_>) -> JString {
        JString(s.0.to_vec())
    }
}

impl fmt::Debug for JString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.as_jstr(), f)
    }
}

fn push_unit(out: &mut Vec<u8>, u: u16) {
    match u {
        0x0001..=0x007F => out.push(u as u8),
        0x0000 | 0x0080..=0x07FF => {
            out.extend_from_slice(&[0xC0 | (u >> 6) as u8, 0x80 | (u & 0x3F) as u8]);
        }
        _ => out.extend_from_slice(&[
            0xE0 | (u >> 12) as u8,
            0x80 | ((u >> 6) & 0x3F) as u8,
            0x80 | (u & 0x3F) as u8,
        ]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_and_bmp_text_is_plain_utf8() {
        let s = JString::new("Room1 é €").unwrap();
        assert_eq!(s.as_jstr().as_bytes(), "Room1 é €".as_bytes());
        assert_eq!(s.as_jstr().as_str(), Some("Room1 é €"));
        assert_eq!(s.as_jstr().utf16_len(), 9);
    }

    #[test]
    fn nul_and_supplementary_characters_use_java_forms() {
        let s = JString::new("a\0😀").unwrap();
        // U+0000 → C0 80; U+1F600 → D83D DE00, each as three bytes.
        assert_eq!(
            s.as_jstr().as_bytes(),
            &[b'a', 0xC0, 0x80, 0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80]
        );
        assert_eq!(s.as_jstr().as_str(), None);
        assert_eq!(s.as_jstr().to_string_lossy(), "a\0😀");
        assert_eq!(s.as_jstr().utf16_len(), 4); // Java: "a\0😀".length() == 4
        assert_eq!(JStr::new(s.as_jstr().as_bytes()).unwrap(), s.as_jstr());
    }

    #[test]
    fn invalid_sequences_are_refused() {
        for bad in [
            &[0x80][..],
            &[0xF0, 0x9F, 0x98, 0x80],
            &[0xC3],
            &[0xE2, 0x82],
            &[0xC3, 0x41],
            &[0xFF],
        ] {
            assert_eq!(JStr::new(bad), Err(ChatError::BadString), "{bad:x?}");
        }
        assert_eq!(
            JStr::new(&vec![b'a'; 65_536]),
            Err(ChatError::StringTooLong(65_536))
        );
        assert!(JStr::new(&vec![b'a'; 65_535]).is_ok());
    }

    #[test]
    fn lone_surrogate_decodes_lossily() {
        let s = JStr::new(&[0xED, 0xA0, 0xBD, b'x']).unwrap();
        assert_eq!(s.to_string_lossy(), "\u{FFFD}x");
    }

    #[test]
    fn trim_matches_java() {
        let t = |b: &[u8]| JStr::new(b).unwrap().trim().as_bytes().to_vec();
        assert_eq!(t(b"  Mark1 \t\r\n"), b"Mark1");
        assert_eq!(
            t(crate::chat::MARK_TEXT.as_bytes()),
            crate::chat::MARK_TEXT_TRIMMED.as_bytes()
        );
        // C0 80 (U+0000) and the overlong C0 A0 (U+0020) are trimmed too; é (U+00E9) is not.
        assert_eq!(t(&[0xC0, 0x80, b'a', 0xC0, 0xA0]), b"a");
        assert_eq!(t(&[0xC3, 0xA9, b' ']), &[0xC3, 0xA9]);
        assert_eq!(t(b" \x01 "), b"");
        assert_eq!(t(b""), b"");
    }

    #[test]
    fn too_long_rust_string_is_refused() {
        assert_eq!(
            JString::new(&"é".repeat(40_000)),
            Err(ChatError::StringTooLong(80_000))
        );
    }
}
