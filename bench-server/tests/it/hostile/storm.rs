//! A storm of connections: thousands opened at once (HTTP and chat, each doing one exchange), held, then all
//! closed, a few times over; afterwards the server's memory must come back, within seconds, to within
//! twice what it was idle (issue 30: it stayed at its peak for good).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bench_proto::cxf;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinSet;

use super::harness::{connect, soap_request, Server};
use crate::chat::Client as ChatClient;

const MIB: f64 = 1024.0 * 1024.0;
const ROUNDS: usize = 3;
/// Connections of each kind per round, when the file descriptor limit allows (both the test and the
/// server hold one per connection).
const PER_KIND: u64 = 1000;
/// How long the memory may take to come back.
const RETURN_WITHIN: Duration = Duration::from_secs(10);

/// Raises this process's open-file limit to its hard limit (the server inherits it); returns it.
fn raise_fd_limit() -> u64 {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).expect("getrlimit");
    if soft < hard {
        setrlimit(Resource::RLIMIT_NOFILE, hard, hard).expect("setrlimit");
    }
    hard
}

/// A keep-alive SOAP call, its response read in full; the connection stays open.
async fn soap_call(addr: SocketAddr, request: Arc<Vec<u8>>) -> TcpStream {
    let mut stream = connect(addr).await;
    stream.write_all(&request).await.expect("write");
    let mut got = Vec::with_capacity(4096);
    loop {
        let n = stream.read_buf(&mut got).await.expect("read");
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&got));
        let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&got[..end]).to_lowercase();
        assert!(head.starts_with("http/1.1 200"), "{head}");
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .expect("content-length");
        if got.len() >= end + 4 + length {
            return stream;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_storm() {
    let per_kind = PER_KIND.min(raise_fd_limit().saturating_sub(200) / 2 / 2);
    let server = Server::start(&[]);
    server.assert_serves_soap().await;
    server.assert_serves_chat().await;
    let idle = server.rss();
    let mut body = Vec::new();
    cxf::write_request(&cxf::echo_complex_request(1, 1), &mut body);
    let mut request = soap_request(cxf::PATH, &body);
    // Keep-alive: the connection stays open until the round ends.
    let close = b"Connection: close\r\n";
    let at = request
        .windows(close.len())
        .position(|w| w == close)
        .expect("a close header");
    request.drain(at..at + close.len());
    let request = Arc::new(request);

    let name = format!("storm: {ROUNDS} rounds of {per_kind} HTTP and {per_kind} chat connections");
    server
        .case_within(&name, 256, Duration::from_secs(120), async {
            for round in 0..ROUNDS {
                let mut http = JoinSet::new();
                let mut chat = JoinSet::new();
                for i in 0..per_kind {
                    http.spawn(soap_call(server.http, request.clone()));
                    let (addr, room) = (server.chat, format!("Storm{}", i % 50));
                    chat.spawn(async move {
                        ChatClient::enter(addr, &room, &format!("S{round}x{i}"))
                            .await
                            .0
                    });
                }
                let http = http.join_all().await;
                let chat = chat.join_all().await;
                eprintln!(
                    "storm round {}: {} + {} connections open, server RSS {:.1} MiB",
                    round + 1,
                    http.len(),
                    chat.len(),
                    server.rss() as f64 / MIB
                );
            }
        })
        .await;

    let peak = server.peak_rss();
    let since = Instant::now();
    let mut now = server.rss();
    while now > 2 * idle && since.elapsed() < RETURN_WITHIN {
        tokio::time::sleep(Duration::from_millis(100)).await;
        now = server.rss();
    }
    eprintln!(
        "storm: RSS idle {:.1} MiB, peak {:.1} MiB, {:.1} MiB after {:.1} s",
        idle as f64 / MIB,
        peak as f64 / MIB,
        now as f64 / MIB,
        since.elapsed().as_secs_f64()
    );
    assert!(
        now <= 2 * idle,
        "RSS {:.1} MiB {RETURN_WITHIN:?} after the storm, more than twice the idle {:.1} MiB",
        now as f64 / MIB,
        idle as f64 / MIB
    );
}
