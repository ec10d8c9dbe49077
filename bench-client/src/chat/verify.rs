//! Verified before measured: two users enter the run's first room, exchange a message each way and leave,
//! every packet checked. A server that fails this is not measured, and the error says what happened: no
//! answer, the wrong packet, or a refused room.

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use bench_proto::chat::{
    access_result, decode, enter_result, numbered_text, Chat, EnterRoom, ExitRoom, JString, Kind,
    Packet, RoomList,
};
use bytes::{Buf, BytesMut};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::time::{timeout_at, Instant};

use super::load::ChatLoad;
use super::user::access_request;

/// Largest packet accepted while verifying.
const MAX_PACKET: usize = 1 << 20;

/// Why a server is not measured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("no answer: {user} could not connect to {addr}: {reason}")]
    Connect {
        user: String,
        addr: SocketAddr,
        reason: String,
    },
    #[error("no answer: {}", no_answer_words(user, expected, *.waited, *.closed))]
    NoAnswer {
        user: String,
        expected: Expected,
        waited: Duration,
        /// The server closed the connection (rather than saying nothing).
        closed: bool,
    },
    #[error("the wrong packet: {user}, waiting for {expected}, got {got}")]
    WrongPacket {
        user: String,
        expected: Expected,
        got: String,
    },
    #[error("a refused room: {user} could not enter {room} (EnterRoom result {result}: {})", enter_words(*.result))]
    RefusedRoom {
        user: String,
        room: String,
        result: i32,
    },
    #[error("a refused room: {user} was refused access (Access result {result})")]
    RefusedAccess { user: String, result: i32 },
}

fn no_answer_words(user: &str, expected: &Expected, waited: Duration, closed: bool) -> String {
    if closed {
        format!("the server closed {user}'s connection while it waited for {expected}")
    } else {
        format!("{user} waited {waited:?} for {expected}")
    }
}

fn enter_words(result: i32) -> &'static str {
    match result {
        enter_result::ROOM_FULL => "room full",
        enter_result::NAME_TAKEN => "name taken",
        enter_result::NO_SUCH_ROOM => "no such room",
        _ => "not a result VolanoMark knows",
    }
}

/// What a verifying user waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    AccessConfirm,
    EnterConfirm,
    /// The room telling the first user that the second entered.
    EnterIndication(String),
    /// The other user's message, in the room, as sent.
    ChatFrom(String),
    /// The room list that ends VolanoMark's exit.
    RoomListConfirm,
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::AccessConfirm => f.write_str("the Access confirm"),
            Expected::EnterConfirm => f.write_str("the EnterRoom confirm"),
            Expected::EnterIndication(who) => write!(f, "the EnterRoom indication of {who}"),
            Expected::ChatFrom(who) => write!(f, "the Chat indication of {who}'s message"),
            Expected::RoomListConfirm => f.write_str("the RoomList confirm"),
        }
    }
}

/// What verifying found: how long it took.
#[derive(Debug, Clone, Copy)]
pub struct Verified {
    pub took: Duration,
}

/// Two users of the run's first room (Mark1, Mark2) enter, exchange a message each way, and leave; each
/// wait bounded by the load's timeout.
pub async fn verify(load: &ChatLoad) -> Result<Verified, VerifyError> {
    let started = Instant::now();
    let room = format!("Room{}", load.start);
    let mut a = Peer::enter(load, &room, "Mark1").await?;
    let mut b = Peer::enter(load, &room, "Mark2").await?;
    let entered = Expected::EnterIndication(b.name.clone());
    a.expect(entered, |p| match p {
        Packet::EnterRoom(e)
            if e.kind == Kind::Indication && e.user_name.as_bytes() == b"Mark2" =>
        {
            Found::It(0)
        }
        _ => Found::Other,
    })
    .await?;
    a.say().await?;
    b.hear("Mark1").await?;
    b.say().await?;
    a.hear("Mark2").await?;
    a.leave().await?;
    b.leave().await?;
    Ok(Verified {
        took: started.elapsed(),
    })
}

/// What a packet is to a verifying user's wait.
enum Found {
    /// The packet waited for (with its result code, where it has one).
    It(i32),
    /// The packet waited for, but not as it should be.
    Wrong,
    /// Not this wait's: an ignorable one is skipped, any other is the wrong packet.
    Other,
}

/// One verifying user's connection.
struct Peer {
    name: String,
    room: String,
    limit: Duration,
    stream: TcpStream,
    buf: BytesMut,
}

