//! The SOAP parser's limits over HTTP: every shape of the hostile corpus gets its answer (an echo or a fault
//! naming the limit) and the connection keeps serving; raised limits let such messages through.

use bench_proto::hostile::{Answer, Service, SHAPES};
use bench_proto::soap::{FaultCode, Limits};
use bench_proto::{customer, cxf};
use bench_server::http::HttpConfig;
use http::StatusCode;

use crate::support::TestServer;

fn path(service: Service) -> &'static str {
    match service {
        Service::Cxf => cxf::PATH,
        Service::Customer => customer::PATH,
    }
}

fn valid_echo() -> Vec<u8> {
    let mut body = Vec::new();
    cxf::write_request(&cxf::echo_complex_request(1, 1), &mut body);
    body
}

#[tokio::test]
async fn every_hostile_shape_gets_its_answer_and_the_connection_keeps_serving() {
    let server = TestServer::start().await;
    let mut c = server.client().await;
    for shape in SHAPES {
        // 1 MB: the size at which the floods pass their limits.
        let body = (shape.make)(1 << 20);
        let reply = c.soap(path(shape.service), body).await;
        match shape.answer {
            Answer::Echo => assert_eq!(reply.status, StatusCode::OK, "{}", shape.name),
            Answer::Fault(needle) => {
                let fault = reply.fault();
                assert_eq!(fault.code, FaultCode::Client, "{}", shape.name);
                assert!(
                    fault.string.contains(needle),
                    "{}: {}",
                    shape.name,
                    fault.string
                );
            }
        }
        let reply = c.soap(cxf::PATH, valid_echo()).await;
        assert_eq!(reply.status, StatusCode::OK, "after {}", shape.name);
    }
    server.stop().await;
}

#[tokio::test]
async fn raised_limits_let_the_messages_through() {
    let limits = Limits {
        max_attributes: 200_000,
        max_items: 1_000_000,
        max_work: 4 * Limits::DEFAULT_MAX_WORK,
        ..Limits::default()
    };
    let server = TestServer::with(HttpConfig {
        xml_limits: limits,
        ..HttpConfig::default()
    })
    .await;
    let mut c = server.client().await;
    for name in ["attributes", "tag_flood"] {
        let shape = SHAPES.iter().find(|s| s.name == name).unwrap();
        let reply = c.soap(path(shape.service), (shape.make)(1 << 20)).await;
        assert_eq!(
            reply.status,
            StatusCode::OK,
            "{name}: {}",
            reply.text().get(..300).unwrap_or_default()
        );
    }
    server.stop().await;
}

/// Bodies and responses past the offload size are parsed and written on the blocking pool: same answers.
#[tokio::test]
async fn big_valid_calls_are_answered_in_full() {
    let server = TestServer::start().await;
    let mut c = server.client().await;
    let customers = customer::generate_for_size(2 << 20, 7);
    let mut body = Vec::new();
    customer::write_request(&customer::Request::Echo(customers.clone()), &mut body);
    let reply = c.soap(customer::PATH, body).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(customer::parse_response(&reply.body).unwrap() == customer::Response::Echo(customers));
    let mut body = Vec::new();
    customer::write_request(&customer::get_request(3000, 0), &mut body);
    let reply = c.soap(customer::PATH, body).await;
    match customer::parse_response(&reply.body).unwrap() {
        customer::Response::Get(got) => assert_eq!(got.len(), 3000),
        other => panic!("{other:?}"),
    }
    let mut body = Vec::new();
    let req = cxf::echo_complex_request(800, 9);
    cxf::write_request(&req, &mut body);
    assert!(body.len() > 1 << 20);
    let reply = c.soap(cxf::PATH, body).await;
    assert_eq!(
        cxf::parse_response(&reply.body).unwrap(),
        req.into_echo_response()
    );
    server.stop().await;
}
