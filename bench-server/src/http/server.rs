//! The HTTP server's connections: hyper HTTP/1.1 with keep-alive and a header-read timeout, the idle
//! watchdog, and graceful shutdown, over the shared accept loop.

use std::future::Future;
use std::sync::Arc;

use anyhow::{ensure, Context as _};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use super::app::App;
use super::config::HttpConfig;
use super::idle::{self, ActivityIo};
use super::service;
use crate::accept::{accept_loop, Slot};

/// Serves HTTP on `listener` until `shutdown` completes, then stops accepting, lets in-flight requests
/// finish (idle keep-alive connections close at once) for up to `config.shutdown_grace`, and returns.
pub async fn run(
    listener: TcpListener,
    config: HttpConfig,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    validate(&config)?;
    let local = listener
        .local_addr()
        .context("reading the HTTP listener's address")?;
    let idle_timeout = config.idle_timeout;
    let grace = config.shutdown_grace;
    let max_connections = config.max_connections;
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .keep_alive(true)
        .header_read_timeout(config.header_timeout);
    let app = Arc::new(App::new(config));
    let graceful = GracefulShutdown::new();
    let mut tasks = JoinSet::new();

    accept_loop(
        listener,
        max_connections,
        shutdown,
        &mut tasks,
        || {},
        |stream, slot| {
            let (io, active) = ActivityIo::new(stream);
            let conn_app = app.clone();
            let svc = service_fn(move |req| service::handle(conn_app.clone(), local, req));
            let conn = graceful.watch(builder.serve_connection(TokioIo::new(io), svc));
            app.metrics.connection_opened();
            let guard = ConnectionGuard {
                app: app.clone(),
                _slot: slot,
            };
            async move {
                tokio::select! {
                    res = conn => if let Err(e) = res {
                        if e.is_timeout() {
                            guard.app.metrics.connection_header_timeout();
                        }
                        tracing::debug!("connection ended with an error: {e}");
                    },
                    () = idle::watchdog(active, idle_timeout) => guard.app.metrics.connection_idle_closed(),
                }
                drop(guard);
            }
        },
    )
    .await?;

    tracing::info!(connections = graceful.count(), "HTTP server shutting down");
    if tokio::time::timeout(grace, graceful.shutdown())
        .await
        .is_err()
    {
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
