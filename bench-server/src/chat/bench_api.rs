//! The fan-out step alone, for the criterion benchmark: a room of members whose outboxes the caller drains
//! in place of their writers. Not part of the server's API.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use bench_proto::chat::{Chat, JString, Kind, MARK_TEXT_TRIMMED};

use super::peer::{Limits, Peer};
use super::room::{Registry, Room};
use super::stats::ChatStats;

/// A room of `members` members, the first of which sends.
#[derive(Debug)]
pub struct FanOutRoom {
    room: Arc<Room>,
    sender: Arc<Peer>,
    members: Vec<Arc<Peer>>,
    stats: Arc<ChatStats>,
    scratch: Vec<u8>,
    room_name: JString,
    user_name: JString,
    text: JString,
}

impl FanOutRoom {
    pub fn new(members: usize) -> FanOutRoom {
        let registry = Registry::default();
        let stats = Arc::new(ChatStats::default());
        let limits = Arc::new(Limits {
            per_connection: 1 << 20,
            total: usize::MAX / 2,
            queued: AtomicUsize::new(0),
        });
        let room_name = JString::new("Room1").expect("ASCII");
        let profile = JString::new("profile").expect("ASCII");
        let mut peers = Vec::new();
        let mut room = None;
        for i in 0..members.max(1) {
            let peer = Arc::new(Peer::new(i as u64 + 1, limits.clone(), stats.clone(), None));
            let name = JString::new(&format!("Mark{}", i + 1)).expect("ASCII");
            let entered = registry.enter(
                room_name.as_jstr(),
                &peer,
                name.as_jstr(),
                profile.as_jstr(),
                usize::MAX,
                &stats,
            );
            room = Some(entered.expect("an empty registry lets everyone in"));
            peers.push(peer);
        }
        let mut fan_out = FanOutRoom {
            room: room.expect("at least one member"),
            sender: peers[0].clone(),
            members: peers,
            stats,
            scratch: Vec::new(),
            room_name,
            user_name: JString::new("Mark1").expect("ASCII"),
            text: JString::new(MARK_TEXT_TRIMMED).expect("ASCII"),
        };
        fan_out.drain();
        fan_out
    }

    /// What the server does for one VolanoMark chat message: encode the indication once, copy it into
    /// every other member's outbox; then what the members' writers do: take it out. Returns how many
    /// members got it.
    pub fn send_one(&mut self) -> usize {
        let indication = Chat {
            kind: Kind::Indication,
            room_name: self.room_name.as_jstr(),
            user_name: self.user_name.as_jstr(),
            text: self.text.as_jstr(),
            ..Chat::default()
        };
        self.scratch.clear();
        indication.encode(&mut self.scratch);
        self.room
            .broadcast(self.sender.id, &self.scratch, &self.stats);
        self.drain()
    }

    fn drain(&mut self) -> usize {
        self.members
            .iter()
            .filter(|m| !m.drain().is_empty())
            .count()
    }
}
