//! STOMP 1.2 frames, as a request/reply client and a consumer exchange them with a broker (Apache
//! ActiveMQ's STOMP transport; any STOMP 1.2 broker). No I/O: [`decode`] reads a frame from the front of a
//! buffer, [`Frame::encode`] appends one.
//!
//! Facts of the wire format (STOMP 1.2 specification):
//! - A frame is a command line, header lines `name:value`, an empty line, the body, and a NUL byte. Lines
//!   end with LF or CR LF. Between frames a peer may send bare end-of-lines (heart-beats).
//! - With a `content-length` header the body is exactly that many bytes (it may hold NULs); without one it
//!   runs to the first NUL.
//! - Header names and values are escaped (`\\`, `\n`, `\r`, `\c` for `:`) in every frame but CONNECT,
//!   STOMP and CONNECTED; an undefined escape is a fatal error. Of a repeated header the first counts.
//!
//! A broker is a peer that may misbehave: [`Limits`] bounds what one frame may make a reader buffer.

use std::fmt;

use bytes::Bytes;

/// A frame's command: the client's and the server's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Connect,
    Stomp,
    Send,
    Subscribe,
    Unsubscribe,
    Ack,
    Nack,
    Disconnect,
    Connected,
    Message,
    Receipt,
    Error,
}

impl Command {
    const ALL: [Command; 12] = [
        Command::Connect,
        Command::Stomp,
        Command::Send,
        Command::Subscribe,
        Command::Unsubscribe,
        Command::Ack,
        Command::Nack,
        Command::Disconnect,
        Command::Connected,
        Command::Message,
        Command::Receipt,
        Command::Error,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Command::Connect => "CONNECT",
            Command::Stomp => "STOMP",
            Command::Send => "SEND",
            Command::Subscribe => "SUBSCRIBE",
            Command::Unsubscribe => "UNSUBSCRIBE",
            Command::Ack => "ACK",
            Command::Nack => "NACK",
            Command::Disconnect => "DISCONNECT",
            Command::Connected => "CONNECTED",
            Command::Message => "MESSAGE",
            Command::Receipt => "RECEIPT",
            Command::Error => "ERROR",
        }
    }

    /// CONNECT, STOMP and CONNECTED carry their headers unescaped (STOMP 1.2, "Value Encoding").
    fn escapes(self) -> bool {
        !matches!(self, Command::Connect | Command::Stomp | Command::Connected)
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One frame. Headers keep their order; [`Frame::get`] finds the first of a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub command: Command,
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
}

impl Frame {
    pub fn new(command: Command) -> Frame {
        Frame {
            command,
            headers: Vec::new(),
            body: Bytes::new(),
        }
    }

    /// Adds a header (builder style).
    pub fn with(mut self, name: &str, value: impl Into<String>) -> Frame {
        self.headers.push((name.to_owned(), value.into()));
        self
    }

    /// Sets the body (builder style); [`Frame::encode`] writes its `content-length`.
    pub fn with_body(mut self, body: impl Into<Bytes>) -> Frame {
        self.body = body.into();
        self
    }

    /// The value of the first header called `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Appends the frame to `out`: escaped headers (where the command escapes), a `content-length` for a
    /// non-empty body unless one is set, the body and the NUL.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.command.as_str().as_bytes());
        out.push(b'\n');
        let escape = self.command.escapes();
        let mut has_length = false;
        for (name, value) in &self.headers {
            has_length |= name == "content-length";
            put_escaped(out, name, escape);
            out.push(b':');
            put_escaped(out, value, escape);
            out.push(b'\n');
        }
        if !has_length && !self.body.is_empty() {
            out.extend_from_slice(b"content-length:");
            out.extend_from_slice(itoa::Buffer::new().format(self.body.len()).as_bytes());
            out.push(b'\n');
        }
        out.push(b'\n');
        out.extend_from_slice(&self.body);
        out.push(0);
    }
}

fn put_escaped(out: &mut Vec<u8>, s: &str, escape: bool) {
    if !escape || !s.bytes().any(|b| matches!(b, b'\\' | b'\n' | b'\r' | b':')) {
        out.extend_from_slice(s.as_bytes());
        return;
    }
    for b in s.bytes() {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b':' => out.extend_from_slice(b"\\c"),
            _ => out.push(b),
        }
    }
}

