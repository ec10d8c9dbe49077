//! The lean HTTP/1.1 path against servers hyper's client would also accept — chunked bodies, `Connection:
//! close`, informational heads — and against hostile ones: an announced body over the cap, bytes nobody
//! asked for. And hyper's path (`--http-engine hyper`), the fallback, still serving every operation.

use bench_client::operation::{request_operations, Service};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::support::{client, Server};

/// Reads one request (head and Content-Length body); false at the end of the connection.
async fn read_request(s: &mut TcpStream, buf: &mut Vec<u8>) -> bool {
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().unwrap_or(0));
            if buf.len() >= end + 4 + len {
                buf.drain(..end + 4 + len);
                return true;
            }
        }
        match s.read(&mut chunk).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// A keep-alive server writing `answer` (split into the given pieces, flushed apart) to every request.
fn answering(pieces: &'static [&'static [u8]]) -> Server {
    Server::raw(move |mut s| async move {
        let mut buf = Vec::new();
        while read_request(&mut s, &mut buf).await {
            for p in pieces {
                if s.write_all(p).await.is_err() {
                    return;
                }
                let _ = s.flush().await;
                tokio::task::yield_now().await;
            }
        }
    })
}

/// A server writing `answer` to the first request of each connection, then closing it.
fn answering_once(answer: &'static [u8]) -> Server {
    Server::raw(move |mut s| async move {
        let mut buf = Vec::new();
        if read_request(&mut s, &mut buf).await {
            let _ = s.write_all(answer).await;
        }
    })
}

fn get(url: &str, clients: &str) -> bench_client::measure::Outcome {
    client(&[
        "--url",
        url,
        "--operation",
        "http-get",
        "--clients",
        clients,
        "--requests",
        "20",
    ])
}

#[test]
fn chunked_bodies_split_across_reads_are_responses() {
    let server = answering(&[
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nab",
        b"c\r\n",
        b"2;ext=1\r\nde\r\n0\r\n\r\n",
    ]);
    let out = get(&server.url(), "2");
    assert_eq!(
        (out.doc.counts.ok, out.doc.counts.errors_total),
        (20, 0),
        "{:?}",
        out.first_errors
    );
    assert_eq!(out.doc.counts.bytes_received, 20 * 5);
}

#[test]
fn connection_close_is_honoured_and_the_client_reconnects() {
    let server =
        answering_once(b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok");
    let out = get(&server.url(), "2");
    assert_eq!(
        (out.doc.counts.ok, out.doc.counts.errors_total),
        (20, 0),
        "{:?}",
        out.first_errors
    );
    // Close-delimited bodies (no length, no chunks) end at the server's close.
    let server = answering_once(b"HTTP/1.1 200 OK\r\n\r\nuntil close");
    let out = get(&server.url(), "2");
    assert_eq!(
        (out.doc.counts.ok, out.doc.counts.bytes_received),
        (20, 20 * 11),
        "{:?}",
        out.first_errors
    );
}

#[test]
fn a_body_over_the_cap_is_an_error_not_a_buffer() {
    let server = answering(&[b"HTTP/1.1 200 OK\r\ncontent-length: 999999999999\r\n\r\nxxxx"]);
    let out = get(&server.url(), "2");
    assert_eq!(
        (out.doc.counts.ok, out.doc.counts.errors.io),
        (0, 20),
        "{:?}",
        out.first_errors
    );
    assert!(
        out.first_errors[0].1.contains("larger than"),
        "{:?}",
        out.first_errors
    );
    let server =
        answering(&[b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nfffffffffff\r\n"]);
    let out = get(&server.url(), "2");
    assert_eq!(
        (out.doc.counts.ok, out.doc.counts.errors.io),
        (0, 20),
        "{:?}",
        out.first_errors
    );
}

/// A head with a space before a colon, a control character in a value or a folded line is an error of every
/// call, never a response: a guard for any faster head parser the lean path may take instead of httparse.
#[test]
fn a_malformed_head_is_an_error_not_a_response() {
    let heads: [&'static [u8]; 3] = [
        b"HTTP/1.1 200 OK\r\ncontent-length : 2\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\nx: a\x00b\r\ncontent-length: 2\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n folded\r\n\r\nok",
    ];
    for head in heads {
        let server = answering_once(head);
        let out = get(&server.url(), "2");
        assert_eq!(
            (out.doc.counts.ok, out.doc.counts.errors.io),
            (0, 20),
            "{}: {:?}",
            String::from_utf8_lossy(head),
            out.first_errors
        );
        assert!(
            out.first_errors[0].1.contains("invalid response head"),
            "{:?}",
            out.first_errors
        );
    }
}

#[test]
fn a_truncated_body_is_an_error() {
    let server = answering_once(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort");
    let out = get(&server.url(), "2");
    assert_eq!(
        (out.doc.counts.ok, out.doc.counts.errors.io),
        (0, 20),
        "{:?}",
        out.first_errors
    );
    assert!(
        out.first_errors[0].1.contains("closed before"),
        "{:?}",
        out.first_errors
    );
}

#[test]
fn unasked_bytes_after_a_response_cost_the_connection() {
    let server = answering(&[b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n"]);
    let out = get(&server.url(), "1");
    // Each response is whole and counted; the connection it came on is not trusted again.
    assert_eq!(
        (out.doc.counts.ok, out.doc.counts.errors_total),
        (20, 0),
        "{:?}",
        out.first_errors
    );
}

#[test]
fn hyper_serves_every_operation_too() {
    let server = Server::bench_server();
    let url = server.url();
    // ossj-order needs an application instance, a broker and back ends: tests/it/ossj.rs and bench-server's.
    for op in request_operations().filter(|op| op.service() != Service::Ossj) {
        let out = client(&[
            "--url",
            &url,
            "--operation",
            op.name(),
            "--clients",
            "2",
            "--requests",
            "20",
            "--http-engine",
            "hyper",
        ]);
        assert_eq!(
            (out.doc.counts.ok, out.doc.counts.errors_total),
            (20, 0),
            "{op}: {:?}",
            out.first_errors
        );
        assert_eq!(out.doc.counts.validated, 20, "{op}");
    }
}
