//! Criterion benchmarks of the server with the 1-item echoComplexTypeDoc reference request: the SOAP work of one
//! call in-process (parse, echo, serialise; no HTTP), and a loopback round trip through hyper (a keep-alive client
//! connection to `http::run` on 127.0.0.1:0), each answer checked once before timing.

use std::hint::black_box;

use bench_proto::cxf;
use bench_server::http::{self, HttpConfig};
use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};

fn request_bytes() -> Vec<u8> {
    let mut body = Vec::new();
    cxf::write_request(&cxf::echo_complex_request(1, 1), &mut body);
    body
}

fn soap_echo(c: &mut Criterion) {
    let body = request_bytes();
    let mut out = Vec::with_capacity(4096);
    let mut group = c.benchmark_group("server");
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.bench_function(BenchmarkId::new("soap_echo", "cxf_1"), |b| {
        b.iter(|| {
            out.clear();
            let req = cxf::parse_request(black_box(&body)).expect("the reference request parses");
            cxf::write_response(&req.into_echo_response(), &mut out);
            black_box(&out);
        })
    });
    group.finish();
}

/// Posts `body` to the CXF endpoint and returns the response status and body.
async fn post(sender: &mut SendRequest<Full<Bytes>>, body: Bytes) -> (u16, Bytes) {
    let req = hyper::Request::post(cxf::PATH)
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

fn roundtrip(c: &mut Criterion) {
    // One thread for server and client: the fewest moving parts on a shared machine.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (server, mut sender) = rt.block_on(async {
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
    let body = Bytes::from(request_bytes());
    let (status, answer) = rt.block_on(post(&mut sender, body.clone()));
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answer));
    match cxf::parse_response(&answer).expect("a valid echo") {
        cxf::Response::EchoComplex { items, id_out: 1 } => {
            assert_eq!(items, vec![cxf::reference_item()])
        }
        other => panic!("not the echo of the request: {other:?}"),
    }

    let mut group = c.benchmark_group("server");
    group.throughput(Throughput::Bytes((body.len() + answer.len()) as u64));
    group.bench_function(BenchmarkId::new("roundtrip", "cxf_1"), |b| {
        b.iter(|| {
            let (status, answer) = rt.block_on(post(&mut sender, body.clone()));
            assert_eq!(status, 200);
            black_box(answer);
        })
    });
    group.finish();
    drop(sender);
    let _ = stop.send(());
    rt.block_on(server)
        .expect("the server task")
        .expect("the server stops cleanly");
}

criterion_group!(benches, soap_echo, roundtrip);
criterion_main!(benches);
