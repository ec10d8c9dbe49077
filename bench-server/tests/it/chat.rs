//! The chat server in-process, driven by raw VOLANO-protocol clients: membership and fan-out, order and
//! exactly-once delivery, a reader that stops reading, bad input, idle timeout, connection limit, shutdown.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bench_proto::chat::{
    decode, Access, Chat, EnterRoom, ExitRoom, JString, Kind, Packet, RoomList, APPLET_VERSION,
};
use bench_server::chat::{ChatConfig, ChatStats, ChatStatsSnapshot, Fanout};
use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::support::bounded;

/// A chat server running in this test's runtime.
struct ChatServer {
    addr: SocketAddr,
    stats: Arc<ChatStats>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<anyhow::Result<()>>,
}

impl ChatServer {
    async fn start(config: ChatConfig) -> ChatServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        Self::on(listener, config)
    }

    fn on(listener: TcpListener, config: ChatConfig) -> ChatServer {
        let addr = listener.local_addr().expect("local addr");
        let stats = Arc::new(ChatStats::default());
        let (tx, rx) = oneshot::channel();
        let task = tokio::spawn(bench_server::chat::serve(
            listener,
            config,
            stats.clone(),
            async {
                let _ = rx.await;
            },
        ));
        ChatServer {
            addr,
            stats,
            stop: Some(tx),
            task,
        }
    }

    fn stats(&self) -> ChatStatsSnapshot {
        self.stats.snapshot()
    }

    async fn stop(mut self) {
        let _ = self.stop.take().map(|tx| tx.send(()));
        bounded("server stop", self.task)
            .await
            .expect("server task")
            .expect("server run");
    }
}

/// What a test client received, with the strings as Rust strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Got {
    AccessOk(Vec<String>),
    Entered(Vec<String>),
    EnterRefused(i32),
    Joined(String),
    Left(String),
    Chat(String, String),
    ChatConfirm,
    Rooms(Vec<String>),
    Ping,
}

fn strings<'a>(list: impl IntoIterator<Item = bench_proto::chat::JStr<'a>>) -> Vec<String> {
    list.into_iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect()
}

fn got(p: Packet<'_>) -> Got {
    match p {
        Packet::Access(a) if a.kind == Kind::Confirm && a.result == 1 => {
            Got::AccessOk(strings(a.rooms))
        }
        Packet::EnterRoom(e) if e.kind == Kind::Confirm && e.result == 1 => {
            assert_eq!(e.count as usize, e.users.len());
            Got::Entered(strings(e.users.iter().map(|u| u.name)))
        }
        Packet::EnterRoom(e) if e.kind == Kind::Confirm => Got::EnterRefused(e.result),
        Packet::EnterRoom(e) if e.kind == Kind::Indication => Got::Joined(e.user_name.to_string()),
        Packet::ExitRoom(x) if x.kind == Kind::Indication => Got::Left(x.user_name.to_string()),
        Packet::Chat(c) if c.kind == Kind::Indication => {
            Got::Chat(c.user_name.to_string(), c.text.to_string())
        }
        Packet::Chat(c) if c.kind == Kind::Confirm => Got::ChatConfirm,
        Packet::RoomList(r) if r.kind == Kind::Confirm => Got::Rooms(strings(r.rooms)),
        Packet::Ping(Kind::Request) => Got::Ping,
        other => panic!("unexpected packet from the server: {other:?}"),
    }
}

pub(crate) fn enc(packet: Packet<'_>) -> Vec<u8> {
    let mut bytes = Vec::new();
    packet.encode(&mut bytes);
    bytes
}

pub(crate) fn js(s: &str) -> JString {
    JString::new(s).expect("test strings are valid")
}

/// A raw VOLANO-protocol client.
pub(crate) struct Client {
    stream: TcpStream,
    buf: BytesMut,
    room: JString,
    name: JString,
}

impl Client {
    pub(crate) async fn connect(addr: SocketAddr, room: &str, name: &str) -> Client {
        let stream = bounded("connect", TcpStream::connect(addr))
            .await
            .expect("connect");
        Self::over(stream, room, name)
    }

