//! A response head in its canonical form — `HTTP/1.x SSS reason`, `name: value` lines, every line ended by
//! CRLF — parsed in one pass (memchr for line ends, a table for name bytes), for the load loop: httparse
//! spends about 950 instructions on bench-server's 107-byte head, this about a third of that. It accepts a
//! strict subset of what httparse accepts, with the same bytes allowed in names, values and reason (a test
//! compares the two on mutated heads); anything else — a partial head, bare LF, too many fields, any byte
//! outside the grammar — returns `None`, and httparse decides.

use super::wire::MAX_HEADERS;

/// `tchar` (RFC 9110 §5.6.2): the bytes of a field name.
const TCHAR: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = c.is_ascii_alphanumeric()
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
        i += 1;
    }
    t
};

/// A byte of a field value or reason phrase: HTAB, SP, VCHAR, obs-text (no other control, no DEL).
#[inline]
fn text(c: u8) -> bool {
    c == b'\t' || (c >= b' ' && c != 0x7f)
}

/// The version (0 or 1 of HTTP/1.x), the status and the head's length, with each field handed to `field`
/// (name, value without surrounding blanks) — or `None`: not canonical, or not all there yet. Fields
/// already handed over before a `None` are to be discarded by the caller.
pub(super) fn canonical(b: &[u8], mut field: impl FnMut(&[u8], &[u8])) -> Option<(u8, u16, usize)> {
    if b.len() < 13 || &b[..7] != b"HTTP/1." || b[8] != b' ' || b[12] != b' ' {
        return None;
    }
    let version = match b[7] {
        b'0' => 0,
        b'1' => 1,
        _ => return None,
    };
    let code = &b[9..12];
    if !code.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let status = code.iter().fold(0u16, |n, &d| n * 10 + u16::from(d - b'0'));
    let eol = 13 + memchr::memchr(b'\n', &b[13..])?;
    if b[eol - 1] != b'\r' || !b[13..eol - 1].iter().all(|&c| text(c)) {
        return None;
    }
    let mut pos = eol + 1;
    let mut fields = 0;
    loop {
        let rest = &b[pos..];
        match rest {
            [b'\r', b'\n', ..] => return Some((version, status, pos + 2)),
            [] | [_] => return None,
            _ => {}
        }
        let nl = memchr::memchr(b'\n', rest)?;
        if nl < 2 || rest[nl - 1] != b'\r' {
            return None;
        }
        let line = &rest[..nl - 1];
        let colon = line.iter().position(|&c| !TCHAR[usize::from(c)])?;
        if colon == 0 || line[colon] != b':' {
            return None;
        }
        let value = &line[colon + 1..];
        if !value.iter().all(|&c| text(c)) {
            return None;
        }
        fields += 1;
        if fields > MAX_HEADERS {
            return None;
        }
        field(&line[..colon], trim_blanks(value));
        pos += nl + 1;
    }
}

fn trim_blanks(v: &[u8]) -> &[u8] {
    let start = v
        .iter()
        .position(|&c| c != b' ' && c != b'\t')
        .unwrap_or(v.len());
    let end = v
        .iter()
        .rposition(|&c| c != b' ' && c != b'\t')
        .map_or(start, |e| e + 1);
    &v[start..end]
}

#[cfg(test)]
mod tests {
    use std::mem::MaybeUninit;

    use super::*;

    type Parsed = (u8, u16, usize, Vec<(Vec<u8>, Vec<u8>)>);

    fn fast(b: &[u8]) -> Option<Parsed> {
        let mut fields = Vec::new();
        let (v, s, n) = canonical(b, |k, v| fields.push((k.to_vec(), v.to_vec())))?;
        Some((v, s, n, fields))
    }

    fn reference(b: &[u8]) -> Option<Parsed> {
        let mut headers = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
        let mut r = httparse::Response::new(&mut []);
        let parsed = httparse::ParserConfig::default().parse_response_with_uninit_headers(
            &mut r,
            b,
            &mut headers,
        );
        match parsed {
            Ok(httparse::Status::Complete(n)) => Some((
                r.version?,
                r.code?,
                n,
                r.headers
                    .iter()
                    .map(|h| (h.name.as_bytes().to_vec(), trim_blanks(h.value).to_vec()))
                    .collect(),
            )),
            _ => None,
        }
    }

    const HEADS: &[&[u8]] = &[
        b"HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: 3\r\ndate: Tue, 01 Dec 2026 10:42:59 GMT\r\n\r\nok\n",
        b"HTTP/1.0 404 Not Found\r\nConnection:keep-alive\r\nX-A:\t a b \t\r\n\r\n",
        b"HTTP/1.1 204 \r\n\r\n",
        b"HTTP/1.1 500 Oops \xc3\xa9\r\ntransfer-encoding: gzip, chunked\r\nx: \x80\xff\r\n\r\n",
    ];

    #[test]
    fn canonical_heads_parse_as_httparse_parses_them() {
        for h in HEADS {
            let f = fast(h).expect("canonical");
            assert_eq!(
                Some(&f),
                reference(h).as_ref(),
                "{}",
                String::from_utf8_lossy(h)
            );
        }
    }

    /// Every single-byte change and every truncation of the heads: whatever the fast parser accepts,
    /// httparse accepts identically (what it declines, httparse decides in the reader).
    #[test]
    fn the_fast_parser_accepts_a_subset_of_httparse() {
        let mut accepted = 0;
        for h in HEADS {
            for cut in 0..h.len() {
                if let Some(f) = fast(&h[..cut]) {
                    assert_eq!(Some(f), reference(&h[..cut]), "cut {cut}");
                }
            }
            for i in 0..h.len() {
                for c in [
                    0u8, b'\t', b'\n', b'\r', b' ', b':', b'0', b'a', b'/', b'"', 0x7f, 0x80, 0xff,
                ] {
                    let mut m = h.to_vec();
                    m[i] = c;
                    if let Some(f) = fast(&m) {
                        accepted += 1;
                        assert_eq!(
                            Some(&f),
                            reference(&m).as_ref(),
                            "{}",
                            String::from_utf8_lossy(&m)
                        );
                    }
                }
            }
        }
        assert!(
            accepted > 100,
            "the mutations exercise the accepting side too ({accepted})"
        );
    }

    #[test]
    fn what_is_not_canonical_is_left_to_httparse() {
        for h in [
            &b"HTTP/1.1 200 OK\nx: y\n\n"[..],
            b"HTTP/1.1 200 OK\r\nx : y\r\n\r\n",
            b"HTTP/1.1 200 OK\r\n x: y\r\n\r\n",
            b"HTTP/2.0 200 OK\r\n\r\n",
            b"HTTP/1.1 20 OK\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nx: y\r\n",
        ] {
            assert_eq!(fast(h), None, "{}", String::from_utf8_lossy(h));
        }
        let mut many = b"HTTP/1.1 200 OK\r\n".to_vec();
        for _ in 0..=MAX_HEADERS {
            many.extend_from_slice(b"a: b\r\n");
        }
        many.extend_from_slice(b"\r\n");
        assert_eq!(fast(&many), None);
    }
}
