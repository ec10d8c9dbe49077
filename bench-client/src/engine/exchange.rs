//! One HTTP/1.1 connection (hyper's `client::conn::http1`, no pool) and one request/response on it.
//!
//! The connection future is polled in the same task as the request (no task hop per call); the response
//! body is read into a buffer the caller reuses.

use std::io;
use std::net::SocketAddr;
use std::pin::{pin, Pin};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::http1::{self, Connection, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

type Io = TokioIo<TcpStream>;

/// A connected HTTP/1.1 client connection.
pub(super) struct Link {
    sender: SendRequest<Full<Bytes>>,
    conn: Pin<Box<Connection<Io, Full<Bytes>>>>,
    /// False once the connection future has finished (server closed, or a protocol error).
    alive: bool,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("alive", &self.alive)
            .finish_non_exhaustive()
    }
}

impl Link {
    /// Whether another request may be sent on this connection.
    pub(super) fn reusable(&self) -> bool {
        self.alive && !self.sender.is_closed()
    }
}

/// Why a call did not produce an HTTP response.
#[derive(Debug)]
pub(super) enum Broken {
    Connect(io::Error),
    Io(hyper::Error),
}

impl Broken {
    pub(super) fn is_connect(&self) -> bool {
        matches!(self, Broken::Connect(_))
    }

    /// EADDRNOTAVAIL: no local port left (connection churn piling up TIME_WAIT sockets).
    pub(super) fn is_addr_not_available(&self) -> bool {
        matches!(self, Broken::Connect(e) if e.kind() == io::ErrorKind::AddrNotAvailable)
    }
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Broken::Connect(e) => write!(f, "connect: {e}"),
            Broken::Io(e) => {
                write!(f, "{e}")?;
                let mut src = std::error::Error::source(e);
                while let Some(s) = src {
                    write!(f, ": {s}")?;
                    src = s.source();
                }
                Ok(())
            }
        }
    }
}

/// Opens a TCP connection (Nagle off) and performs the (local) HTTP/1.1 handshake.
pub(super) async fn connect(addr: SocketAddr, timeout: Duration) -> Result<Link, Broken> {
    let stream = match tokio::time::timeout(timeout, TcpStream::connect(addr)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return Err(Broken::Connect(e)),
        Err(_) => {
            return Err(Broken::Connect(io::Error::new(
                io::ErrorKind::TimedOut,
                "connect timed out",
            )))
        }
    };
    stream.set_nodelay(true).map_err(Broken::Connect)?;
    let (sender, conn) = http1::Builder::new()
        .handshake(TokioIo::new(stream))
        .await
        .map_err(|e| Broken::Connect(io::Error::other(e)))?;
    Ok(Link {
        sender,
        conn: Box::pin(conn),
        alive: true,
    })
}

/// Sends `req` and reads the whole response body into `buf` (cleared first).
pub(super) async fn exchange(
    link: &mut Link,
    req: Request<Full<Bytes>>,
    buf: &mut Vec<u8>,
) -> Result<StatusCode, Broken> {
    buf.clear();
    let Link {
        sender,
        conn,
        alive,
    } = link;
    let mut call = pin!(async {
        sender.ready().await?;
        let resp = sender.send_request(req).await?;
        let status = resp.status();
        let mut body = resp.into_body();
        while let Some(frame) = body.frame().await {
            if let Ok(data) = frame?.into_data() {
                buf.extend_from_slice(&data);
            }
        }
        Ok::<_, hyper::Error>(status)
    });
    let result = tokio::select! {
        biased;
        r = &mut call => r,
        // The connection finished first (closed by the server, or bytes that are not HTTP): let the
        // call finish from what was received, or fail.
        done = conn.as_mut(), if *alive => {
            *alive = false;
            match done {
                Ok(()) => call.await,
                Err(e) => Err(e),
            }
        }
    };
    result.map_err(Broken::Io)
}
