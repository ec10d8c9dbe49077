//! Hostile chat: packets that break the protocol (each closes only its own connection, counted), limits
//! on names, rooms and packets, requests the server answers by refusing or ignoring, and resets
//! mid-packet. The room of well-behaved members next to them carries on.

use bench_proto::chat::{
    enter_result, Access, Chat, EnterRoom, ErrorPacket, ExitRoom, JStr, Kind, Packet,
};

use super::harness::{connect, Server};
use crate::chat::{enc, js, Client, Got};

/// Bytes a member sends after entering `Hostile` as `name`, and what must happen.
struct Breach {
    name: &'static str,
    bytes: Vec<u8>,
    /// The counter (a `wsbench_chat_*` metric) that must go up by one: the connection was closed for it.
    counter: &'static str,
}

fn chat_packet(room: &str, user: &str, text: &str) -> Vec<u8> {
    enc(Packet::Chat(Chat {
        room_name: js(room).as_jstr(),
        user_name: js(user).as_jstr(),
        text: js(text).as_jstr(),
        ..Chat::default()
    }))
}

fn enter_packet(room: &str, user: &str, profile: &str) -> Vec<u8> {
    enc(Packet::EnterRoom(EnterRoom {
        room_name: js(room).as_jstr(),
        user_name: js(user).as_jstr(),
        profile: js(profile).as_jstr(),
        ..EnterRoom::default()
    }))
}

fn breaches() -> Vec<Breach> {
    const MALFORMED: &str = "wsbench_chat_malformed_total";
    const OVERSIZED: &str = "wsbench_chat_oversized_total";
    // A chat request for the room up to its text's length: id, kind, question, room id, room, user.
    let chat_header = |len: u16| {
        let mut v = vec![0, 0xCB, 0, 0, 0, 1, 0, 0, 0, 0, 0];
        for s in [&b"Hostile"[..], b"X"] {
            v.extend_from_slice(&(s.len() as u16).to_be_bytes());
            v.extend_from_slice(s);
        }
        v.extend_from_slice(&len.to_be_bytes());
        v
    };
    let b = |name, bytes, counter| Breach {
        name,
        bytes,
        counter,
    };
    vec![
        b(
            "packet: unknown id",
            vec![0xFF, 0xFF, 0, 0, 0, 1],
            MALFORMED,
        ),
        b(
            "packet: unknown kind",
            vec![0, 0xCB, 0x7F, 0, 0, 0],
            MALFORMED,
        ),
        b(
            "string: bad modified UTF-8",
            vec![0, 0xCB, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0x80],
            MALFORMED,
        ),
        b(
            "string: a 3-byte sequence cut short",
            {
                let mut v = chat_header(3);
                v.extend_from_slice(&[b'a', 0xE2, 0x82]);
                v
            },
            MALFORMED,
        ),
        b(
            "string: a 4-byte UTF-8 sequence (modified UTF-8 uses surrogate pairs)",
            {
                let mut v = chat_header(4);
                v.extend_from_slice("\u{1F600}".as_bytes());
                v
            },
            MALFORMED,
        ),
        b(
            "packet: a 60 KB string declared",
            chat_header(60_000),
            OVERSIZED,
        ),
        b(
            "packet: a second Access",
            enc(Packet::Access(Access::default())),
            MALFORMED,
        ),
        b(
            "enter: an empty user name",
            enter_packet("Other", "", ""),
            MALFORMED,
        ),
        b(
            "enter: a user name of 21 characters",
            enter_packet("Other", &"u".repeat(21), ""),
            OVERSIZED,
        ),
        b(
            "enter: a 201-character profile",
            enter_packet("Other", "P", &"p".repeat(201)),
            OVERSIZED,
        ),
        b(
            "enter: a 101-character room name",
            enter_packet(&"r".repeat(101), "R", ""),
            OVERSIZED,
        ),
        b(
            "enter: the same room twice",
            enter_packet("Hostile", "Again", ""),
            MALFORMED,
        ),
        b(
            "room list: a count of 2^31-1 names, and nothing after",
            vec![0, 0xD7, 0, 0, 0, 1, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF],
            OVERSIZED,
        ),
        b(
            "enter: a confirm announcing 2^31-1 members, and nothing after",
            {
                // Id, kind (confirm), empty profile, room and user, result, room type, count, list length.
                let mut v = vec![0, 0xCE, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0];
                v.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 1]);
                v.extend_from_slice(&[0x7F, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF]);
                v
            },
            OVERSIZED,
        ),
        b(
            "enter: a NUL (Java's C0 80) in the user name",
            enter_packet("Other", "Ann\0x", ""),
            MALFORMED,
        ),
        b(
            "enter: a NUL byte in the room name",
            {
                let mut v = vec![0, 0xCE, 0, 0, 0, 1, 0, 0];
                for s in [&b"Oth\0er"[..], b"Nul"] {
                    v.extend_from_slice(&(s.len() as u16).to_be_bytes());
                    v.extend_from_slice(s);
                }
                v
            },
            MALFORMED,
        ),
        b(
            "enter: a line feed in the user name",
            enter_packet("Other", "An\nn", ""),
            MALFORMED,
        ),
        b(
            "chat: an empty text",
            chat_packet("Hostile", "X", ""),
            MALFORMED,
        ),
        b(
            "chat: a 201-character text",
            chat_packet("Hostile", "X", &"t".repeat(201)),
            OVERSIZED,
        ),
    ]
}

