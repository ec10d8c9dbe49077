//! The packets VolanoMark exchanges, field for field as the VOLANO classes write them, with [`decode`] and
//! `encode`. Like the Java classes, each packet type carries the fields of every kind and writes only those
//! its kind uses, and the decoder trims the fields Java's `readFrom` trims.

use bytes::BufMut;

use super::error::ChatError;
use super::id;
use super::jstr::JStr;
use super::wire::{put_bool, put_utf, put_utf_list, Reader, Stop};

/// The kind of a packet: the `i32` after its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Kind {
    /// Client → server.
    #[default]
    Request = 1,
    /// Server → the other members of a room (or server → client, unsolicited).
    Indication = 2,
    /// Client → server, answering a server request (`Ping`).
    Response = 3,
    /// Server → the requester.
    Confirm = 4,
}

impl Kind {
    fn from_i32(v: i32) -> Result<Kind, ChatError> {
        Ok(match v {
            1 => Kind::Request,
            2 => Kind::Indication,
            3 => Kind::Response,
            4 => Kind::Confirm,
            _ => return Err(ChatError::BadKind(v)),
        })
    }
}

/// One decoded (or to-be-encoded) packet. Strings borrow from the buffer they were decoded from.
#[derive(Debug, Clone, PartialEq)]
pub enum Packet<'a> {
    Access(Access<'a>),
    EnterRoom(EnterRoom<'a>),
    Chat(Chat<'a>),
    ExitRoom(ExitRoom<'a>),
    RoomList(RoomList<'a>),
    Ping(Kind),
    Error(ErrorPacket<'a>),
}

/// The first packet of a connection. The request describes the client; the confirm says whether it may
/// stay, with the names of the rooms.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Access<'a> {
    pub kind: Kind,
    // Request.
    pub default_room: JStr<'a>,
    pub applet_version: JStr<'a>,
    pub document_base: JStr<'a>,
    pub code_base: JStr<'a>,
    pub java_vendor: JStr<'a>,
    pub java_vendor_url: JStr<'a>,
    pub java_version: JStr<'a>,
    pub java_class_version: JStr<'a>,
    pub os_name: JStr<'a>,
    pub os_version: JStr<'a>,
    pub os_arch: JStr<'a>,
    // Confirm.
    pub result: i32,
    pub rooms: Vec<JStr<'a>>,
    /// Random bytes for the client to sign when the server authenticates applets (at most 255; empty
    /// otherwise).
    pub challenge: &'a [u8],
}

/// Entering a room. The confirm answers the entrant (with the member list, itself included); the
/// indication tells everyone already there.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EnterRoom<'a> {
    pub kind: Kind,
    pub room_name: JStr<'a>,
    pub user_name: JStr<'a>,
    pub profile: JStr<'a>,
    // Indication.
    pub address: JStr<'a>,
    pub member: JStr<'a>,
    pub link: JStr<'a>,
    // Confirm.
    pub result: i32,
    pub room_type: i32,
    /// Members in the room, the entrant included.
    pub count: i32,
    pub users: Vec<UserInfo<'a>>,
}

/// One member in an `EnterRoom` confirm.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UserInfo<'a> {
    pub name: JStr<'a>,
    pub profile: JStr<'a>,
    pub host: JStr<'a>,
    pub member: JStr<'a>,
    pub link: JStr<'a>,
}

/// A message to a room (`room_id == 0`) or to a private chat (`room_id != 0`). The server sends the
/// indication to every other member, naming the sender, and a confirm (empty user and text) to the sender.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Chat<'a> {
    pub kind: Kind,
    pub question: bool,
    pub room_id: i32,
    pub room_name: JStr<'a>,
    pub user_name: JStr<'a>,
    pub text: JStr<'a>,
}

/// Leaving a room. No confirm; the other members get the indication (also sent when a member's
/// connection closes).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExitRoom<'a> {
    pub kind: Kind,
    pub room_name: JStr<'a>,
    pub user_name: JStr<'a>,
}

/// The names of the rooms containing `filter` (case-insensitive; empty: all).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RoomList<'a> {
    pub kind: Kind,
    pub filter: JStr<'a>,
    pub rooms: Vec<JStr<'a>>,
}

