//! The chat server's connections over the shared accept loop: one task per connection, shutdown.

use std::future::Future;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use anyhow::Context as _;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use super::config::{ChatConfig, Fanout};
use super::conn::{self, Shared};
use super::peer::Limits;
use super::room::Registry;
use super::stats::{bump, ChatStats};
use crate::accept::accept_loop;

/// Serves the VOLANO chat protocol on `listener` until `shutdown` completes, then closes every connection
/// and returns.
pub async fn run(
    listener: TcpListener,
    config: ChatConfig,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    serve(listener, config, Arc::new(ChatStats::default()), shutdown).await
}

/// [`run`], counting into `stats` (which the caller can read while the server runs).
pub async fn serve(
    listener: TcpListener,
    config: ChatConfig,
    stats: Arc<ChatStats>,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    config.validate()?;
    let local = listener
        .local_addr()
        .context("reading the chat listener's address")?;
    let max_connections = config.max_connections;
    let limits = Arc::new(Limits {
        per_connection: config.send_buffer,
        total: config.send_memory,
        queued: AtomicUsize::new(0),
    });
    let uring = match config.fanout {
        Fanout::Writes => false,
        Fanout::Uring => true,
        Fanout::Auto => config.fanout.resolve()?.fanout == Fanout::Uring,
    };
    let shared = Arc::new(Shared {
        config,
        stats,
        registry: Registry::new(uring),
        limits,
    });
    let mut tasks = JoinSet::new();
    let mut next_id = 0;
    tracing::info!(%local, "chat server listening");

    accept_loop(
        listener,
        max_connections,
        shutdown,
        &mut tasks,
        || bump(&shared.stats.limit_waits),
        |stream, slot| {
            next_id += 1;
            bump(&shared.stats.accepted);
            conn::serve(stream, shared.clone(), next_id, slot)
        },
    )
    .await?;

    // Dropping each connection's task leaves its rooms and stops its writer.
    tasks.shutdown().await;
    tracing::info!(stats = ?shared.stats.snapshot(), "chat server stopped");
    Ok(())
}
