//! One connection's outbound side: its outbox (the bytes of the packets the socket would not take yet,
//! bounded in bytes), the task that writes whatever has gathered there in one write once the socket is
//! writable again, and the switch that closes the connection from anywhere (slow reader, shutdown).
//!
//! A packet for a connection whose outbox is empty is written to the socket at once, by whoever sends it
//! (the fan-out), without waking any task: one `write` per delivery, which is the kernel's floor for one TCP
//! connection per user. Only what the socket refuses is copied into the outbox (a memcpy of about 100
//! bytes is cheaper than sharing a refcounted buffer, and leaves nothing pinned): what a connection holds
//! is exactly what it has not yet sent, counted per connection and in [`ChatStats::queued_bytes`]. Every
//! write happens under the outbox's lock, and a direct write only when the outbox is empty, so bytes reach
//! the socket in the order they were sent.

use std::os::fd::{AsRawFd as _, RawFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

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
    /// The connection's socket (none in the fan-out benchmark, whose outboxes are drained by hand).
    socket: Option<OwnedWriteHalf>,
}

#[derive(Debug, Default)]
struct Outbox {
    bytes: Vec<u8>,
    /// The writer waits for bytes: whoever adds some wakes it.
    writer_waiting: bool,
    /// The writer is gone: nothing more is accepted.
    closed: bool,
    /// A send submitted to io_uring by the fan-out is in flight: until it completes, whatever else comes
    /// is queued behind it (see [`Peer::begin_direct`]).
    in_flight: bool,
}

