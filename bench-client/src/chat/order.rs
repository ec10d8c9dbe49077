//! What one member checks of the order of its deliveries: each sender's messages (numbered by their text)
//! once each, in the order sent — what the protocol promises — and, in a paced run, the room's order (the
//! token ring's), checked with `--check-room-order` and otherwise only counted. A violation is counted
//! and the run goes on: a server that reorders is measured, not a crash.

use std::ops::Range;

use bench_proto::results::{MessageId, Violation, ViolationKind, Violations};

/// Violations a member keeps in full (the rest are only counted).
const FIRST: usize = 3;

/// One sender's messages as this member has received them.
#[derive(Debug, Clone, Default)]
struct Track {
    /// The number expected next (from 1).
    next: u32,
    /// Numbers skipped (a later one came first), not yet arrived.
    gaps: Vec<Range<u32>>,
}

/// Whether a delivery was new.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delivery {
    First,
    Again,
}

/// One member's checker.
#[derive(Debug)]
pub(crate) struct Order {
    room: String,
    receiver: String,
    /// Index: sender number - 1.
    from: Vec<Track>,
    pub(crate) violations: Violations,
    pub(crate) first: Vec<Violation>,
    /// Deliveries out of the room's order, when it is not checked.
    pub(crate) departures: u64,
    /// Each sender's last number.
    count: u32,
    /// Senders whose last message has arrived.
    finished: u32,
}

impl Order {
    /// The checker of `receiver` in `room`, of `users` members sending `count` messages each.
    pub(crate) fn new(room: String, receiver: String, users: u32, count: u32) -> Order {
        Order {
            room,
            receiver,
            from: vec![
                Track {
                    next: 1,
                    gaps: Vec::new()
                };
                users as usize
            ],
            violations: Violations::default(),
            first: Vec::new(),
            departures: 0,
            count,
            finished: 0,
        }
    }

    /// Senders whose last message has arrived (each sender's order being promised, nothing of theirs is
    /// still to come then).
    pub(crate) fn finished_senders(&self) -> u32 {
        self.finished
    }

    /// Message `n` (from 1) of `sender` (from 1) arrived.
    pub(crate) fn deliver(&mut self, sender: u32, n: u32) -> Delivery {
        let t = &mut self.from[sender as usize - 1];
        if n == t.next {
            t.next += 1;
            self.finished += u32::from(n == self.count);
            return Delivery::First;
        }
        let expected = t.next;
        if n > t.next {
            // Missing, unless they come later: judged at the end.
            t.gaps.push(t.next..n);
            t.next = n + 1;
            self.finished += u32::from(n == self.count);
            return Delivery::First;
        }
        let Some(g) = t.gaps.iter().position(|g| g.contains(&n)) else {
            self.record(
                ViolationKind::Duplicate,
                Some((sender, expected)),
                Some((sender, n)),
            );
            return Delivery::Again;
        };
        let gap = t.gaps.swap_remove(g);
        t.gaps.extend(
            [gap.start..n, n + 1..gap.end]
                .into_iter()
                .filter(|r| !r.is_empty()),
        );
        self.record(
            ViolationKind::OutOfOrder,
            Some((sender, expected)),
            Some((sender, n)),
        );
        Delivery::First
    }

    /// The delivery at `position` (from 0, the member's own messages counted) of a paced room of `users`
    /// was `sender`'s `n`: the token ring's order is message `position` from user `position % users + 1`.
    pub(crate) fn ring(&mut self, position: u64, users: u32, seen: (u32, u32), checked: bool) {
        let users = u64::from(users);
        let expected = ((position % users) as u32 + 1, (position / users) as u32 + 1);
        if seen == expected {
            return;
        }
        if checked {
            self.record(ViolationKind::RoomOrder, Some(expected), Some(seen));
        } else {
            self.departures += 1;
        }
    }

    /// A delivery that is not a message of this run (`detail` says why).
    pub(crate) fn corrupt(&mut self, detail: String) {
        *self.violations.get_mut(ViolationKind::Corrupt) += 1;
        if self.first.len() < FIRST {
            let v = self.violation(ViolationKind::Corrupt, None, None);
            self.first.push(Violation {
                detail: Some(detail),
                ..v
            });
        }
    }

