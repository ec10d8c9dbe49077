//! A connection of either HTTP/1.1 client — the lean path (`lean/`) or hyper's (`exchange.rs`) — and why a
//! call on it produced no response. The connection chooses its client once ([`Wire::of`]): lean when the
//! run allows it and the request is one it sends, hyper otherwise.

use std::io;
use std::net::IpAddr;
use std::ops::Range;
use std::time::Duration;

use http::StatusCode;
use http_body_util::BodyExt as _;
use tokio::time::Instant;

use super::broken::Broken;
use super::exchange::{self, Connector};
use super::lean::{self, Encoded, WireError};
use super::timer::Timer;
use crate::config::RunConfig;
use crate::flags::HttpEngine;
use crate::workload::{Variant, Workload};

/// How a connection talks: the request it sends, encoded once for the lean path, or hyper.
#[derive(Debug)]
pub(super) enum Wire {
    Lean(Encoded),
    Hyper,
}

impl Wire {
    /// The lean path if the run asks for it, the connection is plain HTTP/1.1 (no TLS, no HTTP/2) and it
    /// can send `variant`'s request; hyper otherwise.
    pub(super) async fn of(
        cfg: &RunConfig,
        connector: &Connector,
        workload: &Workload,
        variant: &Variant,
    ) -> Wire {
        if cfg.http_engine != HttpEngine::Lean || !connector.plain_http1() {
            return Wire::Hyper;
        }
        let (parts, body) = workload.request(variant).into_parts();
        let Ok(body) = body.collect().await.map(|b| b.to_bytes());
        let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
        match Encoded::new(&parts.method, path, parts.version, &parts.headers, &body) {
            Some(e) => Wire::Lean(e),
            None => Wire::Hyper,
        }
    }
}

/// An open connection.
#[derive(Debug)]
pub(super) enum Link {
    Lean(lean::Link),
    Hyper(exchange::Link),
}

impl Link {
    /// Whether another request may be sent on this connection.
    pub(super) fn reusable(&self) -> bool {
        match self {
            Link::Lean(l) => l.reusable(),
            Link::Hyper(l) => l.reusable(),
        }
    }
}

/// Opens a connection for `wire`, from `source` if given; not open within `timeout`, a connect error.
pub(super) async fn connect(
    wire: &Wire,
    connector: &Connector,
    source: Option<IpAddr>,
    timeout: Duration,
    timer: &Timer,
) -> Result<Link, Broken> {
    let open = async {
        match wire {
            Wire::Lean(_) => connector
                .tcp(source)
                .await
                .map(|s| Link::Lean(lean::Link::new(s)))
                .map_err(Broken::Connect),
            Wire::Hyper => exchange::connect(connector, source).await.map(Link::Hyper),
        }
    };
    match timer.timeout(timeout, open).await {
        Some(r) => r,
        None => Err(Broken::Connect(io::Error::new(
            io::ErrorKind::TimedOut,
            "connect timed out",
        ))),
    }
}

/// One request and its whole response on `link` (opened for `wire`): the status, where the body lies in
/// `buf`, and when its first byte was read if that was before its last (more than one read).
pub(super) async fn exchange(
    wire: &Wire,
    link: &mut Link,
    workload: &Workload,
    variant: &Variant,
    buf: &mut Vec<u8>,
) -> Result<(StatusCode, Range<usize>, Option<Instant>), Broken> {
    match (wire, link) {
        (Wire::Lean(req), Link::Lean(l)) => {
            let (code, body, first) = l.exchange(req, buf).await.map_err(Broken::Wire)?;
            // The reader accepts only three-digit codes, every one of which is a StatusCode.
            let status =
                StatusCode::from_u16(code).map_err(|_| Broken::Wire(WireError::Status(code)))?;
            Ok((status, body, first))
        }
        (_, Link::Hyper(l)) => {
            let (status, head) = exchange::exchange(l, workload.request(variant), buf).await?;
            Ok((status, 0..buf.len(), Some(head)))
        }
        (Wire::Hyper, Link::Lean(_)) => unreachable!("a connection is opened for its own wire"),
    }
}
