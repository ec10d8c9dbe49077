//! The OSS/J portal transaction in-process: an application instance (`http::run_app` with a `Portal`)
//! and back ends (`Backend`) through the tests' own broker, and every failure by kind against a broker
//! and back ends that misbehave on purpose.

mod broker;

use std::time::Duration;

use ::http::StatusCode;
use bench_proto::customer;
use bench_proto::ossj::{self, Failure, Order, OrderFault, OrderReply};
use bench_proto::stomp::{Command, Frame};
use bench_server::http::{self, HttpConfig};
use bench_server::ossj::{Backend, BackendConfig, Portal, PortalConfig};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::support::{bounded, metric, Client, Reply, TestServer};
use broker::{fake_backend, Behaviour, FakeBroker};

fn order_bytes(order: &Order) -> Vec<u8> {
    let mut out = Vec::new();
    order.write(&mut out);
    out
}

fn expected(order: &Order) -> Vec<u8> {
    let c = &customer::generate(1, ossj::CUSTOMER_SEED, order.customer_id())[0];
    let mut out = Vec::new();
    OrderReply::serve(order, c).write(&mut out);
    out
}

fn portal_config(broker: &FakeBroker) -> PortalConfig {
    let mut c = PortalConfig::new(broker.address(), "test-app");
    c.reply_timeout = Duration::from_millis(300);
    c.broker_wait = Duration::from_secs(5);
    c
}

