//! Rooms: created on demand, each with its members, and the fan-out that queues one encoded packet to all of
//! them.
//!
//! A room's state sits behind its own mutex, held (without awaiting) while a packet is queued to every
//! member. That gives each room one total order of chat, enter and exit packets, which every member sees:
//! per-sender order and exactly-once delivery follow. Sending never waits: each member's packet goes to
//! its socket in one non-blocking write (or to its outbox, see `peer`), so the lock is held across those
//! writes but never across an await; a member whose outbox is full is evicted on the spot, so a slow or
//! dead reader costs its room nothing.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use bench_proto::chat::{
    enter_result, EnterRoom, ExitRoom, JStr, JString, Kind, UserInfo, ROOM_TYPE_NORMAL,
};
use bytes::Bytes;

use super::peer::{Peer, PeerId, QueueError};
use super::stats::{add, bump, ChatStats};
use super::uring;

/// Every room, by name (modified-UTF-8 bytes, compared exactly).
#[derive(Debug, Default)]
pub(crate) struct Registry {
    rooms: Mutex<BTreeMap<Bytes, Arc<Room>>>,
    /// Rooms fan chat out through io_uring (`uring`), not one `write` per member.
    uring: bool,
}

#[derive(Debug)]
pub(crate) struct Room {
    name: Bytes,
    state: Mutex<RoomState>,
}

#[derive(Debug, Default)]
struct RoomState {
    members: Vec<Member>,
    /// Set when the room has been removed from the registry; whoever finds it set looks the room up again.
    removed: bool,
    /// Chat goes out through io_uring (see [`Registry`]).
    uring: bool,
}

#[derive(Debug)]
struct Member {
    peer: Arc<Peer>,
    name: JString,
    profile: JString,
}

/// Why an `EnterRoom` was refused (the confirm's result code).
pub(crate) type EnterRefused = i32;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a room lock leaves consistent state (every update is a single push/remove), so
    // a poisoned lock is still usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Registry {
    /// No rooms yet; `uring`: their chat fans out through io_uring.
    pub(crate) fn new(uring: bool) -> Registry {
        Registry {
            rooms: Mutex::default(),
            uring,
        }
    }

    /// The names of the rooms whose name contains `filter` ignoring case (all rooms when it is empty), in
    /// order, as many as fit in `max_bytes` encoded (two bytes of length each, then the name).
    pub(crate) fn names(&self, filter: JStr<'_>, max_bytes: usize) -> Vec<Bytes> {
        let rooms = lock(&self.rooms);
        let needle = filter.to_string_lossy().to_lowercase();
        let mut left = max_bytes;
        rooms
            .keys()
            .filter(|name| {
                filter.is_empty()
                    || JStr::new(name)
                        .is_ok_and(|n| n.to_string_lossy().to_lowercase().contains(&needle))
            })
            .take_while(|name| {
                let cost = 2 + name.len();
                let fits = cost <= left;
                left = left.saturating_sub(cost);
                fits
            })
            .cloned()
            .collect()
    }

    /// Adds `peer` to the room `room_name` (creating it), tells the members already there, and queues the
    /// entrant's confirm listing everyone. Returns the room, or the result code of a refusal.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn enter(
        &self,
        room_name: JStr<'_>,
        peer: &Arc<Peer>,
        user_name: JStr<'_>,
        profile: JStr<'_>,
        max_members: usize,
        stats: &ChatStats,
    ) -> Result<Arc<Room>, EnterRefused> {
        loop {
            let room = {
                let mut rooms = lock(&self.rooms);
                match rooms.get(room_name.as_bytes()) {
                    Some(room) => room.clone(),
                    None => {
                        let name = Bytes::copy_from_slice(room_name.as_bytes());
                        let room = Arc::new(Room {
                            name: name.clone(),
                            state: Mutex::new(RoomState {
                                uring: self.uring,
                                ..RoomState::default()
                            }),
                        });
                        rooms.insert(name, room.clone());
                        bump(&stats.rooms_created);
                        room
                    }
                }
            };
            let mut state = lock(&room.state);
            if state.removed {
                continue;
            }
            if state
                .members
                .iter()
                .any(|m| m.name.as_jstr().eq_ignore_ascii_case(&user_name))
            {
                return Err(enter_result::NAME_TAKEN);
            }
            if state.members.len() >= max_members {
                return Err(enter_result::ROOM_FULL);
            }
            let mut packet = EnterRoom {
                kind: Kind::Indication,
                room_name,
                user_name,
                profile,
                ..EnterRoom::default()
            };
            let mut bytes = Vec::new();
            packet.encode(&mut bytes);
            state.fan_out(&room.name, peer.id, &bytes, stats);
            state.members.push(Member {
                peer: peer.clone(),
                name: user_name.into(),
                profile: profile.into(),
            });

            packet.kind = Kind::Confirm;
            packet.result = enter_result::OKAY;
            packet.room_type = ROOM_TYPE_NORMAL;
            packet.count = state.members.len() as i32;
            packet.users = state
                .members
                .iter()
                .map(|m| UserInfo {
                    name: m.name.as_jstr(),
                    profile: m.profile.as_jstr(),
                    ..UserInfo::default()
                })
                .collect();
            bytes.clear();
            packet.encode(&mut bytes);
            drop(packet);
            if peer.send(&bytes) == Err(QueueError::Full) {
                evict(peer, stats);
            }
            drop(state);
            return Ok(room);
        }
    }

    /// Removes `peer` from `room` (if still there), tells the others, and drops the room once it is empty.
    pub(crate) fn leave(&self, room: &Arc<Room>, peer: PeerId, stats: &ChatStats) {
        let empty = {
            let mut state = lock(&room.state);
            if let Some(i) = state.members.iter().position(|m| m.peer.id == peer) {
                let gone = state.members.remove(i);
                state.announce_exit(&room.name, &gone, stats);
            }
            state.members.is_empty()
        };
        if empty {
            // Lock order: registry, then room (as nowhere else holds a room lock while taking the registry's).
            let mut rooms = lock(&self.rooms);
            let mut state = lock(&room.state);
            if state.members.is_empty() && !state.removed {
                state.removed = true;
                rooms.remove(&room.name);
            }
        }
    }
}

