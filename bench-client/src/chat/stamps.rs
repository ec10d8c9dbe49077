//! When each message was sent, so each receiver can time its delivery: one slot per (room, sender,
//! message), written by the sender just before the write and read by every receiver.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Most slots kept per sender; older ones are reused (a receiver would have to lag this many messages of
/// one sender behind to read a reused slot: the server's queues disconnect it long before).
const MAX_RING: usize = 4096;
/// Bound on the whole table (8 bytes a slot).
const MAX_SLOTS: usize = 8 << 20;

#[derive(Debug)]
pub(crate) struct Stamps {
    base: Instant,
    users: usize,
    ring: usize,
    slots: Box<[AtomicU64]>,
}

impl Stamps {
    pub(crate) fn new(rooms: usize, users: usize, count: usize) -> Stamps {
        let senders = (rooms * users).max(1);
        let ring = count
            .min(MAX_RING)
            .min((MAX_SLOTS / senders).max(16))
            .max(1);
        let slots = (0..senders * ring).map(|_| AtomicU64::new(0)).collect();
        Stamps {
            base: Instant::now(),
            users,
            ring,
            slots,
        }
    }

    fn slot(&self, room: usize, sender: usize, seq: u64) -> &AtomicU64 {
        &self.slots[(room * self.users + sender) * self.ring + (seq % self.ring as u64) as usize]
    }

    /// Nanoseconds since the table was made (never 0, which means "not sent").
    pub(crate) fn now(&self) -> u64 {
        self.base.elapsed().as_nanos() as u64 + 1
    }

    /// Records that `sender` (0-based) of `room` (0-based) is sending its message `seq` (0-based) now.
    pub(crate) fn sent(&self, room: usize, sender: usize, seq: u64) {
        self.slot(room, sender, seq)
            .store(self.now(), Ordering::Release);
    }

    /// Microseconds from the send of that message until `now` ([`Stamps::now`]), if its send was recorded.
    pub(crate) fn latency_us(&self, room: usize, sender: usize, seq: u64, now: u64) -> Option<u64> {
        let at = self.slot(room, sender, seq).load(Ordering::Acquire);
        (at != 0).then(|| now.saturating_sub(at) / 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_per_room_sender_and_message() {
        let s = Stamps::new(2, 3, 5);
        assert_eq!(s.latency_us(1, 2, 4, s.now()), None);
        s.sent(1, 2, 4);
        assert!(s.latency_us(1, 2, 4, s.now()).is_some());
        assert_eq!(s.latency_us(1, 1, 4, s.now()), None);
        assert_eq!(s.latency_us(0, 2, 4, s.now()), None);
        assert_eq!(s.latency_us(1, 2, 3, s.now()), None);
    }

    #[test]
    fn the_table_stays_bounded() {
        let s = Stamps::new(1000, 100, 1_000_000);
        assert!(s.slots.len() <= MAX_SLOTS.max(1000 * 100 * 16));
    }
}
