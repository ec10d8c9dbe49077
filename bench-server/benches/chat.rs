//! Criterion benchmarks of chat fan-out to a 20-member room (VolanoMark's room size): the fan-out step alone
//! (encode the indication once, queue it to 19 members, take it off their queues), and a whole message
//! over loopback (a member's chat request through `chat::run` to the 19 other members' sockets, client
//! and server on one thread).

use std::hint::black_box;
use std::time::{Duration, Instant};

use bench_proto::chat::{decode, id, Access, Chat, EnterRoom, JString, Kind, Packet, MARK_TEXT};
use bench_server::chat::bench_api::FanOutRoom;
use bench_server::chat::ChatConfig;
use bytes::BytesMut;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const MEMBERS: usize = 20;

fn fan_out(c: &mut Criterion) {
    let mut room = FanOutRoom::new(MEMBERS);
    assert_eq!(room.send_one(), MEMBERS - 1);
    let mut g = c.benchmark_group("chat_fan_out");
    g.throughput(Throughput::Elements((MEMBERS - 1) as u64));
    g.bench_function("room_of_20/queue", |b| {
        b.iter(|| black_box(room.send_one()))
    });
    g.finish();
}

/// A raw VOLANO-protocol member connection.
struct Member {
    stream: TcpStream,
    buf: BytesMut,
}

impl Member {
    async fn enter(addr: std::net::SocketAddr, name: &str) -> Member {
        let stream = TcpStream::connect(addr).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        let mut m = Member {
            stream,
            buf: BytesMut::with_capacity(64 * 1024),
        };
        let room = JString::new("Room1").expect("ASCII");
        let user = JString::new(name).expect("ASCII");
        let mut bytes = Vec::new();
        Packet::Access(Access::default()).encode(&mut bytes);
        Packet::EnterRoom(EnterRoom {
            room_name: room.as_jstr(),
            user_name: user.as_jstr(),
            ..EnterRoom::default()
        })
        .encode(&mut bytes);
        m.stream.write_all(&bytes).await.expect("write");
        while m.next().await != (id::ENTER_ROOM, Kind::Confirm) {}
        m
    }

    /// Reads the next packet; returns its id and kind.
    async fn next(&mut self) -> (u16, Kind) {
        loop {
            if let Some((p, n)) = decode(&self.buf, 1 << 20).expect("valid packets") {
                let seen = (p.id(), p.kind());
                let _ = self.buf.split_to(n);
                return seen;
            }
            let n = self.stream.read_buf(&mut self.buf).await.expect("read");
            assert!(n > 0, "the server closed a member's connection");
        }
    }

    /// Skips packets until a chat indication.
    async fn next_chat(&mut self) {
        while self.next().await != (id::CHAT, Kind::Indication) {}
    }
}

fn loopback(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (stop, mut members) = rt.block_on(setup());
    let room = JString::new("Room1").expect("ASCII");
    let user = JString::new("Mark1").expect("ASCII");
    let text = JString::new(MARK_TEXT).expect("ASCII");
    let mut request = Vec::new();
    Chat {
        room_name: room.as_jstr(),
        user_name: user.as_jstr(),
        text: text.as_jstr(),
        ..Chat::default()
    }
    .encode(&mut request);

    let mut g = c.benchmark_group("chat_fan_out");
    g.throughput(Throughput::Elements((MEMBERS - 1) as u64));
    g.bench_function("room_of_20/loopback", |b| {
        b.iter_custom(|iters| rt.block_on(messages(&mut members, &request, iters)))
    });
    g.finish();
    drop(members);
    let _ = stop.send(());
}

/// A server on 127.0.0.1:0 with one room of 20 members, all entered.
async fn setup() -> (tokio::sync::oneshot::Sender<()>, Vec<Member>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(bench_server::chat::run(
        listener,
        ChatConfig::default(),
        async {
            let _ = stopped.await;
        },
    ));
    let mut members = Vec::new();
    for i in 1..=MEMBERS {
        members.push(Member::enter(addr, &format!("Mark{i}")).await);
    }
    // Everyone has seen everyone enter once the last member's entry reached the first.
    let mut sender = members.remove(0);
    let mut enters = 0;
    while enters < MEMBERS - 1 {
        if sender.next().await == (id::ENTER_ROOM, Kind::Indication) {
            enters += 1;
        }
    }
    members.insert(0, sender);
    (stop, members)
}

/// Sends `iters` messages from the first member, each read by the 19 others before the next is sent.
async fn messages(members: &mut [Member], request: &[u8], iters: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        members[0].stream.write_all(request).await.expect("write");
        for m in &mut members[1..] {
            m.next_chat().await;
        }
        // The sender's pacing confirm.
        while members[0].next().await != (id::CHAT, Kind::Confirm) {}
    }
    start.elapsed()
}

criterion_group!(benches, fan_out, loopback);
criterion_main!(benches);
