//! Test servers (the real bench-server in-process, and small misbehaving ones), and helpers to run the
//! client in-process or as the real binary.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use bench_client::config::RunConfig;
use bench_client::flags::Cli;
use bench_client::measure::{measure, Outcome};
use bytes::Bytes;
use clap::Parser as _;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::AsyncReadExt as _;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// A server on 127.0.0.1:0 running on a thread of its own (its own runtime), stopped on drop.
pub struct Server {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The real bench-server (`bench_server::http::run`).
    pub fn bench_server() -> Server {
        Server::spawn(|listener, stopped| async move {
            let config = bench_server::http::HttpConfig::default();
            bench_server::http::run(listener, config, async {
                let _ = stopped.await;
            })
            .await
            .expect("bench-server ran");
        })
    }

    /// Every accepted connection is handed to `handle` (raw bytes: for servers that do not speak HTTP).
    pub fn raw<F, Fut>(handle: F) -> Server
    where
        F: Fn(TcpStream) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        Server::spawn(move |listener, mut stopped| async move {
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    Ok((stream, _)) = listener.accept() => { tokio::spawn(handle(stream)); }
                }
            }
        })
    }

    /// An HTTP/1.1 server answering every request with `respond(n, request body)`, `n` counting requests
    /// from 0; `stats` counts connections and requests.
    pub fn http<F>(stats: Arc<Counts>, respond: F) -> Server
    where
        F: Fn(u64, Bytes) -> Response<Full<Bytes>> + Send + Sync + 'static,
    {
        let respond = Arc::new(respond);
        Server::raw(move |stream| {
            let (respond, stats) = (respond.clone(), stats.clone());
            async move {
                stats.connections.fetch_add(1, Ordering::SeqCst);
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let (respond, stats) = (respond.clone(), stats.clone());
                    async move {
                        let body = req.into_body().collect().await?.to_bytes();
                        let n = stats.requests.fetch_add(1, Ordering::SeqCst);
                        Ok::<_, hyper::Error>(respond(n, body))
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            }
        })
    }

    fn spawn<F, Fut>(serve: F) -> Server
    where
        F: FnOnce(TcpListener, oneshot::Receiver<()>) -> Fut + Send + 'static,
        Fut: Future<Output = ()>,
    {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
                addr_tx
                    .send(listener.local_addr().expect("addr"))
                    .expect("test waits for the address");
                serve(listener, stopped).await;
            });
        });
        let addr = addr_rx
            .recv()
            .expect("the server thread sends its address once bound");
        Server {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What a test server saw.
#[derive(Debug, Default)]
pub struct Counts {
    pub connections: AtomicU64,
    pub requests: AtomicU64,
}

impl Counts {
    pub fn new() -> Arc<Counts> {
        Arc::new(Counts::default())
    }

    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    pub fn connections(&self) -> u64 {
        self.connections.load(Ordering::SeqCst)
    }
}

/// Reads until the end of a request head (the requests here have small bodies, read or not).
pub async fn read_head(stream: &mut TcpStream) -> bool {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    true
}

pub fn respond(status: StatusCode, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r
}

/// Runs the client in-process with these flags (as after `bench-client run`).
pub fn client(args: &[&str]) -> Outcome {
    let cli = Cli::try_parse_from(std::iter::once("bench-client").chain(args.iter().copied()))
        .expect("valid flags");
    let cfg = RunConfig::from_args(cli.run).expect("valid configuration");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    // Nothing stops these runs early: they end by their duration or request count.
    let (_never, stop) = tokio::sync::watch::channel(false);
    rt.block_on(measure(cfg, stop)).expect("the run finished")
}

/// The real binary.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bench-client"))
}

pub fn run_bin(args: &[&str]) -> Output {
    bin().args(args).output().expect("bench-client runs")
}

/// A fresh path under the test target's temporary directory.
pub fn tmp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-client-it");
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join(format!("{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

/// Reads a results document as JSON, checks it against the committed schema, and returns it.
pub fn schema_checked(path: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("results document written");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let schema_path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../schemas/results.v1.schema.json"
    );
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).expect("schema"))
            .expect("schema JSON");
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{} does not match the schema:\n{}",
        path.display(),
        errors.join("\n")
    );
    doc
}