/// `StreamableError`: an error report, sent by a peer that failed to handle a packet.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ErrorPacket<'a> {
    pub kind: Kind,
    pub text: JStr<'a>,
}

/// Decodes the packet at the start of `buf`.
///
/// `Ok(None)`: `buf` holds only part of a packet; call again with more bytes. `Ok(Some((packet, n)))`:
/// the packet took the first `n` bytes. A packet that is, or would grow, longer than `max_packet` bytes is
/// [`ChatError::TooLarge`] as soon as that is known, so a peer cannot make the caller buffer without bound.
pub fn decode(buf: &[u8], max_packet: usize) -> Result<Option<(Packet<'_>, usize)>, ChatError> {
    let mut r = Reader::new(buf, max_packet);
    match read_packet(&mut r) {
        Ok(p) => Ok(Some((p, r.pos()))),
        Err(Stop::Incomplete) => Ok(None),
        Err(Stop::Bad(e)) => Err(e),
    }
}

fn read_packet<'a>(r: &mut Reader<'a>) -> Result<Packet<'a>, Stop> {
    let packet_id = r.u16()?;
    // Refuse unknown ids before reading further: they have no layout to parse.
    if !matches!(
        packet_id,
        id::ACCESS
            | id::ERROR
            | id::CHAT
            | id::ENTER_ROOM
            | id::EXIT_ROOM
            | id::PING
            | id::ROOM_LIST
    ) {
        return Err(Stop::Bad(ChatError::UnknownPacket(packet_id)));
    }
    let kind = Kind::from_i32(r.i32()?)?;
    Ok(match packet_id {
        id::ACCESS => Packet::Access(read_access(r, kind)?),
        id::ENTER_ROOM => Packet::EnterRoom(read_enter_room(r, kind)?),
        id::CHAT => Packet::Chat(Chat {
            kind,
            question: r.bool()?,
            room_id: r.i32()?,
            room_name: r.utf()?,
            user_name: r.utf()?.trim(),
            text: r.utf()?.trim(),
        }),
        id::EXIT_ROOM => Packet::ExitRoom(ExitRoom {
            kind,
            room_name: r.utf()?,
            user_name: r.utf()?,
        }),
        id::ROOM_LIST => Packet::RoomList(RoomList {
            kind,
            filter: r.utf()?,
            rooms: r.utf_list()?,
        }),
        id::PING => Packet::Ping(kind),
        _ => Packet::Error(ErrorPacket {
            kind,
            text: r.utf()?,
        }),
    })
}

fn read_access<'a>(r: &mut Reader<'a>, kind: Kind) -> Result<Access<'a>, Stop> {
    let mut a = Access {
        kind,
        ..Access::default()
    };
    match kind {
        Kind::Request => {
            a.default_room = r.utf()?.trim();
            a.applet_version = r.utf()?;
            a.document_base = r.utf()?;
            a.code_base = r.utf()?;
            a.java_vendor = r.utf()?;
            a.java_vendor_url = r.utf()?;
            a.java_version = r.utf()?;
            a.java_class_version = r.utf()?;
            a.os_name = r.utf()?;
            a.os_version = r.utf()?;
            a.os_arch = r.utf()?;
        }
        Kind::Confirm => {
            a.result = r.i32()?;
            a.rooms = r.utf_list()?;
            let n = usize::from(r.u8()?);
            a.challenge = r.take(n)?;
        }
        Kind::Indication | Kind::Response => {}
    }
    Ok(a)
}

fn read_enter_room<'a>(r: &mut Reader<'a>, kind: Kind) -> Result<EnterRoom<'a>, Stop> {
    let mut e = EnterRoom {
        kind,
        profile: r.utf()?.trim(),
        room_name: r.utf()?,
        user_name: r.utf()?.trim(),
        ..EnterRoom::default()
    };
    match kind {
        Kind::Indication => {
            e.address = r.utf()?;
            e.member = r.utf()?;
            e.link = r.utf()?;
        }
        Kind::Confirm => {
            e.result = r.i32()?;
            e.room_type = r.i32()?;
            e.count = r.i32()?;
            // Each member is five strings, at least ten bytes.
            let n = r.count(10)?;
            for _ in 0..n {
                e.users.push(UserInfo {
                    name: r.utf()?,
                    profile: r.utf()?,
                    host: r.utf()?,
                    member: r.utf()?,
                    link: r.utf()?,
                });
            }
        }
        Kind::Request | Kind::Response => {}
    }
    Ok(e)
}

