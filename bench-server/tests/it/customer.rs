//! The Customer service end to end: add, addAsync (202, yet stored), get from the pre-filled store, echo of
//! a 100 KB array, and the bound on `get`.

use bench_proto::customer::{self, AddSummary, Request, Response};
use bench_server::http::{HttpConfig, PREFILL_FIRST_ID, PREFILL_SEED};
use http::StatusCode;

use crate::support::{Client, TestServer, SOAP_XML};

fn body(req: &Request) -> Vec<u8> {
    let mut out = Vec::new();
    customer::write_request(req, &mut out);
    out
}

async fn call(c: &mut Client, req: &Request) -> Response {
    let reply = c.soap(customer::PATH, body(req)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.header("content-type"), SOAP_XML);
    customer::parse_response(&reply.body).unwrap_or_else(|e| panic!("{e}: {}", reply.text()))
}

#[tokio::test]
async fn get_answers_from_the_prefilled_store() {
    let server = TestServer::start().await;
    let mut c = server.client().await;
    let expected = customer::generate(5, PREFILL_SEED, PREFILL_FIRST_ID);
    assert_eq!(
        call(&mut c, &customer::get_request(3, 2)).await,
        Response::Get(expected[2..5].to_vec())
    );
    assert_eq!(
        call(&mut c, &customer::get_request(0, 0)).await,
        Response::Get(Vec::new())
    );
    server.stop().await;
}

#[tokio::test]
async fn add_stores_and_summarises() {
    let config = HttpConfig {
        store_cap: 10,
        store_prefill: 4,
        ..HttpConfig::default()
    };
    let server = TestServer::with(config).await;
    let mut c = server.client().await;
    let added = customer::generate(3, 11, 500);
    let resp = call(&mut c, &Request::Add(added.clone())).await;
    assert_eq!(
        resp,
        Response::Add(AddSummary {
            count: 3,
            first_id: 500,
            last_id: 502,
            stored: 7
        })
    );
    // The new customers occupy positions 4..7 of the store.
    assert_eq!(
        call(&mut c, &customer::get_request(3, 4)).await,
        Response::Get(added)
    );
    server.stop().await;
}

#[tokio::test]
async fn add_async_answers_202_empty_and_still_stores() {
    let config = HttpConfig {
        store_cap: 6,
        store_prefill: 2,
        ..HttpConfig::default()
    };
    let server = TestServer::with(config).await;
    let mut c = server.client().await;
    let added = customer::generate(2, 12, 900);
    let reply = c
        .soap(customer::PATH, body(&Request::AddAsync(added.clone())))
        .await;
    assert_eq!(reply.status, StatusCode::ACCEPTED);
    assert!(reply.body.is_empty());
    assert_eq!(
        call(&mut c, &customer::get_request(2, 2)).await,
        Response::Get(added)
    );
    server.stop().await;
}

#[tokio::test]
async fn echo_returns_a_100k_array() {
    let server = TestServer::start().await;
    let mut c = server.client().await;
    let customers = customer::generate_for_size(100_000, 3);
    let req = Request::Echo(customers.clone());
    let len = body(&req).len();
    assert!((95_000..=105_000).contains(&len), "request is {len} bytes");
    assert_eq!(call(&mut c, &req).await, Response::Echo(customers));
    server.stop().await;
}

#[tokio::test]
async fn store_stays_bounded_by_its_cap() {
    let config = HttpConfig {
        store_cap: 5,
        store_prefill: 5,
        ..HttpConfig::default()
    };
    let server = TestServer::with(config).await;
    let mut c = server.client().await;
    for round in 0..4 {
        let resp = call(
            &mut c,
            &Request::Add(customer::generate(3, round, 1000 + 3 * round)),
        )
        .await;
        let Response::Add(summary) = resp else {
            panic!("{resp:?}")
        };
        assert_eq!(summary.stored, 5);
    }
    let text = server.metrics().await;
    assert_eq!(
        crate::support::metric(&text, "wsbench_customer_store_size"),
        5
    );
    server.stop().await;
}

#[tokio::test]
async fn get_beyond_the_bound_is_a_client_fault() {
    let config = HttpConfig {
        max_get: 10,
        ..HttpConfig::default()
    };
    let server = TestServer::with(config).await;
    let mut c = server.client().await;
    let fault = c
        .soap(customer::PATH, body(&customer::get_request(11, 0)))
        .await
        .fault();
    assert_eq!(fault.code, bench_proto::soap::FaultCode::Client);
    assert!(
        fault.string.contains("11") && fault.string.contains("10"),
        "{}",
        fault.string
    );
    assert_eq!(call(&mut c, &customer::get_request(10, 0)).await, {
        let all = customer::generate(10, PREFILL_SEED, PREFILL_FIRST_ID);
        Response::Get(all)
    });
    server.stop().await;
}
