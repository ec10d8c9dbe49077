//! Bad SOAP input gets HTTP 500 with a SOAP 1.1 Client fault that says what is wrong, and the server (and
//! the same keep-alive connection) keeps serving.

use bench_proto::soap::FaultCode;
use bench_proto::{customer, cxf};
use http::StatusCode;

use crate::support::{envelope, metric, Client, TestServer};

const TYPES: &str = cxf::TYPES_NS;

/// Posts `body` to the CXF service and returns the fault, checking its code and that the faultstring
/// mentions `needle` (case-insensitively).
async fn cxf_fault(c: &mut Client, body: Vec<u8>, code: FaultCode, needle: &str) {
    let fault = c.soap(cxf::PATH, body).await.fault();
    assert_eq!(fault.code, code, "{}", fault.string);
    assert!(
        fault.string.to_lowercase().contains(&needle.to_lowercase()),
        "faultstring {:?} should mention {needle:?}",
        fault.string
    );
}

fn written(req: &cxf::Request<'_>) -> String {
    let mut out = Vec::new();
    cxf::write_request(req, &mut out);
    String::from_utf8(out).unwrap()
}

/// `text` with `from` replaced by `to`, which must occur.
fn replace(text: &str, from: &str, to: &str) -> Vec<u8> {
    assert!(text.contains(from), "{from:?} not in {text}");
    text.replacen(from, to, 1).into_bytes()
}

