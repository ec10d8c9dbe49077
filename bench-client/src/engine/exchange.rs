//! hyper's HTTP/1.1 client (`client::conn::http1`, no pool): one connection and one request/response on it —
//! the fallback for what the lean path (`lean/`) does not serve.
//!
//! The connection future runs as a local task of its own, as hyper intends: polling it inside the call's
//! task instead was measured (callgrind, 20 000 calls) at 314 M instructions against 307 M this way. The
//! response body is read into a buffer the caller reuses.

use std::io;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::broken::Broken;

/// A connected HTTP/1.1 client connection.
pub(super) struct Link {
    sender: SendRequest<Full<Bytes>>,
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
        !self.conn.is_finished() && !self.sender.is_closed()
    }
}

/// Performs the (local) HTTP/1.1 handshake on a connected stream.
pub(super) async fn handshake(stream: TcpStream) -> Result<Link, Broken> {
    let (sender, conn) = http1::Builder::new()
        .handshake(TokioIo::new(stream))
        .await
        .map_err(|e| Broken::Connect(io::Error::other(e)))?;
    Ok(Link {
        sender,
        conn: tokio::task::spawn_local(conn),
    })
}

/// Sends `req` and reads the whole response body into `buf` (cleared first).
pub(super) async fn exchange(
    link: &mut Link,
    req: Request<Full<Bytes>>,
    buf: &mut Vec<u8>,
) -> Result<StatusCode, Broken> {
    buf.clear();
    let sender = &mut link.sender;
    let result = async {
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
