//! The fan-out step alone, for the criterion benchmark: a room of members whose queues the caller drains
//! in place of their writers. Not part of the server's API.

use std::sync::Arc;

use bench_proto::chat::{Chat, JString, Kind, MARK_TEXT_TRIMMED};
use bytes::Bytes;
use tokio::sync::mpsc;

use super::arena::Arena;
use super::peer::Peer;
use super::room::{Registry, Room};
use super::stats::ChatStats;

/// A room of `members` members, the first of which sends.
#[derive(Debug)]
pub struct FanOutRoom {
    room: Arc<Room>,
    sender: Arc<Peer>,
    queues: Vec<mpsc::Receiver<Bytes>>,
    arena: Arena,
    stats: ChatStats,
    room_name: JString,
    user_name: JString,
    text: JString,
}

impl FanOutRoom {
    pub fn new(members: usize) -> FanOutRoom {
        let registry = Registry::default();
        let stats = ChatStats::default();
        let mut arena = Arena::default();
        let room_name = JString::new("Room1").expect("ASCII");
        let profile = JString::new("profile").expect("ASCII");
        let mut peers = Vec::new();
        let mut queues = Vec::new();
        let mut room = None;
        for i in 0..members.max(1) {
            let (peer, rx) = Peer::new(i as u64 + 1, 1024);
            let peer = Arc::new(peer);
            let name = JString::new(&format!("Mark{}", i + 1)).expect("ASCII");
            let entered = registry.enter(
                room_name.as_jstr(),
                &peer,
                name.as_jstr(),
                profile.as_jstr(),
                usize::MAX,
                &mut arena,
                &stats,
            );
            room = Some(entered.expect("an empty registry lets everyone in"));
            peers.push(peer);
            queues.push(rx);
        }
        let mut fan_out = FanOutRoom {
            room: room.expect("at least one member"),
            sender: peers[0].clone(),
            queues,
            arena,
            stats,
            room_name,
            user_name: JString::new("Mark1").expect("ASCII"),
            text: JString::new(MARK_TEXT_TRIMMED).expect("ASCII"),
        };
        fan_out.drain();
        fan_out
    }

    /// What the server does for one VolanoMark chat message: encode the indication once, queue it to every
    /// other member; then what the members' writers do: take it off their queues. Returns the deliveries.
    pub fn send_one(&mut self) -> usize {
        let indication = Chat {
            kind: Kind::Indication,
            room_name: self.room_name.as_jstr(),
            user_name: self.user_name.as_jstr(),
            text: self.text.as_jstr(),
            ..Chat::default()
        };
        let bytes = self.arena.encode(|out| indication.encode(out));
        self.room
            .broadcast(self.sender.id, &bytes, &mut self.arena, &self.stats);
        self.drain()
    }

    fn drain(&mut self) -> usize {
        let mut n = 0;
        for q in &mut self.queues {
            while q.try_recv().is_ok() {
                n += 1;
            }
        }
        n
    }
}
