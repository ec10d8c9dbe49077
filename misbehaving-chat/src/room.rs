//! The rooms: members, and the relay of each chat message as the server's [`Behaviour`] says, with its
//! misbehaviour done at the chosen message. A test server: one lock over every room, never held across an
//! await (each member's packets go to its outbox, which its connection's task writes in order).

use std::collections::BTreeMap;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use bench_proto::chat::{
    enter_result, Chat, EnterRoom, ExitRoom, JStr, Kind, UserInfo, ROOM_TYPE_NORMAL,
};
use bytes::Bytes;
use tokio::sync::mpsc::UnboundedSender;

use crate::behaviour::{Behaviour, Misbehaviour, Relay};

/// What a connection's task is told to do.
#[derive(Debug)]
pub(crate) enum Out {
    /// Write these bytes.
    Packet(Bytes),
    /// Drop the connection (with the linger set to zero beforehand: a reset).
    Drop,
}

/// A member of a room.
#[derive(Debug)]
pub(crate) struct Member {
    pub(crate) name: Bytes,
    pub(crate) profile: Bytes,
    pub(crate) outbox: UnboundedSender<Out>,
    /// A second descriptor of the member's socket: closing or resetting it is immediate, whatever its task
    /// is doing.
    pub(crate) socket: TcpStream,
}

impl Member {
    fn send(&self, bytes: &Bytes) {
        let _ = self.outbox.send(Out::Packet(bytes.clone()));
    }
}

/// A message held back from some members (the lock-free relay), sent to them after the room's next one.
#[derive(Debug)]
struct Held {
    sender: Bytes,
    to: Vec<(UnboundedSender<Out>, Vec<Bytes>)>,
}

impl Held {
    fn release(self) {
        for (outbox, packets) in self.to {
            for p in packets {
                let _ = outbox.send(Out::Packet(p));
            }
        }
    }
}

#[derive(Debug, Default)]
struct Room {
    members: Vec<Member>,
    /// Chat messages relayed so far.
    chats: u64,
    held: Option<Held>,
    stalled: bool,
}

#[derive(Debug, Default)]
struct State {
    rooms: BTreeMap<Bytes, Room>,
    /// The first room entered: the one that misbehaves.
    first: Option<Bytes>,
}

/// Every room of a server.
#[derive(Debug)]
pub(crate) struct Rooms {
    behaviour: Behaviour,
    state: Mutex<State>,
    /// Every connection was closed ([`Misbehaviour::CloseAll`]): accept no more.
    dead: AtomicBool,
    /// When the misbehaviour was done (the first time).
    misbehaved_at: OnceLock<Instant>,
    /// Chat messages relayed, all rooms.
    relayed: AtomicU64,
}

impl Rooms {
    pub(crate) fn new(behaviour: Behaviour) -> Rooms {
        Rooms {
            behaviour,
            state: Mutex::default(),
            dead: AtomicBool::new(false),
            misbehaved_at: OnceLock::new(),
            relayed: AtomicU64::new(0),
        }
    }

    pub(crate) fn behaviour(&self) -> Behaviour {
        self.behaviour
    }

    pub(crate) fn misbehaved_at(&self) -> Option<Instant> {
        self.misbehaved_at.get().copied()
    }

    pub(crate) fn relayed(&self) -> u64 {
        self.relayed.load(Ordering::Relaxed)
    }