#[tokio::test]
async fn every_bad_envelope_gets_a_client_fault_and_the_connection_keeps_serving() {
    let server = TestServer::start().await;
    let mut c = server.client().await;
    let client = FaultCode::Client;
    let mut faults = 0;

    // Malformed XML: truncated, mismatched, empty, not UTF-8.
    for body in [
        envelope(&format!(
            "<p:echoStringDoc xmlns:p=\"{TYPES}\"><p:in>x</p:in>"
        )),
        envelope(&format!(
            "<p:echoStringDoc xmlns:p=\"{TYPES}\"><p:in>x</p:out></p:echoStringDoc>"
        )),
        b"this is not xml".to_vec(),
    ] {
        cxf_fault(&mut c, body, client, "XML").await;
        faults += 1;
    }
    for body in [Vec::new(), b"\xff\xfe<\x00a\x00/\x00>\x00".to_vec()] {
        let fault = c.soap(cxf::PATH, body).await.fault();
        assert_eq!(fault.code, client);
        assert!(!fault.string.is_empty());
        faults += 1;
    }

    // Unknown operation, and a known one in the wrong namespace.
    cxf_fault(
        &mut c,
        envelope(&format!("<p:frobnicate xmlns:p=\"{TYPES}\"/>")),
        client,
        "unknown operation",
    )
    .await;
    cxf_fault(
        &mut c,
        envelope("<echoStringDoc xmlns=\"urn:wrong\"><in>x</in></echoStringDoc>"),
        client,
        "urn:wrong",
    )
    .await;
    // A child element unqualified although the schema says elementFormDefault="qualified".
    cxf_fault(
        &mut c,
        envelope(&format!(
            "<p:echoStringDoc xmlns:p=\"{TYPES}\"><in>x</in></p:echoStringDoc>"
        )),
        client,
        "namespace",
    )
    .await;
    faults += 3;

    // Missing and invalid fields.
    cxf_fault(
        &mut c,
        envelope(&format!(
            "<p:echoComplexTypeDoc xmlns:p=\"{TYPES}\"><p:in/></p:echoComplexTypeDoc>"
        )),
        client,
        "missing",
    )
    .await;
    let complex = written(&cxf::echo_complex_request(1, 5));
    cxf_fault(
        &mut c,
        replace(&complex, "varUByte>255<", "varUByte>256<"),
        client,
        "varUByte",
    )
    .await;
    cxf_fault(
        &mut c,
        replace(&complex, "RED<", "PURPLE<"),
        client,
        "varEnum",
    )
    .await;
    cxf_fault(
        &mut c,
        replace(&complex, "2005-12-03T00:00:09", "2005-13-03T00:00:09"),
        client,
        "varDateTime",
    )
    .await;
    let b64 = written(&cxf::Request::EchoBase64(b"hello".to_vec().into()));
    cxf_fault(&mut c, replace(&b64, "aGVsbG8=", "a!GVsbG8="), client, "in").await;
    faults += 5;

    // No entity expansion of any kind, and bounded nesting.
    let doctype = format!(
        r#"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><p:echoStringDoc xmlns:p="{TYPES}"><p:in>&lol2;</p:in></p:echoStringDoc></soap:Body></soap:Envelope>"#
    );
    cxf_fault(&mut c, doctype.into_bytes(), client, "DOCTYPE").await;
    // Deep nesting where the server must walk it: inside a header block it skips.
    let deep = format!(
        r#"<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Header>{}{}</soap:Header><soap:Body/></soap:Envelope>"#,
        "<a>".repeat(100_000),
        "</a>".repeat(100_000)
    );
    cxf_fault(&mut c, deep.into_bytes(), client, "nested deeper").await;
    faults += 2;

    // SOAP 1.2 envelope and a mustUnderstand header get the codes SOAP reserves for them.
    let soap12 = format!(
        r#"<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body><p:echoStringDoc xmlns:p="{TYPES}"><p:in>x</p:in></p:echoStringDoc></env:Body></env:Envelope>"#
    );
    let fault = c
        .post(
            cxf::PATH,
            Some("application/soap+xml; charset=utf-8"),
            soap12.into_bytes(),
        )
        .await
        .fault();
    assert_eq!(fault.code, FaultCode::VersionMismatch, "{}", fault.string);
    let must = format!(
        r#"<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Header><t:tx xmlns:t="urn:tx" soap:mustUnderstand="1">1</t:tx></soap:Header><soap:Body><p:echoStringDoc xmlns:p="{TYPES}"><p:in>x</p:in></p:echoStringDoc></soap:Body></soap:Envelope>"#
    );
    let fault = c.soap(cxf::PATH, must.into_bytes()).await.fault();
    assert_eq!(fault.code, FaultCode::MustUnderstand, "{}", fault.string);
    faults += 2;

    // Same connection, still serving.
    let ok = c
        .soap(
            cxf::PATH,
            written(&cxf::Request::EchoString("still here".into())).into_bytes(),
        )
        .await;
    assert_eq!(ok.status, StatusCode::OK);
    let text = server.metrics().await;
    assert_eq!(
        metric(
            &text,
            r#"wsbench_soap_faults_total{service="cxf",operation="unknown"}"#
        ),
        faults
    );
    assert_eq!(
        metric(
            &text,
            r#"wsbench_soap_requests_total{service="cxf",operation="echoStringDoc"}"#
        ),
        1
    );
    server.stop().await;
}

#[tokio::test]
async fn customer_service_refuses_the_other_services_operations_and_bad_fields() {
    let server = TestServer::start().await;
    let mut c = server.client().await;
    // A CXF request sent to the Customer service.
    let fault = c
        .soap(
            customer::PATH,
            written(&cxf::Request::EchoString("x".into())).into_bytes(),
        )
        .await
        .fault();
    assert_eq!(fault.code, FaultCode::Client);
    assert!(
        fault.string.contains("unknown operation"),
        "{}",
        fault.string
    );
    // A get whose count is not a number.
    let mut get = Vec::new();
    customer::write_request(&customer::get_request(7, 0), &mut get);
    let get = String::from_utf8(get).unwrap();
    let fault = c
        .soap(customer::PATH, replace(&get, ">7<", ">seven<"))
        .await
        .fault();
    assert_eq!(fault.code, FaultCode::Client);
    assert!(fault.string.contains("count"), "{}", fault.string);
    let text = server.metrics().await;
    assert_eq!(
        metric(
            &text,
            r#"wsbench_soap_faults_total{service="customer",operation="unknown"}"#
        ),
        2
    );
    server.stop().await;
}
