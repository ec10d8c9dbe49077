//! Peers that ask and never read: the largest `get` from many connections, large echoes beyond the
//! response budget, and chat members whose outbox fills (room lists, fan-out). Memory stays bounded, the
//! peers are cut (send timeout, or dropped as slow chat readers) and counted in `/metrics`.
//!
//! The HTTP cases wait for every peer to be counted as cut for not reading, which happens once its answer
//! has filled the socket and stood for the send timeout: however busy the machine, nothing else may cut a
//! peer first (no idle or body timeout while it waits for its turn at the budgets), and the waits are
//! bounded by progress ([`Server::wait_metric`]), not by a deadline.

use bench_proto::chat::{Packet, RoomList};
use bench_proto::{customer, cxf};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::harness::{connect_small, soap_request, Server, LAST_RESORT};
use crate::chat::{enc, Client as ChatClient, Got};

const MIB: u64 = 1024 * 1024;

fn get_max() -> Vec<u8> {
    let mut body = Vec::new();
    customer::write_request(&customer::get_request(20_000, 0), &mut body);
    soap_request(customer::PATH, &body)
}

/// Opens `n` connections that each send `request` and never read.
async fn non_readers(addr: std::net::SocketAddr, n: usize, request: &[u8]) -> Vec<TcpStream> {
    let mut conns = Vec::with_capacity(n);
    for _ in 0..n {
        let mut s = connect_small(addr).await;
        s.write_all(request).await.expect("send the request");
        conns.push(s);
    }
    conns
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_non_readers() {
    // A peer waiting for its turn at the request or response budget moves no byte: with the default idle
    // (60 s) and body (30 s) timeouts, a busy machine could cut it for that before it is cut for not reading.
    let server = Server::start(&[
        "--send-timeout",
        "1s",
        "--idle-timeout",
        "1h",
        "--body-timeout",
        "1h",
        "--max-connections",
        "2000",
    ]);

    server
        .case_within(
            "http: 60 connections get 20,000 customers and never read",
            24,
            LAST_RESORT,
            async {
                let stalled0 = server
                    .metric("wsbench_http_connections_send_stalled_total")
                    .await;
                let conns = non_readers(server.http, 60, &get_max()).await;
                server
                    .wait_metric("wsbench_http_connections_send_stalled_total", stalled0 + 60)
                    .await;
                drop(conns);
            },
        )
        .await;

    // The deliverable: 1,000 non-reading connections, each asking for the largest response the
    // server makes (20,000 customers, ~10 MB), keep the server within 64 MiB resident.
    server.reset_peak();
    let stalled0 = server
        .metric("wsbench_http_connections_send_stalled_total")
        .await;
    server
        .case_within(
            "http: 1,000 connections get 20,000 customers and never read",
            64,
            LAST_RESORT,
            async {
                let conns = non_readers(server.http, 1000, &get_max()).await;
                server
                    .wait_metric(
                        "wsbench_http_connections_send_stalled_total",
                        stalled0 + 1000,
                    )
                    .await;
                drop(conns);
            },
        )
        .await;
    let peak = server.peak_rss();
    eprintln!(
        "1,000 non-reading get(20000) connections: peak RSS {:.1} MiB",
        peak as f64 / MIB as f64
    );
    assert!(peak <= 64 * MIB, "peak RSS {peak} bytes");
    assert!(
        server
            .metric("wsbench_http_response_budget_waits_total")
            .await
            > 0,
        "the response budget held them back"
    );

    // Bounded by the budgets: request bodies waiting for the response budget (32 MiB), unsent responses
    // (16 MiB), and the parses in flight on the blocking pool: each is admitted only while the response
    // budget has room and charges it its body's size at once, so at most about four of 4 MB run together,
    // each holding its decoded text and its response being written (2 × 4 MB): 32 + 16 + 32 + slack.
    server
        .case_within(
            "http: 32 echoes of 4 MB, never read (past the response budget)",
            96,
            LAST_RESORT,
            async {
                // Big enough that the kernel's socket buffers cannot take a whole answer.
                let text = "x".repeat(4 << 20);
                let mut body = Vec::new();
                cxf::write_request(&cxf::Request::EchoString(text.into()), &mut body);
                let stalled0 = server
                    .metric("wsbench_http_connections_send_stalled_total")
                    .await;
                let conns = non_readers(server.http, 32, &soap_request(cxf::PATH, &body)).await;
                server
                    .wait_metric("wsbench_http_connections_send_stalled_total", stalled0 + 32)
                    .await;
                drop(conns);
            },
        )
        .await;

    assert_eq!(server.cases_run(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_chat_non_readers() {
    let server = Server::start(&[]);
    // Chat: many rooms make each room list big (up to its 32 KiB cap); members that ask for room lists
    // and never read are dropped once their outbox is full.
    let mut hosts = Vec::new();
    for h in 0..8 {
        let (host, _) = ChatClient::enter(server.chat, &format!("{h:0>100}"), "Host").await;
        hosts.push(host);
    }
    let mut rooms = Vec::new();
    for r in 0..400 {
        let (member, _) = ChatClient::enter(server.chat, &format!("Room{r:0>96}"), "Owner").await;
        rooms.push(member);
    }
    for (n, name) in [
        (1, "chat: 1,000 room lists from a member that never reads"),
        (
            4,
            "chat: 1,000 room lists each from 4 members that never read",
        ),
    ] {
        server
            .case(name, 24, async {
                let slow0 = server.metric("wsbench_chat_slow_disconnects_total").await;
                let mut flooders = Vec::new();
                for i in 0..n {
                    let stream = connect_small(server.chat).await;
                    let mut c = ChatClient::over(stream, "Flood", &format!("F{i}"));
                    c.access().await;
                    let mut stream = c.into_stream();
                    let lists = enc(Packet::RoomList(RoomList::default())).repeat(1000);
                    let _ = stream.write_all(&lists).await;
                    flooders.push(stream);
                }
                server
                    .wait_metric("wsbench_chat_slow_disconnects_total", slow0 + n)
                    .await;
                drop(flooders);
            })
            .await;
    }

    server
        .case("chat: a member of a busy room stops reading", 24, async {
            let slow0 = server.metric("wsbench_chat_slow_disconnects_total").await;
            let (mut talker, _) = ChatClient::enter(server.chat, "Busy", "Talker").await;
            let (mut listener, _) = ChatClient::enter(server.chat, "Busy", "Listener").await;
            assert_eq!(talker.recv().await, Got::Joined("Listener".into()));
            let stream = connect_small(server.chat).await;
            let mut deaf = ChatClient::over(stream, "Busy", "Deaf");
            deaf.access().await;
            deaf.enter_room().await;
            assert_eq!(talker.recv().await, Got::Joined("Deaf".into()));
            assert_eq!(listener.recv().await, Got::Joined("Deaf".into()));
            // Lockstep with the listener, so only the deaf member falls behind.
            let text = "y".repeat(190);
            let mut left = false;
            for i in 0..20_000 {
                talker.say(&format!("{i} {text}")).await;
                loop {
                    match listener.recv().await {
                        Got::Chat(..) => break,
                        Got::Left(who) => {
                            assert_eq!(who, "Deaf");
                            left = true;
                        }
                        g => panic!("listener got {g:?}"),
                    }
                }
                if left {
                    break;
                }
            }
            assert!(left, "the deaf member was never dropped");
            assert_eq!(
                server.metric("wsbench_chat_slow_disconnects_total").await,
                slow0 + 1
            );
            drop(deaf);
        })
        .await;
    drop((hosts, rooms));
    assert_eq!(server.cases_run(), 3);
}
