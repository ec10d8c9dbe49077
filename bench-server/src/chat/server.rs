//! The chat server's accept loop: connection limit, one task per connection, shutdown.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::conn::{self, Shared};
use super::room::Registry;
use super::stats::bump;
use super::{ChatConfig, ChatStats};

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
    let limit = Arc::new(Semaphore::new(config.max_connections));
    let shared = Arc::new(Shared {
        config,
        stats,
        registry: Registry::default(),
    });
    let mut tasks = JoinSet::new();
    let mut next_id = 0;
    tokio::pin!(shutdown);
    tracing::info!(%local, "chat server listening");

    loop {
        // Take a connection slot before accepting: at the limit, new connections wait in the backlog.
        if limit.available_permits() == 0 {
            bump(&shared.stats.limit_waits);
        }
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
                    // Out of descriptors or a connection reset before accept: back off briefly, keep serving.
                    tracing::warn!("chat accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        while tasks.try_join_next().is_some() {}
        next_id += 1;
        bump(&shared.stats.accepted);
        tasks.spawn(conn::serve(stream, shared.clone(), next_id, permit));
    }

    // Dropping each connection's task leaves its rooms and stops its writer.
    tasks.shutdown().await;
    tracing::info!(stats = ?shared.stats.snapshot(), "chat server stopped");
    Ok(())
}
