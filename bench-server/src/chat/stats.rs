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
    pub(crate) packet_timeouts: AtomicU64,
    pub(crate) pings_sent: AtomicU64,
    pub(crate) chat_messages: AtomicU64,
    pub(crate) deliveries: AtomicU64,
    pub(crate) rooms_created: AtomicU64,
    pub(crate) queued_bytes: AtomicU64,
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
    /// Members disconnected because their outbox (or the chat memory budget) was full: slow or dead
    /// readers.
    pub slow_disconnects: u64,
    /// Connections closed after two idle periods.
    pub idle_timeouts: u64,
    /// Connections closed because a packet did not complete within the packet timeout.
    pub packet_timeouts: u64,
    /// Keep-alive pings sent to idle connections.
    pub pings_sent: u64,
    /// Chat messages accepted for a room.
    pub chat_messages: u64,
    /// Packets queued to members by fan-out (chat, enter and exit indications).
    pub deliveries: u64,
    /// Rooms created on demand.
    pub rooms_created: u64,
    /// Bytes waiting to be written to chat connections now (a gauge).
    pub queued_bytes: u64,
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
            packet_timeouts: self.packet_timeouts.load(Relaxed),
            pings_sent: self.pings_sent.load(Relaxed),
            chat_messages: self.chat_messages.load(Relaxed),
            deliveries: self.deliveries.load(Relaxed),
            rooms_created: self.rooms_created.load(Relaxed),
            queued_bytes: self.queued_bytes.load(Relaxed),
        }
    }
}

pub(crate) fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Relaxed);
}

pub(crate) fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Relaxed);
}

impl ChatStatsSnapshot {
    /// Appends the counters in Prometheus text format (for the HTTP server's `/metrics`).
    pub fn render(&self, w: &mut String) {
        use std::fmt::Write as _;
        let rows: [(&str, &str, &str, u64); 13] = [
            ("wsbench_chat_connections_accepted_total", "counter", "Chat connections accepted.", self.accepted),
            ("wsbench_chat_connections_closed_total", "counter", "Chat connections closed, for any reason.", self.closed),
            ("wsbench_chat_connection_limit_waits_total", "counter", "Times every chat connection slot was taken.", self.limit_waits),
            ("wsbench_chat_malformed_total", "counter", "Chat connections closed for a protocol violation.", self.malformed),
            ("wsbench_chat_oversized_total", "counter", "Chat connections closed for a packet or field over a limit.", self.oversized),
            ("wsbench_chat_slow_disconnects_total", "counter", "Chat members disconnected because they did not read (send buffer or memory budget full).", self.slow_disconnects),
            ("wsbench_chat_idle_timeouts_total", "counter", "Chat connections closed after two idle periods.", self.idle_timeouts),
            ("wsbench_chat_packet_timeouts_total", "counter", "Chat connections closed because a packet did not complete in time.", self.packet_timeouts),
            ("wsbench_chat_pings_sent_total", "counter", "Keep-alive pings sent.", self.pings_sent),
            ("wsbench_chat_messages_total", "counter", "Chat messages accepted for a room.", self.chat_messages),
            ("wsbench_chat_deliveries_total", "counter", "Packets queued to members by fan-out.", self.deliveries),
            ("wsbench_chat_rooms_created_total", "counter", "Rooms created on demand.", self.rooms_created),
            ("wsbench_chat_queued_bytes", "gauge", "Bytes queued to chat connections, unsent, now.", self.queued_bytes),
        ];
        for (name, kind, help, v) in rows {
            let _ = writeln!(w, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}");
        }
    }
}
