//! Error accounting: servers that answer faults, wrong statuses, garbage, or nothing, or close the
//! connection, or refuse it. Every failed call is counted under its kind, never as throughput, and its
//! latency stays out of the histogram; the client always finishes.

use bench_proto::results::ErrorKind;
use bench_proto::soap::{write_fault, Fault, FaultCode};
use http::StatusCode;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::support::{client, read_head, respond, Counts, Server};

fn kinds(out: &bench_client::measure::Outcome) -> Vec<ErrorKind> {
    out.first_errors.iter().map(|(k, _)| *k).collect()
}

#[test]
fn soap_faults_are_fault_errors() {
    let server = Server::http(Counts::new(), |_, _| {
        let mut body = Vec::new();
        let fault = Fault {
            code: FaultCode::Server,
            string: "out of beans".into(),
            detail: None,
        };
        write_fault(&mut body, &fault);
        respond(StatusCode::INTERNAL_SERVER_ERROR, body)
    });
    let out = client(&[
        "--url",
        &server.url(),
        "--operation",
        "echoComplexTypeDoc",
        "--clients",
        "2",
        "--requests",
        "12",
    ]);
    let d = &out.doc;
    assert_eq!(
        (d.counts.ok, d.counts.errors.fault, d.counts.errors_total),
        (0, 12, 12)
    );
    assert_eq!(d.latency_us.corrected.count, 0);
    assert_eq!(d.throughput.total_per_s, 0.0);
    assert!(
        out.first_errors[0].1.contains("out of beans"),
        "{:?}",
        out.first_errors
    );
    assert!(
        d.warnings.iter().any(|w| w.contains("no call succeeded")),
        "{:?}",
        d.warnings
    );
}

#[test]
fn failed_calls_are_not_throughput_and_not_latency() {
    // Every third call gets 503.
    let server = Server::http(Counts::new(), |n, _| {
        if n % 3 == 2 {
            respond(StatusCode::SERVICE_UNAVAILABLE, "busy")
        } else {
            respond(StatusCode::OK, "ok")
        }
    });
    let out = client(&[
        "--url",
        &server.url(),
        "--operation",
        "http-get",
        "--requests",
        "30",
    ]);
    let d = &out.doc;
    assert_eq!(
        (
            d.counts.ok,
            d.counts.errors.http_status,
            d.counts.errors_total
        ),
        (20, 10, 10)
    );
    assert_eq!(d.latency_us.corrected.count, 20);
    assert!((d.throughput.total_per_s - 20.0 / d.elapsed_s).abs() < 1e-6);
    assert!(
        out.first_errors[0].1.contains("503"),
        "{:?}",
        out.first_errors
    );
}

#[test]
fn a_200_that_is_not_a_soap_envelope_is_a_validation_error() {
    let server = Server::http(Counts::new(), |_, _| {
        respond(StatusCode::OK, "<html>hello</html>")
    });
    let out = client(&[
        "--url",
        &server.url(),
        "--operation",
        "echo",
        "--requests",
        "10",
        "--validate-first",
        "0",
    ]);
    assert_eq!(
        (out.doc.counts.ok, out.doc.counts.errors.validation),
        (0, 10)
    );
    assert_eq!(kinds(&out), [ErrorKind::Validation]);
}

#[test]
fn an_echo_that_differs_from_the_request_is_a_validation_error() {
    // A well-formed echoComplexTypeDoc response, but for another id: only the validated calls can tell.
    let mut wrong = Vec::new();
    let resp = bench_proto::cxf::echo_complex_request(1, 999).into_echo_response();
    bench_proto::cxf::write_response(&resp, &mut wrong);
    let wrong = bytes::Bytes::from(wrong);
    let server = Server::http(Counts::new(), move |_, _| {
        respond(StatusCode::OK, wrong.clone())
    });
    let args = [
        "--url",
        &server.url(),
        "--operation",
        "echoComplexTypeDoc",
        "--requests",
        "25",
        "--validate-first",
        "5",
        "--validate-every",
        "10",
    ];
    let out = client(&args);
    let c = &out.doc.counts;
    // Sampled for the full comparison: calls 0-4, 14 and 24 on the one connection, which all failed it;
    // `validated` counts successful calls only, so none.
    assert_eq!((c.errors.validation, c.validated), (7, 0), "{:?}", c.errors);
    assert_eq!(c.ok, 18);
    assert!(
        out.first_errors[0].1.contains("idout 999"),
        "{:?}",
        out.first_errors
    );
}

#[test]
fn garbage_instead_of_http_is_an_io_error() {
    let server = Server::raw(|mut s| async move {
        if read_head(&mut s).await {
            let _ = s.write_all(b"SURPRISE this is not HTTP\r\n\r\n").await;
        }
    });
    let out = client(&[
        "--url",
        &server.url(),
        "--operation",
        "get",
        "--clients",
        "2",
        "--requests",
        "10",
    ]);
    assert_eq!(
        (
            out.doc.counts.ok,
            out.doc.counts.errors.io,
            out.doc.counts.errors_total
        ),
        (0, 10, 10)
    );
    assert!(
        out.first_errors[0].1.contains("invalid HTTP"),
        "{:?}",
        out.first_errors
    );
}

