//! The accept loop both servers (HTTP and chat) share: a connection slot taken before accepting and released
//! by a guard however the connection ends, accept errors classified, and a stop on shutdown.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{ensure, Context as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

use crate::memory;

/// One of the `max_connections` slots, held by a connection's task; dropping it (however the task ends,
/// including an abort at shutdown) lets the accept loop take the next connection.
#[derive(Debug)]
pub(crate) struct Slot {
    _permit: OwnedSemaphorePermit,
}

impl Slot {
    fn new(permit: OwnedSemaphorePermit) -> Slot {
        memory::connection_opened();
        Slot { _permit: permit }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        memory::connection_closed();
    }
}

/// Accepts connections on `listener` until `shutdown` completes, each in its own task on `tasks` made by
/// `serve` from the stream and its slot. With every slot taken it stops accepting (new connections wait in
/// the kernel's backlog) and calls `on_full` once per wait. Returns when `shutdown` completes, dropping
/// the listener (so new connections are refused); the caller then winds down `tasks` as it sees fit.
pub(crate) async fn accept_loop<F, Fut>(
    listener: TcpListener,
    max_connections: usize,
    shutdown: impl Future<Output = ()>,
    tasks: &mut JoinSet<()>,
    mut on_full: impl FnMut(),
    mut serve: F,
) -> anyhow::Result<()>
where
    F: FnMut(TcpStream, Slot) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    ensure!(
        max_connections >= 1,
        "the connection limit must be at least 1"
    );
    ensure!(
        max_connections <= Semaphore::MAX_PERMITS,
        "the connection limit is too large"
    );
    let limit = Arc::new(Semaphore::new(max_connections));
    tokio::pin!(shutdown);
    // Finished tasks are reaped as they finish, not at the next accept: an unjoined task keeps its
    // allocation (about 2 KiB), and after a storm of connections the thousands left would pin the heap
    // pages around them, which the allocator then cannot return (measured: 11.6 MB after 5,000).
    loop {
        if limit.available_permits() == 0 {
            on_full();
        }
        // Take a connection slot before accepting: at the limit, new connections wait in the backlog.
        let permit = loop {
            tokio::select! {
                biased;
                () = &mut shutdown => return Ok(()),
                permit = limit.clone().acquire_owned() => break permit.context("connection limit closed")?,
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            }
        };
        let stream = loop {
            tokio::select! {
                biased;
                () = &mut shutdown => return Ok(()),
                accepted = listener.accept() => match accepted {
                    Ok((stream, _peer)) => break stream,
                    Err(e) => accept_failed(e).await,
                },
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            }
        };
        let _ = stream.set_nodelay(true);
        tasks.spawn(serve(stream, Slot::new(permit)));
    }
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
