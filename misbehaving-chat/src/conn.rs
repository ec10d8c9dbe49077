//! One connection: its packets read and answered, and its outbox written, by one task.

use std::sync::Arc;

use bench_proto::chat::{access_result, decode, Access, JStr, Kind, Packet, RoomList};
use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::sync::mpsc::{self, UnboundedSender};

use crate::room::{Member, Out, Rooms};

/// Packets longer than this close the connection.
const MAX_PACKET: usize = 64 * 1024;

/// Serves `stream` until the client closes it, sends what is not the protocol, or the server drops it.
pub(crate) async fn serve(stream: TcpStream, rooms: Arc<Rooms>) -> std::io::Result<()> {
    let std = stream.into_std()?;
    let socket = std.try_clone()?;
    let mut stream = TcpStream::from_std(std)?;
    stream.set_nodelay(rooms.behaviour().nodelay)?;
    let (outbox, mut out) = mpsc::unbounded_channel();
    let mut conn = Conn {
        rooms,
        outbox,
        socket: Some(socket),
        entered: None,
    };
    let served = relay(&mut stream, &mut conn, &mut out).await;
    // Whatever ended it (a reset reads as an error), the member leaves its room: its name is free again.
    conn.leave();
    served
}

/// Reads and answers packets and writes the outbox until either side ends the connection.
async fn relay(
    stream: &mut TcpStream,
    conn: &mut Conn,
    out: &mut mpsc::UnboundedReceiver<Out>,
) -> std::io::Result<()> {
    let mut buf = BytesMut::with_capacity(4096);
    loop {
        tokio::select! {
            read = stream.read_buf(&mut buf) => {
                if read? == 0 || !conn.handle_all(&mut buf) {
                    return Ok(());
                }
            }
            next = out.recv() => match next {
                Some(Out::Packet(bytes)) => stream.write_all(&bytes).await?,
                Some(Out::Drop) | None => return Ok(()),
            },
        }
    }
}

struct Conn {
    rooms: Arc<Rooms>,
    outbox: UnboundedSender<Out>,
    /// The second descriptor of this socket, until it goes to the room with this member.
    socket: Option<std::net::TcpStream>,
    /// (room, name) once entered.
    entered: Option<(Bytes, Bytes)>,
}

impl Conn {
    /// Handles every whole packet in `buf`; false when the connection must close.
    fn handle_all(&mut self, buf: &mut BytesMut) -> bool {
        loop {
            match decode(buf, MAX_PACKET) {
                Ok(Some((packet, n))) => {
                    self.handle(packet);
                    buf.advance(n);
                }
                Ok(None) => return true,
                Err(_) => return false,
            }
        }
    }

    fn handle(&mut self, packet: Packet<'_>) {
        match packet {
            Packet::Access(a) if a.kind == Kind::Request => {
                let names = self.rooms.names();
                let confirm = Access {
                    kind: Kind::Confirm,
                    result: access_result::OKAY,
                    rooms: names.iter().filter_map(|n| JStr::new(n).ok()).collect(),
                    ..Access::default()
                };
                self.reply(|out| confirm.encode(out));
            }
            Packet::EnterRoom(e) if e.kind == Kind::Request && self.entered.is_none() => {
                let Some(socket) = self.socket.take() else {
                    return;
                };
                let room = Bytes::copy_from_slice(e.room_name.as_bytes());
                let name = Bytes::copy_from_slice(e.user_name.as_bytes());
                let member = Member {
                    name: name.clone(),
                    profile: Bytes::copy_from_slice(e.profile.as_bytes()),
                    outbox: self.outbox.clone(),
                    socket,
                };
                match self.rooms.enter(room.clone(), member) {
                    None => self.entered = Some((room, name)),
                    Some(refusal) => {
                        let _ = self.outbox.send(Out::Packet(refusal));
                    }
                }
            }
            Packet::Chat(c) if c.kind == Kind::Request && c.room_id == 0 => {
                if let Some((room, name)) = &self.entered {
                    self.rooms.chat(room, name, c.text);
                }
            }
            Packet::ExitRoom(_) => self.leave(),
            Packet::RoomList(_) => {
                let names = self.rooms.names();
                let confirm = RoomList {
                    kind: Kind::Confirm,
                    rooms: names.iter().filter_map(|n| JStr::new(n).ok()).collect(),
                    ..RoomList::default()
                };
                self.reply(|out| confirm.encode(out));
            }
            _ => {}
        }
    }

    fn reply(&self, write: impl FnOnce(&mut Vec<u8>)) {
        let mut out = Vec::new();
        write(&mut out);
        let _ = self.outbox.send(Out::Packet(out.into()));
    }

    fn leave(&mut self) {
        if let Some((room, name)) = self.entered.take() {
            self.rooms.leave(&room, &name);
        }
    }
}
