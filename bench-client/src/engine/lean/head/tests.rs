//! The fast head reader held to httparse: on every head of a corpus, every byte of each replaced by bytes at
//! the edges of the classes, every byte inserted, every truncation, whenever the fast reader answers,
//! httparse accepts the head with the same version, status, length and framing headers; and the fast
//! reader does answer for the usual heads.

use super::parse;
use crate::engine::lean::wire::{httparse_head, MAX_HEADERS};

/// Version, status, length and the headers.
type Read = (u8, u16, usize, Vec<(Vec<u8>, Vec<u8>)>);

fn fast(buf: &[u8]) -> Option<Read> {
    let mut headers = Vec::new();
    let h = parse(buf, MAX_HEADERS, |n, v| {
        headers.push((n.to_vec(), v.to_vec()))
    })?;
    Some((h.version, h.code, h.len, headers))
}

/// httparse as the lean path calls it; `None` unless complete.
fn reference(buf: &[u8]) -> Option<Read> {
    httparse_head(buf, |parsed, r| {
        let Ok(httparse::Status::Complete(n)) = parsed else {
            return None;
        };
        let headers = r
            .headers
            .iter()
            .map(|h| (h.name.as_bytes().to_vec(), h.value.to_vec()))
            .collect();
        Some((r.version?, r.code?, n, headers))
    })
}

/// Whether the fast reader answered; panics if it answered otherwise than httparse.
fn agrees(buf: &[u8]) -> bool {
    let Some(f) = fast(buf) else {
        return false;
    };
    assert_eq!(
        Some(&f),
        reference(buf).as_ref(),
        "{:?}",
        String::from_utf8_lossy(buf)
    );
    true
}

const SERVER: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: 3\r\ndate: Thu, 03 Dec 2026 16:02:05 GMT\r\n\r\nok\n";

/// Heads the fast reader reads (the first is bench-server's), the last with exactly httparse's limit of
/// fields.
fn usual() -> Vec<Vec<u8>> {
    let mut heads: Vec<Vec<u8>> = [
        SERVER,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n0\r\n\r\n",
        b"HTTP/1.0 200 OK\r\nConnection:\tkeep-alive \t\r\nContent-Length:   7 \r\n\r\n",
        b"HTTP/1.1 204 \r\nX-Empty:\r\nX-Blank:  \t \r\nconnection:\r\n\r\n",
        b"HTTP/1.1 200 \xC3\xA9t\xE9 ok\r\nX-Obs: caf\xC3\xA9 \x80\xFF\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n",
        b"HTTP/1.1 500 Internal Server Error\r\nX-Long: a\tvalue that runs past a word\twith tabs\t\r\nCONTENT-LENGTH: 12345678\r\n\r\n",
        b"HTTP/1.1 999 \r\n!#$%&'*+-.^_`|~09az: x\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n\r\n",
        // Every name it knows without a byte-by-byte look, and near misses of them.
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\ncontent-length: 0\r\ndate: x\r\ncontent-type: y\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ntransfer-encodings: a\r\nconnections: b\r\ncontent-lengthy: 0\r\ndates: x\r\ncontent-types: y\r\ncontent-: z\r\n\r\n",
    ]
    .iter()
    .map(|h| h.to_vec())
    .collect();
    heads.push(fields(MAX_HEADERS));
    heads
}

/// Heads left to httparse (partial, unusual, or refused).
fn unusual() -> Vec<Vec<u8>> {
    let mut heads: Vec<Vec<u8>> = [
        &b"HTTP/1.1 200 OK"[..],
        b"HTTP/1.1 200\r\n\r\n",
        b"\r\nHTTP/1.1 200 OK\r\n\r\n",
        b"HTTP/1.1 200 OK\nContent-Length: 1\n\n",
    ]
    .iter()
    .map(|h| h.to_vec())
    .collect();
    heads.push(fields(MAX_HEADERS + 1));
    heads
}

/// A head of `n` header fields.
fn fields(n: usize) -> Vec<u8> {
    let mut h = b"HTTP/1.1 200 OK\r\n".to_vec();
    for i in 0..n {
        h.extend_from_slice(format!("x-{i}: {i}\r\n").as_bytes());
    }
    h.extend_from_slice(b"\r\n");
    h
}

#[test]
fn the_usual_heads_are_read_fast() {
    for h in usual() {
        assert!(agrees(&h), "{:?}", String::from_utf8_lossy(&h));
    }
    let h = fast(SERVER).expect("bench-server's head");
    assert_eq!(
        (h.0, h.1, h.2, h.3),
        (
            1,
            200,
            SERVER.len() - 3,
            vec![
                (
                    b"content-type".to_vec(),
                    b"text/plain; charset=utf-8".to_vec()
                ),
                (b"content-length".to_vec(), b"3".to_vec()),
                (b"date".to_vec(), b"Thu, 03 Dec 2026 16:02:05 GMT".to_vec())
            ]
        )
    );
    for h in unusual() {
        assert!(fast(&h).is_none(), "{:?}", String::from_utf8_lossy(&h));
    }
}

#[test]
fn whenever_it_answers_httparse_answers_the_same() {
    const EDGES: &[u8] = &[
        0x00, 0x08, b'\t', b'\n', 0x0B, b'\r', 0x1F, b' ', b'!', b'"', b'(', b',', b'-', b'.',
        b'/', b'0', b'9', b':', b'@', b'A', b'Z', b'[', b'_', b'`', b'a', b'z', b'{', b'~', 0x7F,
        0x80, 0xAD, 0xC1, 0xE1, 0xFF,
    ];
    let mut answered = 0;
    for head in usual().into_iter().chain(unusual()) {
        for cut in 0..=head.len() {
            answered += usize::from(agrees(&head[..cut]));
        }
        for at in 0..head.len() {
            for &b in EDGES {
                let mut replaced = head.clone();
                replaced[at] = b;
                answered += usize::from(agrees(&replaced));
                let mut inserted = head.clone();
                inserted.insert(at, b);
                answered += usize::from(agrees(&inserted));
            }
        }
    }
    // Most mutations keep a head httparse accepts (a value byte for another): the fast reader must have
    // answered for many of them, or this compared nothing.
    assert!(answered > 10_000, "{answered}");
}