    pub(crate) fn dead(&self) -> bool {
        self.dead.load(Ordering::Acquire)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The room names, in order.
    pub(crate) fn names(&self) -> Vec<Bytes> {
        self.lock().rooms.keys().cloned().collect()
    }

    /// Adds `member` to `room` (creating it): the confirm to the entrant lists everyone, the others are
    /// told. A name already in the room is refused: the confirm refusing it is returned, for the caller to
    /// send.
    pub(crate) fn enter(&self, room: Bytes, member: Member) -> Option<Bytes> {
        let mut state = self.lock();
        state.first.get_or_insert_with(|| room.clone());
        let r = state.rooms.entry(room.clone()).or_default();
        let (name, profile) = (member.name.clone(), member.profile.clone());
        let mut confirm = EnterRoom {
            kind: Kind::Confirm,
            room_name: jstr(&room),
            user_name: jstr(&name),
            profile: jstr(&profile),
            result: enter_result::NAME_TAKEN,
            ..EnterRoom::default()
        };
        if r.members.iter().any(|m| m.name == name) {
            return Some(encode(|out| confirm.encode(out)));
        }
        let indication = encode(|out| {
            EnterRoom {
                kind: Kind::Indication,
                ..confirm.clone()
            }
            .encode(out)
        });
        r.members.iter().for_each(|m| m.send(&indication));
        r.members.push(member);
        confirm.result = enter_result::OKAY;
        confirm.room_type = ROOM_TYPE_NORMAL;
        confirm.count = r.members.len() as i32;
        confirm.users = r
            .members
            .iter()
            .map(|m| UserInfo {
                name: jstr(&m.name),
                profile: jstr(&m.profile),
                ..UserInfo::default()
            })
            .collect();
        let bytes = encode(|out| confirm.encode(out));
        r.members
            .iter()
            .last()
            .into_iter()
            .for_each(|m| m.send(&bytes));
        None
    }

    /// Relays `text` from `sender` to `room`, and confirms it to the sender, misbehaving at the chosen
    /// message.
    pub(crate) fn chat(&self, room: &[u8], sender: &[u8], text: JStr<'_>) {
        let mut state = self.lock();
        let target = state.first.as_deref() == Some(room);
        let Some(r) = state.rooms.get_mut(room) else {
            return;
        };
        let Some(from) = r.members.iter().position(|m| m.name == sender) else {
            return;
        };
        if r.stalled {
            return;
        }
        r.chats += 1;
        self.relayed.fetch_add(1, Ordering::Relaxed);
        let now = match self.behaviour.misbehaviour {
            Some((m, at)) if target && at == r.chats => Some(m),
            _ => None,
        };
        if now.is_some() {
            self.misbehaved_at.get_or_init(Instant::now);
        }
        if now == Some(Misbehaviour::StallRoom) {
            r.stalled = true;
            return;
        }
        let chat = |kind, user: &[u8], text| {
            encode(|out| {
                Chat {
                    kind,
                    room_name: jstr(room),
                    user_name: jstr(user),
                    text,
                    ..Chat::default()
                }
                .encode(out)
            })
        };
        let indication = chat(Kind::Indication, sender, text);
        let victim = r.members.len() - 1;
        let deliveries = r
            .members
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != from)
            .map(|(i, m)| {
                let packets = match now {
                    Some(m) if i == victim => misdelivered(m, &indication, room, sender),
                    _ => vec![indication.clone()],
                };
                (i, m.outbox.clone(), packets)
            })
            .collect();
        self.relay(r, from, deliveries);
        r.members[from].send(&chat(Kind::Confirm, b"", JStr::EMPTY));
        match now {
            Some(Misbehaviour::CloseUser) => {
                let _ = r.members[victim].socket.shutdown(Shutdown::Both);
            }
            Some(Misbehaviour::Reset) => reset(remove(r, victim, room)),
            Some(Misbehaviour::CloseAll) => {
                self.dead.store(true, Ordering::Release);
                for m in state.rooms.values().flat_map(|r| &r.members) {
                    let _ = m.socket.shutdown(Shutdown::Both);
                }
            }
            _ => {}
        }
    }

