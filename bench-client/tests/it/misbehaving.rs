//! A misbehaving server for the client, case by case (wrong envelope, not XML, 500, close, reset, hang,
//! truncated, garbage): the real binary's exit status and the counts of its results document. No wrong
//! answer is ever an ok call; a run that got none right exits 1.

use std::time::Duration;

use bench_proto::results::ResultsDoc;
use http::StatusCode;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::support::{read_head, respond, run_bin, schema_checked, tmp, Counts, Server};

/// Runs the binary against `server` with `args`; returns its exit code, stderr and results document.
fn run(name: &str, server: &Server, args: &[&str]) -> (Option<i32>, String, ResultsDoc) {
    let json = tmp(&format!("misbehaving-{name}.json"));
    let url = server.url();
    let mut argv = vec!["--url", url.as_str(), "--json", json.to_str().unwrap()];
    argv.extend_from_slice(args);
    let out = run_bin(&argv);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let doc = serde_json::from_value(schema_checked(&json)).expect("a results document");
    (out.status.code(), stderr, doc)
}

const SOAP: [&str; 6] = [
    "--operation",
    "echoComplexTypeDoc",
    "--clients",
    "2",
    "--requests",
    "20",
];

fn wrong_envelope() -> bytes::Bytes {
    let mut body = Vec::new();
    bench_proto::cxf::write_response(
        &bench_proto::cxf::Response::EchoString("x".into()),
        &mut body,
    );
    body.into()
}

/// Which error counter a case must fill.
type Kind = fn(&ResultsDoc) -> u64;

#[test]
fn http_answers_that_are_wrong_are_validation_or_status_errors() {
    let wrong = wrong_envelope();
    let cases: [(&str, Server, Kind); 4] = [
        (
            "wrong-envelope",
            Server::http(Counts::new(), move |_, _| {
                respond(StatusCode::OK, wrong.clone())
            }),
            |d| d.counts.errors.validation,
        ),
        (
            "not-xml",
            Server::http(Counts::new(), |_, _| {
                respond(StatusCode::OK, "{\"ok\":true}")
            }),
            |d| d.counts.errors.validation,
        ),
        (
            "truncated-envelope",
            Server::http(Counts::new(), |_, _| {
                let mut body = Vec::new();
                let r = bench_proto::cxf::echo_complex_request(1, 0).into_echo_response();
                bench_proto::cxf::write_response(&r, &mut body);
                body.truncate(body.len() / 2);
                respond(StatusCode::OK, body)
            }),
            |d| d.counts.errors.validation,
        ),
        (
            "500",
            Server::http(Counts::new(), |_, _| {
                respond(StatusCode::INTERNAL_SERVER_ERROR, "oops")
            }),
            |d| d.counts.errors.http_status,
        ),
    ];
    for (name, server, kind) in cases {
        let (code, stderr, doc) = run(name, &server, &SOAP);
        assert_eq!(code, Some(1), "{name}: {stderr}");
        assert_eq!(
            (doc.counts.ok, kind(&doc), doc.counts.errors_total),
            (0, 20, 20),
            "{name}: {:?}",
            doc.counts
        );
        assert!(
            stderr.contains("no call succeeded: 20 failed"),
            "{name}: {stderr}"
        );
    }
    let server = Server::http(Counts::new(), |_, _| {
        respond(StatusCode::INTERNAL_SERVER_ERROR, "oops")
    });
    let (_, _, doc) = run("500-codes", &server, &SOAP);
    assert_eq!(
        doc.counts.http_status_codes.into_iter().collect::<Vec<_>>(),
        [(500, 20)]
    );
}

/// A server that reads each request head and then does `act` to the connection.
fn raw<F, Fut>(act: F) -> Server
where
    F: Fn(TcpStream) -> Fut + Send + Sync + Copy + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    Server::raw(move |mut s| async move {
        if read_head(&mut s).await {
            act(s).await;
        }
    })
}

#[test]
fn broken_connections_are_io_errors() {
    let cases: [(&str, Server); 4] = [
        ("close", raw(|s| async move { drop(s) })),
        (
            "reset",
            raw(|s| async move {
                // SO_LINGER 0: closing sends RST instead of FIN.
                let _ = socket2::SockRef::from(&s).set_linger(Some(Duration::ZERO));
                drop(s)
            }),
        ),
        (
            "truncated",
            raw(|mut s| async move {
                let _ = s
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n<soap:Envelope")
                    .await;
            }),
        ),
        (
            "garbage",
            raw(|mut s| async move {
                let _ = s.write_all(b"\x00\xffSURPRISE\r\n\r\n").await;
            }),
        ),
    ];
    for (name, server) in cases {
        let (code, stderr, doc) = run(name, &server, &SOAP);
        assert_eq!(code, Some(1), "{name}: {stderr}");
        assert_eq!(
            (doc.counts.ok, doc.counts.errors.io, doc.counts.errors_total),
            (0, 20, 20),
            "{name}: {:?}",
            doc.counts
        );
    }
}

#[test]
fn a_server_that_never_answers_measures_nothing_and_fails() {
    let hang = || {
        raw(|mut s| async move {
            let mut sink = [0u8; 64];
            while matches!(s.read(&mut sink).await, Ok(n) if n > 0) {}
        })
    };
    // The run is shorter than the call timeout: no call completes, none timed out; the calls still
    // waiting are reported and the run fails, saying why.
    let server = hang();
    let args = [
        "--operation",
        "echoComplexTypeDoc",
        "--clients",
        "3",
        "--duration",
        "1s",
    ];
    let (code, stderr, doc) = run("hang", &server, &args);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("nothing measured: no call completed; 3 calls"),
        "{stderr}"
    );
    let c = &doc.counts;
    assert_eq!((c.ok, c.errors_total), (0, 0));
    assert_eq!((c.in_flight.calls, c.in_flight.timed_out), (3, 0));
    assert!(
        (900_000..=1_100_000).contains(&c.in_flight.max_wait_us),
        "{:?}",
        c.in_flight
    );
    // A timeout shorter than the run: every call is a timeout.
    let server = hang();
    let args = [
        "--operation",
        "echoComplexTypeDoc",
        "--requests",
        "2",
        "--timeout",
        "100ms",
    ];
    let (code, _, doc) = run("hang-timeout", &server, &args);
    assert_eq!(code, Some(1));
    assert_eq!((doc.counts.ok, doc.counts.errors.timeout), (0, 2));
}

#[test]
fn a_refused_port_is_retried_with_backoff() {
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let url = format!("http://{addr}");
    let json = tmp("refused.json");
    let out = run_bin(&[&url, "--duration", "1s", "--json", json.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let doc: ResultsDoc = serde_json::from_value(schema_checked(&json)).unwrap();
    // 10 ms doubling to 1 s: 10+20+40+80+160+320 ms fit in a second, so about 7 attempts, not 36,000.
    let attempts = doc.counts.errors.connect;
    assert!(
        (3..=10).contains(&attempts),
        "{attempts} connect attempts in 1 s"
    );
}
