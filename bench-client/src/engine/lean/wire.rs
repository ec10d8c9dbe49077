//! The lean path's HTTP/1.1 wire, without I/O: a request encoded once, and a response read as its bytes
//! arrive — its head in the usual form by `head.rs`, any other by `httparse`; its body framed by
//! Content-Length, chunked (decoded in place) or the peer's close — with every part bounded, so that a
//! hostile server cannot make the client buffer without limit.

use std::mem::MaybeUninit;
use std::ops::Range;

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, TRANSFER_ENCODING};
use http::{HeaderMap, Method, Version};

use super::head;

/// The most a response head (with any informational heads before it) may take.
pub const MAX_HEAD: usize = 64 * 1024;
/// The most header fields a response head may have.
pub(crate) const MAX_HEADERS: usize = 64;
/// The largest response body accepted; a larger one is an error (the biggest this suite asks for is a
/// few MB).
pub const MAX_BODY: usize = 64 << 20;
/// The longest chunk-size line (with extensions) accepted.
const MAX_CHUNK_LINE: usize = 1024;

/// Why a response could not be read.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("connection closed before the response was complete")]
    Closed,
    #[error("invalid response head: {0}")]
    Head(httparse::Error),
    #[error("invalid response status {0}")]
    Status(u16),
    #[error("response head larger than {MAX_HEAD} bytes")]
    HeadTooLarge,
    #[error("response body larger than {MAX_BODY} bytes")]
    BodyTooLarge,
    #[error("invalid Content-Length")]
    ContentLength,
    #[error("invalid chunked body: {0}")]
    Chunked(&'static str),
    #[error("unexpected 101 Switching Protocols")]
    Upgrade,
}

/// A request as it goes on the wire, encoded once per connection.
#[derive(Debug, Clone)]
pub struct Encoded {
    pub bytes: Bytes,
    /// A HEAD request: its response has no body, whatever its head says.
    pub head: bool,
}

