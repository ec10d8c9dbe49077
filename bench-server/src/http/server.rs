//! The HTTP server's connections: hyper HTTP/1.1 with keep-alive and a header-read timeout, the watchdog
//! (idle and send timeouts), lingering close, and graceful shutdown, over the shared accept loop.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{ensure, Context as _};
use hyper::server::conn::http1;
use hyper_util::rt::TokioTimer;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use super::app::App;
use super::config::HttpConfig;
use super::conn_io::ConnIo;
use super::session::{self, Sessions, Stop};
use super::watchdog::{on_own_wake, watchdog, Cut, Timeouts};
use crate::accept::{accept_loop, Slot};
use crate::chat::ChatStats;
use crate::ossj::Portal;

/// hyper's read buffer (which holds a request head) and write queue stop growing here: with the
/// response budget, what bounds one connection's memory.
const MAX_BUF: usize = 64 * 1024;

/// Serves HTTP on `listener` until `shutdown` completes, then stops accepting, lets in-flight requests
/// finish (idle and resting keep-alive connections close at once) for up to `config.shutdown_grace`, and
/// returns.
pub async fn run(
    listener: TcpListener,
    config: HttpConfig,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    serve(listener, config, None, shutdown).await
}

/// [`run`] on an application instance of the OSS/J portal: also `POST /oss/portal`, through `portal`.
pub async fn run_app(
    listener: TcpListener,
    config: HttpConfig,
    portal: Portal,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    serve_with(listener, config, None, Some(portal), shutdown).await
}

/// [`run`], also showing the chat server's counters (`chat`) in `/metrics`.
pub async fn serve(
    listener: TcpListener,
    config: HttpConfig,
    chat: Option<Arc<ChatStats>>,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    serve_with(listener, config, chat, None, shutdown).await
}

async fn serve_with(
    listener: TcpListener,
    config: HttpConfig,
    chat: Option<Arc<ChatStats>>,
    portal: Option<Portal>,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    validate(&config)?;
    let local = listener
        .local_addr()
        .context("reading the HTTP listener's address")?;
    let timeouts = Timeouts {
        idle: config.idle_timeout,
        send: config.send_timeout,
        header: config.header_timeout,
    };
    let linger = config.linger;
    let grace = config.shutdown_grace;
    let max_connections = config.max_connections;
    let rest_above = config.rest_above;
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .keep_alive(true)
        .max_buf_size(MAX_BUF)
        // The watchdog bounds the wait for a request head: hyper's own timeout arms a timer per request.
        .header_read_timeout(None::<Duration>);
    let app = Arc::new(App::new(config, chat, portal));
    let stop = Stop::default();
    let sessions = Arc::new(Sessions {
        builder,
        app: app.clone(),
        local,
        rest_above,
        stop: stop.clone(),
    });
    let mut tasks = JoinSet::new();

    accept_loop(
        listener,
        max_connections,
        shutdown,
        &mut tasks,
        || {},
        |stream, slot| {
            let (io, state) = ConnIo::new(stream, linger);
            let conn = session::serve(sessions.clone(), io, state.clone());
            app.metrics.connection_opened();
            let guard = ConnectionGuard {
                app: app.clone(),
                _slot: slot,
            };
            async move {
                let metrics = &guard.app.metrics;
                // Biased: the connection first, and no random number per wake-up.
                tokio::select! {
                    biased;
                    res = conn => if let Err(e) = res {
                        if e.is_timeout() {
                            metrics.connection_header_timeout();
                        }
                        tracing::debug!("connection ended with an error: {e}");
                    },
                    cut = on_own_wake(watchdog(state.clone(), timeouts)) => match cut {
                        Cut::Idle => metrics.connection_idle_closed(),
                        Cut::SendStalled => metrics.connection_send_stalled(),
                        Cut::HeaderTimeout => metrics.connection_header_timeout(),
                    },
                }
                if state.lingered.load(std::sync::atomic::Ordering::Relaxed) {
                    metrics.connection_lingered();
                }
                drop(guard);
            }
        },
    )
    .await?;

    tracing::info!(
        connections = app.metrics.connections_open(),
        "HTTP server shutting down"
    );
    stop.stop();
    let drained = async { while tasks.join_next().await.is_some() {} };
    if tokio::time::timeout(grace, drained).await.is_err() {
        tracing::warn!("connections still busy after {grace:?}; closing them");
    }
    tasks.shutdown().await;
    Ok(())
}

fn validate(config: &HttpConfig) -> anyhow::Result<()> {
    ensure!(
        config.max_body >= 1,
        "the body limit must be at least 1 byte"
    );
    ensure!(
        config.store_cap >= 1,
        "the store capacity must be at least 1"
    );
    ensure!(
        !config.header_timeout.is_zero(),
        "the header timeout must be positive"
    );
    ensure!(
        !config.idle_timeout.is_zero(),
        "the idle timeout must be positive"
    );
    ensure!(
        !config.body_timeout.is_zero(),
        "the body timeout must be positive"
    );
    ensure!(
        !config.send_timeout.is_zero(),
        "the send timeout must be positive"
    );
    ensure!(
        config.request_budget >= config.max_body,
        "the request budget ({} bytes) must hold at least one body of --max-body ({} bytes)",
        config.request_budget,
        config.max_body
    );
    ensure!(
        config.response_budget >= 1,
        "the response budget must be at least 1 byte"
    );
    Ok(())
}

/// Held by a connection task: on drop (however the task ends) the open-connections gauge goes down and
/// the connection slot is released.
struct ConnectionGuard {
    app: Arc<App>,
    _slot: Slot,
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.app.metrics.connection_closed();
    }
}