/// How the io_uring fan-out may send a packet to a peer (see [`Peer::begin_direct`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Direct {
    /// Straight to this socket: nothing is queued before it. [`Peer::end_direct`] must follow.
    Fd(RawFd),
    /// Through [`Peer::send`] (bytes are queued before it, or there is no socket).
    Queue,
    /// The connection is closing.
    Closed,
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
    /// A peer writing to `socket` (`None`: its outbox only fills, for [`Peer::drain`]).
    pub(crate) fn new(
        id: PeerId,
        limits: Arc<Limits>,
        stats: Arc<ChatStats>,
        socket: Option<OwnedWriteHalf>,
    ) -> Peer {
        Peer {
            id,
            outbox: Mutex::default(),
            ready: Notify::new(),
            limits,
            stats,
            kill: Arc::new(Kill::default()),
            socket,
        }
    }

    fn outbox(&self) -> MutexGuard<'_, Outbox> {
        self.outbox.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends a packet's bytes without waiting: straight to the socket when nothing is queued before them,
    /// and what the socket does not take into the outbox, for the writer.
    pub(crate) fn send(&self, packet: &[u8]) -> Result<(), QueueError> {
        if self.kill.is_killed() {
            return Err(QueueError::Closed);
        }
        let out = self.outbox();
        if out.closed {
            return Err(QueueError::Closed);
        }
        let mut rest = packet;
        if out.bytes.is_empty() && !out.in_flight {
            if let Some(socket) = &self.socket {
                match socket.try_write(rest) {
                    Ok(n) if n == rest.len() => return Ok(()),
                    Ok(n) => rest = &rest[n..],
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(_) => {
                        drop(out);
                        self.kill.kill();
                        return Err(QueueError::Closed);
                    }
                }
            }
        }
        self.enqueue(out, rest, false)
    }

    /// Queues `rest` for the writer, after what is queued (or before it: `front`, for the remainder of a
    /// send that was in flight while others queued), within the limits.
    fn enqueue(
        &self,
        mut out: MutexGuard<'_, Outbox>,
        rest: &[u8],
        front: bool,
    ) -> Result<(), QueueError> {
        let len = rest.len();
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
        if front {
            out.bytes.splice(0..0, rest.iter().copied());
        } else {
            out.bytes.extend_from_slice(rest);
        }
        self.account(len as isize);
        self.wake_writer(out);
        Ok(())
    }

    /// Wakes the writer if it waits and there is something to write.
    fn wake_writer(&self, mut out: MutexGuard<'_, Outbox>) {
        if !out.bytes.is_empty() && std::mem::take(&mut out.writer_waiting) {
            drop(out);
            self.ready.notify_one();
        }
    }

    /// Claims the socket for one send the io_uring fan-out submits itself: only when nothing is queued or
    /// in flight, so bytes still reach the socket in order. Until [`Peer::end_direct`], whatever else is
    /// sent to this peer is queued behind it.
    pub(crate) fn begin_direct(&self) -> Direct {
        if self.kill.is_killed() {
            return Direct::Closed;
        }
        let mut out = self.outbox();
        if out.closed {
            return Direct::Closed;
        }
        match &self.socket {
            Some(socket) if out.bytes.is_empty() && !out.in_flight => {
                out.in_flight = true;
                Direct::Fd(socket.as_ref().as_raw_fd())
            }
            _ => Direct::Queue,
        }
    }

    /// Ends a send begun with [`Peer::begin_direct`], whose completion was `result` (bytes sent, or a
    /// negated errno): what the socket did not take is queued ahead of anything queued meanwhile.
    pub(crate) fn end_direct(&self, packet: &[u8], result: i32) -> Result<(), QueueError> {
        let mut out = self.outbox();
        out.in_flight = false;
        let rest = match usize::try_from(result) {
            Ok(n) => packet.get(n..).unwrap_or_default(),
            Err(_) if result == -libc::EAGAIN => packet,
            Err(_) => {
                drop(out);
                self.kill.kill();
                return Err(QueueError::Closed);
            }
        };
        if rest.is_empty() {
            self.wake_writer(out);
            return Ok(());
        }
        if out.closed {
            return Err(QueueError::Closed);
        }
        self.enqueue(out, rest, true)
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

    /// Writes what the outbox gathers (whatever direct writes left there) until the connection is killed or a
    /// write fails: waits for bytes, then for the socket to be writable, then writes all it will take in
    /// one write. On the way out the outbox is closed and its bytes uncounted.
    pub(crate) async fn write_loop(self: Arc<Self>) {
        let Some(socket) = &self.socket else {
            return;
        };
        let killed = self.kill.wait();
        tokio::pin!(killed);
        loop {
            let empty = {
                let mut out = self.outbox();
                // In flight: the fan-out wakes the writer when it completes, if bytes are queued then.
                out.writer_waiting = out.bytes.is_empty() || out.in_flight;
                out.writer_waiting
            };
            if empty {
                tokio::select! {
                    biased;
                    () = &mut killed => break,
                    () = self.ready.notified() => continue,
                }
            }
            let writable = tokio::select! {
                biased;
                () = &mut killed => break,
                r = socket.writable() => r,
            };
            if writable.is_err() || self.flush(socket).is_err() {
                self.kill.kill();
                break;
            }
        }
        let mut out = self.outbox();
        out.closed = true;
        let unsent = out.bytes.len();
        out.bytes = Vec::new();
        drop(out);
        self.account(-(unsent as isize));
    }

    /// Writes as much of the outbox as the socket takes now (nothing, if it is not writable after all).
    fn flush(&self, socket: &OwnedWriteHalf) -> std::io::Result<()> {
        let mut out = self.outbox();
        if out.in_flight {
            return Ok(());
        }
        let written = match socket.try_write(&out.bytes) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => 0,
            Err(e) => return Err(e),
        };
        out.bytes.drain(..written);
        if out.bytes.is_empty() && out.bytes.capacity() > KEEP_CAPACITY {
            out.bytes = Vec::new();
        }
        drop(out);
        self.account(-(written as isize));
        Ok(())
    }

    /// Takes what the outbox holds, as the writer would (for the fan-out benchmark, which has no socket).
    pub(crate) fn drain(&self) -> Vec<u8> {
        let bytes = std::mem::take(&mut self.outbox().bytes);
        self.account(-(bytes.len() as isize));
        bytes
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use tokio::io::AsyncReadExt;
    use tokio::net::{TcpListener, TcpStream};

    use super::*;

    const PACKET: usize = 100;

    fn packet(n: u32) -> Vec<u8> {
        n.to_be_bytes().repeat(PACKET / 4)
    }

    #[tokio::test]
    async fn direct_and_queued_bytes_arrive_in_order_within_the_bound() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut reader = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (socket, _) = listener.accept().await.unwrap();
        let (_rd, wr) = socket.into_split();
        let stats = Arc::new(ChatStats::default());
        let limits = Arc::new(Limits {
            per_connection: 4096,
            total: 1 << 20,
            queued: AtomicUsize::new(0),
        });
        let peer = Arc::new(Peer::new(1, limits.clone(), stats.clone(), Some(wr)));
        let writer = tokio::spawn(peer.clone().write_loop());

        // Nobody reads yet: the socket takes packets until its buffers are full, then the outbox holds
        // what it refuses, up to the bound, and the next packet finds it full.
        let mut sent = 0;
        let full = loop {
            match peer.send(&packet(sent)) {
                Ok(()) => sent += 1,
                Err(e) => break e,
            }
            assert!(sent < 10_000_000, "the socket never filled");
        };
        assert_eq!(full, QueueError::Full);
        let queued = limits.queued.load(Ordering::Relaxed);
        assert!(queued > 0 && queued <= 4096, "{queued} bytes queued");
        assert_eq!(stats.snapshot().queued_bytes, queued as u64);

        // Reading drains the socket, the writer flushes the outbox behind it: every packet, in order.
        let mut got = vec![0; PACKET];
        for n in 0..sent {
            reader.read_exact(&mut got).await.unwrap();
            assert_eq!(got, packet(n), "packet {n}");
        }
        peer.kill.kill();
        writer.await.unwrap();
        assert_eq!(limits.queued.load(Ordering::Relaxed), 0);
        assert_eq!(stats.snapshot().queued_bytes, 0);
        assert_eq!(peer.send(&packet(0)), Err(QueueError::Closed));
    }
}
