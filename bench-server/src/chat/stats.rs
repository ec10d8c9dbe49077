//! The chat server's counters: shared atomics, read as a [`ChatStatsSnapshot`] (by tests, `/metrics`, the
//! shutdown log).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Live counters. Increments are `Relaxed`: each counter is read on its own, never as a consistent set.
#[derive(Debug, Default)]
pub struct ChatStats {
    pub(crate) accepted: AtomicU64,
    pub(crate) closed: AtomicU64,
    pub(crate) limit_waits: AtomicU64,
    pub(crate) malformed: AtomicU64,
    pub(crate) oversized: AtomicU64,
    pub(crate) slow_disconnects: AtomicU64,
    pub(crate) idle_timeouts: AtomicU64,
    pub(crate) pings_sent: AtomicU64,
    pub(crate) chat_messages: AtomicU64,
    pub(crate) deliveries: AtomicU64,
    pub(crate) rooms_created: AtomicU64,
}

/// A copy of the counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChatStatsSnapshot {
    /// Connections accepted.
    pub accepted: u64,
    /// Connections closed, for any reason.
    pub closed: u64,
    /// Times the accept loop found every connection slot taken and waited.
    pub limit_waits: u64,
    /// Connections closed for a protocol violation (bad packet, wrong first packet, empty name…).
    pub malformed: u64,
    /// Connections closed for a packet or field over a size limit.
    pub oversized: u64,
    /// Members disconnected because their send queue was full (slow or dead readers).
    pub slow_disconnects: u64,
    /// Connections closed after two idle periods.
    pub idle_timeouts: u64,
    /// Keep-alive pings sent to idle connections.
    pub pings_sent: u64,
    /// Chat messages accepted for a room.
    pub chat_messages: u64,
    /// Packets queued to members by fan-out (chat, enter and exit indications).
    pub deliveries: u64,
    /// Rooms created on demand.
    pub rooms_created: u64,
}

impl ChatStats {
    pub fn snapshot(&self) -> ChatStatsSnapshot {
        ChatStatsSnapshot {
            accepted: self.accepted.load(Relaxed),
            closed: self.closed.load(Relaxed),
            limit_waits: self.limit_waits.load(Relaxed),
            malformed: self.malformed.load(Relaxed),
            oversized: self.oversized.load(Relaxed),
            slow_disconnects: self.slow_disconnects.load(Relaxed),
            idle_timeouts: self.idle_timeouts.load(Relaxed),
            pings_sent: self.pings_sent.load(Relaxed),
            chat_messages: self.chat_messages.load(Relaxed),
            deliveries: self.deliveries.load(Relaxed),
            rooms_created: self.rooms_created.load(Relaxed),
        }
    }
}

pub(crate) fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Relaxed);
}

pub(crate) fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Relaxed);
}
