//! One client connection: reads packets, answers the requester, fans chat out to its rooms, and on the way
//! out leaves every room it was in. A protocol violation or an over-limit packet closes this connection
//! only.

use std::sync::Arc;

use bench_proto::chat::{
    access_result, decode, enter_result, Access, Chat, EnterRoom, ExitRoom, JStr, JString, Kind,
    Packet, RoomList,
};
use bytes::{Buf, BytesMut};
use tokio::io::AsyncReadExt;
use tokio::net::tcp::OwnedReadHalf;
use tokio::net::TcpStream;
use tokio::time::{interval_at, Instant, MissedTickBehavior};

use super::config::ChatConfig;
use super::peer::{Limits, Peer, PeerId, QueueError};
use super::room::{Registry, Room};
use super::stats::{bump, ChatStats};
use crate::accept::Slot;

/// Room names listed in one `Access` or `RoomList` confirm stop at this many bytes (the first names in
/// order), so one request cannot make an answer of unbounded size however many rooms exist.
const ROOM_LIST_BYTES: usize = 32 * 1024;

/// What every connection shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) config: ChatConfig,
    pub(crate) stats: Arc<ChatStats>,
    pub(crate) registry: Registry,
    pub(crate) limits: Arc<Limits>,
}

/// Why a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// The client closed it.
    Eof,
    /// Killed: evicted as a slow reader, a write failed, or shutdown.
    Killed,
    /// Two idle periods without a byte from the client.
    Idle,
    /// A packet begun but not completed within the packet timeout (a trickle of bytes).
    SlowPacket,
    /// Not the protocol (bad packet, wrong first packet, empty name, entering a room twice).
    Malformed,
    /// A packet or field over a limit.
    Oversized,
    /// A read failed.
    Io,
}

/// Serves one accepted connection until it ends; holds `_slot` (a connection slot) until then.
pub(crate) async fn serve(stream: TcpStream, shared: Arc<Shared>, id: PeerId, _slot: Slot) {
    let (rd, wr) = stream.into_split();
    let peer = Arc::new(Peer::new(
        id,
        shared.limits.clone(),
        shared.stats.clone(),
        Some(wr),
    ));
    tokio::spawn(peer.clone().write_loop());
    let mut conn = Conn {
        peer,
        shared,
        rooms: Vec::new(),
        scratch: Vec::new(),
        accessed: false,
    };
    let end = conn.read_loop(rd).await;
    let stats = &conn.shared.stats;
    match end {
        End::Malformed => bump(&stats.malformed),
        End::Oversized => bump(&stats.oversized),
        End::Idle => bump(&stats.idle_timeouts),
        End::SlowPacket => bump(&stats.packet_timeouts),
        End::Eof | End::Killed | End::Io => {}
    }
    tracing::debug!(id, ?end, "chat connection closed");
}

struct Conn {
    peer: Arc<Peer>,
    shared: Arc<Shared>,
    /// The rooms this connection is in, with the name it entered under.
    rooms: Vec<(Arc<Room>, JString)>,
    /// Where this connection encodes the packets it sends.
    scratch: Vec<u8>,
    accessed: bool,
}

impl Drop for Conn {
    // Runs however the connection ends, including when shutdown aborts its task.
    fn drop(&mut self) {
        self.peer.kill.kill();
        for (room, _) in std::mem::take(&mut self.rooms) {
            self.shared
                .registry
                .leave(&room, self.peer.id, &self.shared.stats);
        }
        bump(&self.shared.stats.closed);
    }
}

/// True when `s` is longer than `max` Java characters.
fn too_long(s: JStr<'_>, max: usize) -> bool {
    s.as_bytes().len() > max && s.utf16_len() > max
}

/// True when `s` holds a control character (U+0000–U+001F, U+007F–U+009F): NUL however it is encoded
/// (Java's `C0 80`, or the plain byte that `readUTF` also accepts), line breaks, escapes. Names are
/// identities: shown to every member and in logs, and compared to refuse a name taken; a NUL truncates
/// a name wherever it meets a C string (`Ann\0x` shows as `Ann`, past the taken-name check) and line
/// breaks and escapes forge log lines and terminal output. No client a person types a name into sends
/// them, so a name holding one is refused as malformed (docs/contracts.md).
fn has_control(s: JStr<'_>) -> bool {
    let bytes = s.as_bytes();
    if bytes.iter().all(|&b| (0x20..0x7F).contains(&b)) {
        return false;
    }
    s.to_string_lossy().chars().any(char::is_control)
}