/// An application instance on 127.0.0.1:0.
async fn app(config: PortalConfig) -> TestServer {
    let portal = bounded("portal", Portal::connect(config))
        .await
        .expect("portal connects");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (tx, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(http::run_app(
        listener,
        HttpConfig::default(),
        portal,
        async {
            let _ = rx.await;
        },
    ));
    TestServer::from_parts(addr, tx, task)
}

/// A back end running until the returned sender is used (or dropped).
async fn backend(
    broker: &FakeBroker,
    customers: u64,
) -> (
    oneshot::Sender<()>,
    tokio::task::JoinHandle<anyhow::Result<()>>,
) {
    let mut config = BackendConfig::new(broker.address());
    config.customers = customers;
    let b = bounded("backend", Backend::connect(config))
        .await
        .expect("backend connects");
    let (tx, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(b.run(async {
        let _ = rx.await;
    }));
    (tx, task)
}

async fn post(client: &mut Client, body: Vec<u8>) -> Reply {
    client.post(ossj::PATH, Some("text/xml"), body).await
}

fn failure(reply: &Reply) -> OrderFault {
    let f = OrderFault::parse(&reply.body)
        .unwrap_or_else(|| panic!("no orderFault in {}", reply.text()));
    assert_eq!(reply.status.as_u16(), f.kind.status(), "{}", reply.text());
    f
}

#[tokio::test]
async fn orders_cross_the_broker_to_the_back_ends_and_back() {
    let broker = FakeBroker::start(Behaviour::Normal).await;
    let (_b1, _t1) = backend(&broker, ossj::DEFAULT_CUSTOMERS).await;
    let (_b2, _t2) = backend(&broker, ossj::DEFAULT_CUSTOMERS).await;
    let server = app(portal_config(&broker)).await;
    let mut client = server.client().await;
    for n in 0..20 {
        let order = Order::sample(n);
        let reply = post(&mut client, order_bytes(&order)).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        assert_eq!(reply.body.as_ref(), expected(&order).as_slice());
    }
    let m = server.metrics().await;
    assert_eq!(metric(&m, "wsbench_ossj_orders_total{outcome=\"ok\"}"), 20);
    assert_eq!(metric(&m, "wsbench_ossj_broker_up"), 1);
    assert_eq!(broker.seen(Command::Send), 40, "20 orders and 20 replies");
    server.stop().await;
}

#[tokio::test]
async fn an_invalid_order_is_refused_before_the_broker() {
    let broker = FakeBroker::start(Behaviour::Normal).await;
    let server = app(portal_config(&broker)).await;
    let mut client = server.client().await;
    let bad = String::from_utf8(order_bytes(&Order::sample(0)))
        .unwrap()
        .replace("activate", "explode");
    let f = failure(&post(&mut client, bad.into_bytes()).await);
    assert_eq!(f.kind, Failure::InvalidOrder);
    assert!(f.detail.contains("action"), "{}", f.detail);
    let big = vec![b' '; ossj::MAX_ORDER_BYTES + 1];
    assert_eq!(
        failure(&post(&mut client, big).await).kind,
        Failure::InvalidOrder
    );
    assert_eq!(broker.seen(Command::Send), 0);
    server.stop().await;
}

#[tokio::test]
async fn no_reply_within_the_deadline_is_a_reply_timeout() {
    let broker = FakeBroker::start(Behaviour::SwallowOrders).await;
    let (_b, _t) = backend(&broker, ossj::DEFAULT_CUSTOMERS).await;
    let server = app(portal_config(&broker)).await;
    let mut client = server.client().await;
    let f = failure(&post(&mut client, order_bytes(&Order::sample(1))).await);
    assert_eq!(f.kind, Failure::ReplyTimeout);
    // The broker mends its ways: the same instance serves again.
    broker.set(Behaviour::Normal);
    let order = Order::sample(2);
    let reply = post(&mut client, order_bytes(&order)).await;
    assert_eq!(reply.body.as_ref(), expected(&order).as_slice());
    let m = server.metrics().await;
    assert_eq!(
        metric(&m, "wsbench_ossj_orders_total{outcome=\"reply-timeout\"}"),
        1
    );
    assert_eq!(metric(&m, "wsbench_ossj_pending_orders"), 0);
    server.stop().await;
}

#[tokio::test]
async fn a_broker_that_refuses_is_broker_refused_until_it_takes_us_back() {
    let refusing = FakeBroker::start(Behaviour::RefuseConnect).await;
    let mut config = portal_config(&refusing);
    config.broker_wait = Duration::from_millis(200);
    let err = Portal::connect(config)
        .await
        .expect_err("refused at start")
        .to_string();
    assert!(err.contains("User name [] or password is invalid"), "{err}");

    let broker = FakeBroker::start(Behaviour::Normal).await;
    let (_b, _t) = backend(&broker, ossj::DEFAULT_CUSTOMERS).await;
    let server = app(portal_config(&broker)).await;
    let mut client = server.client().await;
    broker.set(Behaviour::RefuseConnect);
    broker.drop_connections();
    let mut kinds = Vec::new();
    // Until the instance sees the connection gone, an order may still time out; then it is refused.
    for _ in 0..50 {
        let f = failure(&post(&mut client, order_bytes(&Order::sample(3))).await);
        kinds.push(f.kind);
        if f.kind == Failure::BrokerRefused {
            assert!(f.detail.contains("broker"), "{}", f.detail);
            break;
        }
    }
    assert_eq!(kinds.last(), Some(&Failure::BrokerRefused), "{kinds:?}");
    broker.set(Behaviour::Normal);
    let (_b2, _t2) = backend(&broker, ossj::DEFAULT_CUSTOMERS).await;
    let order = Order::sample(4);
    let mut served = false;
    for _ in 0..100 {
        let reply = post(&mut client, order_bytes(&order)).await;
        if reply.status == StatusCode::OK {
            assert_eq!(reply.body.as_ref(), expected(&order).as_slice());
            served = true;
            break;
        }
        assert_eq!(failure(&reply).kind, Failure::BrokerRefused);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(served, "the instance never reconnected");
    assert!(
        metric(
            &server.metrics().await,
            "wsbench_ossj_broker_connects_total"
        ) >= 2
    );
    server.stop().await;
}

#[tokio::test]
async fn a_back_end_that_faults_or_answers_nonsense_is_a_backend_fault() {
    let broker = FakeBroker::start(Behaviour::Normal).await;
    let faulting = fake_backend(broker.addr, |_| {
        Frame::new(Command::Send)
            .with(ossj::FAULT_HEADER, "store-offline")
            .with_body("the store is down")
    })
    .await;
    let server = app(portal_config(&broker)).await;
    let mut client = server.client().await;
    let f = failure(&post(&mut client, order_bytes(&Order::sample(5))).await);
    assert_eq!(f.kind, Failure::BackendFault);
    assert!(
        f.detail.contains("store-offline: the store is down"),
        "{}",
        f.detail
    );
    faulting.abort();

    let nonsense = fake_backend(broker.addr, |_| {
        Frame::new(Command::Send).with_body("<html>oops</html>")
    })
    .await;
    wait_for_one_subscriber(&broker).await;
    let f = failure(&post(&mut client, order_bytes(&Order::sample(6))).await);
    assert_eq!(f.kind, Failure::BackendFault);
    assert!(f.detail.contains("not an order reply"), "{}", f.detail);
    nonsense.abort();

    // A reply to another order (a back end mixing up correlation ids) is no answer to this one.
    let confused = fake_backend(broker.addr, |_| {
        Frame::new(Command::Send).with_body(expected(&Order::sample(8)))
    })
    .await;
    wait_for_one_subscriber(&broker).await;
    let f = failure(&post(&mut client, order_bytes(&Order::sample(7))).await);
    assert_eq!(f.kind, Failure::BackendFault);
    assert!(
        f.detail.contains("replied for order SA-000008"),
        "{}",
        f.detail
    );
    confused.abort();
    server.stop().await;
}

/// Waits until the aborted fake back ends' connections are gone from the broker.
async fn wait_for_one_subscriber(broker: &FakeBroker) {
    bounded("one subscriber left", async {
        while broker.subscribers(ossj::ORDERS_QUEUE) != 1 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn a_customer_the_store_lacks_is_a_backend_fault() {
    let broker = FakeBroker::start(Behaviour::Normal).await;
    let (_b, _t) = backend(&broker, ossj::ORDERED_CUSTOMERS).await;
    let server = app(portal_config(&broker)).await;
    let mut client = server.client().await;
    let mut order = Order::sample(0);
    if let Order::Activation(a) = &mut order {
        a.customer_id = ossj::ORDERED_CUSTOMERS + 1;
    }
    let f = failure(&post(&mut client, order_bytes(&order)).await);
    assert_eq!(f.kind, Failure::BackendFault);
    assert!(f.detail.contains("unknown-customer"), "{}", f.detail);
    server.stop().await;
}

#[tokio::test]
async fn a_drained_back_end_answers_what_it_was_handed_then_leaves() {
    let broker = FakeBroker::start(Behaviour::Normal).await;
    let (stop, task) = backend(&broker, ossj::DEFAULT_CUSTOMERS).await;
    let server = app(portal_config(&broker)).await;
    let mut client = server.client().await;
    let order = Order::sample(9);
    assert_eq!(
        post(&mut client, order_bytes(&order)).await.status,
        StatusCode::OK
    );
    stop.send(()).unwrap();
    bounded("drain", task)
        .await
        .expect("task")
        .expect("drained");
    assert_eq!(broker.seen(Command::Unsubscribe), 1);
    assert_eq!(broker.seen(Command::Disconnect), 1);
    // No back end left: orders wait on the queue and time out.
    assert_eq!(
        failure(&post(&mut client, order_bytes(&order)).await).kind,
        Failure::ReplyTimeout
    );
    server.stop().await;
}

#[tokio::test]
async fn a_plain_server_has_no_portal() {
    let server = TestServer::start().await;
    let reply = post(&mut server.client().await, order_bytes(&Order::sample(0))).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    server.stop().await;
}