    /// At the end: every number skipped and never received is missing; when the member saw the whole run
    /// (`whole`), so is every number of `count` not reached. `me` (from 1) sent its own.
    pub(crate) fn finish(&mut self, count: u32, whole: bool, me: u32) {
        let mut missing = Vec::new();
        for (i, t) in self.from.iter().enumerate() {
            let sender = i as u32 + 1;
            if sender == me {
                continue;
            }
            missing.extend(t.gaps.iter().map(|g| (sender, g.clone())));
            if whole && t.next <= count {
                missing.push((sender, t.next..count + 1));
            }
        }
        for (sender, range) in missing {
            let n = range.end - range.start;
            *self.violations.get_mut(ViolationKind::Missing) += u64::from(n);
            if self.first.len() < FIRST {
                let v = self.violation(ViolationKind::Missing, Some((sender, range.start)), None);
                self.first.push(Violation {
                    detail: (n > 1).then(|| format!("and the {} after it", n - 1)),
                    ..v
                });
            }
        }
    }

    fn record(
        &mut self,
        kind: ViolationKind,
        expected: Option<(u32, u32)>,
        seen: Option<(u32, u32)>,
    ) {
        *self.violations.get_mut(kind) += 1;
        if self.first.len() < FIRST {
            let v = self.violation(kind, expected, seen);
            self.first.push(v);
        }
    }

    fn violation(
        &self,
        kind: ViolationKind,
        expected: Option<(u32, u32)>,
        seen: Option<(u32, u32)>,
    ) -> Violation {
        let id = |(sender, number): (u32, u32)| MessageId {
            sender: format!("Mark{sender}"),
            number: u64::from(number),
        };
        Violation {
            kind,
            room: self.room.clone(),
            receiver: self.receiver.clone(),
            expected: expected.map(id),
            seen: seen.map(id),
            detail: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order() -> Order {
        Order::new("Room1".into(), "Mark1".into(), 3, 5)
    }

    #[test]
    fn in_order_deliveries_break_nothing() {
        let mut o = order();
        for n in 1..=5 {
            assert_eq!(o.deliver(2, n), Delivery::First);
            assert_eq!(o.deliver(3, n), Delivery::First);
        }
        o.finish(5, true, 1);
        assert_eq!(o.violations.total(), 0);
        assert!(o.first.is_empty());
    }

    #[test]
    fn a_dropped_message_is_missing_and_a_late_one_out_of_order() {
        let mut o = order();
        (1..=5).for_each(|n| _ = o.deliver(3, n));
        for n in [1, 2, 4, 5] {
            o.deliver(2, n);
        }
        o.finish(5, true, 1);
        assert_eq!((o.violations.missing, o.violations.total()), (1, 1));
        assert_eq!(
            o.first[0].to_string(),
            "Room1: missing at Mark1: expected Mark2 #3"
        );

        let mut o = order();
        (1..=4).for_each(|n| _ = o.deliver(3, n));
        for n in [1, 3, 2, 4] {
            o.deliver(2, n);
        }
        o.finish(4, true, 1);
        assert_eq!((o.violations.out_of_order, o.violations.total()), (1, 1));
        assert_eq!(
            o.first[0].to_string(),
            "Room1: out of its sender's order at Mark1: expected Mark2 #4, seen Mark2 #2"
        );
    }

    #[test]
    fn a_message_twice_is_a_duplicate_and_the_tail_not_reached_missing() {
        let mut o = order();
        assert_eq!(o.deliver(3, 1), Delivery::First);
        assert_eq!(o.deliver(3, 1), Delivery::Again);
        o.finish(3, true, 1);
        assert_eq!(o.violations.duplicate, 1);
        // Mark2 sent nothing that arrived (3 missing), Mark3's #2 and #3 never came.
        assert_eq!(o.violations.missing, 5);
        // A run cut short judges only what was skipped.
        let mut o = order();
        o.deliver(2, 2);
        o.finish(3, false, 1);
        assert_eq!(o.violations.missing, 1);
    }

    #[test]
    fn the_room_order_is_checked_or_counted() {
        let mut o = order();
        // Position 4 of a room of 3: the ring's Mark2 #2; Mark3 #2 came instead.
        o.ring(4, 3, (3, 2), true);
        o.ring(5, 3, (3, 2), true);
        assert_eq!(o.violations.room_order, 1);
        assert_eq!(
            o.first[0].to_string(),
            "Room1: out of the room's order at Mark1: expected Mark2 #2, seen Mark3 #2"
        );
        let mut o = order();
        o.ring(4, 3, (3, 2), false);
        assert_eq!((o.violations.total(), o.departures), (0, 1));
    }
}
