//! Chat mode's part of the results document (VolanoMark): the score, each run and how it ended, what was
//! checked of every delivery and what broke it.

use std::fmt;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Chat mode (VolanoMark): the score and each run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatResults {
    /// Messages delivered per second, averaged over `scored_runs` (VolanoMark's score).
    pub score_msg_per_s: f64,
    pub messages_sent: u64,
    pub messages_received: u64,
    pub runs: Vec<ChatRun>,
    /// The `run` numbers of the runs the score averages (VolanoMark drops the first run); a run cut short
    /// when none completed.
    pub scored_runs: Vec<u64>,
    /// What was checked of the order of deliveries.
    #[serde(default)]
    pub check: ChatCheck,
    /// Deliveries that broke what was checked, by kind (each also counted in `counts.errors.validation`).
    #[serde(default)]
    pub violations: Violations,
    /// The first few of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub first_violations: Vec<Violation>,
    /// Paced runs checked per sender only: deliveries that came out of the room's order (the token ring's),
    /// which the protocol does not promise; counted, not errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub room_order_departures: Option<u64>,
    /// The gaps between consecutive deliveries at each member, over the scored runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inter_arrival: Option<InterArrival>,
}

/// The gaps between consecutive deliveries at each member (all members together), and the share near 40 ms,
/// where a server that leaves TCP_NODELAY off puts them: Nagle's algorithm holds each small write until the
/// previous one is acknowledged, and the client acknowledges late (Linux delays an ACK 40 ms at least).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct InterArrival {
    pub count: u64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    /// Share of the gaps within 40 ms ± 20 % (32–48 ms).
    pub near_40ms: f64,
    /// Share of the gaps in each 16 ms beside that window (16–32 ms and 48–64 ms, halved): what a window of
    /// its width holds where nothing clusters. Gaps spread wide by a busy machine put about as many there as
    /// near 40 ms; Nagle's algorithm puts almost none. (0 in documents written before it was measured.)
    #[serde(default)]
    pub beside_40ms: f64,
}

/// Gaps within this many µs around 40 ms count as near it.
const NEAR_40MS_US: (u64, u64) = (32_000, 48_000);
/// The windows of the same width beside it, below and above.
const BESIDE_40MS_US: [(u64, u64); 2] = [(16_000, 31_900), (48_100, 64_000)];

impl InterArrival {
    /// The summary of a histogram of gaps (µs).
    pub fn of(gaps: &Histogram<u64>) -> InterArrival {
        let count = gaps.len();
        let share = |n: u64| {
            if count > 0 {
                n as f64 / count as f64
            } else {
                0.0
            }
        };
        let near = gaps.count_between(NEAR_40MS_US.0, NEAR_40MS_US.1);
        let beside: u64 = BESIDE_40MS_US
            .iter()
            .map(|&(lo, hi)| gaps.count_between(lo, hi))
            .sum();
        InterArrival {
            count,
            p50_us: gaps.value_at_quantile(0.5),
            p90_us: gaps.value_at_quantile(0.9),
            p99_us: gaps.value_at_quantile(0.99),
            near_40ms: share(near),
            beside_40ms: share(beside) / 2.0,
        }
    }

    /// The gaps cluster near 40 ms: at least 100 of them, a tenth within 32–48 ms (a server relaying
    /// without TCP_NODELAY to rooms of 2 put 80 % of them there, to rooms of 5 23 %; with it, none), and
    /// three times as many as in a window of that width beside it. Without the last, a busy machine whose
    /// gaps spread over 0–300 ms was taken for Nagle: 13 % of its gaps fell within 32–48 ms by chance.
    pub fn nagle_suspected(&self) -> bool {
        self.count >= 100 && self.near_40ms >= 0.1 && self.near_40ms >= 3.0 * self.beside_40ms
    }

