//! Hostile HTTP: malformed request lines and headers, smuggling (conflicting lengths and codings), header
//! floods, pipelining, oversized bodies and lingering close, resets mid-request.

use bench_proto::{customer, cxf};
use tokio::io::AsyncWriteExt;

use super::harness::{connect, exchange, read_reply, soap_request, Server};

const CXF: &str = cxf::PATH;

/// A request that must get one of `statuses` (0: the server closes without answering), and whether the
/// connection must then be closed by the server (no keep-alive after an error whose framing is unclear).
struct Raw {
    name: &'static str,
    request: Vec<u8>,
    statuses: &'static [u16],
}

fn raw(name: &'static str, request: impl Into<Vec<u8>>, statuses: &'static [u16]) -> Raw {
    Raw {
        name,
        request: request.into(),
        statuses,
    }
}

fn post_head(extra: &str) -> String {
    format!("POST {CXF} HTTP/1.1\r\nHost: t\r\nContent-Type: text/xml\r\n{extra}\r\n")
}

fn table() -> Vec<Raw> {
    let many_headers: String = (0..2000).map(|i| format!("X-H{i}: v\r\n")).collect();
    let long_header = format!("X-Long: {}\r\n", "a".repeat(200_000));
    let long_uri = format!("GET /{} HTTP/1.1\r\nHost: t\r\n\r\n", "a".repeat(200_000));
    let ext_flood = format!(
        "{}5;{}\r\nhello\r\n0\r\n\r\n",
        post_head("Transfer-Encoding: chunked\r\n"),
        "e=x;".repeat(50_000)
    );
    vec![
        raw("request line: garbage", &b"\x00\x01 NONSENSE\r\n\r\n"[..], &[0, 400]),
        raw("request line: HTTP/0.9", "GET /health\r\n\r\n", &[0, 400]),
        raw("request line: HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", &[0, 400]),
        raw("request line: unknown version", "GET /health HTTP/7.1\r\nHost: t\r\n\r\n", &[0, 400, 505]),
        raw("request line: 200 KB URI", long_uri, &[0, 400, 414, 431]),
        raw("header: space before colon", "GET /health HTTP/1.1\r\nHost : t\r\n\r\n", &[0, 400]),
        raw("header: obsolete line folding", "GET /health HTTP/1.1\r\nHost: t\r\nX-A: a\r\n b\r\n\r\n", &[0, 400]),
        raw("header: NUL in a value", &b"GET /health HTTP/1.1\r\nHost: t\r\nX-A: a\x00b\r\n\r\n"[..], &[0, 400]),
        raw("header flood: 2000 headers", format!("GET /health HTTP/1.1\r\nHost: t\r\n{many_headers}\r\n"), &[0, 400, 431]),
        raw("header flood: one 200 KB header", format!("GET /health HTTP/1.1\r\nHost: t\r\n{long_header}\r\n"), &[0, 400, 431]),
        raw("smuggling: two different Content-Lengths", format!("{}hello", post_head("Content-Length: 5\r\nContent-Length: 6\r\n")), &[400]),
        raw("smuggling: signed Content-Length", format!("{}hello", post_head("Content-Length: +5\r\n")), &[400]),
        raw("smuggling: Content-Length past u64", format!("{}hello", post_head("Content-Length: 99999999999999999999999\r\n")), &[400]),
        raw("smuggling: gzip, chunked is not implemented", format!("{}0\r\n\r\n", post_head("Transfer-Encoding: gzip, chunked\r\n")), &[501]),
        raw("smuggling: gzip then chunked headers", format!("{}0\r\n\r\n", post_head("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n")), &[501]),
        raw("smuggling: chunked not last", format!("{}0\r\n\r\n", post_head("Transfer-Encoding: chunked, gzip\r\n")), &[400, 501]),
        raw("smuggling: identity coding", post_head("Transfer-Encoding: identity\r\n"), &[400, 501]),
        raw("chunked: size not hex", format!("{}zz\r\n", post_head("Transfer-Encoding: chunked\r\n")), &[400]),
        raw("chunked: size overflow", format!("{}fffffffffffffffffff\r\n", post_head("Transfer-Encoding: chunked\r\n")), &[400, 413]),
        raw("chunked: 200 KB of chunk extensions", ext_flood, &[0, 400, 500]),
        raw("host: HTTP/1.1 GET without Host", "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n", &[400]),
        raw("host: HTTP/1.1 POST without Host", format!("POST {CXF} HTTP/1.1\r\nContent-Type: text/xml\r\nContent-Length: 3\r\n\r\n<a/"), &[400]),
        raw("host: HTTP/1.1 GET with two Host headers", "GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n", &[400]),
        raw("host: HTTP/1.1 POST with two Host headers", format!("POST {CXF} HTTP/1.1\r\nHost: t\r\nHost: t\r\nContent-Type: text/xml\r\nContent-Length: 3\r\n\r\n<a/"), &[400]),
        raw("host: HTTP/1.0 with two Host headers", "GET /health HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", &[400]),
        raw("host: HTTP/1.0 without Host is served", "GET /health HTTP/1.0\r\n\r\n", &[200]),
        raw("method: unknown on a service path", format!("BREW {CXF} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"), &[405]),
        raw("SOAP without a content type", format!("POST {CXF} HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nConnection: close\r\n\r\n<a/"), &[415]),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_http() {
    let server = Server::start(&["--max-body", "1048576"]);
    let table = table();
    let rows = table.len();
    for case in table {
        server
            .case(case.name, 16, async {
                let reply = exchange(server.http, &case.request).await;
                assert!(
                    case.statuses.contains(&reply.status),
                    "{}: got {} ({}), expected one of {:?}",
                    case.name,
                    reply.status,
                    reply.head,
                    case.statuses
                );
            })
            .await;
    }

    server
        .case(
            "smuggling: Content-Length with chunked closes after answering",
            16,
            async {
                // RFC 9112 §6.1: chunked wins, and the connection must close after the response. The
                // request smuggled behind the body must never be answered.
                let smuggled = "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n";
                let req = format!(
                    "{}0\r\n\r\n{smuggled}",
                    post_head("Content-Length: 44\r\nTransfer-Encoding: chunked\r\n")
                );
                let reply = exchange(server.http, req.as_bytes()).await;
                assert_eq!(reply.status, 500, "{}", reply.text());
                assert_eq!(reply.header("connection"), Some("close"));
                assert_eq!(
                    reply.text().matches("HTTP/1.1 ").count(),
                    1,
                    "{}",
                    reply.text()
                );
            },
        )
        .await;

    server
        .case("pipelining: 100 requests in one write", 16, async {
            let one = "GET /health HTTP/1.1\r\nHost: t\r\n\r\n";
            let last = "GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
            let req = format!("{}{last}", one.repeat(99));
            let reply = exchange(server.http, req.as_bytes()).await;
            assert_eq!(reply.text().matches("HTTP/1.1 200 OK").count(), 100);
        })
        .await;

    server
        .case(
            "413: a 64 MiB body is refused and the client reads the answer",
            16,
            async {
                // The client writes its whole body before reading, as simple clients do: without a
                // lingering close the server's close would reset the connection and lose the 413.
                let mut stream = connect(server.http).await;
                let n = 64 * 1024 * 1024;
                let head = post_head(&format!("Content-Length: {n}\r\n"));
                stream.write_all(head.as_bytes()).await.unwrap();
                let chunk = vec![b'x'; 1 << 20];
                for _ in 0..64 {
                    stream.write_all(&chunk).await.expect(
                        "the server keeps reading (lingering close) until the client is done",
                    );
                }
                let reply = read_reply(&mut stream).await;
                assert_eq!(reply.status, 413, "{}", reply.text());
            },
        )
        .await;
    let lingered = server
        .metric("wsbench_http_connections_lingered_total")
        .await;
    assert!(lingered >= 1, "the 413 case lingered");

    server
        .case(
            "413: a chunked body past the limit, never terminated",
            16,
            async {
                let mut stream = connect(server.http).await;
                let head = post_head("Transfer-Encoding: chunked\r\n");
                stream.write_all(head.as_bytes()).await.unwrap();
                let chunk = format!("10000\r\n{}\r\n", " ".repeat(0x10000));
                for _ in 0..17 {
                    if stream.write_all(chunk.as_bytes()).await.is_err() {
                        break;
                    }
                }
                let reply = read_reply(&mut stream).await;
                assert_eq!(reply.status, 413, "{}", reply.text());
            },
        )
        .await;

    server
        .case(
            "413: Expect 100-continue with a huge length gets no 100",
            16,
            async {
                let head = post_head("Content-Length: 1000000000\r\nExpect: 100-continue\r\n");
                let reply = exchange(server.http, head.as_bytes()).await;
                assert_eq!(reply.status, 413, "{}", reply.text());
            },
        )
        .await;

    for (name, cut) in [
        ("reset: after the request head", 0.0),
        ("reset: half-way through the body", 0.5),
        ("reset: one byte short of the body", 1.0),
    ] {
        server
            .case(name, 16, async {
                let mut body = Vec::new();
                cxf::write_request(&cxf::echo_complex_request(8, 1), &mut body);
                let req = soap_request(CXF, &body);
                let head_len = req.len() - body.len();
                let upto = head_len + ((body.len() as f64 * cut) as usize).min(body.len() - 1);
                let mut stream = connect(server.http).await;
                stream.write_all(&req[..upto]).await.unwrap();
                // SO_LINGER 0: the close sends a reset, not a FIN.
                stream.set_zero_linger().unwrap();
                drop(stream);
            })
            .await;
    }

    server
        .case("reset: while a large get response streams", 24, async {
            let mut body = Vec::new();
            customer::write_request(&customer::get_request(20_000, 0), &mut body);
            let mut stream = connect(server.http).await;
            stream
                .write_all(&soap_request(customer::PATH, &body))
                .await
                .unwrap();
            let mut first = [0u8; 4096];
            let n = tokio::io::AsyncReadExt::read(&mut stream, &mut first)
                .await
                .unwrap();
            assert!(first[..n].starts_with(b"HTTP/1.1 200 OK"));
            stream.set_zero_linger().unwrap();
            drop(stream);
        })
        .await;

    assert_eq!(server.cases_run(), rows + 9);
}