impl Peer {
    /// Connects, is granted access and enters `room`.
    async fn enter(load: &ChatLoad, room: &str, name: &str) -> Result<Peer, VerifyError> {
        let connect_error = |reason: String| VerifyError::Connect {
            user: name.to_owned(),
            addr: load.addr,
            reason,
        };
        let stream = match tokio::time::timeout(load.timeout, TcpStream::connect(load.addr)).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => return Err(connect_error(e.to_string())),
            Err(_) => return Err(connect_error(format!("nothing within {:?}", load.timeout))),
        };
        let _ = stream.set_nodelay(true);
        let mut peer = Peer {
            name: name.to_owned(),
            room: room.to_owned(),
            limit: load.timeout,
            stream,
            buf: BytesMut::with_capacity(4096),
        };
        peer.send(&access_request(&jstring(room)), Expected::AccessConfirm)
            .await?;
        let result = peer
            .expect(Expected::AccessConfirm, |p| match p {
                Packet::Access(a) if a.kind == Kind::Confirm => Found::It(a.result),
                _ => Found::Other,
            })
            .await?;
        if result != access_result::OKAY {
            return Err(VerifyError::RefusedAccess {
                user: peer.name,
                result,
            });
        }
        let result = peer.enter_room().await?;
        if result != enter_result::OKAY {
            return Err(VerifyError::RefusedRoom {
                user: peer.name,
                room: room.to_owned(),
                result,
            });
        }
        Ok(peer)
    }

    /// Asks to enter the room; returns the confirm's result.
    async fn enter_room(&mut self) -> Result<i32, VerifyError> {
        let (room, user) = (jstring(&self.room), jstring(&self.name));
        let profile = jstring("wsbench: verifying before the load");
        let mut bytes = Vec::new();
        EnterRoom {
            room_name: room.as_jstr(),
            user_name: user.as_jstr(),
            profile: profile.as_jstr(),
            ..EnterRoom::default()
        }
        .encode(&mut bytes);
        self.send(&bytes, Expected::EnterConfirm).await?;
        self.expect(Expected::EnterConfirm, |p| match p {
            Packet::EnterRoom(e) if e.kind == Kind::Confirm => Found::It(e.result),
            _ => Found::Other,
        })
        .await
    }

    /// Sends this user's first message to its room (numbered, as the load's are).
    async fn say(&mut self) -> Result<(), VerifyError> {
        let text = numbered_text(1);
        let text = std::str::from_utf8(&text).expect("ASCII");
        let (room, user, text) = (jstring(&self.room), jstring(&self.name), jstring(text));
        let mut bytes = Vec::new();
        Chat {
            room_name: room.as_jstr(),
            user_name: user.as_jstr(),
            text: text.as_jstr(),
            ..Chat::default()
        }
        .encode(&mut bytes);
        self.send(&bytes, Expected::ChatFrom(self.name.clone()))
            .await
    }

    /// Waits for `from`'s first message: in this room, from `from`, the text it sent (trimmed).
    async fn hear(&mut self, from: &str) -> Result<(), VerifyError> {
        let text = numbered_text(1);
        let text = text.trim_ascii_end();
        let room = self.room.clone();
        self.expect(Expected::ChatFrom(from.to_owned()), |p| match p {
            Packet::Chat(c) if c.kind == Kind::Indication => {
                let right = c.room_name.as_bytes() == room.as_bytes()
                    && c.user_name.as_bytes() == from.as_bytes()
                    && c.text.as_bytes() == text;
                if right {
                    Found::It(0)
                } else {
                    Found::Wrong
                }
            }
            _ => Found::Other,
        })
        .await
        .map(drop)
    }

    /// VolanoMark's exit: `ExitRoom`, then `RoomList`, whose confirm ends it.
    async fn leave(&mut self) -> Result<(), VerifyError> {
        let (room, user) = (jstring(&self.room), jstring(&self.name));
        let mut bytes = Vec::new();
        ExitRoom {
            room_name: room.as_jstr(),
            user_name: user.as_jstr(),
            ..ExitRoom::default()
        }
        .encode(&mut bytes);
        RoomList::default().encode(&mut bytes);
        self.send(&bytes, Expected::RoomListConfirm).await?;
        self.expect(Expected::RoomListConfirm, |p| match p {
            Packet::RoomList(r) if r.kind == Kind::Confirm => Found::It(0),
            _ => Found::Other,
        })
        .await
        .map(drop)
    }

    /// Writes `bytes`; a connection the server closed is no answer to what the user would wait for next.
    async fn send(&mut self, bytes: &[u8], next: Expected) -> Result<(), VerifyError> {
        match self.stream.write_all(bytes).await {
            Ok(()) => Ok(()),
            Err(_) => Err(self.no_answer(next, Duration::ZERO, true)),
        }
    }

    /// Reads packets until `what` says one is the one waited for (its result code), within the timeout.
    /// A server's ping is answered; chat confirms and others' entries and exits are skipped; any other
    /// packet, and bytes that are not the protocol, are the wrong packet.
    async fn expect(
        &mut self,
        expected: Expected,
        what: impl Fn(&Packet<'_>) -> Found,
    ) -> Result<i32, VerifyError> {
        let started = Instant::now();
        let deadline = started + self.limit;
        loop {
            let (found, used, pong) = match decode(&self.buf, MAX_PACKET) {
                Ok(Some((packet, n))) => match what(&packet) {
                    Found::It(result) => return self.consumed(n, result),
                    Found::Wrong => (Err(describe(&packet)), n, false),
                    Found::Other if ignorable(&packet) => {
                        (Ok(()), n, packet == Packet::Ping(Kind::Request))
                    }
                    Found::Other => (Err(describe(&packet)), n, false),
                },
                Ok(None) => (Ok(()), 0, false),
                Err(e) => (
                    Err(format!("bytes that are not the protocol ({e})")),
                    0,
                    false,
                ),
            };
            if let Err(got) = found {
                return Err(self.wrong(expected, got));
            }
            self.buf.advance(used);
            if pong {
                let mut bytes = Vec::new();
                Packet::Ping(Kind::Response).encode(&mut bytes);
                self.send(&bytes, expected.clone()).await?;
            }
            if used > 0 {
                continue;
            }
            match timeout_at(deadline, self.stream.read_buf(&mut self.buf)).await {
                Ok(Ok(n)) if n > 0 => {}
                Ok(_) => return Err(self.no_answer(expected, started.elapsed(), true)),
                Err(_) => return Err(self.no_answer(expected, self.limit, false)),
            }
        }
    }

    fn consumed(&mut self, n: usize, result: i32) -> Result<i32, VerifyError> {
        self.buf.advance(n);
        Ok(result)
    }

    fn no_answer(&self, expected: Expected, waited: Duration, closed: bool) -> VerifyError {
        VerifyError::NoAnswer {
            user: self.name.clone(),
            expected,
            waited,
            closed,
        }
    }

    fn wrong(&self, expected: Expected, got: String) -> VerifyError {
        VerifyError::WrongPacket {
            user: self.name.clone(),
            expected,
            got,
        }
    }
}