impl Packet<'_> {
    /// The wire id.
    pub fn id(&self) -> u16 {
        match self {
            Packet::Access(_) => id::ACCESS,
            Packet::EnterRoom(_) => id::ENTER_ROOM,
            Packet::Chat(_) => id::CHAT,
            Packet::ExitRoom(_) => id::EXIT_ROOM,
            Packet::RoomList(_) => id::ROOM_LIST,
            Packet::Ping(_) => id::PING,
            Packet::Error(_) => id::ERROR,
        }
    }

    pub fn kind(&self) -> Kind {
        match self {
            Packet::Access(p) => p.kind,
            Packet::EnterRoom(p) => p.kind,
            Packet::Chat(p) => p.kind,
            Packet::ExitRoom(p) => p.kind,
            Packet::RoomList(p) => p.kind,
            Packet::Ping(k) => *k,
            Packet::Error(p) => p.kind,
        }
    }

    /// Appends the packet's bytes to `out`.
    pub fn encode(&self, out: &mut impl BufMut) {
        match self {
            Packet::Access(p) => p.encode(out),
            Packet::EnterRoom(p) => p.encode(out),
            Packet::Chat(p) => p.encode(out),
            Packet::ExitRoom(p) => p.encode(out),
            Packet::RoomList(p) => p.encode(out),
            Packet::Ping(kind) => header(out, id::PING, *kind),
            Packet::Error(p) => {
                header(out, id::ERROR, p.kind);
                put_utf(out, p.text);
            }
        }
    }
}

fn header(out: &mut impl BufMut, packet_id: u16, kind: Kind) {
    out.put_u16(packet_id);
    out.put_i32(kind as i32);
}

impl Access<'_> {
    pub fn encode(&self, out: &mut impl BufMut) {
        header(out, id::ACCESS, self.kind);
        match self.kind {
            Kind::Request => {
                for s in [
                    self.default_room,
                    self.applet_version,
                    self.document_base,
                    self.code_base,
                    self.java_vendor,
                    self.java_vendor_url,
                    self.java_version,
                    self.java_class_version,
                    self.os_name,
                    self.os_version,
                    self.os_arch,
                ] {
                    put_utf(out, s);
                }
            }
            Kind::Confirm => {
                out.put_i32(self.result);
                put_utf_list(out, &self.rooms);
                let n = self.challenge.len().min(255);
                out.put_u8(n as u8);
                out.put_slice(&self.challenge[..n]);
            }
            Kind::Indication | Kind::Response => {}
        }
    }
}

impl EnterRoom<'_> {
    pub fn encode(&self, out: &mut impl BufMut) {
        header(out, id::ENTER_ROOM, self.kind);
        put_utf(out, self.profile);
        put_utf(out, self.room_name);
        put_utf(out, self.user_name);
        match self.kind {
            Kind::Indication => {
                put_utf(out, self.address);
                put_utf(out, self.member);
                put_utf(out, self.link);
            }
            Kind::Confirm => {
                out.put_i32(self.result);
                out.put_i32(self.room_type);
                out.put_i32(self.count);
                out.put_i32(self.users.len() as i32);
                for u in &self.users {
                    for s in [u.name, u.profile, u.host, u.member, u.link] {
                        put_utf(out, s);
                    }
                }
            }
            Kind::Request | Kind::Response => {}
        }
    }
}

impl Chat<'_> {
    pub fn encode(&self, out: &mut impl BufMut) {
        header(out, id::CHAT, self.kind);
        put_bool(out, self.question);
        out.put_i32(self.room_id);
        put_utf(out, self.room_name);
        put_utf(out, self.user_name);
        put_utf(out, self.text);
    }
}

impl ExitRoom<'_> {
    pub fn encode(&self, out: &mut impl BufMut) {
        header(out, id::EXIT_ROOM, self.kind);
        put_utf(out, self.room_name);
        put_utf(out, self.user_name);
    }
}

