//! One connection's outbound side: its outbox (the bytes of the packets waiting to be written, bounded in
//! bytes), the task that writes whatever has gathered in one write, and the switch that closes the
//! connection from anywhere (slow reader, shutdown).
//!
//! Fan-out copies each packet into the outboxes of the room's members (a memcpy of about 100 bytes is
//! cheaper than sharing a refcounted buffer, and leaves nothing pinned): what a connection holds is
//! exactly what it has not yet sent, counted per connection and in [`ChatStats::queued_bytes`].

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::io::AsyncWriteExt;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::Notify;

use super::stats::ChatStats;

/// A unique connection id.
pub(crate) type PeerId = u64;

/// Packets up to this size may be queued to a connection whose outbox is empty even when the memory
/// budget is spent (so a budget taken by peers that do not read cannot cut off those that do); the
/// budget can thus be exceeded by at most this much per connection.
const SMALL_PACKET: usize = 4 * 1024;
/// A write buffer that grew past this is given back after use.
const KEEP_CAPACITY: usize = 64 * 1024;

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

/// Byte limits on what waits to be written.
#[derive(Debug)]
pub(crate) struct Limits {
    /// Most bytes one connection's outbox holds (a single packet to an empty outbox always fits).
    pub(crate) per_connection: usize,
    /// Most bytes all outboxes hold together (see [`SMALL_PACKET`]).
    pub(crate) total: usize,
    /// All outboxes' bytes now (mirrored in the stats gauge).
    pub(crate) queued: AtomicUsize,
}

/// What a room holds of a member's connection: its id, its outbox and its kill switch.
#[derive(Debug)]
pub(crate) struct Peer {
    pub(crate) id: PeerId,
    outbox: Mutex<Outbox>,
    /// Wakes the writer when its outbox gets bytes.
    ready: Notify,
    limits: Arc<Limits>,
    stats: Arc<ChatStats>,
    pub(crate) kill: Arc<Kill>,
}

#[derive(Debug, Default)]
struct Outbox {
    bytes: Vec<u8>,
    /// The writer waits for bytes: whoever adds some wakes it.
    writer_waiting: bool,
    /// The writer is gone: nothing more is accepted.
    closed: bool,
}

/// Why a packet could not be queued.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum QueueError {
    /// The outbox (or the memory budget) is full: the member reads too slowly, or not at all.
    Full,
    /// The connection is closing.
    Closed,
}

impl Peer {
    pub(crate) fn new(id: PeerId, limits: Arc<Limits>, stats: Arc<ChatStats>) -> Peer {
        Peer {
            id,
            outbox: Mutex::default(),
            ready: Notify::new(),
            limits,
            stats,
            kill: Arc::new(Kill::default()),
        }
    }

    fn outbox(&self) -> MutexGuard<'_, Outbox> {
        self.outbox.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues a packet's bytes without waiting.
    pub(crate) fn send(&self, packet: &[u8]) -> Result<(), QueueError> {
        if self.kill.is_killed() {
            return Err(QueueError::Closed);
        }
        let len = packet.len();
        let mut out = self.outbox();
        if out.closed {
            return Err(QueueError::Closed);
        }
        let pending = out.bytes.len();
        let limits = &*self.limits;
        if pending > 0 && pending + len > limits.per_connection {
            return Err(QueueError::Full);
        }
        if (pending > 0 || len > SMALL_PACKET)
            && limits.queued.load(Ordering::Relaxed) + len > limits.total
        {
            return Err(QueueError::Full);
        }
        out.bytes.extend_from_slice(packet);
        self.account(len as isize);
        if std::mem::take(&mut out.writer_waiting) {
            drop(out);
            self.ready.notify_one();
        }
        Ok(())
    }

    fn account(&self, delta: isize) {
        if delta >= 0 {
            self.limits
                .queued
                .fetch_add(delta.unsigned_abs(), Ordering::Relaxed);
            self.stats
                .queued_bytes
                .fetch_add(delta.unsigned_abs() as u64, Ordering::Relaxed);
        } else {
            self.limits
                .queued
                .fetch_sub(delta.unsigned_abs(), Ordering::Relaxed);
            self.stats
                .queued_bytes
                .fetch_sub(delta.unsigned_abs() as u64, Ordering::Relaxed);
        }
    }

    /// Writes the outbox until the connection is killed or a write fails; whatever has gathered since the
    /// last write goes out in one write. On the way out the outbox is closed and its bytes uncounted.
    pub(crate) async fn write_loop(self: Arc<Self>, mut wr: OwnedWriteHalf) {
        let mut batch: Vec<u8> = Vec::new();
        let killed = self.kill.wait();
        tokio::pin!(killed);
        loop {
            {
                let mut out = self.outbox();
                if out.bytes.is_empty() {
                    out.writer_waiting = true;
                } else {
                    std::mem::swap(&mut out.bytes, &mut batch);
                }
            }
            if batch.is_empty() {
                tokio::select! {
                    biased;
                    () = &mut killed => break,
                    () = self.ready.notified() => continue,
                }
            }
            let written = tokio::select! {
                biased;
                () = &mut killed => break,
                r = wr.write_all(&batch) => r,
            };
            self.account(-(batch.len() as isize));
            batch.clear();
            if batch.capacity() > KEEP_CAPACITY {
                batch = Vec::new();
            }
            if written.is_err() {
                self.kill.kill();
                break;
            }
        }
        let mut out = self.outbox();
        out.closed = true;
        let unsent = out.bytes.len() + batch.len();
        out.bytes = Vec::new();
        drop(out);
        self.account(-(unsent as isize));
    }

    /// Takes what the outbox holds, as the writer would (for the fan-out benchmark, which has no socket).
    pub(crate) fn drain(&self) -> Vec<u8> {
        let bytes = std::mem::take(&mut self.outbox().bytes);
        self.account(-(bytes.len() as isize));
        bytes
    }
}
