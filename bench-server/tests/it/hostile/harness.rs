//! The battery's harness: the real `bench-server` binary (HTTP and chat), its memory from /proc (peak RSS
//! reset before each case), raw HTTP exchanges, and [`Server::case`], which runs one hostile case and then
//! checks that the server still serves a valid SOAP call and a valid chat exchange, and how much its peak
//! RSS grew.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use bench_proto::cxf;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::chat::{Client as ChatClient, Got};
use crate::support::{bounded, BOUND};

const EXE: &str = env!("CARGO_BIN_EXE_bench-server");
const MIB: u64 = 1024 * 1024;

/// How long a counter [`Server::wait_metric`] waits for may stand still before the wait fails.
pub(super) const STALL: Duration = Duration::from_secs(60);

/// The bound of a case whose waits are bounded by progress ([`Server::wait_metric`]): it catches only what
/// they cannot, never a slow machine.
pub(super) const LAST_RESORT: Duration = Duration::from_secs(600);

/// Cases run by the whole battery (each category also checks its own count).
pub(super) static CASES: AtomicUsize = AtomicUsize::new(0);

/// A `bench-server` process serving HTTP and chat on loopback; killed when dropped.
pub(super) struct Server {
    child: Child,
    pub http: SocketAddr,
    pub chat: SocketAddr,
    pid: u32,
    /// Cases run against this server.
    ran: AtomicUsize,
    /// Distinguishes the rooms of successive chat checks.
    checks: AtomicUsize,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts the binary with two workers and `args` on top of the defaults.
    pub(super) fn start(args: &[&str]) -> Server {
        let mut child = Command::new(EXE)
            .args([
                "--http",
                "127.0.0.1:0",
                "--chat",
                "127.0.0.1:0",
                "--workers",
                "2",
            ])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn bench-server");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let Ok(line) = rx.recv_timeout(BOUND) else {
            let _ = child.kill();
            panic!("no READY line within {BOUND:?}");
        };
        let ready = bench_proto::ready::Ready::parse(&line).expect("a READY line");
        Server {
            http: ready.http.unwrap_or_else(|| panic!("no http in {line:?}")),
            chat: ready.chat.unwrap_or_else(|| panic!("no chat in {line:?}")),
            pid: child.id(),
            child,
            ran: AtomicUsize::new(0),
            checks: AtomicUsize::new(0),
        }
    }

    fn status_kib(&self, key: &str) -> u64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid)).expect("/proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no {key} in /proc/{}/status", self.pid))
    }

    /// Resident memory now, bytes.
    pub(super) fn rss(&self) -> u64 {
        self.status_kib("VmRSS:") * 1024
    }

    /// The highest resident memory since the last [`Server::reset_peak`], bytes.
    pub(super) fn peak_rss(&self) -> u64 {
        self.status_kib("VmHWM:") * 1024
    }

    /// Starts measuring the peak RSS afresh (Linux `clear_refs` 5).
    pub(super) fn reset_peak(&self) {
        std::fs::write(format!("/proc/{}/clear_refs", self.pid), "5").expect("clear_refs");
    }

    /// The `/metrics` text.
    pub(super) async fn metrics(&self) -> String {
        let reply = exchange(
            self.http,
            b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert_eq!(reply.status, 200, "{}", reply.text());
        reply.text()
    }

    /// One sample of `/metrics` (`name` may include labels as rendered).
    pub(super) async fn metric(&self, name: &str) -> u64 {
        crate::support::metric(&self.metrics().await, name)
    }

    /// Waits until `metric` reaches `at_least`, reading it every 20 ms. Bounded by progress, not by a
    /// deadline: the wait fails only when the value has not moved for [`STALL`], so a slow or busy machine
    /// makes it take longer, never fail.
    pub(super) async fn wait_metric(&self, name: &str, at_least: u64) -> u64 {
        let mut last = self.metric(name).await;
        let mut moved = std::time::Instant::now();
        while last < at_least {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let v = self.metric(name).await;
            if v > last {
                (last, moved) = (v, std::time::Instant::now());
            } else if moved.elapsed() > STALL {
                panic!("{name} stuck at {v} for {STALL:?}, waiting for {at_least}");
            }
        }
        last
    }

    /// Runs one hostile case, then checks that the server still answers a valid SOAP call and relays a
    /// chat message, and that its peak RSS during all that grew by at most `max_growth_mib` over what it
    /// was before. Panics (failing the test) naming the case otherwise.
    pub(super) async fn case(
        &self,
        name: &str,
        max_growth_mib: u64,
        case: impl std::future::Future,
    ) {
        self.case_within(name, max_growth_mib, BOUND, case).await;
    }

    /// [`Server::case`] for a case that may take up to `limit` (many connections, each cut by a timeout).
    pub(super) async fn case_within(
        &self,
        name: &str,
        max_growth_mib: u64,
        limit: Duration,
        case: impl std::future::Future,
    ) {
        self.reset_peak();
        let before = self.rss();
        tokio::time::timeout(limit, case)
            .await
            .unwrap_or_else(|_| panic!("{name}: not done within {limit:?}"));
        bounded(
            &format!("{name}: valid SOAP call after"),
            self.assert_serves_soap(),
        )
        .await;
        bounded(
            &format!("{name}: valid chat after"),
            self.assert_serves_chat(),
        )
        .await;
        let peak = self.peak_rss();
        let growth = peak.saturating_sub(before);
        assert!(
            growth <= max_growth_mib * MIB,
            "{name}: peak RSS grew by {:.1} MiB (from {:.1} to {:.1} MiB), bound {max_growth_mib} MiB",
            growth as f64 / MIB as f64,
            before as f64 / MIB as f64,
            peak as f64 / MIB as f64
        );
        self.ran.fetch_add(1, Ordering::Relaxed);
        CASES.fetch_add(1, Ordering::Relaxed);
        eprintln!(
            "case {name}: ok (peak RSS {:.1} MiB, +{:.1})",
            peak as f64 / MIB as f64,
            growth as f64 / MIB as f64
        );
    }

    /// Cases run against this server so far.
    pub(super) fn cases_run(&self) -> usize {
        self.ran.load(Ordering::Relaxed)
    }

    /// A valid echoComplexTypeDoc, answered 200 with exactly the items sent.
    pub(super) async fn assert_serves_soap(&self) {
        let req = cxf::echo_complex_request(2, 7);
        let mut body = Vec::new();
        cxf::write_request(&req, &mut body);
        let reply = exchange(self.http, &soap_request(cxf::PATH, &body)).await;
        assert_eq!(reply.status, 200, "{}", reply.text());
        let resp = cxf::parse_response(&reply.body).expect("a valid echo response");
        assert_eq!(resp, req.into_echo_response());
    }

    /// Two users enter a fresh room; one's message reaches the other.
    pub(super) async fn assert_serves_chat(&self) {
        let room = format!("Check{}", self.checks.fetch_add(1, Ordering::Relaxed));
        let (mut a, _) = ChatClient::enter(self.chat, &room, "Ann").await;
        let (mut b, _) = ChatClient::enter(self.chat, &room, "Bob").await;
        assert_eq!(a.recv().await, Got::Joined("Bob".into()));
        a.say("still here").await;
        assert_eq!(b.recv().await, Got::Chat("Ann".into(), "still here".into()));
    }
}