/// The room of well-behaved members the hostile ones join.
struct Room {
    ann: Client,
    bob: Client,
}

impl Room {
    async fn open(server: &Server) -> Room {
        let (mut ann, _) = Client::enter(server.chat, "Hostile", "Ann").await;
        let (bob, _) = Client::enter(server.chat, "Hostile", "Bob").await;
        assert_eq!(ann.recv().await, Got::Joined("Bob".into()));
        Room { ann, bob }
    }

    /// Both see `who` join.
    async fn joined(&mut self, who: &str) {
        assert_eq!(self.ann.recv().await, Got::Joined(who.into()));
        assert_eq!(self.bob.recv().await, Got::Joined(who.into()));
    }

    /// Both see `who` leave.
    async fn left(&mut self, who: &str) {
        assert_eq!(self.ann.recv().await, Got::Left(who.into()));
        assert_eq!(self.bob.recv().await, Got::Left(who.into()));
    }

    /// The room still relays (and nothing else arrived meanwhile).
    async fn carries_on(&mut self) {
        self.ann.say("on we go").await;
        assert_eq!(
            self.bob.recv().await,
            Got::Chat("Ann".into(), "on we go".into())
        );
        assert_eq!(self.ann.recv().await, Got::ChatConfirm);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_chat() {
    let server = Server::start(&[]);
    let mut room = Room::open(&server).await;
    let table = breaches();
    let rows = table.len();
    for (i, breach) in table.into_iter().enumerate() {
        let who = format!("X{i}");
        let before = server.metric(breach.counter).await;
        server
            .case(breach.name, 16, async {
                let (mut x, _) = Client::enter(server.chat, "Hostile", &who).await;
                room.joined(&who).await;
                x.send_raw(&breach.bytes).await;
                x.until_closed().await;
                room.left(&who).await;
                room.carries_on().await;
            })
            .await;
        assert_eq!(
            server.metric(breach.counter).await,
            before + 1,
            "{}: {} once",
            breach.name,
            breach.counter
        );
    }

    server
        .case("access: a first packet that is not Access", 16, async {
            let mut x = Client::connect(server.chat, "Hostile", "Y").await;
            x.send(enter_packet("Hostile", "Y", "")).await;
            assert!(x.until_closed().await.is_empty());
        })
        .await;

    server
        .case("enter: a name taken, in another case", 16, async {
            let mut x = Client::connect(server.chat, "Hostile", "ANN").await;
            x.access().await;
            x.send_enter().await;
            assert_eq!(x.recv().await, Got::EnterRefused(enter_result::NAME_TAKEN));
            room.carries_on().await;
        })
        .await;

    server
        .case(
            "enter: past the rooms one connection may be in",
            16,
            async {
                let mut x = Client::connect(server.chat, "Hostile", "Many").await;
                x.access().await;
                let mut refused = 0;
                for r in 0..40 {
                    x.send(enter_packet(&format!("Many{r}"), "Many", "")).await;
                    match x.recv().await {
                        Got::Entered(_) => {}
                        Got::EnterRefused(code) => {
                            assert_eq!(code, enter_result::ROOM_FULL);
                            refused += 1;
                        }
                        g => panic!("{g:?}"),
                    }
                }
                assert_eq!(refused, 8, "32 rooms per connection by default");
            },
        )
        .await;

    server
        .case("enter: an empty room name", 16, async {
            let mut x = Client::connect(server.chat, "Hostile", "Z").await;
            x.access().await;
            x.send(enter_packet("", "Z", "")).await;
            assert_eq!(
                x.recv().await,
                Got::EnterRefused(enter_result::NO_SUCH_ROOM)
            );
        })
        .await;

    server
        .case(
            "ignored: chat for a room not entered, private chat, exit of another room",
            16,
            async {
                let (mut x, _) = Client::enter(server.chat, "Hostile", "Quiet").await;
                room.joined("Quiet").await;
                x.send(chat_packet("Elsewhere", "Quiet", "hello?")).await;
                x.send(enc(Packet::Chat(Chat {
                    room_id: 7,
                    room_name: js("Hostile").as_jstr(),
                    user_name: js("Quiet").as_jstr(),
                    text: js("psst").as_jstr(),
                    ..Chat::default()
                })))
                .await;
                x.send(enc(Packet::ExitRoom(ExitRoom {
                    room_name: js("Elsewhere").as_jstr(),
                    user_name: js("Quiet").as_jstr(),
                    ..ExitRoom::default()
                })))
                .await;
                x.send(enc(Packet::Ping(Kind::Response))).await;
                x.send(enc(Packet::Error(ErrorPacket {
                    text: JStr::new(b"client-side trouble").unwrap(),
                    ..ErrorPacket::default()
                })))
                .await;
                // Still a member, and nothing reached the room.
                x.say("after all that").await;
                assert_eq!(x.recv().await, Got::ChatConfirm);
                assert_eq!(
                    room.ann.recv().await,
                    Got::Chat("Quiet".into(), "after all that".into())
                );
                assert_eq!(
                    room.bob.recv().await,
                    Got::Chat("Quiet".into(), "after all that".into())
                );
                drop(x);
                room.left("Quiet").await;
            },
        )
        .await;

    server
        .case(
            "chat: a message claiming another sender's name",
            16,
            async {
                let (mut x, _) = Client::enter(server.chat, "Hostile", "Mallory").await;
                room.joined("Mallory").await;
                x.send(chat_packet("Hostile", "Ann", "it is me, Ann")).await;
                assert_eq!(
                    room.bob.recv().await,
                    Got::Chat("Mallory".into(), "it is me, Ann".into())
                );
                assert_eq!(
                    room.ann.recv().await,
                    Got::Chat("Mallory".into(), "it is me, Ann".into())
                );
                drop(x);
                room.left("Mallory").await;
            },
        )
        .await;

    for (name, cut) in [
        ("reset: half-way through a chat packet", 0.5),
        ("reset: one byte short of a chat packet", 1.0),
    ] {
        server
            .case(name, 16, async {
                let (x, _) = Client::enter(server.chat, "Hostile", "Cut").await;
                room.joined("Cut").await;
                let packet = chat_packet("Hostile", "Cut", "never finished");
                let upto = ((packet.len() as f64 * cut) as usize).min(packet.len() - 1);
                let mut stream = x.into_stream();
                tokio::io::AsyncWriteExt::write_all(&mut stream, &packet[..upto])
                    .await
                    .unwrap();
                stream.set_zero_linger().unwrap();
                drop(stream);
                room.left("Cut").await;
                room.carries_on().await;
            })
            .await;
    }

    server
        .case("reset: before any byte", 16, async {
            let stream = connect(server.chat).await;
            stream.set_zero_linger().unwrap();
            drop(stream);
        })
        .await;

    assert_eq!(server.cases_run(), rows + 9);
}
