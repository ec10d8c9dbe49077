//! `--verify-only`: one call per request variant, each answer checked in full before any load. A server
//! that answers a wrong field, a fault, a 404 or a body that is not SOAP is refused with exit 1, naming the
//! operation, the field path, the expected and the received value; a right one passes; nothing is written.

use http::StatusCode;

use bench_proto::cxf::{self, Response};
use bench_proto::soap::{write_fault, Fault, FaultCode};

use crate::support::{respond, run_bin, Counts, Server};

/// bench-client `--verify-only` of echoComplexTypeDoc against `server`: exit code and stderr.
fn verify(server: &Server) -> (Option<i32>, String, String) {
    let url = server.url();
    let out = run_bin(&[
        "--url",
        &url,
        "--operation",
        "echoComplexTypeDoc",
        "--verify-only",
    ]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The right answer to the request, with `plant` applied to it.
fn answer(body: &[u8], plant: impl Fn(&mut Response<'_>)) -> Vec<u8> {
    let mut r = cxf::parse_request(body)
        .expect("bench-client sends a valid request")
        .into_echo_response();
    plant(&mut r);
    let mut out = Vec::new();
    cxf::write_response(&r, &mut out);
    out
}

#[test]
fn a_right_server_passes_and_one_call_was_made() {
    let counts = Counts::new();
    let server = Server::http(counts.clone(), |_, body| {
        respond(StatusCode::OK, answer(&body, |_| {}))
    });
    let (code, out, err) = verify(&server);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("verified echoComplexTypeDoc"), "{out}");
    assert_eq!(counts.requests(), 1);
}

#[test]
fn a_planted_wrong_field_is_named_with_both_values() {
    let server = Server::http(Counts::new(), |_, body| {
        let wrong = answer(&body, |r| {
            if let Response::EchoComplex { items, .. } = r {
                items.to_mut()[0].var_float = 2.5;
            }
        });
        respond(StatusCode::OK, wrong)
    });
    let (code, _, err) = verify(&server);
    assert_eq!(code, Some(1), "{err}");
    print!("{err}");
    assert!(
        err.contains("operation echoComplexTypeDoc")
            && err.contains("items[0].var_float: expected")
            && err.contains("received 2.5"),
        "{err}"
    );
}

#[test]
fn a_fault_a_404_and_a_body_that_is_not_soap_are_refused() {
    let fault = Server::http(Counts::new(), |_, _| {
        let mut body = Vec::new();
        write_fault(
            &mut body,
            &Fault {
                code: FaultCode::Server,
                string: "planted failure".into(),
                detail: None,
            },
        );
        respond(StatusCode::INTERNAL_SERVER_ERROR, body)
    });
    let (code, _, err) = verify(&fault);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("operation echoComplexTypeDoc") && err.contains("planted failure"),
        "{err}"
    );
    let missing = Server::http(Counts::new(), |_, _| {
        respond(StatusCode::NOT_FOUND, "no such service")
    });
    let (code, _, err) = verify(&missing);
    assert_eq!(code, Some(1));
    assert!(err.contains("HTTP 404"), "{err}");
    let html = Server::http(Counts::new(), |_, _| {
        respond(StatusCode::OK, "<html><body>hello</body></html>")
    });
    let (code, _, err) = verify(&html);
    assert_eq!(code, Some(1));
    assert!(err.contains("operation echoComplexTypeDoc"), "{err}");
}