/// A POST of `body` as SOAP 1.1 to `path`, closing after the response.
pub(super) fn soap_request(path: &str, body: &[u8]) -> Vec<u8> {
    let mut req = format!(
        "POST {path} HTTP/1.1\r\nHost: t\r\nContent-Type: text/xml; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(body);
    req
}

/// A response read off a raw connection.
#[derive(Debug, Default)]
pub(super) struct Reply {
    /// 0 when no status line arrived.
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
    /// Everything that arrived, for counting pipelined responses.
    pub raw: Vec<u8>,
}

impl Reply {
    pub(super) fn text(&self) -> String {
        String::from_utf8_lossy(&self.raw).into_owned()
    }

    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// Writes `request` on a new connection and reads until the server closes it (or resets it).
pub(super) async fn exchange(addr: SocketAddr, request: &[u8]) -> Reply {
    let mut stream = connect(addr).await;
    let _ = stream.write_all(request).await;
    read_reply(&mut stream).await
}

pub(super) async fn connect(addr: SocketAddr) -> TcpStream {
    bounded("connect", TcpStream::connect(addr))
        .await
        .expect("connect")
}

/// A connection with a small receive buffer, for a client that will not read (so the kernel holds
/// little on its behalf and the server's own buffering shows).
pub(super) async fn connect_small(addr: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("SO_RCVBUF");
    bounded("connect", socket.connect(addr))
        .await
        .expect("connect")
}

/// Reads until EOF or a reset, then parses the first response in what came.
pub(super) async fn read_reply(stream: &mut TcpStream) -> Reply {
    let mut raw = Vec::new();
    let _ = bounded("connection close", async {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => raw.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    parse_reply(raw)
}

/// Parses the first response in `raw` (Content-Length, chunked, or to the end).
pub(super) fn parse_reply(raw: Vec<u8>) -> Reply {
    let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Reply {
            raw,
            ..Reply::default()
        };
    };
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut reply = Reply {
        status,
        head,
        ..Reply::default()
    };
    let rest = &raw[end + 4..];
    reply.body = if let Some(n) = reply.header("content-length") {
        let n: usize = n.parse().expect("content-length");
        rest[..n.min(rest.len())].to_vec()
    } else if reply
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    reply.raw = raw;
    reply
}

/// The data of a chunked body (as much as arrived).
fn dechunk(mut rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&rest[..eol])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next()?.trim(), 16).ok());
        let Some(size) = size else { break };
        rest = &rest[eol + 2..];
        if size == 0 || rest.len() < size {
            out.extend_from_slice(&rest[..size.min(rest.len())]);
            break;
        }
        out.extend_from_slice(&rest[..size]);
        rest = rest.get(size + 2..).unwrap_or_default();
    }
    out
}