    /// What the gaps say of the server, when they point at Nagle's algorithm.
    pub fn nagle_note(&self) -> Option<String> {
        self.nagle_suspected().then(|| {
            format!(
                "deliveries arrive in gaps near 40 ms ({:.0} % of {} gaps within 32–48 ms, {:.0} % in each 16 ms \
                 beside it, median {:.1} ms): the \
                 server most likely leaves TCP_NODELAY off, so Nagle's algorithm holds each small write until the \
                 client's delayed ACK (as the VOLANO product build does); that caps small rooms at a few hundred \
                 messages/s, whatever the CPU",
                self.near_40ms * 100.0,
                self.count,
                self.beside_40ms * 100.0,
                self.p50_us as f64 / 1000.0
            )
        })
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatRun {
    /// Numbered from 1 in the order run.
    pub run: u64,
    pub elapsed_s: f64,
    pub messages_sent: u64,
    pub messages_received: u64,
    pub msg_per_s: f64,
    /// How it ended; every other ending than `completed` leaves it cut short.
    #[serde(default)]
    pub end: RunEnd,
    /// The run's first few errors in words (`Mark20 in Room1: waited more than 30s for the next packet`):
    /// what cut it short, for a reader of the document alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

/// How one chat run ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunEnd {
    /// Every user finished the protocol.
    #[default]
    Completed,
    /// Not every user entered: the clock never started.
    NotStarted,
    /// A user failed (the server closed or reset its connection, answered what is not the protocol, or
    /// sent nothing within the timeout): the others were stopped.
    Failed,
    /// SIGINT or SIGTERM.
    Interrupted,
    /// The run's deadline passed.
    Deadline,
}

impl RunEnd {
    /// Started, and cut short before every user finished.
    pub fn cut_short(self) -> bool {
        matches!(
            self,
            RunEnd::Failed | RunEnd::Interrupted | RunEnd::Deadline
        )
    }

    /// The server did not let the run complete (not every user entered, one failed, or the run outlasted
    /// its deadline): VolanoMark would have no score, so what was measured until then is read, never
    /// compared. A run cut short by a signal is not failed: it measured what it could.
    pub fn failed(self) -> bool {
        matches!(self, RunEnd::NotStarted | RunEnd::Failed | RunEnd::Deadline)
    }
}

impl fmt::Display for RunEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RunEnd::Completed => "completed",
            RunEnd::NotStarted => "not started (not every user entered)",
            RunEnd::Failed => "cut short: a user failed",
            RunEnd::Interrupted => "cut short by SIGINT/SIGTERM",
            RunEnd::Deadline => "cut short at its deadline",
        })
    }
}

/// The order checked of deliveries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChatCheck {
    /// Each sender's messages reach each member in the order sent, none lost, none twice: what the
    /// protocol promises (bench-client's default).
    #[default]
    PerSender,
    /// And every member sees the room's messages in one order (`--check-room-order`): what a server
    /// relaying under a room lock, as bench-server does, adds.
    RoomOrder,
}

impl fmt::Display for ChatCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ChatCheck::PerSender => {
                "per sender (each sender's messages once each, in the order sent)"
            }
            ChatCheck::RoomOrder => {
                "room order (per sender, and the room's messages in one order for every member)"
            }
        })
    }
}

/// What a delivery broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    /// A message never arrived (a later one of its sender did, or the run ended without it).
    Missing,
    /// A message arrived twice.
    Duplicate,
    /// A message arrived after a later one of its sender.
    OutOfOrder,
    /// Not the room's next message (`--check-room-order`).
    RoomOrder,
    /// Not a message of this run: another room's, an unknown sender, a text or number changed.
    Corrupt,
}

impl ViolationKind {
    pub const ALL: [ViolationKind; 5] = [
        ViolationKind::Missing,
        ViolationKind::Duplicate,
        ViolationKind::OutOfOrder,
        ViolationKind::RoomOrder,
        ViolationKind::Corrupt,
    ];
}

impl fmt::Display for ViolationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ViolationKind::Missing => "missing",
            ViolationKind::Duplicate => "duplicate",
            ViolationKind::OutOfOrder => "out of its sender's order",
            ViolationKind::RoomOrder => "out of the room's order",
            ViolationKind::Corrupt => "corrupt",
        })
    }
}

/// Violations counted by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violations {
    pub missing: u64,
    pub duplicate: u64,
    pub out_of_order: u64,
    pub room_order: u64,
    pub corrupt: u64,
}

impl Violations {
    pub fn get_mut(&mut self, kind: ViolationKind) -> &mut u64 {
        match kind {
            ViolationKind::Missing => &mut self.missing,
            ViolationKind::Duplicate => &mut self.duplicate,
            ViolationKind::OutOfOrder => &mut self.out_of_order,
            ViolationKind::RoomOrder => &mut self.room_order,
            ViolationKind::Corrupt => &mut self.corrupt,
        }
    }

    pub fn get(&self, kind: ViolationKind) -> u64 {
        let mut copy = *self;
        *copy.get_mut(kind)
    }

    pub fn total(&self) -> u64 {
        ViolationKind::ALL.iter().map(|&k| self.get(k)).sum()
    }