/// Packets a user may get at any time: a server's ping, the confirm of its own chat, another member
/// entering or leaving.
fn ignorable(p: &Packet<'_>) -> bool {
    match p {
        Packet::Ping(kind) => *kind == Kind::Request,
        Packet::Chat(c) => c.kind == Kind::Confirm,
        Packet::EnterRoom(e) => e.kind == Kind::Indication,
        Packet::ExitRoom(x) => x.kind == Kind::Indication,
        _ => false,
    }
}

/// A packet in words, for the error.
fn describe(p: &Packet<'_>) -> String {
    let kind = format!("{:?}", p.kind());
    match p {
        Packet::Access(a) => format!("an Access {kind} (result {})", a.result),
        Packet::EnterRoom(e) => format!(
            "an EnterRoom {kind} for {} in {} (result {})",
            e.user_name, e.room_name, e.result
        ),
        Packet::Chat(c) => format!(
            "a Chat {kind} from {:?} in {:?}: {:?}",
            c.user_name.to_string_lossy(),
            c.room_name.to_string_lossy(),
            c.text.to_string_lossy()
        ),
        Packet::ExitRoom(x) => format!("an ExitRoom {kind} for {} in {}", x.user_name, x.room_name),
        Packet::RoomList(_) => format!("a RoomList {kind}"),
        Packet::Ping(_) => format!("a Ping {kind}"),
        Packet::Error(e) => format!("an Error packet: {:?}", e.text.to_string_lossy()),
    }
}

/// Names and texts here are short ASCII: always valid Java strings.
fn jstring(s: &str) -> JString {
    JString::new(s).expect("ASCII")
}
