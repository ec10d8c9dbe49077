//! What a server says of itself, for provenance.json: one plain-HTTP GET (its `Server` header; for SOAP, the
//! WSDL it serves at `?wsdl`, hashed). Once per server and run, off the measured path, so a blocking std
//! socket serves; https targets are not probed (the record says so).

use std::io::{Read as _, Write as _};
use std::net::{TcpStream, ToSocketAddrs as _};
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

const TIMEOUT: Duration = Duration::from_secs(5);
/// A WSDL bigger than this is not hashed.
const MAX_BODY: usize = 8 << 20;

/// One answer to a GET.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    /// The `Server` header, if any.
    pub server: Option<String>,
    pub body: Vec<u8>,
}

/// GETs `url` (`http://host:port/path?query`) with `Connection: close`.
pub fn get(url: &str) -> Result<Answer> {
    let Some(rest) = url.strip_prefix("http://") else {
        bail!("only http:// URLs are probed");
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => match rest.find('?') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        },
    };
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_owned()
    };
    let addr = authority
        .to_socket_addrs()
        .with_context(|| format!("resolving {authority}"))?
        .next()
        .with_context(|| format!("{authority} has no address"))?;
    let mut s = TcpStream::connect_timeout(&addr, TIMEOUT)
        .with_context(|| format!("connecting to {authority}"))?;
    s.set_read_timeout(Some(TIMEOUT))?;
    s.set_write_timeout(Some(TIMEOUT))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nUser-Agent: wsbench\r\n\r\n"
    )?;
    let mut raw = Vec::new();
    s.take(MAX_BODY as u64 + 65536)
        .read_to_end(&mut raw)
        .with_context(|| format!("reading the answer of {url}"))?;
    parse(&raw).with_context(|| format!("the answer of {url}"))
}

/// An HTTP/1.1 response read to its end: status, `Server`, body (de-chunked).
fn parse(raw: &[u8]) -> Result<Answer> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .context("no end of the response head")?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .context("no HTTP status line")?;
    let mut server = None;
    let mut chunked = false;
    for line in lines {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = v.trim();
        if k.eq_ignore_ascii_case("server") {
            server = Some(v.to_owned());
        } else if k.eq_ignore_ascii_case("transfer-encoding") {
            chunked = v.eq_ignore_ascii_case("chunked");
        }
    }
    let body = &raw[end + 4..];
    let body = if chunked {
        dechunk(body)?
    } else {
        body.to_vec()
    };
    Ok(Answer {
        status,
        server,
        body,
    })
}

fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .context("a chunk size without its line end")?;
        let size_text = String::from_utf8_lossy(&rest[..eol]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .context("a bad chunk size")?;
        rest = &rest[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        if rest.len() < size + 2 {
            bail!("a chunk cut short");
        }
        out.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_plain_and_chunked_answers() {
        let a =
            parse(b"HTTP/1.1 200 OK\r\nServer: gSOAP/2.8\r\nContent-Length: 2\r\n\r\nok").unwrap();
        assert_eq!(
            (a.status, a.server.as_deref(), &a.body[..]),
            (200, Some("gSOAP/2.8"), &b"ok"[..])
        );
        let c = parse(b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n1\r\nd\r\n0\r\n\r\n")
            .unwrap();
        assert_eq!((c.status, c.server, &c.body[..]), (404, None, &b"abcd"[..]));
        assert!(parse(b"garbage").is_err());
    }
}