/// What one frame may make a reader hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most header lines.
    pub max_headers: usize,
    /// Longest command and header section, from the command to the empty line, in bytes.
    pub max_head: usize,
    /// Longest body, in bytes.
    pub max_body: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_headers: 64,
            max_head: 16 * 1024,
            max_body: 1024 * 1024,
        }
    }
}

/// Why bytes are not a STOMP frame (the connection cannot go on after any of these).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StompError {
    #[error("unknown STOMP command {0:?}")]
    UnknownCommand(String),
    #[error("a STOMP header line without ':' ({0:?})")]
    MissingColon(String),
    #[error("an undefined escape \\{0} in a STOMP header")]
    BadEscape(char),
    #[error("a STOMP header is not UTF-8")]
    NotUtf8,
    #[error("content-length {0:?} is not a number")]
    BadLength(String),
    #[error("the STOMP frame's body does not end with NUL")]
    NoNul,
    #[error("a STOMP frame past the limit: {0}")]
    TooLarge(&'static str),
}

/// Reads the frame at the front of `buf`, after any heart-beat end-of-lines. `Ok(None)`: not all of it has
/// arrived yet (the limits are checked on what has). `Ok(Some((frame, n)))`: `n` bytes were used.
pub fn decode(buf: &[u8], limits: &Limits) -> Result<Option<(Frame, usize)>, StompError> {
    let start = buf
        .iter()
        .position(|&b| b != b'\n' && b != b'\r')
        .unwrap_or(buf.len());
    let rest = &buf[start..];
    let Some(head_len) = head_end(rest) else {
        if rest.len() > limits.max_head {
            return Err(StompError::TooLarge("header section"));
        }
        return Ok(None);
    };
    if head_len.0 > limits.max_head {
        return Err(StompError::TooLarge("header section"));
    }
    let (command, headers) = parse_head(&rest[..head_len.0], limits)?;
    let body_at = head_len.1;
    let length = match headers.iter().find(|(n, _)| n == "content-length") {
        Some((_, v)) => Some(
            v.parse::<usize>()
                .map_err(|_| StompError::BadLength(v.clone()))?,
        ),
        None => None,
    };
    let after = &rest[body_at..];
    let body_len = match length {
        Some(n) if n > limits.max_body => return Err(StompError::TooLarge("body")),
        Some(n) if after.len() <= n => return Ok(None),
        Some(n) if after[n] != 0 => return Err(StompError::NoNul),
        Some(n) => n,
        None => match memchr::memchr(0, after) {
            Some(n) if n > limits.max_body => return Err(StompError::TooLarge("body")),
            Some(n) => n,
            None if after.len() > limits.max_body => return Err(StompError::TooLarge("body")),
            None => return Ok(None),
        },
    };
    let frame = Frame {
        command,
        headers,
        body: Bytes::copy_from_slice(&after[..body_len]),
    };
    Ok(Some((frame, start + body_at + body_len + 1)))
}

/// Where the header section ends: (its length without the blank line, where the body starts).
fn head_end(buf: &[u8]) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(i) = memchr::memchr(b'\n', &buf[from..]) {
        let nl = from + i;
        let next = &buf[nl + 1..];
        if next.first() == Some(&b'\n') {
            return Some((nl, nl + 2));
        }
        if next.starts_with(b"\r\n") {
            return Some((nl, nl + 3));
        }
        if next.is_empty() || next == b"\r" {
            return None;
        }
        from = nl + 1;
    }
    None
}

fn parse_head(
    head: &[u8],
    limits: &Limits,
) -> Result<(Command, Vec<(String, String)>), StompError> {
    let text = std::str::from_utf8(head).map_err(|_| StompError::NotUtf8)?;
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let name = lines.next().unwrap_or_default();
    let command = Command::ALL
        .into_iter()
        .find(|c| c.as_str() == name)
        .ok_or_else(|| StompError::UnknownCommand(name.chars().take(32).collect()))?;
    let mut headers = Vec::new();
    for line in lines {
        if headers.len() == limits.max_headers {
            return Err(StompError::TooLarge("header count"));
        }
        let (n, v) = line
            .split_once(':')
            .ok_or_else(|| StompError::MissingColon(line.chars().take(32).collect()))?;
        let (n, v) = if command.escapes() {
            (unescape(n)?, unescape(v)?)
        } else {
            (n.to_owned(), v.to_owned())
        };
        headers.push((n, v));
    }
    Ok((command, headers))
}

