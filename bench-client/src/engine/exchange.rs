//! hyper's client: one connection (`client::conn::http1`, or `http2` with `--http2`; over TLS for
//! `https://`; no pool) and one request/response on it — what the lean path (`lean/`) does not serve.
//!
//! The connection future runs as a local task of its own, as hyper intends: polling it inside the call's
//! task instead was measured (callgrind, 20 000 calls) at 314 M instructions against 307 M this way. The
//! response body is read into a buffer the caller reuses.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpStream;

use super::broken::Broken;
use super::tls;
use crate::config::RunConfig;

/// How every connection of a run is made: where, whether over TLS, which HTTP version.
#[derive(Debug, Clone)]
pub(super) struct Connector {
    addr: SocketAddr,
    tls: Option<tls::Client>,
    http2: bool,
}

impl Connector {
    /// Where the connections go.
    pub(super) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Plain HTTP/1.1: what the lean path speaks.
    pub(super) fn plain_http1(&self) -> bool {
        self.tls.is_none() && !self.http2
    }

    pub(super) fn new(cfg: &RunConfig) -> anyhow::Result<Connector> {
        Ok(Connector {
            addr: cfg.target.addr,
            tls: match &cfg.target.tls {
                Some(t) => Some(tls::client(t, cfg.http2)?),
                None => None,
            },
            http2: cfg.http2,
        })
    }
}

type Body = Full<Bytes>;

enum Sender {
    H1(http1::SendRequest<Body>),
    H2(http2::SendRequest<Body>),
}

/// A connected client connection.
pub(super) struct Link {
    sender: Sender,
    /// The connection's own task (it moves the bytes; the call only waits for them).
    conn: tokio::task::JoinHandle<Result<(), hyper::Error>>,
}

impl Drop for Link {
    fn drop(&mut self) {
        self.conn.abort();
    }
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("open", &!self.conn.is_finished())
            .finish_non_exhaustive()
    }
}

impl Link {
    /// Whether another request may be sent on this connection.
    pub(super) fn reusable(&self) -> bool {
        !self.conn.is_finished()
            && match &self.sender {
                Sender::H1(s) => !s.is_closed(),
                Sender::H2(s) => !s.is_closed(),
            }
    }
}

/// Opens a TCP connection (Nagle off), starts TLS if asked, and performs the (local) HTTP handshake.
pub(super) async fn connect(c: &Connector, timeout: Duration) -> Result<Link, Broken> {
    match tokio::time::timeout(timeout, open(c)).await {
        Ok(r) => r,
        Err(_) => Err(Broken::Connect(io::Error::new(
            io::ErrorKind::TimedOut,
            "connect timed out",
        ))),
    }
}

async fn open(c: &Connector) -> Result<Link, Broken> {
    let stream = TcpStream::connect(c.addr).await.map_err(Broken::Connect)?;
    stream.set_nodelay(true).map_err(Broken::Connect)?;
    match &c.tls {
        None => handshake(TokioIo::new(stream), c.http2).await,
        Some(t) => {
            let tls = t
                .connector
                .connect(t.server_name.clone(), stream)
                .await
                .map_err(|e| Broken::Connect(io::Error::new(e.kind(), format!("TLS: {e}"))))?;
            handshake(TokioIo::new(tls), c.http2).await
        }
    }
}

async fn handshake<IO>(io: TokioIo<IO>, h2: bool) -> Result<Link, Broken>
where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let failed = |e: hyper::Error| Broken::Connect(io::Error::other(e));
    if h2 {
        let (sender, conn) = http2::Builder::new(TokioExecutor::new())
            .handshake(io)
            .await
            .map_err(failed)?;
        Ok(Link {
            sender: Sender::H2(sender),
            conn: tokio::task::spawn_local(conn),
        })
    } else {
        let (sender, conn) = http1::Builder::new().handshake(io).await.map_err(failed)?;
        Ok(Link {
            sender: Sender::H1(sender),
            conn: tokio::task::spawn_local(conn),
        })
    }
}

/// Sends `req` and reads the whole response body into `buf` (cleared first).
pub(super) async fn exchange(
    link: &mut Link,
    req: Request<Body>,
    buf: &mut Vec<u8>,
) -> Result<StatusCode, Broken> {
    buf.clear();
    let sender = &mut link.sender;
    let result = async {
        let resp = match sender {
            Sender::H1(s) => {
                s.ready().await?;
                s.send_request(req).await?
            }
            Sender::H2(s) => {
                s.ready().await?;
                s.send_request(req).await?
            }
        };
        let status = resp.status();
        let mut body = resp.into_body();
        while let Some(frame) = body.frame().await {
            if let Ok(data) = frame?.into_data() {
                buf.extend_from_slice(&data);
            }
        }
        Ok::<_, hyper::Error>(status)
    }
    .await;
    match result {
        Ok(status) => Ok(status),
        // The connection's own error (e.g. bytes that are not HTTP) says more than the call's "closed".
        Err(e) if link.conn.is_finished() => match (&mut link.conn).await {
            Ok(Err(conn_err)) => Err(Broken::Hyper(conn_err)),
            _ => Err(Broken::Hyper(e)),
        },
        Err(e) => Err(Broken::Hyper(e)),
    }
}