    /// Sends each member its packets of one message (member index, outbox, packets), as the relay does.
    fn relay(&self, r: &mut Room, from: usize, deliveries: Vec<(usize, Outbox, Vec<Bytes>)>) {
        let send = |(_, outbox, packets): (usize, Outbox, Vec<Bytes>)| {
            for p in packets {
                let _ = outbox.send(Out::Packet(p));
            }
        };
        if self.behaviour.relay == Relay::RoomLock {
            deliveries.into_iter().for_each(send);
            return;
        }
        let sender = r.members[from].name.clone();
        // A sender's messages keep their order: its held message goes before its next one.
        if r.held.as_ref().is_some_and(|h| h.sender == sender) {
            r.held.take().into_iter().for_each(Held::release);
        }
        match r.held.take() {
            Some(earlier) => {
                deliveries.into_iter().for_each(send);
                earlier.release();
            }
            None => {
                let next = (from + 1) % r.members.len();
                let (now, later): (Vec<_>, Vec<_>) =
                    deliveries.into_iter().partition(|(i, _, _)| *i == next);
                now.into_iter().for_each(send);
                r.held = Some(Held {
                    sender,
                    to: later.into_iter().map(|(_, o, p)| (o, p)).collect(),
                });
            }
        }
    }

    /// Takes `name` out of `room` (if still there) and tells the others; a message held back goes first.
    pub(crate) fn leave(&self, room: &[u8], name: &[u8]) {
        let mut state = self.lock();
        let Some(r) = state.rooms.get_mut(room) else {
            return;
        };
        r.held.take().into_iter().for_each(Held::release);
        if let Some(i) = r.members.iter().position(|m| m.name == name) {
            remove(r, i, room);
        }
        if r.members.is_empty() {
            state.rooms.remove(room);
        }
    }
}

/// A member's outbox.
type Outbox = UnboundedSender<Out>;

/// Takes member `i` out of `r` (its name `room`) and tells the others.
fn remove(r: &mut Room, i: usize, room: &[u8]) -> Member {
    let member = r.members.remove(i);
    let exit = encode(|out| {
        ExitRoom {
            kind: Kind::Indication,
            room_name: jstr(room),
            user_name: jstr(&member.name),
        }
        .encode(out)
    });
    r.members.iter().for_each(|m| m.send(&exit));
    member
}

/// What the victim gets instead of `indication`.
fn misdelivered(m: Misbehaviour, indication: &Bytes, room: &[u8], sender: &[u8]) -> Vec<Bytes> {
    match m {
        Misbehaviour::DropOne => vec![],
        Misbehaviour::DuplicateOne => vec![indication.clone(), indication.clone()],
        // Id 999 is no packet of the protocol; kind 2 (indication), nothing after.
        Misbehaviour::UnknownPacket => vec![Bytes::from_static(&[0x03, 0xE7, 0, 0, 0, 2])],
        Misbehaviour::GarbledFrame => {
            let mut bytes = encode(|out| {
                Chat {
                    kind: Kind::Indication,
                    room_name: jstr(room),
                    user_name: jstr(sender),
                    text: JStr::new(b"garbled").expect("ASCII"),
                    ..Chat::default()
                }
                .encode(out)
            })
            .to_vec();
            // The text's first byte becomes a UTF-8 lead byte that modified UTF-8 never has.
            let at = bytes.len() - "garbled".len();
            bytes[at] = 0xFF;
            vec![bytes.into()]
        }
        _ => vec![indication.clone()],
    }
}

/// Resets `member`'s connection: the linger set to zero, then its last descriptors closed.
fn reset(member: Member) {
    let _ = socket2::SockRef::from(&member.socket).set_linger(Some(Duration::ZERO));
    let _ = member.outbox.send(Out::Drop);
}

fn encode(write: impl FnOnce(&mut Vec<u8>)) -> Bytes {
    let mut out = Vec::new();
    write(&mut out);
    out.into()
}

/// Bytes this server stored after checking them as modified UTF-8 (names it was sent).
fn jstr(bytes: &[u8]) -> JStr<'_> {
    JStr::new(bytes).unwrap_or(JStr::EMPTY)
}