fn unescape(s: &str) -> Result<String, StompError> {
    if !s.contains('\\') {
        return Ok(s.to_owned());
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('c') => out.push(':'),
            Some(other) => return Err(StompError::BadEscape(other)),
            None => return Err(StompError::BadEscape(' ')),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(bytes: &[u8]) -> Result<Option<(Frame, usize)>, StompError> {
        decode(bytes, &Limits::default())
    }

    #[test]
    fn a_frame_round_trips_with_escapes_and_nuls_in_the_body() {
        let f = Frame::new(Command::Send)
            .with("destination", "/queue/ossj.orders")
            .with("reply-to", "/queue/a:b\\c\nd")
            .with_body(&b"<x>\0</x>"[..]);
        let mut out = Vec::new();
        f.encode(&mut out);
        assert!(out.starts_with(
            b"SEND\ndestination:/queue/ossj.orders\nreply-to:/queue/a\\cb\\\\c\\nd\n"
        ));
        let (back, n) = one(&out).unwrap().unwrap();
        assert_eq!(n, out.len());
        assert_eq!(back.get("reply-to"), Some("/queue/a:b\\c\nd"));
        assert_eq!(back.get("content-length"), Some("8"));
        assert_eq!(&back.body[..], b"<x>\0</x>");
    }

    #[test]
    fn every_prefix_is_incomplete_and_heartbeats_are_skipped() {
        let mut out = b"\n\r\n".to_vec();
        Frame::new(Command::Message)
            .with("correlation-id", "7")
            .with_body("ok")
            .encode(&mut out);
        for i in 0..out.len() {
            assert_eq!(one(&out[..i]).unwrap(), None, "prefix {i}");
        }
        let (f, n) = one(&out).unwrap().unwrap();
        assert_eq!((f.command, n), (Command::Message, out.len()));
        assert_eq!(f.get("correlation-id"), Some("7"));
    }

    #[test]
    fn crlf_lines_a_body_to_the_nul_and_connect_headers_unescaped() {
        let wire = b"CONNECTED\r\nversion:1.2\r\nserver:ActiveMQ/5.17.2\r\nsession:ID\\c1\r\n\r\n\0MESSAGE\nx:1\n\nhello\0";
        let (f, n) = one(wire).unwrap().unwrap();
        assert_eq!(f.command, Command::Connected);
        assert_eq!(f.get("session"), Some("ID\\c1"));
        let (m, _) = one(&wire[n..]).unwrap().unwrap();
        assert_eq!(&m.body[..], b"hello");
        assert_eq!(m.get("missing"), None);
    }

    #[test]
    fn first_of_a_repeated_header_counts() {
        let (f, _) = one(b"MESSAGE\nfoo:World\nfoo:Hello\n\n\0")
            .unwrap()
            .unwrap();
        assert_eq!(f.get("foo"), Some("World"));
    }

    #[test]
    fn malformed_frames_are_refused_by_kind() {
        let cases: [(&[u8], StompError); 6] = [
            (b"HELLO\n\n\0", StompError::UnknownCommand("HELLO".into())),
            (
                b"SEND\nnocolon\n\n\0",
                StompError::MissingColon("nocolon".into()),
            ),
            (b"SEND\na:\\t\n\n\0", StompError::BadEscape('t')),
            (
                b"SEND\ncontent-length:x\n\n\0",
                StompError::BadLength("x".into()),
            ),
            (b"SEND\ncontent-length:1\n\nab\0", StompError::NoNul),
            (b"SEND\na:\xff\n\n\0", StompError::NotUtf8),
        ];
        for (wire, want) in cases {
            assert_eq!(one(wire), Err(want));
        }
    }

    #[test]
    fn limits_bound_what_a_peer_makes_us_hold() {
        let small = Limits {
            max_headers: 2,
            max_head: 64,
            max_body: 8,
        };
        let long_head = [b"SEND\na:".as_slice(), &[b'x'; 80]].concat();
        assert_eq!(
            decode(&long_head, &small),
            Err(StompError::TooLarge("header section"))
        );
        assert_eq!(
            decode(b"SEND\na:1\nb:2\nc:3\n\n\0", &small),
            Err(StompError::TooLarge("header count"))
        );
        assert_eq!(
            decode(b"SEND\ncontent-length:9\n\n", &small),
            Err(StompError::TooLarge("body"))
        );
        assert_eq!(
            decode(b"SEND\n\n123456789", &small),
            Err(StompError::TooLarge("body"))
        );
        assert!(decode(b"SEND\n\n12345678\0", &small).unwrap().is_some());
    }
}