impl Encoded {
    /// The request line, the headers, a Content-Length (as hyper would add it) and the body; `None` for a
    /// request the lean path does not send (not HTTP/1.1, or with its own Transfer-Encoding).
    pub fn new(
        method: &Method,
        path: &str,
        version: Version,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Option<Encoded> {
        if version != Version::HTTP_11 || headers.contains_key(TRANSFER_ENCODING) {
            return None;
        }
        let mut out = Vec::with_capacity(128 + body.len());
        out.extend_from_slice(method.as_str().as_bytes());
        out.push(b' ');
        out.extend_from_slice(if path.is_empty() {
            b"/"
        } else {
            path.as_bytes()
        });
        out.extend_from_slice(b" HTTP/1.1\r\n");
        for (name, value) in headers {
            out.extend_from_slice(name.as_str().as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        let bodiless = matches!(*method, Method::GET | Method::HEAD) && body.is_empty();
        if !bodiless && !headers.contains_key(CONTENT_LENGTH) {
            out.extend_from_slice(b"content-length: ");
            out.extend_from_slice(body.len().to_string().as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(body);
        Some(Encoded {
            bytes: out.into(),
            head: *method == Method::HEAD,
        })
    }
}

/// A complete response: where its body lies in the buffer, and whether the connection may carry another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub body: Range<usize>,
    pub reusable: bool,
}

/// Reads one response from a buffer its bytes are appended to (see [`Reader::advance`]).
#[derive(Debug)]
pub struct Reader {
    state: State,
    /// Where the current head starts (after any informational responses).
    start: usize,
    head_request: bool,
    status: u16,
    reusable: bool,
    body_start: usize,
}

#[derive(Debug)]
enum State {
    Head,
    Length { end: usize },
    Chunked(Chunked),
    Close,
}

impl Reader {
    pub fn new(head_request: bool) -> Reader {
        Reader {
            state: State::Head,
            start: 0,
            head_request,
            status: 0,
            reusable: false,
            body_start: 0,
        }
    }

    /// How many more bytes the response is known to need (0: unknown), to size the next read.
    #[inline]
    pub fn needed(&self, have: usize) -> usize {
        match self.state {
            State::Length { end } => end.saturating_sub(have),
            _ => 0,
        }
    }

    /// Takes in what `buf` holds now (everything received for this response so far; a chunked body is
    /// decoded in place, so `buf` may shrink). `Some` once the response is complete.
    pub fn advance(&mut self, buf: &mut Vec<u8>) -> Result<Option<Response>, WireError> {
        if let State::Head = self.state {
            if !self.head(buf)? {
                return Ok(None);
            }
        }
        let done = match &mut self.state {
            State::Head => unreachable!("the head was read above"),
            State::Length { end } => {
                let end = *end;
                if buf.len() < end {
                    return Ok(None);
                }
                // Bytes after the response were never asked for (no pipelining): the connection is suspect.
                self.reusable &= buf.len() == end;
                end
            }
            State::Chunked(c) => match c.decode(buf)? {
                Some(end) => {
                    self.reusable &= c.read == buf.len();
                    end
                }
                None => return Ok(None),
            },
            State::Close => {
                if buf.len() - self.body_start > MAX_BODY {
                    return Err(WireError::BodyTooLarge);
                }
                return Ok(None);
            }
        };
        Ok(Some(self.response(done)))
    }

    /// The peer closed the connection: the end of a close-delimited body, or a truncated response.
    pub(crate) fn eof(&mut self, buf: &[u8]) -> Result<Response, WireError> {
        match self.state {
            State::Close => Ok(self.response(buf.len())),
            _ => Err(WireError::Closed),
        }
    }

    fn response(&self, end: usize) -> Response {
        Response {
            status: self.status,
            body: self.body_start..end,
            reusable: self.reusable,
        }
    }

    /// Parses the head if it is all there (skipping informational responses); false if it is not yet.
    fn head(&mut self, buf: &[u8]) -> Result<bool, WireError> {
        loop {
            let (version, status, n, framing) = match read_head(&buf[self.start..])? {
                Some(head) => head,
                None if buf.len() > MAX_HEAD => return Err(WireError::HeadTooLarge),
                None => return Ok(false),
            };
            if status < 200 {
                self.start += n;
                continue;
            }
            let Framing {
                length,
                te,
                chunked,
                close,
                keep_alive,
                ..
            } = framing;
            self.status = status;
            self.body_start = self.start + n;
            self.reusable = !close && (version == 1 || keep_alive);
            self.state = if self.head_request || status == 204 || status == 304 {
                State::Length {
                    end: self.body_start,
                }
            } else if te {
                // A Content-Length beside a Transfer-Encoding is a smuggling attempt or a broken peer:
                // the body is framed by the coding, and the connection not trusted again.
                self.reusable &= chunked && length.is_none();
                if chunked {
                    State::Chunked(Chunked::new(self.body_start))
                } else {
                    State::Close
                }
            } else if let Some(len) = length {
                if len > MAX_BODY {
                    return Err(WireError::BodyTooLarge);
                }
                State::Length {
                    end: self.body_start + len,
                }
            } else {
                self.reusable = false;
                State::Close
            };
            return Ok(true);
        }
    }
}

/// A complete head: its minor version, status, length and framing (default for an informational one).
type ReadHead = (u8, u16, usize, Framing);

/// The head at the start of `buf`, if it is all there: the usual form read by [`head::parse`], any other
/// by httparse. The status is checked: three digits, not 101.
#[inline]
fn read_head(buf: &[u8]) -> Result<Option<ReadHead>, WireError> {
    let mut framing = Framing::default();
    let Some(line) = head::parse(buf, MAX_HEADERS, |name, value| framing.add(name, value)) else {
        return read_head_httparse(buf);
    };
    let framing = if final_status(line.code)? {
        framing.checked()?
    } else {
        Framing::default()
    };
    Ok(Some((line.version, line.code, line.len, framing)))
}

/// [`read_head`] for a head the fast path leaves: partial, unusual or malformed.
#[cold]
#[inline(never)]
fn read_head_httparse(buf: &[u8]) -> Result<Option<ReadHead>, WireError> {
    httparse_head(buf, |parsed, r| {
        let n = match parsed.map_err(WireError::Head)? {
            httparse::Status::Complete(n) => n,
            httparse::Status::Partial => return Ok(None),
        };
        let status = r.code.unwrap_or(0);
        let framing = if final_status(status)? {
            let mut framing = Framing::default();
            for h in r.headers.iter() {
                framing.add(h.name.as_bytes(), h.value);
            }
            framing.checked()?
        } else {
            Framing::default()
        };
        Ok(Some((r.version.unwrap_or(0), status, n, framing)))
    })
}

/// httparse on the head at the start of `buf`, as the lean path calls it: `read` gets the outcome and the
/// response it filled in.
pub(super) fn httparse_head<T>(
    buf: &[u8],
    read: impl FnOnce(httparse::Result<usize>, &httparse::Response<'_, '_>) -> T,
) -> T {
    // Uninitialised: zeroing 64 headers cost more than parsing the three a server sends.
    let mut headers = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut r = httparse::Response::new(&mut []);
    let parsed = httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut r,
        buf,
        &mut headers,
    );
    read(parsed, &r)
}

/// Whether `status` ends the response (not informational); an error if it is not a status this client takes.
#[inline]
fn final_status(status: u16) -> Result<bool, WireError> {
    if !(100..=999).contains(&status) {
        return Err(WireError::Status(status));
    }
    if status == 101 {
        return Err(WireError::Upgrade);
    }
    Ok(status >= 200)
}

/// What a final head's headers say of the body's framing and the connection.
#[derive(Debug, Default)]
struct Framing {
    length: Option<usize>,
    /// A Content-Length that is not a length, or two that differ: the head is refused once read.
    bad_length: bool,
    te: bool,
    chunked: bool,
    close: bool,
    keep_alive: bool,
}

impl Framing {
    /// Takes in one header (name, value); other names than the framing headers' are passed over, most of
    /// them by their length alone, here, without a call.
    #[inline(always)]
    fn add(&mut self, name: &[u8], value: &[u8]) {
        if matches!(name.len(), 10 | 14 | 17) {
            self.add_named(name, value);
        }
    }

    /// [`Framing::add`] for a name as long as a framing header's. A name is all tchar (both readers check),
    /// so folding case by setting 0x20 can only turn a byte into one of the lowercase names' if it was that
    /// letter in upper case.
    #[inline(never)]
    fn add_named(&mut self, name: &[u8], value: &[u8]) {
        if is_name(name, b"content-length") {
            match parse_length(value) {
                Ok(n) if self.length.is_none_or(|l| l == n) => self.length = Some(n),
                _ => self.bad_length = true,
            }
        } else if is_name(name, b"transfer-encoding") {
            self.te = true;
            // Chunked counts only as the last coding; then the body ends at the peer's close.
            self.chunked = value
                .rsplit(|&b| b == b',')
                .next()
                .is_some_and(|last| last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        } else if is_name(name, b"connection") {
            for token in value.split(|&b| b == b',') {
                let t = token.trim_ascii();
                self.close |= t.eq_ignore_ascii_case(b"close");
                self.keep_alive |= t.eq_ignore_ascii_case(b"keep-alive");
            }
        }
    }

    /// The framing, or the error a Content-Length made.
    fn checked(self) -> Result<Framing, WireError> {
        if self.bad_length {
            return Err(WireError::ContentLength);
        }
        Ok(self)
    }
}

/// Whether the tchar `name` is `lower` (lowercase letters and '-', at least 8 bytes) in any case: compared
/// eight bytes at a time, the last eight overlapping.
#[inline]
fn is_name(name: &[u8], lower: &[u8]) -> bool {
    let fold = |s: &[u8], at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[at..at + 8]);
        u64::from_le_bytes(w) | u64::from_le_bytes([0x20; 8])
    };
    if name.len() != lower.len() {
        return false;
    }
    let last = lower.len() - 8;
    (0..last)
        .step_by(8)
        .all(|at| fold(name, at) == fold(lower, at))
        && fold(name, last) == fold(lower, last)
}

fn parse_length(v: &[u8]) -> Result<usize, WireError> {
    let v = v.trim_ascii();
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return Err(WireError::ContentLength);
    }
    Ok(v.iter()
        .fold(0usize, |n, &d| n * 10 + usize::from(d - b'0')))
}

/// A chunked body being decoded in place: the decoded body is `buf[start..write]`, the bytes not yet
/// decoded `buf[read..]`; after each step the undecoded tail is moved down to `write`, so the buffer never
/// holds more than the body and one read.
#[derive(Debug)]
struct Chunked {
    write: usize,
    read: usize,
    body: usize,
    trailer: usize,
    state: ChunkState,
}

#[derive(Debug, Clone, Copy)]
enum ChunkState {
    Size,
    Data(usize),
    DataEnd,
    Trailer,
}

impl Chunked {
    fn new(start: usize) -> Chunked {
        Chunked {
            write: start,
            read: start,
            body: 0,
            trailer: 0,
            state: ChunkState::Size,
        }
    }

