//! One connection's outbound side: a bounded queue of encoded packets, the task that writes them in
//! batches, and the switch that closes the connection from anywhere (slow reader, shutdown).

use std::io::{self, IoSlice};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::{Buf, Bytes};
use tokio::io::AsyncWriteExt;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::{mpsc, Notify};

/// Most packets gathered into one vectored write.
const MAX_BATCH: usize = 64;

/// A unique connection id.
pub(crate) type PeerId = u64;

/// Closes a connection from any task: both its reader and its writer stop at their next await.
#[derive(Debug, Default)]
pub(crate) struct Kill {
    killed: AtomicBool,
    notify: Notify,
}

impl Kill {
    /// Returns true for the call that did it (later calls find it done).
    pub(crate) fn kill(&self) -> bool {
        let first = !self.killed.swap(true, Ordering::AcqRel);
        if first {
            self.notify.notify_waiters();
        }
        first
    }

    pub(crate) fn is_killed(&self) -> bool {
        self.killed.load(Ordering::Acquire)
    }

    /// Completes once [`Kill::kill`] has been called.
    pub(crate) async fn wait(&self) {
        loop {
            // Registered before the check, so a kill between the check and the await still wakes us.
            let notified = self.notify.notified();
            if self.is_killed() {
                return;
            }
            notified.await;
        }
    }
}

/// What a room holds of a member's connection: its id, its queue and its kill switch.
#[derive(Debug)]
pub(crate) struct Peer {
    pub(crate) id: PeerId,
    tx: mpsc::Sender<Bytes>,
    pub(crate) kill: Arc<Kill>,
}

/// Why a packet could not be queued.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum QueueError {
    /// The queue is full: the member reads too slowly (or not at all).
    Full,
    /// The connection is closing.
    Closed,
}

impl Peer {
    /// A peer and the receiving end of its queue (for [`write_loop`]).
    pub(crate) fn new(id: PeerId, queue: usize) -> (Peer, mpsc::Receiver<Bytes>) {
        let (tx, rx) = mpsc::channel(queue);
        (
            Peer {
                id,
                tx,
                kill: Arc::new(Kill::default()),
            },
            rx,
        )
    }

    /// Queues a packet without waiting. The `Bytes` is shared: fan-out clones a reference, not the bytes.
    pub(crate) fn send(&self, packet: Bytes) -> Result<(), QueueError> {
        if self.kill.is_killed() {
            return Err(QueueError::Closed);
        }
        self.tx.try_send(packet).map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => QueueError::Full,
            mpsc::error::TrySendError::Closed(_) => QueueError::Closed,
        })
    }
}

/// Writes queued packets until the queue closes, a write fails or the connection is killed. Whatever has
/// queued up since the last write goes out in one vectored write.
pub(crate) async fn write_loop(
    mut wr: OwnedWriteHalf,
    mut rx: mpsc::Receiver<Bytes>,
    kill: Arc<Kill>,
) {
    let mut batch: Vec<Bytes> = Vec::with_capacity(MAX_BATCH);
    let killed = kill.wait();
    tokio::pin!(killed);
    loop {
        let n = tokio::select! {
            biased;
            () = &mut killed => break,
            n = rx.recv_many(&mut batch, MAX_BATCH) => n,
        };
        if n == 0 {
            break;
        }
        let written = tokio::select! {
            biased;
            () = &mut killed => break,
            r = write_all(&mut wr, &mut batch) => r,
        };
        if written.is_err() {
            kill.kill();
            break;
        }
        batch.clear();
    }
}

/// Writes every buffer of `bufs`, vectored, resuming after short writes.
async fn write_all(wr: &mut OwnedWriteHalf, bufs: &mut [Bytes]) -> io::Result<()> {
    let mut first = 0;
    while first < bufs.len() {
        let mut slices = [IoSlice::new(&[]); MAX_BATCH];
        let count = (bufs.len() - first).min(MAX_BATCH);
        for (slice, buf) in slices.iter_mut().zip(&bufs[first..first + count]) {
            *slice = IoSlice::new(buf);
        }
        let mut n = wr.write_vectored(&slices[..count]).await?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        while n > 0 {
            let len = bufs[first].len();
            if n >= len {
                n -= len;
                first += 1;
            } else {
                bufs[first].advance(n);
                n = 0;
            }
        }
    }
    Ok(())
}