    pub fn add(&mut self, other: &Violations) {
        for k in ViolationKind::ALL {
            *self.get_mut(k) += other.get(k);
        }
    }
}

/// One message of a sender: `Mark5` #7 (numbered from 1 in the order sent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageId {
    pub sender: String,
    pub number: u64,
}

impl fmt::Display for MessageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} #{}", self.sender, self.number)
    }
}

/// One delivery that broke the check: where, which message was expected and which was seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    pub kind: ViolationKind,
    pub room: String,
    /// The member it was delivered to.
    pub receiver: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<MessageId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen: Option<MessageId>,
    /// What was wrong, when the message is corrupt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} at {}", self.room, self.kind, self.receiver)?;
        if let Some(e) = &self.expected {
            write!(f, ": expected {e}")?;
        }
        match (&self.seen, &self.expected) {
            (Some(s), Some(_)) => write!(f, ", seen {s}")?,
            (Some(s), None) => write!(f, ": seen {s}")?,
            (None, _) => {}
        }
        if let Some(d) = &self.detail {
            write!(f, " ({d})")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_near_40_ms_point_at_nagle() {
        let mut h = Histogram::<u64>::new(3).unwrap();
        for _ in 0..360 {
            h.record(150).unwrap();
        }
        for _ in 0..39 {
            h.record(40_500).unwrap();
        }
        assert_eq!(InterArrival::of(&h).nagle_note(), None, "under a tenth");
        h.record(40_500).unwrap();
        let gaps = InterArrival::of(&h);
        assert!((gaps.near_40ms - 0.1).abs() < 1e-9, "{gaps:?}");
        let note = gaps.nagle_note().expect("a tenth near 40 ms");
        assert!(
            note.starts_with("deliveries arrive in gaps near 40 ms (10 % of 400 gaps"),
            "{note}"
        );
        // Too few gaps say nothing.
        let mut few = Histogram::<u64>::new(3).unwrap();
        few.record(40_000).unwrap();
        assert!(!InterArrival::of(&few).nagle_suspected());
    }

    /// Gaps spread evenly over 0–160 ms (a busy machine) put a tenth within 32–48 ms too, and as many beside
    /// it: no cluster, no Nagle.
    #[test]
    fn gaps_spread_wide_are_not_nagle() {
        let mut h = Histogram::<u64>::new(3).unwrap();
        for ms in 0..160 {
            for us in [100, 400, 700] {
                h.record(ms * 1000 + us).unwrap();
            }
        }
        let gaps = InterArrival::of(&h);
        assert!(gaps.near_40ms >= 0.1, "{gaps:?}");
        assert!((gaps.beside_40ms - gaps.near_40ms).abs() < 0.01, "{gaps:?}");
        assert!(!gaps.nagle_suspected(), "{gaps:?}");
        // The same, with a third of them again at 40 ms: a cluster.
        for _ in 0..240 {
            h.record(40_500).unwrap();
        }
        assert!(InterArrival::of(&h).nagle_suspected());
    }

    #[test]
    fn a_violation_says_where_and_what() {
        let v = Violation {
            kind: ViolationKind::Duplicate,
            room: "Room1".into(),
            receiver: "Mark3".into(),
            expected: Some(MessageId {
                sender: "Mark5".into(),
                number: 7,
            }),
            seen: Some(MessageId {
                sender: "Mark5".into(),
                number: 6,
            }),
            detail: None,
        };
        assert_eq!(
            v.to_string(),
            "Room1: duplicate at Mark3: expected Mark5 #7, seen Mark5 #6"
        );
        let json = serde_json::to_string(&v).unwrap();
        assert!(json.contains(r#""kind":"duplicate""#), "{json}");
        assert_eq!(serde_json::from_str::<Violation>(&json).unwrap(), v);
    }

    #[test]
    fn older_documents_read_as_completed_per_sender_runs() {
        let r: ChatRun = serde_json::from_str(
            r#"{"run":1,"elapsed_s":1.0,"messages_sent":2,"messages_received":2,"msg_per_s":4.0}"#,
        )
        .unwrap();
        assert_eq!(r.end, RunEnd::Completed);
        let c: ChatResults = serde_json::from_str(
            r#"{"score_msg_per_s":1.0,"messages_sent":1,"messages_received":1,"runs":[],"scored_runs":[]}"#,
        )
        .unwrap();
        assert_eq!((c.check, c.violations.total()), (ChatCheck::PerSender, 0));
    }
}
