//! `--http2` on `http://` speaks HTTP/2 with prior knowledge (h2c): no negotiation, so a server that only
//! speaks HTTP/1.1 would fail every call with an I/O error (thousands of "broken pipe"s, no figure). One
//! connection made before the load checks that the server answers the client preface with HTTP/2's server
//! preface (a SETTINGS frame, RFC 9113 §3.4); if it does not, the run fails to start, saying what came back.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// What the run fails with.
pub(crate) const NOT_HTTP2: &str = "the server did not answer HTTP/2 (prior knowledge, h2c)";

/// The client connection preface and an empty SETTINGS frame (length 0, type 4, no flags, stream 0).
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";
/// GOAWAY (type 7) on stream 0: last stream 0, NO_ERROR; the check leaves as an HTTP/2 client should.
const GOAWAY: &[u8] = b"\x00\x00\x08\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00";
/// A frame header's length.
const FRAME_HEAD: usize = 9;
/// How much of a non-HTTP/2 answer is read to quote its first line.
const QUOTE_MAX: usize = 128;

/// Checks that the server at `addr` answers HTTP/2 by prior knowledge. A server that cannot be reached
/// passes: the run then counts connect errors and retries, as it does for HTTP/1.1.
pub async fn check(addr: SocketAddr, timeout: Duration) -> anyhow::Result<()> {
    let Ok(Ok(mut stream)) = tokio::time::timeout(timeout, TcpStream::connect(addr)).await else {
        return Ok(());
    };
    let answer = match tokio::time::timeout(timeout, exchange(&mut stream)).await {
        Ok(answer) => answer,
        Err(_) => Answer::Silent(timeout),
    };
    match answer {
        Answer::Http2 => {
            let _ = stream.write_all(GOAWAY).await;
            Ok(())
        }
        other => anyhow::bail!(
            "{NOT_HTTP2}: {}; without --http2 it is spoken to in HTTP/1.1 (https:// negotiates \
             HTTP/2 by ALPN)",
            other.describe()
        ),
    }
}

/// What the server did with the client preface.
#[derive(Debug, PartialEq)]
enum Answer {
    Http2,
    /// Bytes that are not a SETTINGS frame (the first line of an HTTP/1.x answer, or a frame head).
    Other(Vec<u8>),
    Closed,
    Failed(String),
    Silent(Duration),
}

impl Answer {
    fn describe(&self) -> String {
        match self {
            Answer::Http2 => "it did".to_owned(),
            Answer::Other(bytes) => {
                let line = bytes
                    .split(|&b| b == b'\r' || b == b'\n')
                    .next()
                    .unwrap_or(bytes);
                format!("it answered \"{}\"", line.escape_ascii())
            }
            Answer::Closed => "it closed the connection without answering".to_owned(),
            Answer::Failed(e) => format!("the connection failed: {e}"),
            Answer::Silent(t) => format!(
                "no answer within {} (--connect-timeout)",
                humantime::format_duration(*t)
            ),
        }
    }
}

async fn exchange(stream: &mut TcpStream) -> Answer {
    if let Err(e) = stream.write_all(PREFACE).await {
        return Answer::Failed(e.to_string());
    }
    let mut got = Vec::with_capacity(QUOTE_MAX);
    let mut chunk = [0u8; QUOTE_MAX];
    loop {
        if let Some(answer) = judge(&got) {
            return answer;
        }
        match stream.read(&mut chunk[..QUOTE_MAX - got.len()]).await {
            Ok(0) if got.is_empty() => return Answer::Closed,
            Ok(0) => return Answer::Other(got),
            Ok(n) => got.extend_from_slice(&chunk[..n]),
            Err(e) if got.is_empty() => return Answer::Failed(e.to_string()),
            Err(_) => return Answer::Other(got),
        }
    }
}

/// The verdict on the first bytes the server sent, or `None` while more are needed: HTTP/2 if they begin
/// with a SETTINGS frame head on stream 0; a text answer (HTTP/1.x's) is read up to its first line end.
fn judge(got: &[u8]) -> Option<Answer> {
    if got.len() < FRAME_HEAD {
        return None;
    }
    let text = got[..FRAME_HEAD]
        .iter()
        .all(|&b| b.is_ascii_graphic() || b == b' ');
    let settings = got[3] == 4 && got[5..9] == [0, 0, 0, 0] && got[4] & !1 == 0;
    if settings && !text {
        return Some(Answer::Http2);
    }
    let line_ended = got.contains(&b'\n');
    if !text || line_ended || got.len() >= QUOTE_MAX {
        let keep = if text { got.len() } else { FRAME_HEAD };
        return Some(Answer::Other(got[..keep].to_vec()));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_settings_frame_is_http2() {
        assert_eq!(judge(b"\x00\x00\x00\x04"), None);
        assert_eq!(
            judge(b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x03"),
            Some(Answer::Http2)
        );
        assert_eq!(
            judge(b"\x00\x00\x00\x04\x01\x00\x00\x00\x00"),
            Some(Answer::Http2)
        );
        // A GOAWAY first, or a SETTINGS frame on a stream, is not the server preface.
        let goaway = b"\x00\x00\x08\x07\x00\x00\x00\x00\x00";
        assert_eq!(judge(goaway), Some(Answer::Other(goaway.to_vec())));
        assert!(matches!(
            judge(b"\x00\x00\x00\x04\x00\x00\x00\x00\x01"),
            Some(Answer::Other(_))
        ));
        // Text is read to the end of its first line, and quoted.
        assert_eq!(judge(b"HTTP/1.1 400 Bad"), None);
        assert_eq!(judge(b"SSH-2.0-x"), None);
        let answer = judge(b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\n").unwrap();
        assert_eq!(
            answer.describe(),
            "it answered \"HTTP/1.1 400 Bad Request\""
        );
    }
}