    /// The connection, for a test that goes on in raw bytes.
    pub(crate) fn into_stream(self) -> TcpStream {
        self.stream
    }

    pub(crate) fn over(stream: TcpStream, room: &str, name: &str) -> Client {
        Client {
            stream,
            buf: BytesMut::new(),
            room: js(room),
            name: js(name),
        }
    }

    /// Connects, is granted access and enters its room; returns the member list it was given.
    pub(crate) async fn enter(addr: SocketAddr, room: &str, name: &str) -> (Client, Vec<String>) {
        let mut c = Client::connect(addr, room, name).await;
        c.access().await;
        let members = c.enter_room().await;
        (c, members)
    }

    pub(crate) async fn access(&mut self) {
        let version = js(APPLET_VERSION);
        self.send(enc(Packet::Access(Access {
            default_room: self.room.as_jstr(),
            applet_version: version.as_jstr(),
            ..Access::default()
        })))
        .await;
        assert!(matches!(self.recv().await, Got::AccessOk(_)));
    }

    pub(crate) async fn enter_room(&mut self) -> Vec<String> {
        self.send_enter().await;
        match self.recv().await {
            Got::Entered(members) => members,
            other => panic!("expected the enter confirm, got {other:?}"),
        }
    }

    pub(crate) async fn send_enter(&mut self) {
        let profile = js("profile");
        let packet = Packet::EnterRoom(EnterRoom {
            room_name: self.room.as_jstr(),
            user_name: self.name.as_jstr(),
            profile: profile.as_jstr(),
            ..EnterRoom::default()
        });
        self.send(enc(packet)).await;
    }

    pub(crate) async fn say(&mut self, text: &str) {
        let text = js(text);
        let packet = Packet::Chat(Chat {
            room_name: self.room.as_jstr(),
            user_name: self.name.as_jstr(),
            text: text.as_jstr(),
            ..Chat::default()
        });
        self.send(enc(packet)).await;
    }

    pub(crate) async fn send(&mut self, bytes: Vec<u8>) {
        self.send_raw(&bytes).await;
    }

