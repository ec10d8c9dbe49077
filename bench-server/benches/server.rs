//! Criterion benchmarks of the whole server stack: loopback round trips through hyper (one keep-alive client
//! connection to `http::run` on 127.0.0.1:0, client and server on one thread) with the 1-item echoComplexTypeDoc
//! reference request and a 100 KB customer echo. Each answer is checked once before timing; the codec alone is
//! benchmarked in bench-proto.

use std::hint::black_box;

use bench_proto::{customer, cxf};
use bench_server::http::{self, HttpConfig};
use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;

/// Posts `body` to `path` and returns the response status and body.
async fn post(sender: &mut SendRequest<Full<Bytes>>, path: &str, body: Bytes) -> (u16, Bytes) {
    let req = hyper::Request::post(path)
        .header(hyper::header::HOST, "127.0.0.1")
        .header(hyper::header::CONTENT_TYPE, "text/xml; charset=utf-8")
        .body(Full::new(body))
        .expect("a valid request");
    let resp = sender.send_request(req).await.expect("the server answers");
    let status = resp.status().as_u16();
    let bytes = resp
        .into_body()
        .collect()
        .await
        .expect("the response body arrives")
        .to_bytes();
    (status, bytes)
}

/// A server on 127.0.0.1:0 and one keep-alive client connection to it, on a current-thread runtime.
struct Loopback {
    rt: Runtime,
    sender: SendRequest<Full<Bytes>>,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Loopback {
    fn start() -> Loopback {
        // One thread for server and client: the fewest moving parts on a shared machine.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (server, sender) = rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind 127.0.0.1:0");
            let addr = listener.local_addr().expect("bound");
            let server = tokio::spawn(http::run(listener, HttpConfig::default(), async {
                let _ = stopped.await;
            }));
            let stream = TcpStream::connect(addr)
                .await
                .expect("connect to the server");
            stream.set_nodelay(true).expect("TCP_NODELAY");
            let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                .await
                .expect("handshake");
            tokio::spawn(conn);
            (server, sender)
        });
        Loopback {
            rt,
            sender,
            stop,
            server,
        }
    }

    fn post(&mut self, path: &str, body: Bytes) -> (u16, Bytes) {
        self.rt.block_on(post(&mut self.sender, path, body))
    }

    fn stop(self) {
        drop(self.sender);
        let _ = self.stop.send(());
        self.rt
            .block_on(self.server)
            .expect("the server task")
            .expect("the server stops cleanly");
    }
}

fn roundtrip(c: &mut Criterion) {
    let mut lo = Loopback::start();

    let mut cxf_body = Vec::new();
    cxf::write_request(&cxf::echo_complex_request(1, 1), &mut cxf_body);
    let cxf_body = Bytes::from(cxf_body);
    let (status, answer) = lo.post(cxf::PATH, cxf_body.clone());
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answer));
    match cxf::parse_response(&answer).expect("a valid echo") {
        cxf::Response::EchoComplex { items, id_out: 1 } => {
            assert_eq!(*items, [cxf::reference_item()])
        }
        other => panic!("not the echo of the request: {other:?}"),
    }
    let cxf_bytes = (cxf_body.len() + answer.len()) as u64;

    let customers = customer::generate_for_size(100 * 1024, 1);
    let mut customer_body = Vec::new();
    customer::write_request(
        &customer::Request::Echo(customers.clone()),
        &mut customer_body,
    );
    let customer_body = Bytes::from(customer_body);
    let (status, answer) = lo.post(customer::PATH, customer_body.clone());
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answer));
    match customer::parse_response(&answer).expect("a valid echo") {
        customer::Response::Echo(echoed) => assert!(echoed == customers, "the echo differs"),
        other => panic!("not the echo of the request: {other:?}"),
    }
    let customer_bytes = (customer_body.len() + answer.len()) as u64;

    let mut group = c.benchmark_group("server");
    group.throughput(Throughput::Bytes(cxf_bytes));
    group.bench_function(
        BenchmarkId::new("roundtrip", "cxf_echoComplexTypeDoc_1_item"),
        |b| {
            b.iter(|| {
                let (status, answer) = lo.post(cxf::PATH, cxf_body.clone());
                assert_eq!(status, 200);
                black_box(answer);
            })
        },
    );
    group.throughput(Throughput::Bytes(customer_bytes));
    group.bench_function(BenchmarkId::new("roundtrip", "customer_echo_100KB"), |b| {
        b.iter(|| {
            let (status, answer) = lo.post(customer::PATH, customer_body.clone());
            assert_eq!(status, 200);
            black_box(answer);
        })
    });
    group.finish();
    lo.stop();
}

criterion_group!(benches, roundtrip);
criterion_main!(benches);
