//! Slow peers: slowloris request heads and bodies, and chat packets that never end. A deadline bounds each
//! phase (a trickle of bytes does not extend it), the slot is freed when it passes, and at the connection
//! limit a new client is served within a second after the slow ones are cut.

use std::time::Duration;

use bench_proto::chat::{Chat, Packet};
use bench_proto::cxf;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{interval, Instant};

use super::harness::{connect, exchange, parse_reply, Reply, Server};
use crate::chat::{enc, js, Client as ChatClient};

/// How often a slow client sends its next byte.
const TRICKLE: Duration = Duration::from_millis(100);

/// Sends `head`, then `rest` one byte per [`TRICKLE`], until the server answers or closes; returns what it
/// sent back and when it did.
async fn trickle(mut stream: TcpStream, head: Vec<u8>, rest: Vec<u8>) -> (Reply, Instant) {
    let _ = stream.write_all(&head).await;
    let mut ticks = interval(TRICKLE);
    let mut next = rest.iter();
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        tokio::select! {
            read = stream.read(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => raw.extend_from_slice(&buf[..n]),
            },
            _ = ticks.tick() => {
                if let Some(b) = next.next() {
                    let _ = stream.write_all(&[*b]).await;
                }
            }
        }
    }
    (parse_reply(raw), Instant::now())
}

fn slow_post() -> (Vec<u8>, Vec<u8>) {
    let mut body = Vec::new();
    cxf::write_request(&cxf::echo_complex_request(1, 1), &mut body);
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: t\r\nContent-Type: text/xml\r\nContent-Length: {}\r\n\r\n",
        cxf::PATH,
        body.len()
    );
    (head.into_bytes(), body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_slow_peers() {
    let server = Server::start(&[
        "--header-timeout",
        "1s",
        "--body-timeout",
        "1s",
        "--max-connections",
        "50",
        "--chat-packet-timeout",
        "1s",
    ]);

    server
        .case("slowloris: a request head, a byte at a time", 16, async {
            let head = b"GET /health HTTP/1.1\r\nHost: t\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
            let started = Instant::now();
            let (reply, at) = trickle(connect(server.http).await, Vec::new(), head.to_vec()).await;
            assert_ne!(reply.status, 200, "an unfinished head was answered");
            assert!(at - started < Duration::from_secs(3), "held {:?}", at - started);
        })
        .await;
    assert!(
        server
            .metric("wsbench_http_connections_header_timeout_total")
            .await
            >= 1
    );

    server
        .case(
            "slowloris: a request body, a byte at a time, gets 408",
            16,
            async {
                let (head, body) = slow_post();
                let started = Instant::now();
                let (reply, at) = trickle(connect(server.http).await, head, body).await;
                assert_eq!(reply.status, 408, "{}", reply.text());
                assert_eq!(reply.header("connection"), Some("close"));
                // Cut at the deadline although a byte arrived every 100 ms.
                assert!(
                    at - started < Duration::from_secs(3),
                    "held {:?}",
                    at - started
                );
            },
        )
        .await;

    server
        .case(
            "slowloris: 60 slow bodies at --max-connections 50, then a new client",
            24,
            async {
                let (head, body) = slow_post();
                let mut slow = Vec::new();
                for _ in 0..60 {
                    let stream = connect(server.http).await;
                    slow.push(tokio::spawn(trickle(stream, head.clone(), body.clone())));
                }
                // Queued behind the slow ones (the 10 extra wait in the backlog ahead of it).
                let addr = server.http;
                let newcomer = tokio::spawn(async move {
                    let reply = exchange(
                        addr,
                        b"GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
                    )
                    .await;
                    (reply, Instant::now())
                });
                let mut first_cut = None;
                for task in slow {
                    let (reply, at) = task.await.expect("slow client");
                    assert_eq!(reply.status, 408, "{}", reply.text());
                    first_cut = Some(first_cut.map_or(at, |t: Instant| t.min(at)));
                }
                let (reply, served) = newcomer.await.expect("newcomer");
                assert_eq!(reply.status, 200, "{}", reply.text());
                let first_cut = first_cut.expect("60 slow clients");
                let waited = served.saturating_duration_since(first_cut);
                eprintln!("newcomer served {waited:?} after the first slow client was cut");
                assert!(
                    waited < Duration::from_secs(1),
                    "served {waited:?} after the cut"
                );
            },
        )
        .await;
    assert!(
        server
            .metric("wsbench_http_responses_total{code=\"408\"}")
            .await
            >= 61
    );

    server
        .case("slowloris: a chat packet, a byte at a time", 16, async {
            let (c, _) = ChatClient::enter(server.chat, "Slow", "Sid").await;
            let mut packet = enc(Packet::Chat(Chat {
                room_name: js("Slow").as_jstr(),
                user_name: js("Sid").as_jstr(),
                text: js(&"a slow message that never quite ends ".repeat(3)).as_jstr(),
                ..Chat::default()
            }));
            packet.pop();
            let started = Instant::now();
            let (_, at) = trickle(c.into_stream(), Vec::new(), packet).await;
            assert!(
                at - started < Duration::from_secs(3),
                "held {:?}",
                at - started
            );
        })
        .await;
    assert!(server.metric("wsbench_chat_packet_timeouts_total").await >= 1);
    assert_eq!(server.cases_run(), 4);
}