    pub(crate) async fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.expect("write");
    }

    /// The next packet (failing the test on EOF).
    pub(crate) async fn recv(&mut self) -> Got {
        self.try_recv()
            .await
            .expect("the server closed the connection")
    }

    /// The next packet, or None at EOF (or a reset).
    pub(crate) async fn try_recv(&mut self) -> Option<Got> {
        loop {
            if let Some((packet, n)) = decode(&self.buf, 1 << 20).expect("valid packets") {
                let g = got(packet);
                let _ = self.buf.split_to(n);
                return Some(g);
            }
            let read = bounded("a packet", self.stream.read_buf(&mut self.buf)).await;
            match read {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    }

    /// The next packet that is not a chat confirm.
    pub(crate) async fn recv_skipping_confirms(&mut self) -> Got {
        loop {
            match self.recv().await {
                Got::ChatConfirm => continue,
                g => return g,
            }
        }
    }

    /// Reads until the server closes the connection; returns what came before.
    pub(crate) async fn until_closed(&mut self) -> Vec<Got> {
        let mut seen = Vec::new();
        while let Some(g) = self.try_recv().await {
            seen.push(g);
        }
        seen
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_see_entries_messages_and_exits_in_order_exactly_once() {
    let server = ChatServer::start(ChatConfig::default()).await;
    let (mut a, members) = Client::enter(server.addr, "Lobby", "Ann").await;
    assert_eq!(members, ["Ann"]);
    let (mut b, members) = Client::enter(server.addr, "Lobby", "Bob").await;
    assert_eq!(members, ["Ann", "Bob"]);
    assert_eq!(a.recv().await, Got::Joined("Bob".into()));
    let (mut c, members) = Client::enter(server.addr, "Lobby", "Cy").await;
    assert_eq!(members, ["Ann", "Bob", "Cy"]);
    assert_eq!(a.recv().await, Got::Joined("Cy".into()));
    assert_eq!(b.recv().await, Got::Joined("Cy".into()));

    // A second room, created on demand, is separate.
    let (mut other, _) = Client::enter(server.addr, "Other", "Ann").await;

    // Two senders at once: each member gets the other members' messages, each sender's in order, once.
    const N: usize = 50;
    for i in 0..N {
        a.say(&format!("a{i}")).await;
        b.say(&format!("b{i}")).await;
    }
    for (me, client) in [("Ann", &mut a), ("Bob", &mut b), ("Cy", &mut c)] {
        let expected_messages = if me == "Cy" { 2 * N } else { N };
        let mut from_a = Vec::new();
        let mut from_b = Vec::new();
        while from_a.len() + from_b.len() < expected_messages {
            match client.recv_skipping_confirms().await {
                Got::Chat(who, text) if who == "Ann" => from_a.push(text),
                Got::Chat(who, text) if who == "Bob" => from_b.push(text),
                g => panic!("{me} got {g:?}"),
            }
        }
        let want = |p: &str| (0..N).map(|i| format!("{p}{i}")).collect::<Vec<_>>();
        assert_eq!(from_a, if me == "Ann" { vec![] } else { want("a") }, "{me}");
        assert_eq!(from_b, if me == "Bob" { vec![] } else { want("b") }, "{me}");
    }

    // The name given in a chat request is not trusted: the indication names the sender as it entered.
    let text = js("hello");
    c.send(enc(Packet::Chat(Chat {
        room_name: c.room.as_jstr(),
        user_name: js("Ann").as_jstr(),
        text: text.as_jstr(),
        ..Chat::default()
    })))
    .await;
    assert_eq!(c.recv().await, Got::ChatConfirm);
    for member in [&mut a, &mut b] {
        assert_eq!(
            member.recv_skipping_confirms().await,
            Got::Chat("Cy".into(), "hello".into())
        );
    }

    // Leaving: an explicit exit, then a dropped connection; the others are told of both.
    let exit = Packet::ExitRoom(ExitRoom {
        room_name: b.room.as_jstr(),
        user_name: b.name.as_jstr(),
        ..ExitRoom::default()
    });
    b.send(enc(exit)).await;
    b.send(enc(Packet::RoomList(RoomList::default()))).await;
    assert_eq!(
        b.recv_skipping_confirms().await,
        Got::Rooms(vec!["Lobby".into(), "Other".into()])
    );
    assert_eq!(a.recv_skipping_confirms().await, Got::Left("Bob".into()));
    assert_eq!(c.recv().await, Got::Left("Bob".into()));
    drop(c);
    assert_eq!(a.recv().await, Got::Left("Cy".into()));
    // Nothing of the Lobby reached the other room.
    other.say("x").await;
    assert_eq!(other.recv().await, Got::ChatConfirm);

    let stats = server.stats();
    assert_eq!(stats.chat_messages, 2 * N as u64 + 2);
    assert_eq!(stats.rooms_created, 2);
    assert_eq!(
        stats.malformed + stats.oversized + stats.slow_disconnects,
        0
    );
    server.stop().await;
}

/// Every member gets every other member's messages, each sender's in order, once: through io_uring and
/// through writes (the path taken when io_uring is refused, forced here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_fan_out_paths_deliver_every_message_in_order_to_every_member() {
    const MEMBERS: usize = 5;
    const N: usize = 200;
    let allowed = Fanout::Auto
        .resolve()
        .expect("auto always resolves")
        .io_uring
        .is_ok();
    for fanout in [Fanout::Uring, Fanout::Writes] {
        if fanout == Fanout::Uring && !allowed {
            // This kernel (or seccomp profile) refuses io_uring: `--fanout uring` is refused at startup,
            // which the binary test checks; here the writes path is what runs.
            continue;
        }
        let server = ChatServer::start(ChatConfig {
            fanout,
            ..ChatConfig::default()
        })
        .await;
        let mut clients = Vec::new();
        for m in 0..MEMBERS {
            let (c, _) = Client::enter(server.addr, "Lobby", &format!("U{m}")).await;
            clients.push(c);
        }
        for i in 0..N {
            for (m, c) in clients.iter_mut().enumerate() {
                c.say(&format!("{m}-{i}")).await;
            }
        }
        for (me, client) in clients.iter_mut().enumerate() {
            let mut from = vec![Vec::new(); MEMBERS];
            while from.iter().map(Vec::len).sum::<usize>() < (MEMBERS - 1) * N {
                match client.recv_skipping_confirms().await {
                    Got::Chat(who, text) => {
                        let m: usize = who[1..].parse().expect("U<m>");
                        from[m].push(text);
                    }
                    Got::Joined(_) => {}
                    g => panic!("U{me} ({fanout:?}) got {g:?}"),
                }
            }
            for (m, texts) in from.iter().enumerate() {
                let want: Vec<String> = if m == me {
                    vec![]
                } else {
                    (0..N).map(|i| format!("{m}-{i}")).collect()
                };
                assert_eq!(texts, &want, "U{me} from U{m} ({fanout:?})");
            }
        }
        let stats = server.stats();
        assert_eq!(stats.chat_messages, (MEMBERS * N) as u64);
        assert_eq!(stats.slow_disconnects, 0);
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_that_stops_reading_is_dropped_without_stalling_its_room() {
    // Small kernel buffers on both ends of the stalled member's connection (accepted sockets inherit the
    // listener's send buffer), a short queue, and big messages: it fills up within a few messages.
    let socket = TcpSocket::new_v4().expect("socket");
    socket.set_send_buffer_size(4096).expect("SO_SNDBUF");
    socket.bind("127.0.0.1:0".parse().unwrap()).expect("bind");
    let listener = socket.listen(64).expect("listen");
    let config = ChatConfig {
        send_buffer: 2 * 16_100,
        max_text: 20_000,
        max_packet: 64 * 1024,
        ..ChatConfig::default()
    };
    let server = ChatServer::on(listener, config);
    let (mut sender, _) = Client::enter(server.addr, "Lobby", "Ann").await;
    let (mut reader, _) = Client::enter(server.addr, "Lobby", "Bob").await;
    assert_eq!(sender.recv().await, Got::Joined("Bob".into()));
    let stalled_socket = TcpSocket::new_v4().expect("socket");
    stalled_socket
        .set_recv_buffer_size(4096)
        .expect("SO_RCVBUF");
    let stream = bounded("connect", stalled_socket.connect(server.addr))
        .await
        .expect("connect");
    let mut stalled = Client::over(stream, "Lobby", "Cy");
    stalled.access().await;
    stalled.enter_room().await;
    assert_eq!(sender.recv().await, Got::Joined("Cy".into()));
    assert_eq!(reader.recv().await, Got::Joined("Cy".into()));

    // The stalled member reads nothing from here on. Lockstep, so the reader itself is never behind.
    const N: usize = 200;
    let big = "x".repeat(16_000);
    let mut left = Vec::new();
    for i in 0..N {
        sender.say(&format!("{i} {big}")).await;
        loop {
            match reader.recv().await {
                Got::Chat(who, text) => {
                    assert_eq!(who, "Ann");
                    assert_eq!(text.split(' ').next(), Some(i.to_string().as_str()));
                    break;
                }
                Got::Left(who) => left.push((i, who)),
                g => panic!("reader got {g:?}"),
            }
        }
    }
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].1, "Cy");
    assert!(left[0].0 < N / 2, "evicted only at message {}", left[0].0);
    assert_eq!(server.stats().slow_disconnects, 1);
    // What was buffered for the stalled member arrives, then the connection is closed.
    let seen = stalled.until_closed().await;
    assert!(seen.len() < N, "{} packets", seen.len());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_closes_only_that_connection() {
    let server = ChatServer::start(ChatConfig::default()).await;
    let (mut a, _) = Client::enter(server.addr, "Lobby", "Ann").await;
    let (mut b, _) = Client::enter(server.addr, "Lobby", "Bob").await;
    assert_eq!(a.recv().await, Got::Joined("Bob".into()));

    // Each of these members breaks the protocol in its own way after entering.
    let long_text = "y".repeat(60_000);
    let breakages: [(&str, Vec<u8>); 4] = [
        ("unknown packet id", vec![0xFF, 0xFF, 0, 0, 0, 1]),
        (
            "bad string",
            vec![0, 0xCB, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0x80],
        ),
        ("oversized packet", {
            let mut v = vec![0, 0xCB, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0];
            v.extend_from_slice(&(long_text.len() as u16).to_be_bytes());
            v
        }),
        ("second access", {
            let mut v = Vec::new();
            Packet::Access(Access::default()).encode(&mut v);
            v
        }),
    ];
    for (i, (what, bytes)) in breakages.iter().enumerate() {
        let name = format!("X{i}");
        let (mut x, _) = Client::enter(server.addr, "Lobby", &name).await;
        assert_eq!(a.recv().await, Got::Joined(name.clone()), "{what}");
        assert_eq!(b.recv().await, Got::Joined(name.clone()), "{what}");
        x.send_raw(bytes).await;
        x.until_closed().await;
        assert_eq!(a.recv().await, Got::Left(name.clone()), "{what}");
        assert_eq!(b.recv().await, Got::Left(name.clone()), "{what}");
    }
    // Also refused: a first packet that is not an access request, and an empty or over-long user name.
    let mut y = Client::connect(server.addr, "Lobby", "Y").await;
    y.send_enter().await;
    assert!(y.until_closed().await.is_empty());
    let (mut z, _) = Client::enter(server.addr, "Lobby", "Zed").await;
    for member in [&mut a, &mut b] {
        assert_eq!(member.recv().await, Got::Joined("Zed".into()));
    }
    z.name = js(&"z".repeat(21));
    z.send_enter().await;
    z.until_closed().await;
    for member in [&mut a, &mut b] {
        assert_eq!(member.recv().await, Got::Left("Zed".into()));
    }

    // The room and the server carry on.
    a.say("still here").await;
    assert_eq!(b.recv().await, Got::Chat("Ann".into(), "still here".into()));
    let stats = server.stats();
    assert_eq!(stats.malformed, 4, "{stats:?}");
    assert_eq!(stats.oversized, 2, "{stats:?}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn name_taken_and_full_rooms_are_refused() {
    let config = ChatConfig {
        max_room_members: 2,
        ..ChatConfig::default()
    };
    let server = ChatServer::start(config).await;
    let (_a, _) = Client::enter(server.addr, "Lobby", "Ann").await;
    let mut dup = Client::connect(server.addr, "Lobby", "ANN").await;
    dup.access().await;
    dup.send_enter().await;
    assert_eq!(dup.recv().await, Got::EnterRefused(3));
    let (_b, _) = Client::enter(server.addr, "Lobby", "Bob").await;
    let mut third = Client::connect(server.addr, "Lobby", "Cy").await;
    third.access().await;
    third.send_enter().await;
    assert_eq!(third.recv().await, Got::EnterRefused(2));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_connection_is_pinged_then_closed() {
    let config = ChatConfig {
        idle_timeout: Duration::from_millis(100),
        ..ChatConfig::default()
    };
    let server = ChatServer::start(config).await;
    let mut c = Client::connect(server.addr, "Lobby", "Ann").await;
    c.access().await;
    assert_eq!(c.until_closed().await, [Got::Ping]);
    let stats = server.stats();
    assert_eq!((stats.pings_sent, stats.idle_timeouts), (1, 1));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_connection_limit_new_connections_wait_their_turn() {
    let config = ChatConfig {
        max_connections: 1,
        ..ChatConfig::default()
    };
    let server = ChatServer::start(config).await;
    let mut first = Client::connect(server.addr, "Lobby", "Ann").await;
    first.access().await;
    // Accepted by the kernel, but not served until the first connection closes.
    let mut second = Client::connect(server.addr, "Lobby", "Bob").await;
    drop(first);
    second.access().await;
    let stats = server.stats();
    assert!(stats.limit_waits >= 1, "{stats:?}");
    assert_eq!(stats.accepted, 2);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_closes_every_connection() {
    let server = ChatServer::start(ChatConfig::default()).await;
    let (mut a, _) = Client::enter(server.addr, "Lobby", "Ann").await;
    let stats = server.stats.clone();
    server.stop().await;
    assert!(a.until_closed().await.is_empty());
    assert_eq!(stats.snapshot().closed, 1);
}