impl RoomList<'_> {
    pub fn encode(&self, out: &mut impl BufMut) {
        header(out, id::ROOM_LIST, self.kind);
        put_utf(out, self.filter);
        put_utf_list(out, &self.rooms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn js(s: &'static str) -> JStr<'static> {
        JStr::new(s.as_bytes()).unwrap()
    }

    fn bytes_of(p: &Packet<'_>) -> Vec<u8> {
        let mut out = Vec::new();
        p.encode(&mut out);
        out
    }

    /// A chat request exactly as VolanoMark's `Chat(roomName, userName, TEXT)` writes it.
    #[test]
    fn chat_request_layout() {
        let p = Packet::Chat(Chat {
            room_name: js("Room1"),
            user_name: js("Mark1"),
            text: js("hi"),
            ..Chat::default()
        });
        let mut want = vec![0x00, 0xCB, 0, 0, 0, 1, 0, 0, 0, 0, 0];
        want.extend_from_slice(b"\x00\x05Room1\x00\x05Mark1\x00\x02hi");
        assert_eq!(bytes_of(&p), want);
    }

    #[test]
    fn access_confirm_layout() {
        let p = Packet::Access(Access {
            kind: Kind::Confirm,
            result: 1,
            rooms: vec![js("R")],
            ..Access::default()
        });
        assert_eq!(
            bytes_of(&p),
            b"\x00\x01\x00\x00\x00\x04\x00\x00\x00\x01\x00\x00\x00\x01\x00\x01R\x00"
        );
    }

    #[test]
    fn ping_layout() {
        assert_eq!(
            bytes_of(&Packet::Ping(Kind::Request)),
            [0x00, 0xD5, 0, 0, 0, 1]
        );
    }

    fn samples() -> Vec<Packet<'static>> {
        vec![
            Packet::Access(Access {
                default_room: js("Room1"),
                applet_version: js("2.13.4"),
                document_base: js("http://www.volano.com/chat.html"),
                os_arch: js("amd64"),
                ..Access::default()
            }),
            Packet::Access(Access {
                kind: Kind::Confirm,
                result: 1,
                rooms: vec![js("Room1"), js("Room2")],
                challenge: &[1, 2, 3],
                ..Access::default()
            }),
            Packet::EnterRoom(EnterRoom {
                room_name: js("Room1"),
                user_name: js("Mark1"),
                profile: js("p"),
                ..EnterRoom::default()
            }),
            Packet::EnterRoom(EnterRoom {
                kind: Kind::Indication,
                room_name: js("Room1"),
                user_name: js("Mark2"),
                address: js("127.0.0.1"),
                ..EnterRoom::default()
            }),
            Packet::EnterRoom(EnterRoom {
                kind: Kind::Confirm,
                room_name: js("Room1"),
                user_name: js("Mark2"),
                result: 1,
                room_type: 1,
                count: 2,
                users: vec![
                    UserInfo {
                        name: js("Mark1"),
                        profile: js("p1"),
                        ..UserInfo::default()
                    },
                    UserInfo {
                        name: js("Mark2"),
                        ..UserInfo::default()
                    },
                ],
                ..EnterRoom::default()
            }),
            Packet::Chat(Chat {
                kind: Kind::Indication,
                question: true,
                room_name: js("Room1"),
                user_name: js("Mark1"),
                text: js(crate::chat::MARK_TEXT_TRIMMED),
                ..Chat::default()
            }),
            Packet::Chat(Chat {
                kind: Kind::Confirm,
                room_id: 7,
                room_name: js("Room1"),
                ..Chat::default()
            }),
            Packet::ExitRoom(ExitRoom {
                kind: Kind::Indication,
                room_name: js("Room1"),
                user_name: js("Mark1"),
            }),
            Packet::RoomList(RoomList {
                kind: Kind::Confirm,
                filter: js("room"),
                rooms: vec![js("Room1")],
            }),
            Packet::Ping(Kind::Response),
            Packet::Error(ErrorPacket {
                kind: Kind::Request,
                text: js("java.lang.Error"),
            }),
        ]
    }

    #[test]
    fn every_packet_round_trips_and_every_prefix_is_incomplete() {
        for p in samples() {
            let bytes = bytes_of(&p);
            let (back, n) = decode(&bytes, 4096).unwrap().unwrap();
            assert_eq!(back, p);
            assert_eq!(n, bytes.len());
            for cut in 0..bytes.len() {
                assert_eq!(decode(&bytes[..cut], 4096), Ok(None), "{p:?} cut at {cut}");
            }
        }
    }

    #[test]
    fn back_to_back_packets_decode_one_at_a_time() {
        let all: Vec<u8> = samples().iter().flat_map(bytes_of).collect();
        let mut rest = &all[..];
        let mut n_packets = 0;
        while let Some((_, n)) = decode(rest, 4096).unwrap() {
            rest = &rest[n..];
            n_packets += 1;
        }
        assert!(rest.is_empty());
        assert_eq!(n_packets, samples().len());
    }

    #[test]
    fn decoder_trims_what_java_trims() {
        let p = Packet::Chat(Chat {
            user_name: js(" Mark1 "),
            text: js(crate::chat::MARK_TEXT),
            ..Chat::default()
        });
        let bytes = bytes_of(&p);
        let Some((Packet::Chat(c), _)) = decode(&bytes, 4096).unwrap() else {
            panic!()
        };
        assert_eq!(c.user_name, js("Mark1"));
        assert_eq!(c.text, js(crate::chat::MARK_TEXT_TRIMMED));
    }

    #[test]
    fn unknown_ids_and_kinds_are_errors() {
        assert_eq!(
            decode(&[0xFF, 0xFF], 64),
            Err(ChatError::UnknownPacket(0xFFFF))
        );
        // The old VolanoChat 2.1 access packet (id 17) and packets VolanoMark never sends are refused.
        assert_eq!(decode(&[0, 17, 0], 64), Err(ChatError::UnknownPacket(17)));
        assert_eq!(decode(&[0, 216], 64), Err(ChatError::UnknownPacket(216)));
        assert_eq!(
            decode(&[0, 0xD5, 0, 0, 0, 9], 64),
            Err(ChatError::BadKind(9))
        );
        assert_eq!(
            decode(&[0, 0xD7, 0, 0, 0, 4, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF], 64),
            Err(ChatError::BadLength(-1))
        );
        // A bad string inside a packet.
        assert_eq!(
            decode(&[0, 0xD0, 0, 0, 0, 1, 0, 1, 0x80, 0, 0], 64),
            Err(ChatError::BadString)
        );
    }

    #[test]
    fn size_limit_is_enforced_before_the_bytes_arrive() {
        // A chat request whose text claims 60 000 bytes: refused from its length prefix alone.
        let mut head = vec![0x00, 0xCB, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        head.extend_from_slice(&60_000u16.to_be_bytes());
        assert_eq!(
            decode(&head, 8192),
            Err(ChatError::TooLarge { limit: 8192 })
        );
        // A room list claiming 2^31-1 names fails as soon as its count is read, not when the names fail
        // to come.
        let list = [0, 0xD7, 0, 0, 0, 4, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF];
        assert_eq!(decode(&list, 64), Err(ChatError::TooLarge { limit: 64 }));
        // Only as many as can fit: 26 names of two bytes after the 12-byte head fill 64 bytes; 27 do not.
        let fits = [0, 0xD7, 0, 0, 0, 4, 0, 0, 0, 0, 0, 26];
        assert_eq!(decode(&fits, 64), Ok(None));
        let over = [0, 0xD7, 0, 0, 0, 4, 0, 0, 0, 0, 0, 27];
        assert_eq!(decode(&over, 64), Err(ChatError::TooLarge { limit: 64 }));
        // An EnterRoom confirm announcing 2^31-1 members (ten bytes each at least), likewise.
        let mut enter = vec![0, 0xCE, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0];
        enter.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 1, 0x7F, 0xFF, 0xFF, 0xFF]);
        enter.extend_from_slice(&[0x7F, 0xFF, 0xFF, 0xFF]);
        assert_eq!(
            decode(&enter, 8192),
            Err(ChatError::TooLarge { limit: 8192 })
        );
    }
}
