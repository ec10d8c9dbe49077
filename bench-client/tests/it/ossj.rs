//! `ossj-order` against a portal of the tests' own that answers right, with each failure kind, with a reply
//! to the wrong customer, and with a front end's own error page: each counted where it belongs, never a
//! wrong answer as throughput. (The real portal, broker and back ends: bench-server's tests/it/ossj.)

use bench_proto::customer;
use bench_proto::ossj::{self, Failure, OrderFault, OrderReply};
use http::StatusCode;

use crate::support::{client, respond, Counts, Server};

/// The reply a back end holding the generated customers writes for the order in `body`.
fn right(body: &[u8]) -> Vec<u8> {
    let order = ossj::parse_order(body).expect("bench-client sends valid orders");
    let c = &customer::generate(1, ossj::CUSTOMER_SEED, order.customer_id())[0];
    let mut out = Vec::new();
    OrderReply::serve(&order, c).write(&mut out);
    out
}

fn fault(kind: Failure) -> http::Response<http_body_util::Full<bytes::Bytes>> {
    let mut out = Vec::new();
    OrderFault {
        kind,
        detail: "as the test says".into(),
    }
    .write(&mut out);
    respond(StatusCode::from_u16(kind.status()).unwrap(), out)
}

#[test]
fn every_answer_is_judged_and_failures_are_counted_by_kind() {
    let server = Server::http(Counts::new(), |n, body| match n % 6 {
        0 | 1 => respond(StatusCode::OK, right(&body)),
        2 => fault(Failure::ReplyTimeout),
        3 => fault(Failure::BackendFault),
        4 => {
            // Another customer's name where this one's belongs: a wrong answer.
            let text = String::from_utf8(right(&body)).unwrap();
            let start = text.find("<customerName>").unwrap() + "<customerName>".len();
            let wrong = format!("{}X{}", &text[..start], &text[start + 1..]);
            respond(StatusCode::OK, wrong)
        }
        _ => respond(
            StatusCode::SERVICE_UNAVAILABLE,
            "<html>No server is available</html>",
        ),
    });
    let out = client(&[
        "--url",
        &server.url(),
        "--operation",
        "ossj-order",
        "--clients",
        "1",
        "--requests",
        "60",
    ]);
    let c = &out.doc.counts;
    assert_eq!(c.ok, 20, "{:?}", out.first_errors);
    assert_eq!(
        (c.errors.fault, c.errors.validation, c.errors.http_status),
        (20, 10, 10)
    );
    assert_eq!(c.failure_kinds.get("reply-timeout"), Some(&10));
    assert_eq!(c.failure_kinds.get("backend-fault"), Some(&10));
    assert_eq!(c.http_status_codes.get(&503), Some(&10));
    assert_eq!(out.doc.mode, bench_proto::results::Mode::Ossj);
}

#[test]
fn verify_only_names_the_wrong_field() {
    let server = Server::http(Counts::new(), |_, body| {
        let text = String::from_utf8(right(&body)).unwrap();
        let swapped = text
            .replace("state=\"accepted\"", "state=\"?\"")
            .replace("state=\"held\"", "state=\"accepted\"")
            .replace("state=\"?\"", "state=\"held\"");
        respond(StatusCode::OK, swapped)
    });
    let out =
        crate::support::run_bin(&["--operation", "ossj-order", "--verify-only", &server.url()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("orderResponse: state: expected"),
        "{stderr}"
    );
}