#[test]
fn a_server_closing_the_connection_is_an_io_error_and_the_client_reconnects() {
    let server = Server::raw(|mut s| async move {
        read_head(&mut s).await;
    });
    let out = client(&[
        "--url",
        &server.url(),
        "--operation",
        "http-get",
        "--clients",
        "2",
        "--requests",
        "10",
    ]);
    assert_eq!((out.doc.counts.ok, out.doc.counts.errors.io), (0, 10));
}

#[test]
fn no_answer_is_a_timeout() {
    let server = Server::raw(|mut s| async move {
        read_head(&mut s).await;
        // Hold the connection open without answering until the server stops.
        let mut sink = [0u8; 64];
        while matches!(s.read(&mut sink).await, Ok(n) if n > 0) {}
    });
    let out = client(&[
        "--url",
        &server.url(),
        "--operation",
        "http-get",
        "--clients",
        "2",
        "--requests",
        "4",
        "--timeout",
        "100ms",
    ]);
    assert_eq!((out.doc.counts.ok, out.doc.counts.errors.timeout), (0, 4));
}

#[test]
fn a_refused_connection_is_a_connect_error() {
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    // The listener is closed: nothing listens on `addr` any more.
    let url = format!("http://{addr}");
    let out = client(&["--url", &url, "--operation", "http-get", "--requests", "10"]);
    assert_eq!((out.doc.counts.ok, out.doc.counts.errors.connect), (0, 10));
    let out = client(&[
        "--url",
        &url,
        "--operation",
        "http-get",
        "--requests",
        "5",
        "--no-keepalive",
    ]);
    assert_eq!(out.doc.counts.errors.connect, 5);
}

#[test]
fn every_wrong_envelope_is_a_validation_error_not_only_the_sampled_ones() {
    // Issue 11 item 4: HTTP 200, a SOAP envelope, the wrong element (another operation's response).
    let mut wrong = Vec::new();
    let resp = bench_proto::cxf::Response::EchoString("not what was asked".into());
    bench_proto::cxf::write_response(&resp, &mut wrong);
    let wrong = bytes::Bytes::from(wrong);
    let server = Server::http(Counts::new(), move |_, _| {
        respond(StatusCode::OK, wrong.clone())
    });
    let out = client(&[
        "--url",
        &server.url(),
        "--operation",
        "echoComplexTypeDoc",
        "--clients",
        "4",
        "--requests",
        "400",
    ]);
    let c = &out.doc.counts;
    assert_eq!((c.ok, c.errors.validation, c.errors_total), (0, 400, 400));
    assert!(
        out.first_errors[0].1.contains("echoComplexTypeDocResponse"),
        "{:?}",
        out.first_errors
    );
}

#[test]
fn a_missing_item_is_caught_on_every_response() {
    // Two items asked, one echoed: the item count is part of the per-response check.
    let mut short = Vec::new();
    let resp = bench_proto::cxf::echo_complex_request(1, 0).into_echo_response();
    bench_proto::cxf::write_response(&resp, &mut short);
    let short = bytes::Bytes::from(short);
    let server = Server::http(Counts::new(), move |_, _| {
        respond(StatusCode::OK, short.clone())
    });
    let out = client(&[
        "--url",
        &server.url(),
        "--operation",
        "echoComplexTypeDoc",
        "--packet-size",
        "2",
        "--requests",
        "50",
        "--validate-first",
        "0",
        "--validate-every",
        "0",
    ]);
    let c = &out.doc.counts;
    assert_eq!((c.ok, c.errors.validation, c.validated), (0, 50, 0));
    assert!(
        out.first_errors[0]
            .1
            .contains("1 item elements in the response, 2 sent"),
        "{:?}",
        out.first_errors
    );
}

#[test]
fn expect_body_compares_every_response() {
    // The 137th response of 300 (counted from 0 over both connections) has the wrong body: same length,
    // same status, so only a comparison of that very response can catch it.
    let server = Server::http(Counts::new(), |n, _| {
        respond(StatusCode::OK, if n == 137 { "ko" } else { "ok" })
    });
    let out = client(&[
        "--url",
        &server.url(),
        "--expect-body",
        "ok",
        "--clients",
        "2",
        "--requests",
        "300",
        "--allow-errors",
    ]);
    let c = &out.doc.counts;
    assert_eq!(
        (c.ok, c.errors.validation, c.errors_total),
        (299, 1, 1),
        "{c:?}"
    );
    assert_eq!(kinds(&out), [ErrorKind::Validation]);
    assert!(
        out.first_errors[0].1.contains("\"ko\""),
        "{:?}",
        out.first_errors
    );
    // Without --expect-body any 2xx body is a success.
    let out = client(&["--url", &server.url(), "--requests", "20"]);
    assert_eq!(out.doc.counts.ok, 20);
}
