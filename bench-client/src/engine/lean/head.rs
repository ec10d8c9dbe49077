//! The usual response head read in one pass, before httparse: a status line `HTTP/1.x DDD reason` and
//! `name: value` lines, each ended by CRLF, every byte checked against the class httparse checks it
//! against (header values eight bytes at a time). It answers only for a head httparse accepts, with the
//! same version, status, length and headers; anything else — a head not all there yet, a bare LF, empty
//! lines before the status line, a byte outside its class, too many headers — is left to httparse, which
//! decides. So the fast path accepts nothing httparse refuses, and refuses nothing: it only costs less
//! (bench-server's /health response: 858 instructions read and checked, 1,327 with httparse alone).

use bench_proto::swar;

/// A complete head's status line, as httparse would have read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct StatusLine {
    /// The minor version: `HTTP/1.0` or `HTTP/1.1`.
    pub version: u8,
    pub code: u16,
    /// The head's bytes, the blank line that ends it included.
    pub len: usize,
}

/// Reads the head at the start of `buf` if it is complete and of the usual form, handing each header to
/// `each` (name, value without the white space around it) as it is read; `None` leaves the head to
/// httparse (and what `each` was given to be forgotten). At most `max_headers` header fields (httparse's
/// limit, so that its error stays its own).
#[inline]
pub(super) fn parse<'a>(
    buf: &'a [u8],
    max_headers: usize,
    mut each: impl FnMut(&'a [u8], &'a [u8]),
) -> Option<StatusLine> {
    let line = buf.get(..13)?;
    let version = match &line[..8] {
        b"HTTP/1.1" => 1,
        b"HTTP/1.0" => 0,
        _ => return None,
    };
    let (d0, d1, d2) = (line[9], line[10], line[11]);
    if line[8] != b' ' || line[12] != b' ' || ![d0, d1, d2].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let code = u16::from(d0 - b'0') * 100 + u16::from(d1 - b'0') * 10 + u16::from(d2 - b'0');
    let mut at = line_end(buf, 13)?;
    let mut fields = 0;
    loop {
        let rest = &buf[at..];
        if *rest.first()? == b'\r' {
            if *rest.get(1)? != b'\n' {
                return None;
            }
            return Some(StatusLine {
                version,
                code,
                len: at + 2,
            });
        }
        let name_len = match known_name(rest) {
            0 => rest.iter().position(|&b| !TOKEN[usize::from(b)])?,
            n => n,
        };
        if name_len == 0 || rest[name_len] != b':' {
            return None;
        }
        let name = &rest[..name_len];
        at += name_len + 1;
        at += buf[at..].iter().position(|&b| b != b' ' && b != b'\t')?;
        let value_start = at;
        at = line_end(buf, at)?;
        let value = buf[value_start..at - 2].trim_ascii_end();
        fields += 1;
        if fields > max_headers {
            return None;
        }
        each(name, value);
    }
}

/// The length of the name at the start of `rest` if it is one of those servers write most (as hyper writes
/// them), followed by its colon; 0 if not. Such a name, matched whole, is all tchar: the byte-by-byte look
/// (nine instructions a byte) is not needed.
#[inline]
fn known_name(rest: &[u8]) -> usize {
    /// The first eight bytes of a name, as a little-endian word.
    const fn word(s: &[u8]) -> u64 {
        u64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]])
    }
    const CONTENT: u64 = word(b"content-");
    const CONNECTI: u64 = word(b"connecti");
    const TRANSFER: u64 = word(b"transfer");
    const DATE: u64 = word(b"date:\0\0\0");
    let Some(w) = rest.get(..8) else {
        return 0;
    };
    let w = word(w);
    match w {
        CONTENT => match rest.get(8..15) {
            Some(b"length:") => 14,
            Some([b't', b'y', b'p', b'e', b':', ..]) => 12,
            _ => 0,
        },
        CONNECTI if rest.get(8..11) == Some(b"on:") => 10,
        TRANSFER if rest.get(8..18) == Some(b"-encoding:") => 17,
        _ if w & 0xFF_FFFF_FFFF == DATE => 4,
        _ => 0,
    }
}

/// The end (past its CRLF) of the line of text that starts at `from`: a reason phrase or a header value,
/// whose bytes are HTAB, SP, visible ASCII or obs-text (0x80 and above), httparse's class for both.
/// `None` if the line is not all there or holds another byte (a bare LF, a CR alone, a control).
#[inline]
fn line_end(buf: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    loop {
        // Eight bytes at a time while eight are there: the first byte below 0x20 or equal to 0x7F.
        while i + 8 <= buf.len() {
            let x = swar::word(buf, i);
            let marked = swar::below(x, 0x20) | swar::equal(x, 0x7F);
            if marked != 0 {
                i += (marked.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        while !(buf.get(i)? < &0x20 || buf[i] == 0x7F) {
            i += 1;
        }
        match buf[i] {
            b'\t' => i += 1,
            b'\r' if *buf.get(i + 1)? == b'\n' => return Some(i + 2),
            _ => return None,
        }
    }
}

/// tchar (RFC 9110 §5.6.2), httparse's class for header-name bytes.
static TOKEN: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
            );
        b += 1;
    }
    t
};

#[cfg(test)]
mod tests;
