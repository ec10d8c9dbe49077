//! The accept loop and per-connection tasks: connection limit, hyper HTTP/1.1 with keep-alive and a
//! header-read timeout, the idle watchdog, and graceful shutdown.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{ensure, Context as _};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

use super::config::HttpConfig;
use super::idle::{self, ActivityIo};
use super::service::{self, App};

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
    let limit = Arc::new(Semaphore::new(config.max_connections));
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .keep_alive(true)
        .header_read_timeout(config.header_timeout);
    let app = Arc::new(App::new(config));
    let graceful = GracefulShutdown::new();
    let mut tasks = JoinSet::new();
    tokio::pin!(shutdown);

    loop {
        // Take a connection slot before accepting: at the limit, new connections wait in the backlog.
        let permit = tokio::select! {
            biased;
            () = &mut shutdown => break,
            permit = limit.clone().acquire_owned() => permit.context("connection limit closed")?,
        };
        let stream = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            },
        };
        while tasks.try_join_next().is_some() {}
        let _ = stream.set_nodelay(true);
        let (io, active) = ActivityIo::new(stream);
        let conn_app = app.clone();
        let svc = service_fn(move |req| service::handle(conn_app.clone(), local, req));
        let conn = graceful.watch(builder.serve_connection(TokioIo::new(io), svc));
        app.metrics.connection_opened();
        let guard = ConnectionGuard {
            app: app.clone(),
            _permit: permit,
        };
        tasks.spawn(async move {
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
        });
    }

    drop(listener);
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
        config.max_connections >= 1,
        "the connection limit must be at least 1"
    );
    ensure!(
        config.max_connections <= Semaphore::MAX_PERMITS,
        "the connection limit is too large"
    );
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

/// Accept failures are either about one connection (the peer gave up before we accepted: carry on) or about
/// the server (out of file descriptors or memory: pause briefly rather than spin, since only a closing
/// connection can help).
async fn accept_failed(e: io::Error) {
    use io::ErrorKind::{
        ConnectionAborted, ConnectionRefused, ConnectionReset, Interrupted, WouldBlock,
    };
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset | Interrupted | WouldBlock
    ) {
        tracing::debug!("accept failed: {e}");
    } else {
        tracing::warn!("accept failed: {e}; pausing accepts for 50 ms");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Held by a connection task: on drop (however the task ends) the open-connections gauge goes down and
/// the connection slot is released.
struct ConnectionGuard {
    app: Arc<App>,
    _permit: OwnedSemaphorePermit,
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.app.metrics.connection_closed();
    }
}