impl Room {
    pub(crate) fn name(&self) -> &[u8] {
        &self.name
    }

    /// Queues `packet` (already encoded) to every member but `from`. Members found slow are evicted, and
    /// the others told they left.
    pub(crate) fn broadcast(&self, from: PeerId, packet: &[u8], stats: &ChatStats) {
        lock(&self.state).fan_out(&self.name, from, packet, stats);
    }
}

impl RoomState {
    fn fan_out(&mut self, room: &Bytes, from: PeerId, packet: &[u8], stats: &ChatStats) {
        let mut queued = 0;
        let mut evicted = false;
        let mut done = |peer: &Peer, sent: Result<(), QueueError>| match sent {
            Ok(()) => queued += 1,
            Err(QueueError::Full) => {
                evict(peer, stats);
                evicted = true;
            }
            Err(QueueError::Closed) => evicted = true,
        };
        // Members in join order, starting after the sender and wrapping round: no member is always served
        // last, and whoever joined after the sender (in a turn-taking room, who speaks next) is not kept
        // waiting behind everyone who joined before.
        let n = self.members.len();
        let (start, count) = match self.members.iter().position(|m| m.peer.id == from) {
            Some(i) => (i + 1, n - 1),
            // The sender is not (or no longer) a member: everyone gets it.
            None => (0, n),
        };
        let order = (0..count).map(|k| (start + k) % n);
        let members = &self.members;
        let by_uring =
            self.uring && uring::fan_out(order.clone(), |i| &members[i].peer, packet, &mut done);
        if !by_uring {
            for i in order {
                let peer = &members[i].peer;
                done(peer, peer.send(packet));
            }
        }
        add(&stats.deliveries, queued);
        if evicted {
            self.remove_killed(room, stats);
        }
    }

    /// Removes every member whose connection is closing and announces each exit (which may evict more).
    fn remove_killed(&mut self, room: &Bytes, stats: &ChatStats) {
        while let Some(i) = self.members.iter().position(|m| m.peer.kill.is_killed()) {
            let gone = self.members.remove(i);
            self.announce_exit(room, &gone, stats);
        }
    }

    fn announce_exit(&mut self, room: &Bytes, gone: &Member, stats: &ChatStats) {
        let Ok(room_name) = JStr::new(room) else {
            return;
        };
        let packet = ExitRoom {
            kind: Kind::Indication,
            room_name,
            user_name: gone.name.as_jstr(),
        };
        let mut bytes = Vec::new();
        packet.encode(&mut bytes);
        self.fan_out(room, gone.peer.id, &bytes, stats);
    }
}