    /// Decodes what `buf` holds; `Some(end of the body)` once the last chunk and the trailer are in.
    fn decode(&mut self, buf: &mut Vec<u8>) -> Result<Option<usize>, WireError> {
        loop {
            match self.state {
                ChunkState::Size => {
                    let avail = &buf[self.read..];
                    let Some(nl) = memchr::memchr(b'\n', avail) else {
                        if avail.len() > MAX_CHUNK_LINE {
                            return Err(WireError::Chunked("chunk-size line too long"));
                        }
                        break;
                    };
                    if nl > MAX_CHUNK_LINE {
                        return Err(WireError::Chunked("chunk-size line too long"));
                    }
                    let size = chunk_size(&avail[..nl])?;
                    if size > MAX_BODY - self.body {
                        return Err(WireError::BodyTooLarge);
                    }
                    self.read += nl + 1;
                    self.state = if size == 0 {
                        ChunkState::Trailer
                    } else {
                        ChunkState::Data(size)
                    };
                }
                ChunkState::Data(rest) => {
                    let k = rest.min(buf.len() - self.read);
                    if k == 0 {
                        break;
                    }
                    if self.read != self.write {
                        buf.copy_within(self.read..self.read + k, self.write);
                    }
                    self.read += k;
                    self.write += k;
                    self.body += k;
                    self.state = if k == rest {
                        ChunkState::DataEnd
                    } else {
                        ChunkState::Data(rest - k)
                    };
                }
                ChunkState::DataEnd => {
                    if buf.len() - self.read < 2 {
                        break;
                    }
                    if &buf[self.read..self.read + 2] != b"\r\n" {
                        return Err(WireError::Chunked("chunk data not followed by CRLF"));
                    }
                    self.read += 2;
                    self.state = ChunkState::Size;
                }
                ChunkState::Trailer => {
                    let avail = &buf[self.read..];
                    let Some(nl) = memchr::memchr(b'\n', avail) else {
                        if self.trailer + avail.len() > MAX_HEAD {
                            return Err(WireError::Chunked("trailer too large"));
                        }
                        break;
                    };
                    self.trailer += nl + 1;
                    if self.trailer > MAX_HEAD {
                        return Err(WireError::Chunked("trailer too large"));
                    }
                    let empty = matches!(&avail[..nl], b"" | b"\r");
                    self.read += nl + 1;
                    if empty {
                        return Ok(Some(self.write));
                    }
                }
            }
        }
        if self.read > self.write {
            let len = buf.len();
            buf.copy_within(self.read..len, self.write);
            buf.truncate(self.write + (len - self.read));
            self.read = self.write;
        }
        Ok(None)
    }
}

/// The size of a chunk-size line (without its `\n`): hex digits, then optional extensions.
fn chunk_size(line: &[u8]) -> Result<usize, WireError> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    let rest = &line[digits..];
    if digits == 0 || digits > 15 {
        return Err(WireError::Chunked("invalid chunk size"));
    }
    if !(rest.is_empty() || matches!(rest.trim_ascii_start().first(), Some(b';'))) {
        return Err(WireError::Chunked("invalid chunk size"));
    }
    Ok(line[..digits].iter().fold(0usize, |n, &d| {
        n * 16 + (d as char).to_digit(16).unwrap_or(0) as usize
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `wire` in pieces of `step` bytes, as reads would; the response and its body.
    fn read(wire: &[u8], step: usize) -> Result<(Response, Vec<u8>), WireError> {
        let mut r = Reader::new(false);
        let mut buf = Vec::new();
        for piece in wire.chunks(step) {
            buf.extend_from_slice(piece);
            if let Some(resp) = r.advance(&mut buf)? {
                let body = buf[resp.body.clone()].to_vec();
                return Ok((resp, body));
            }
        }
        let resp = r.eof(&buf)?;
        let body = buf[resp.body.clone()].to_vec();
        Ok((resp, body))
    }

    fn every_step(wire: &[u8]) -> (Response, Vec<u8>) {
        let whole = read(wire, wire.len().max(1)).expect("reads whole");
        for step in 1..wire.len().min(64) {
            let (r, b) = read(wire, step).expect("reads in pieces");
            assert_eq!(
                (&r.status, &b, r.reusable),
                (&whole.0.status, &whole.1, whole.0.reusable),
                "step {step}"
            );
        }
        whole
    }

    #[test]
    fn content_length_keep_alive() {
        let (r, body) = every_step(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
        assert_eq!((r.status, r.reusable), (200, true));
        assert_eq!(body, b"hello");
    }

    #[test]
    fn chunked_with_extensions_and_trailer() {
        let wire = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n7\r\n, world\r\n0\r\nX-T: 1\r\n\r\n";
        let (r, body) = every_step(wire);
        assert_eq!((r.status, r.reusable), (200, true));
        assert_eq!(body, b"hello, world");
    }

    #[test]
    fn informational_heads_are_skipped_and_close_is_honoured() {
        let wire = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 500 Oops\r\nconnection: close\r\ncontent-length: 2\r\n\r\nno";
        let (r, body) = every_step(wire);
        assert_eq!(
            (r.status, r.reusable, body.as_slice()),
            (500, false, &b"no"[..])
        );
    }

    #[test]
    fn close_delimited_and_http10() {
        let (r, body) = every_step(b"HTTP/1.0 200 OK\r\n\r\nuntil the end");
        assert_eq!(
            (r.reusable, body.as_slice()),
            (false, &b"until the end"[..])
        );
        let (r, _) =
            every_step(b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n");
        assert!(r.reusable);
        let (r, body) = every_step(b"HTTP/1.1 204 No Content\r\n\r\n");
        assert_eq!((r.status, r.reusable, body.len()), (204, true, 0));
    }

    #[test]
    fn extra_bytes_and_smuggling_make_the_connection_unusable() {
        let (r, body) = read(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA", 100).unwrap();
        assert_eq!((r.reusable, body.as_slice()), (false, &b"ok"[..]));
        let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n";
        let (r, body) = read(wire, 100).unwrap();
        assert_eq!((r.reusable, body.as_slice()), (false, &b"ok"[..]));
    }

    #[test]
    fn hostile_responses_are_errors_not_unbounded_buffers() {
        let err = |wire: &[u8]| read(wire, 7).expect_err("must fail");
        assert!(matches!(
            err(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel"),
            WireError::Closed
        ));
        assert!(matches!(err(b"garbage\r\n\r\n"), WireError::Head(_)));
        assert!(matches!(
            err(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
            WireError::ContentLength
        ));
        assert!(matches!(
            err(b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"),
            WireError::ContentLength
        ));
        assert!(matches!(
            err(b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n"),
            WireError::BodyTooLarge
        ));
        assert!(matches!(
            err(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffff\r\n"),
            WireError::BodyTooLarge
        ));
        assert!(matches!(
            err(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
            WireError::Chunked(_)
        ));
        assert!(matches!(
            err(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX"),
            WireError::Chunked(_)
        ));
        assert!(matches!(
            err(b"HTTP/1.1 101 Switching Protocols\r\n\r\n"),
            WireError::Upgrade
        ));
        // An endless head, an endless chunk-size line, an endless trailer, an endless close-delimited body.
        let mut head = b"HTTP/1.1 200 OK\r\n".to_vec();
        head.resize(MAX_HEAD + 10, b'a');
        assert!(matches!(
            read(&head, 4096).unwrap_err(),
            WireError::HeadTooLarge
        ));
        let mut line = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;".to_vec();
        line.resize(line.len() + 2 * MAX_CHUNK_LINE, b'x');
        assert!(matches!(
            read(&line, 512).unwrap_err(),
            WireError::Chunked(_)
        ));
        let mut trailer = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n".to_vec();
        trailer.resize(trailer.len() + MAX_HEAD + 10, b'x');
        assert!(matches!(
            read(&trailer, 4096).unwrap_err(),
            WireError::Chunked(_)
        ));
        let mut r = Reader::new(false);
        let mut buf = b"HTTP/1.0 200 OK\r\n\r\n".to_vec();
        assert!(r.advance(&mut buf).unwrap().is_none());
        buf.resize(buf.len() + MAX_BODY + 1, b'x');
        assert!(matches!(
            r.advance(&mut buf).unwrap_err(),
            WireError::BodyTooLarge
        ));
    }

    #[test]
    fn tiny_chunks_do_not_grow_the_buffer() {
        let mut wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        for _ in 0..10_000 {
            wire.extend_from_slice(b"1\r\nx\r\n");
        }
        wire.extend_from_slice(b"0\r\n\r\n");
        let mut r = Reader::new(false);
        let mut buf = Vec::new();
        let mut most = 0;
        for piece in wire.chunks(600) {
            buf.extend_from_slice(piece);
            let done = r.advance(&mut buf).unwrap();
            most = most.max(buf.len());
            if let Some(resp) = done {
                assert_eq!(resp.body.len(), 10_000);
                assert!(buf[resp.body].iter().all(|&b| b == b'x'));
            }
        }
        // The body, the head and one read: never the 60 000 bytes of framing.
        assert!(most < 10_000 + 100 + 600, "{most}");
    }

    #[test]
    fn head_requests_have_no_body() {
        let mut r = Reader::new(true);
        let mut buf = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n".to_vec();
        let resp = r
            .advance(&mut buf)
            .unwrap()
            .expect("complete without a body");
        assert!(resp.body.is_empty() && resp.reusable);
    }

    /// The word-wise name match is `eq_ignore_ascii_case` on tchar names: every byte of each framing name
    /// replaced by every tchar, in both cases.
    #[test]
    fn framing_names_match_in_any_case_and_nothing_else() {
        let tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
        for lower in [&b"content-length"[..], b"transfer-encoding", b"connection"] {
            for at in 0..lower.len() {
                for b in (0..=255u8).filter(|&b| tchar(b)) {
                    let mut name = lower.to_vec();
                    name[at] = b;
                    for n in [name.clone(), name.to_ascii_uppercase()] {
                        assert_eq!(
                            is_name(&n, lower),
                            n.eq_ignore_ascii_case(lower),
                            "{:?}",
                            String::from_utf8_lossy(&n)
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn requests_are_encoded_as_hyper_would() {
        let mut h = HeaderMap::new();
        h.insert(http::header::HOST, "a:1".parse().unwrap());
        let get = Encoded::new(&Method::GET, "/health", Version::HTTP_11, &h, b"").unwrap();
        assert_eq!(&get.bytes[..], b"GET /health HTTP/1.1\r\nhost: a:1\r\n\r\n");
        let post = Encoded::new(&Method::POST, "/x", Version::HTTP_11, &h, b"abc").unwrap();
        assert_eq!(
            &post.bytes[..],
            b"POST /x HTTP/1.1\r\nhost: a:1\r\ncontent-length: 3\r\n\r\nabc"
        );
        assert!(Encoded::new(&Method::GET, "/", Version::HTTP_10, &h, b"").is_none());
        h.insert(TRANSFER_ENCODING, "chunked".parse().unwrap());
        assert!(Encoded::new(&Method::POST, "/", Version::HTTP_11, &h, b"x").is_none());
    }
}
