//! Rooms: created on demand, each with its members, and the fan-out that queues one encoded packet to all of
//! them.
//!
//! A room's state sits behind its own mutex, held (without awaiting) while a packet is queued to every
//! member. That gives each room one total order of chat, enter and exit packets, which every member sees:
//! per-sender order and exactly-once delivery follow. Queuing never waits: a member whose queue is full is
//! evicted on the spot, so a slow or dead reader costs its room nothing.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use bench_proto::chat::{
    enter_result, EnterRoom, ExitRoom, JStr, JString, Kind, UserInfo, ROOM_TYPE_NORMAL,
};
use bytes::{Bytes, BytesMut};

use super::arena::Arena;
use super::peer::{Peer, PeerId, QueueError};
use super::stats::{add, bump, ChatStats};

/// Every room, by name (modified-UTF-8 bytes, compared exactly).
#[derive(Debug, Default)]
pub(crate) struct Registry {
    rooms: Mutex<BTreeMap<Bytes, Arc<Room>>>,
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
    /// The names of the rooms whose name contains `filter` ignoring case (all rooms when it is empty).
    pub(crate) fn names(&self, filter: JStr<'_>) -> Vec<Bytes> {
        let rooms = lock(&self.rooms);
        if filter.is_empty() {
            return rooms.keys().cloned().collect();
        }
        let needle = filter.to_string_lossy().to_lowercase();
        rooms
            .keys()
            .filter(|name| {
                JStr::new(name).is_ok_and(|n| n.to_string_lossy().to_lowercase().contains(&needle))
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
        arena: &mut Arena,
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
                            state: Mutex::default(),
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
            let indication = arena.encode(|out| packet.encode(out));
            state.fan_out(&room.name, peer.id, &indication, arena, stats);
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
            let confirm = arena.encode(|out| packet.encode(out));
            drop(packet);
            if peer.send(confirm) == Err(QueueError::Full) {
                evict(peer, stats);
            }
            drop(state);
            return Ok(room);
        }
    }

    /// Removes `peer` from `room` (if still there), tells the others, and drops the room once it is empty.
    pub(crate) fn leave(
        &self,
        room: &Arc<Room>,
        peer: PeerId,
        arena: &mut Arena,
        stats: &ChatStats,
    ) {
        let empty = {
            let mut state = lock(&room.state);
            if let Some(i) = state.members.iter().position(|m| m.peer.id == peer) {
                let gone = state.members.remove(i);
                state.announce_exit(&room.name, &gone, arena, stats);
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
    pub(crate) fn broadcast(
        &self,
        from: PeerId,
        packet: &Bytes,
        arena: &mut Arena,
        stats: &ChatStats,
    ) {
        lock(&self.state).fan_out(&self.name, from, packet, arena, stats);
    }
}

impl RoomState {
    fn fan_out(
        &mut self,
        room: &Bytes,
        from: PeerId,
        packet: &Bytes,
        arena: &mut Arena,
        stats: &ChatStats,
    ) {
        let mut queued = 0;
        let mut evicted = false;
        for m in &self.members {
            if m.peer.id == from {
                continue;
            }
            match m.peer.send(packet.clone()) {
                Ok(()) => queued += 1,
                Err(QueueError::Full) => {
                    evict(&m.peer, stats);
                    evicted = true;
                }
                Err(QueueError::Closed) => evicted = true,
            }
        }
        add(&stats.deliveries, queued);
        if evicted {
            self.remove_killed(room, arena, stats);
        }
    }

    /// Removes every member whose connection is closing and announces each exit (which may evict more).
    fn remove_killed(&mut self, room: &Bytes, arena: &mut Arena, stats: &ChatStats) {
        while let Some(i) = self.members.iter().position(|m| m.peer.kill.is_killed()) {
            let gone = self.members.remove(i);
            self.announce_exit(room, &gone, arena, stats);
        }
    }

    fn announce_exit(&mut self, room: &Bytes, gone: &Member, arena: &mut Arena, stats: &ChatStats) {
        let Ok(room_name) = JStr::new(room) else {
            return;
        };
        let packet = ExitRoom {
            kind: Kind::Indication,
            room_name,
            user_name: gone.name.as_jstr(),
        };
        let indication = arena.encode(|out: &mut BytesMut| packet.encode(out));
        self.fan_out(room, gone.peer.id, &indication, arena, stats);
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
    use bench_proto::chat::{decode, Packet};
    use tokio::sync::mpsc;

    use super::*;

    fn js(s: &'static str) -> JStr<'static> {
        JStr::new(s.as_bytes()).unwrap()
    }

    fn member(
        registry: &Registry,
        id: u64,
        name: &'static str,
        queue: usize,
        arena: &mut Arena,
        stats: &ChatStats,
    ) -> (Arc<Peer>, mpsc::Receiver<Bytes>, Arc<Room>) {
        let (peer, rx) = Peer::new(id, queue);
        let peer = Arc::new(peer);
        let room = registry
            .enter(js("Room1"), &peer, js(name), js(""), 10, arena, stats)
            .unwrap();
        (peer, rx, room)
    }

    /// The kinds and user names of the packets waiting in a queue.
    fn drain(rx: &mut mpsc::Receiver<Bytes>) -> Vec<(u16, String)> {
        let mut out = Vec::new();
        while let Ok(bytes) = rx.try_recv() {
            let (p, _) = decode(&bytes, 1 << 16).unwrap().unwrap();
            let id = p.id();
            let who = match p {
                Packet::EnterRoom(e) => e.user_name.to_string(),
                Packet::ExitRoom(x) => x.user_name.to_string(),
                Packet::Chat(c) => c.user_name.to_string(),
                other => format!("{other:?}"),
            };
            out.push((id, who));
        }
        out
    }

    #[test]
    fn a_full_queue_evicts_its_member_and_the_room_is_told() {
        let (registry, stats, mut arena) =
            (Registry::default(), ChatStats::default(), Arena::default());
        let (a, mut a_rx, room) = member(&registry, 1, "Ann", 8, &mut arena, &stats);
        // Bob's queue holds two packets: his enter confirm and Cy's entry fill it.
        let (b, _b_rx, _) = member(&registry, 2, "Bob", 2, &mut arena, &stats);
        let (_c, mut c_rx, _) = member(&registry, 3, "Cy", 8, &mut arena, &stats);
        drain(&mut a_rx);
        drain(&mut c_rx);
        let chat = Bytes::from_static(b"not decoded by the room");
        room.broadcast(a.id, &chat, &mut arena, &stats);
        assert!(b.kill.is_killed());
        assert_eq!(stats.snapshot().slow_disconnects, 1);
        // Cy gets the message, then Bob's exit; Ann only Bob's exit.
        assert_eq!(c_rx.try_recv().unwrap(), chat);
        assert_eq!(
            drain(&mut c_rx),
            [(bench_proto::chat::id::EXIT_ROOM, "Bob".to_owned())]
        );
        assert_eq!(
            drain(&mut a_rx),
            [(bench_proto::chat::id::EXIT_ROOM, "Bob".to_owned())]
        );
        // Bob's own leaving later finds him gone: no second exit.
        registry.leave(&room, b.id, &mut arena, &stats);
        assert!(drain(&mut a_rx).is_empty());
    }

    #[test]
    fn rooms_exist_while_they_have_members() {
        let (registry, stats, mut arena) =
            (Registry::default(), ChatStats::default(), Arena::default());
        let (a, _a_rx, room) = member(&registry, 1, "Ann", 8, &mut arena, &stats);
        let (b, _b_rx, _) = member(&registry, 2, "Bob", 8, &mut arena, &stats);
        assert_eq!(registry.names(JStr::EMPTY), [Bytes::from_static(b"Room1")]);
        assert_eq!(registry.names(js("ROOM")).len(), 1);
        assert!(registry.names(js("x")).is_empty());
        registry.leave(&room, a.id, &mut arena, &stats);
        assert_eq!(registry.names(JStr::EMPTY).len(), 1);
        registry.leave(&room, b.id, &mut arena, &stats);
        assert!(registry.names(JStr::EMPTY).is_empty());
        // A new entrant creates a new room of the same name.
        let (_c, _c_rx, again) = member(&registry, 3, "Cy", 8, &mut arena, &stats);
        assert!(!Arc::ptr_eq(&room, &again));
        assert_eq!(stats.snapshot().rooms_created, 2);
    }
}
