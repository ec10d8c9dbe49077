//! The CXF performance service end to end: every operation, with requests from bench-proto's writer and
//! hand-written envelopes using other prefixes, SOAPAction and a header.

use bench_proto::cxf::{self, Request, Response};
use http::StatusCode;

use crate::support::{raw_exchange, Client, TestServer, SOAP_XML};

/// POSTs `req` (written by bench-proto) and parses the typed response.
async fn call(c: &mut Client, req: &Request<'_>) -> Response<'static> {
    let mut body = Vec::new();
    cxf::write_request(req, &mut body);
    let reply = c.soap(cxf::PATH, body).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.header("content-type"), SOAP_XML);
    cxf::parse_response(&reply.body).unwrap_or_else(|e| panic!("{e}: {}", reply.text()))
}

#[tokio::test]
async fn every_operation_echoes_typed_values() {
    let server = TestServer::start().await;
    let mut c = server.client().await;

    let s = "ünïcode <&> \"quotes\" ]]> \u{1F600}".to_string();
    assert_eq!(
        call(&mut c, &Request::EchoString(s.clone().into())).await,
        Response::EchoString(s.into())
    );
    assert_eq!(
        call(&mut c, &Request::EchoString(String::new().into())).await,
        Response::EchoString(String::new().into())
    );

    let bytes: Vec<u8> = (0..=255).collect();
    assert_eq!(
        call(&mut c, &Request::EchoBase64(bytes.clone().into())).await,
        Response::EchoBase64(bytes.into())
    );

    for (packet, id) in [(0, -7), (1, 42), (16, i32::MAX)] {
        let req = cxf::echo_complex_request(packet, id);
        let Request::EchoComplex { items, .. } = &req else {
            panic!("echo_complex_request")
        };
        assert_eq!(items.len(), packet);
        let expected = Response::EchoComplex {
            items: items.clone(),
            id_out: id,
        };
        assert_eq!(call(&mut c, &req).await, expected);
    }
    server.stop().await;
}

#[tokio::test]
async fn the_reference_item_survives_the_round_trip() {
    let server = TestServer::start().await;
    let mut c = server.client().await;
    let item = cxf::reference_item();
    let resp = call(
        &mut c,
        &Request::EchoComplex {
            items: vec![item.clone()].into(),
            id: 1,
        },
    )
    .await;
    let Response::EchoComplex { items, id_out } = resp else {
        panic!("wrong response {resp:?}")
    };
    assert_eq!((&*items, id_out), (&[item][..], 1));
    server.stop().await;
}

/// A hand-written request the way another toolkit might send it: `s:` prefix for the envelope, a default
/// namespace for the payload, a SOAPAction, and a header without mustUnderstand.
#[tokio::test]
async fn hand_written_envelope_with_other_prefixes_header_and_soapaction() {
    let server = TestServer::start().await;
    let mut c = server.client().await;
    let body = format!(
        r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Header><t:trace xmlns:t="urn:x">1</t:trace></s:Header><s:Body><echoStringDoc xmlns="{}"><in>hello</in></echoStringDoc></s:Body></s:Envelope>"#,
        cxf::TYPES_NS
    );
    let req = c
        .request(http::Method::POST, cxf::PATH)
        .header("content-type", "text/xml")
        .header("soapaction", "\"\"")
        .body(http_body_util::Full::new(bytes::Bytes::from(body)))
        .unwrap();
    let reply = c.send(req).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(
        cxf::parse_response(&reply.body).unwrap(),
        Response::EchoString("hello".into())
    );
    server.stop().await;
}

/// A body in several chunks arrives as several frames (copied together before parsing), one sent whole
/// with its Content-Length usually as one (parsed where hyper put it): both echo the same.
#[tokio::test]
async fn a_body_in_one_frame_or_several_echoes_the_same() {
    let server = TestServer::start().await;
    let req = cxf::echo_complex_request(3, 99);
    let mut body = Vec::new();
    cxf::write_request(&req, &mut body);
    let head = |framing: &str| {
        format!(
            "POST {} HTTP/1.1\r\nHost: t\r\nContent-Type: text/xml\r\nConnection: close\r\n{framing}\r\n",
            cxf::PATH
        )
    };
    let mut chunked = head("Transfer-Encoding: chunked\r\n").into_bytes();
    for part in body.chunks(body.len() / 3 + 1) {
        chunked.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
        chunked.extend_from_slice(part);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let mut whole = head(&format!("Content-Length: {}\r\n", body.len())).into_bytes();
    whole.extend_from_slice(&body);
    let Request::EchoComplex { items, id } = req else {
        panic!("echo_complex_request")
    };
    let expected = Response::EchoComplex { items, id_out: id };
    for request in [chunked, whole] {
        let reply = raw_exchange(server.addr, &request).await;
        assert!(reply.starts_with("HTTP/1.1 200 "), "{reply}");
        let (_, payload) = reply.split_once("\r\n\r\n").expect("a head and a body");
        assert_eq!(cxf::parse_response(payload.as_bytes()).unwrap(), expected);
    }
    server.stop().await;
}