/// Disconnects a member whose queue is full.
fn evict(peer: &Peer, stats: &ChatStats) {
    if peer.kill.kill() {
        bump(&stats.slow_disconnects);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use bench_proto::chat::{decode, Chat, Packet};

    use super::super::peer::Limits;
    use super::*;

    fn js(s: &'static str) -> JStr<'static> {
        JStr::new(s.as_bytes()).unwrap()
    }

    fn limits(per_connection: usize) -> Arc<Limits> {
        Arc::new(Limits {
            per_connection,
            total: usize::MAX / 2,
            queued: AtomicUsize::new(0),
        })
    }

    fn member(
        registry: &Registry,
        id: u64,
        name: &'static str,
        send_buffer: usize,
        stats: &Arc<ChatStats>,
    ) -> (Arc<Peer>, Arc<Room>) {
        let peer = Arc::new(Peer::new(id, limits(send_buffer), stats.clone(), None));
        let room = registry
            .enter(js("Room1"), &peer, js(name), js(""), 10, stats)
            .unwrap();
        (peer, room)
    }

    /// The kinds and user names of the packets waiting in an outbox.
    fn drain(peer: &Peer) -> Vec<(u16, String)> {
        let bytes = peer.drain();
        let mut at = 0;
        let mut out = Vec::new();
        while let Some((p, n)) = decode(&bytes[at..], 1 << 16).unwrap() {
            at += n;
            let id = p.id();
            let who = match p {
                Packet::EnterRoom(e) => e.user_name.to_string(),
                Packet::ExitRoom(x) => x.user_name.to_string(),
                Packet::Chat(c) => c.user_name.to_string(),
                other => format!("{other:?}"),
            };
            out.push((id, who));
        }
        assert_eq!(at, bytes.len());
        out
    }

    #[test]
    fn a_full_outbox_evicts_its_member_and_the_room_is_told() {
        let (registry, stats) = (Registry::new(false), Arc::new(ChatStats::default()));
        let mut chat = Vec::new();
        Chat {
            kind: Kind::Indication,
            room_name: js("Room1"),
            user_name: js("Ann"),
            text: js("hello there"),
            ..Chat::default()
        }
        .encode(&mut chat);
        let mut cy_entry = Vec::new();
        EnterRoom {
            kind: Kind::Indication,
            room_name: js("Room1"),
            user_name: js("Cy"),
            ..EnterRoom::default()
        }
        .encode(&mut cy_entry);
        let (a, room) = member(&registry, 1, "Ann", 1 << 16, &stats);
        // Bob's outbox holds Cy's entry, but not that and the chat too.
        let (b, _) = member(&registry, 2, "Bob", cy_entry.len() + chat.len() - 1, &stats);
        drain(&b);
        let (c, _) = member(&registry, 3, "Cy", 1 << 16, &stats);
        assert_eq!(b.drain(), cy_entry.clone());
        b.send(&cy_entry).unwrap();
        drain(&a);
        drain(&c);
        room.broadcast(a.id, &chat, &stats);
        assert!(b.kill.is_killed());
        assert_eq!(stats.snapshot().slow_disconnects, 1);
        // Cy gets the message, then Bob's exit; Ann only Bob's exit.
        let exit = bench_proto::chat::id::EXIT_ROOM;
        assert_eq!(
            drain(&c),
            [
                (bench_proto::chat::id::CHAT, "Ann".to_owned()),
                (exit, "Bob".to_owned())
            ]
        );
        assert_eq!(drain(&a), [(exit, "Bob".to_owned())]);
        // Bob's own leaving later finds him gone: no second exit.
        registry.leave(&room, b.id, &stats);
        assert!(drain(&a).is_empty());
    }

    #[test]
    fn rooms_exist_while_they_have_members() {
        let (registry, stats) = (Registry::new(false), Arc::new(ChatStats::default()));
        let (a, room) = member(&registry, 1, "Ann", 1 << 16, &stats);
        let (b, _) = member(&registry, 2, "Bob", 1 << 16, &stats);
        assert_eq!(
            registry.names(JStr::EMPTY, usize::MAX),
            [Bytes::from_static(b"Room1")]
        );
        assert_eq!(registry.names(js("ROOM"), usize::MAX).len(), 1);
        assert!(registry.names(js("x"), usize::MAX).is_empty());
        assert!(
            registry.names(JStr::EMPTY, 6).is_empty(),
            "7 bytes do not fit in 6"
        );
        registry.leave(&room, a.id, &stats);
        assert_eq!(registry.names(JStr::EMPTY, usize::MAX).len(), 1);
        registry.leave(&room, b.id, &stats);
        assert!(registry.names(JStr::EMPTY, usize::MAX).is_empty());
        // A new entrant creates a new room of the same name.
        let (_c, again) = member(&registry, 3, "Cy", 1 << 16, &stats);
        assert!(!Arc::ptr_eq(&room, &again));
        assert_eq!(stats.snapshot().rooms_created, 2);
    }
}