impl Conn {
    async fn read_loop(&mut self, mut rd: OwnedReadHalf) -> End {
        let max_packet = self.shared.config.max_packet;
        let period = self.shared.config.idle_timeout;
        let mut buf = BytesMut::with_capacity(4096);
        let kill = self.peer.kill.clone();
        let killed = kill.wait();
        tokio::pin!(killed);
        let mut idle = interval_at(Instant::now() + period, period);
        idle.set_missed_tick_behavior(MissedTickBehavior::Delay);
        // Whether a byte arrived since the last tick, and how many ticks in a row saw none.
        let mut active = false;
        let mut strikes = 0;
        // While a packet is partly received: when it must be complete (bytes arriving do not extend it).
        let packet_timeout = self.shared.config.packet_timeout;
        let partial_deadline = tokio::time::sleep(packet_timeout);
        tokio::pin!(partial_deadline);
        let mut partial = false;
        loop {
            let mut used = 0;
            loop {
                match decode(&buf[used..], max_packet) {
                    Ok(Some((packet, n))) => {
                        used += n;
                        if let Err(end) = self.handle(packet) {
                            return end;
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        tracing::debug!(id = self.peer.id, "closing: {e}");
                        return if e.is_too_large() {
                            End::Oversized
                        } else {
                            End::Malformed
                        };
                    }
                }
            }
            buf.advance(used);
            if buf.is_empty() {
                partial = false;
            } else if !partial || used > 0 {
                // A new packet began (the rest of the buffer): its own deadline.
                partial = true;
                partial_deadline
                    .as_mut()
                    .reset(Instant::now() + packet_timeout);
            }
            buf.reserve(1024);
            // The read first: bytes that have arrived are handled without polling the kill switch and the
            // timers (each such poll costs about what decoding a chat packet does). They still run whenever
            // the read is pending, which tokio's cooperative budget forces after a run of ready reads, and
            // a killed connection's packets fail to send anyway; a packet cannot arrive forever without
            // completing, as it is at most `max_packet` bytes.
            tokio::select! {
                biased;
                read = rd.read_buf(&mut buf) => match read {
                    Ok(0) => return End::Eof,
                    Ok(_) => active = true,
                    Err(_) => return End::Io,
                },
                () = &mut killed => return End::Killed,
                () = &mut partial_deadline, if partial => return End::SlowPacket,
                _ = idle.tick() => {
                    if active {
                        active = false;
                        strikes = 0;
                    } else {
                        strikes += 1;
                        if strikes >= 2 {
                            return End::Idle;
                        }
                        bump(&self.shared.stats.pings_sent);
                        if let Err(end) = self.reply(|out| Packet::Ping(Kind::Request).encode(out)) {
                            return end;
                        }
                    }
                }
            }
        }
    }

    fn handle(&mut self, packet: Packet<'_>) -> Result<(), End> {
        if !self.accessed {
            // The first packet must be an access request.
            return match packet {
                Packet::Access(a) if a.kind == Kind::Request => self.access(),
                _ => Err(End::Malformed),
            };
        }
        match packet {
            Packet::Access(_) => Err(End::Malformed),
            Packet::EnterRoom(e) => self.enter(&e),
            Packet::Chat(c) => self.chat(&c),
            Packet::ExitRoom(x) => self.exit(&x),
            Packet::RoomList(r) => self.room_list(&r),
            // Ping responses only show the client is alive (any byte resets the idle clock); VOLANO servers
            // ignore client pings and error reports too.
            Packet::Ping(_) | Packet::Error(_) => Ok(()),
        }
    }

    /// Encodes a packet with `write` and queues it to this connection.
    fn reply(&mut self, write: impl FnOnce(&mut Vec<u8>)) -> Result<(), End> {
        self.scratch.clear();
        write(&mut self.scratch);
        self.send_scratch()
    }

    /// Sends the packet in `scratch` to this connection; a full outbox means this client is not reading:
    /// it is evicted.
    fn send_scratch(&self) -> Result<(), End> {
        match self.peer.send(&self.scratch) {
            Ok(()) => Ok(()),
            Err(QueueError::Full) => {
                if self.peer.kill.kill() {
                    bump(&self.shared.stats.slow_disconnects);
                }
                Err(End::Killed)
            }
            Err(QueueError::Closed) => Err(End::Killed),
        }
    }

    fn access(&mut self) -> Result<(), End> {
        self.accessed = true;
        let names = self.shared.registry.names(JStr::EMPTY, ROOM_LIST_BYTES);
        let rooms = names.iter().filter_map(|n| JStr::new(n).ok()).collect();
        let confirm = Access {
            kind: Kind::Confirm,
            result: access_result::OKAY,
            rooms,
            ..Access::default()
        };
        self.reply(|out| confirm.encode(out))
    }

    fn enter(&mut self, e: &EnterRoom<'_>) -> Result<(), End> {
        let config = &self.shared.config;
        if too_long(e.room_name, config.max_room_name)
            || too_long(e.user_name, config.max_user_name)
            || too_long(e.profile, config.max_profile)
        {
            return Err(End::Oversized);
        }
        if e.user_name.is_empty()
            || has_control(e.user_name)
            || has_control(e.room_name)
            || self.room(e.room_name).is_some()
        {
            return Err(End::Malformed);
        }
        let refused = if e.room_name.is_empty() {
            enter_result::NO_SUCH_ROOM
        } else if self.rooms.len() >= config.max_rooms_per_connection {
            enter_result::ROOM_FULL
        } else {
            let shared = &self.shared;
            match shared.registry.enter(
                e.room_name,
                &self.peer,
                e.user_name,
                e.profile,
                config.max_room_members,
                &shared.stats,
            ) {
                Ok(room) => {
                    self.rooms.push((room, e.user_name.into()));
                    return Ok(());
                }
                Err(code) => code,
            }
        };
        let confirm = EnterRoom {
            kind: Kind::Confirm,
            room_name: e.room_name,
            user_name: e.user_name,
            profile: e.profile,
            result: refused,
            ..EnterRoom::default()
        };
        self.reply(|out| confirm.encode(out))
    }

    fn chat(&mut self, c: &Chat<'_>) -> Result<(), End> {
        // Private chats (room_id != 0) are not part of VolanoMark's workload; like a chat for a room this
        // connection is not in, they are ignored, as VOLANO ignores packets no room claims.
        if c.room_id != 0 {
            return Ok(());
        }
        let Some(i) = self.room(c.room_name) else {
            return Ok(());
        };
        let config = &self.shared.config;
        if too_long(c.user_name, config.max_user_name) || too_long(c.text, config.max_text) {
            return Err(End::Oversized);
        }
        if c.user_name.is_empty() || c.text.is_empty() {
            return Err(End::Malformed);
        }
        let (room, name) = &self.rooms[i];
        // The indication names the sender as it entered, whatever name the request claims.
        let indication = Chat {
            kind: Kind::Indication,
            user_name: name.as_jstr(),
            ..c.clone()
        };
        self.scratch.clear();
        indication.encode(&mut self.scratch);
        room.broadcast(self.peer.id, &self.scratch, &self.shared.stats);
        bump(&self.shared.stats.chat_messages);
        // VOLANO confirms each chat to its sender (empty name and text), for pacing.
        let confirm = Chat {
            kind: Kind::Confirm,
            user_name: JStr::EMPTY,
            text: JStr::EMPTY,
            ..c.clone()
        };
        self.reply(|out| confirm.encode(out))
    }

    fn exit(&mut self, x: &ExitRoom<'_>) -> Result<(), End> {
        if let Some(i) = self.room(x.room_name) {
            let (room, _) = self.rooms.swap_remove(i);
            self.shared
                .registry
                .leave(&room, self.peer.id, &self.shared.stats);
        }
        Ok(())
    }

    fn room_list(&mut self, r: &RoomList<'_>) -> Result<(), End> {
        let names = self.shared.registry.names(r.filter, ROOM_LIST_BYTES);
        let rooms = names.iter().filter_map(|n| JStr::new(n).ok()).collect();
        let confirm = RoomList {
            kind: Kind::Confirm,
            filter: r.filter,
            rooms,
        };
        self.reply(|out| confirm.encode(out))
    }

    /// The index in `self.rooms` of the room named `name`.
    fn room(&self, name: JStr<'_>) -> Option<usize> {
        self.rooms
            .iter()
            .position(|(room, _)| room.name() == name.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_found_however_encoded() {
        let check = |bytes: &[u8]| has_control(JStr::new(bytes).expect("valid modified UTF-8"));
        assert!(!check(b"Mark1"));
        assert!(!check("Zo\u{eb}".as_bytes()));
        assert!(!check(b""));
        assert!(check(b"Ann\0x"));
        assert!(check(b"Ann\xC0\x80x"), "Java's NUL");
        assert!(check(b"a\nb"));
        assert!(check(b"\x1b[2J"));
        assert!(check(b"a\x7f"));
        assert!(check("a\u{85}".as_bytes()), "C1 NEL");
        assert!(
            check(b"a\xC0\x8A"),
            "an overlong line feed, which readUTF accepts"
        );
    }
}
