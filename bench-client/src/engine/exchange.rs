//! hyper's client: one connection (`client::conn::http1`, or `http2` with `--http2`; over TLS for
//! `https://`; no pool) and one request/response on it — what the lean path (`lean/`) does not serve.
//!
//! The connection future runs as a local task of its own, as hyper intends: polling it inside the call's
//! task instead was measured (callgrind, 20 000 calls) at 314 M instructions against 307 M this way. The
//! response body is read into a buffer the caller reuses.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::Instant;

use super::broken::Broken;
use super::resolve::Address;
use super::tls;
use crate::config::RunConfig;

/// How every connection of a run is made: where, from which local addresses, whether over TLS, which
/// HTTP version.
#[derive(Debug, Clone)]
pub(super) struct Connector {
    /// The server's address, followed when a failed connect finds it moved (each worker's clone its own).
    addr: Address,
    /// The local addresses connections are made from, in turn (empty: the system chooses).
    sources: Arc<[IpAddr]>,
    tls: Option<tls::Client>,
    http2: bool,
}

impl Connector {
    /// The local address connection `conn` is made from, if the run spreads them.
    pub(super) fn source(&self, conn: u64) -> Option<IpAddr> {
        let n = self.sources.len() as u64;
        (n > 0).then(|| self.sources[(conn % n) as usize])
    }

    /// A TCP connection to the server from `source` (any local address if `None`), Nagle off.
    pub(super) async fn tcp(&self, source: Option<IpAddr>) -> io::Result<TcpStream> {
        let addr = self.addr.get().await;
        let stream = self.addr.watch(tcp_to(addr, source)).await?;
        stream.set_nodelay(true)?;
        Ok(stream)
    }

    /// Plain HTTP/1.1: what the lean path speaks.
    pub(super) fn plain_http1(&self) -> bool {
        self.tls.is_none() && !self.http2
    }

    pub(super) fn new(cfg: &RunConfig) -> anyhow::Result<Connector> {
        Ok(Connector {
            addr: Address::of(&cfg.target),
            sources: cfg.source_ips.clone().into(),
            tls: match &cfg.target.tls {
                Some(t) => Some(tls::client(t, cfg.http2)?),
                None => None,
            },
            http2: cfg.http2,
        })
    }
}

/// A TCP connection to `addr` from `source` (any local address if `None`).
async fn tcp_to(addr: SocketAddr, source: Option<IpAddr>) -> io::Result<TcpStream> {
    match source {
        None => TcpStream::connect(addr).await,
        Some(ip) => {
            let socket = match addr {
                SocketAddr::V4(_) => TcpSocket::new_v4()?,
                SocketAddr::V6(_) => TcpSocket::new_v6()?,
            };
            // Port 0: the kernel picks a free one of ip_local_port_range for this local address.
            socket.bind(SocketAddr::new(ip, 0))?;
            socket.connect(addr).await
        }
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

/// Opens a TCP connection (Nagle off), starts TLS if asked, and performs the (local) HTTP handshake; the
/// caller bounds it in time (a worker's runtime has no tokio timer).
pub(super) async fn connect(c: &Connector, source: Option<IpAddr>) -> Result<Link, Broken> {
    open(c, source).await
}

async fn open(c: &Connector, source: Option<IpAddr>) -> Result<Link, Broken> {
    let stream = c.tcp(source).await.map_err(Broken::Connect)?;
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

/// Sends `req` and reads the whole response body into `buf` (cleared first): the status, and when the
/// response's head had come (its first bytes, as hyper hands them on).
pub(super) async fn exchange(
    link: &mut Link,
    req: Request<Body>,
    buf: &mut Vec<u8>,
) -> Result<(StatusCode, Instant), Broken> {
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
        let head = Instant::now();
        let status = resp.status();
        let mut body = resp.into_body();
        while let Some(frame) = body.frame().await {
            if let Ok(data) = frame?.into_data() {
                buf.extend_from_slice(&data);
            }
        }
        Ok::<_, hyper::Error>((status, head))
    }
    .await;
    match result {
        Ok(r) => Ok(r),
        // The connection's own error (e.g. bytes that are not HTTP) says more than the call's "closed".
        Err(e) if link.conn.is_finished() => match (&mut link.conn).await {
            Ok(Err(conn_err)) => Err(Broken::Hyper(conn_err)),
            _ => Err(Broken::Hyper(e)),
        },
        Err(e) => Err(Broken::Hyper(e)),
    }
}
