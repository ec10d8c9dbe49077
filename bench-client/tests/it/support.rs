//! Test servers (the real bench-server in-process, one that can be killed, restarted and paused, and small
//! misbehaving ones), and helpers to run the client in-process or as the real binary and to follow its
//! checkpoints.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bench_client::config::RunConfig;
use bench_client::flags::Cli;
use bench_client::measure::{measure, Outcome};
use bench_proto::results::{decode_histogram, ResultsDoc, RunRecord};
use bytes::Bytes;
use clap::Parser as _;
use hdrhistogram::Histogram;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::AsyncReadExt as _;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// A server on 127.0.0.1:0 running on a thread of its own (its own runtime), stopped on drop.
pub(crate) struct Server {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The real bench-server (`bench_server::http::run`).
    pub(crate) fn bench_server() -> Server {
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
    pub(crate) fn raw<F, Fut>(handle: F) -> Server
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
    pub(crate) fn http<F>(stats: Arc<Counts>, respond: F) -> Server
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
pub(crate) struct Counts {
    pub connections: AtomicU64,
    pub requests: AtomicU64,
}

impl Counts {
    pub(crate) fn new() -> Arc<Counts> {
        Arc::new(Counts::default())
    }

    pub(crate) fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    pub(crate) fn connections(&self) -> u64 {
        self.connections.load(Ordering::SeqCst)
    }
}

/// Reads until the end of a request head (the requests here have small bodies, read or not).
pub(crate) async fn read_head(stream: &mut TcpStream) -> bool {
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

pub(crate) fn respond(status: StatusCode, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r
}

/// Runs the client in-process with these flags (as after `bench-client run`).
pub(crate) fn client(args: &[&str]) -> Outcome {
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
pub(crate) fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bench-client"))
}

pub(crate) fn run_bin(args: &[&str]) -> Output {
    bin().args(args).output().expect("bench-client runs")
}

/// The real binary, asserted to succeed (its stderr shown when it did not).
pub(crate) fn run_ok(args: &[&str]) -> Output {
    let out = run_bin(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `bench-client merge A B --json OUT` on the first two paths into the third, asserted to succeed.
pub(crate) fn merge_ok(paths: &[PathBuf; 3]) -> Output {
    let [a, b, out] = paths.each_ref().map(|p| p.to_str().expect("UTF-8 path"));
    run_ok(&["merge", a, b, "--json", out])
}

/// Two encoded histograms added, as a merge must add them.
pub(crate) fn added_histograms(a: &str, b: &str) -> Histogram<u64> {
    let mut sum = decode_histogram(a).expect("a histogram");
    sum.add(decode_histogram(b).expect("a histogram"))
        .expect("histograms of one range");
    sum
}

/// A fresh path under the test target's temporary directory.
pub(crate) fn tmp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-client-it");
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join(format!("{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

/// Reads a results document as JSON, checks it against the committed schema, and returns it.
pub(crate) fn schema_checked(path: &std::path::Path) -> serde_json::Value {
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

/// The real bench-server on a thread of its own that a test can kill (its runtime dropped: every socket
/// closed, as when a process is killed), restart on the same port, and pause (its thread blocked: the
/// kernel still accepts connections and takes requests, nothing answers, as under SIGSTOP).
pub(crate) struct Faulty {
    pub addr: SocketAddr,
    up: Option<Up>,
}

struct Up {
    kill: oneshot::Sender<()>,
    pause: tokio::sync::mpsc::UnboundedSender<Pause>,
    thread: JoinHandle<()>,
}

/// A pause: told once the server's thread is blocked, blocked until `resume` is sent or dropped.
struct Pause {
    paused: std::sync::mpsc::Sender<()>,
    resume: std::sync::mpsc::Receiver<()>,
}

impl Faulty {
    pub(crate) fn start() -> Faulty {
        let mut f = Faulty {
            addr: "127.0.0.1:0".parse().expect("an address"),
            up: None,
        };
        f.restart();
        f
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Starts the server again, on the port it had.
    pub(crate) fn restart(&mut self) {
        assert!(self.up.is_none(), "the server is running");
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (kill, killed) = oneshot::channel::<()>();
        let (pause, mut pauses) = tokio::sync::mpsc::unbounded_channel::<Pause>();
        let addr = self.addr;
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = TcpListener::bind(addr).await.expect("bind");
                addr_tx.send(listener.local_addr().expect("addr")).unwrap();
                tokio::spawn(async move {
                    while let Some(p) = pauses.recv().await {
                        let _ = p.paused.send(());
                        // Blocks the runtime's only thread: every connection stops where it is.
                        let _ = p.resume.recv();
                    }
                });
                let config = bench_server::http::HttpConfig::default();
                let serve = bench_server::http::run(listener, config, std::future::pending());
                tokio::select! {
                    r = serve => r.expect("bench-server ran"),
                    _ = killed => {}
                }
            });
            // `rt` is dropped here with every task in it: the sockets close as a killed process's do.
        });
        self.addr = addr_rx.recv().expect("the server thread sends its address");
        self.up = Some(Up {
            kill,
            pause,
            thread,
        });
    }

    /// Kills the server: returns once every one of its sockets is closed.
    pub(crate) fn kill(&mut self) {
        let up = self.up.take().expect("the server is running");
        let _ = up.kill.send(());
        up.thread.join().expect("the server thread ends");
    }

    /// Pauses the server until the returned sender is used or dropped; returns once it is paused.
    pub(crate) fn pause(&self) -> std::sync::mpsc::Sender<()> {
        let up = self.up.as_ref().expect("the server is running");
        let (paused, is_paused) = std::sync::mpsc::channel();
        let (resume, resumed) = std::sync::mpsc::channel();
        up.pause
            .send(Pause {
                paused,
                resume: resumed,
            })
            .expect("the server takes the pause");
        is_paused.recv().expect("the server pauses");
        resume
    }
}

impl Drop for Faulty {
    fn drop(&mut self) {
        if self.up.is_some() {
            self.kill();
        }
    }
}

/// Waits (bounded) until the document at `path` — a checkpoint of a running client, or its last word —
/// satisfies `ready`, and returns it with its record.
pub(crate) fn wait_for_doc(
    path: &std::path::Path,
    what: &str,
    mut ready: impl FnMut(&ResultsDoc, &RunRecord) -> bool,
) -> (ResultsDoc, RunRecord) {
    let started = std::time::Instant::now();
    loop {
        if let Ok(text) = std::fs::read(path) {
            let doc: ResultsDoc = serde_json::from_slice(&text).expect("a whole document, always");
            let record = RunRecord::from_json(&text).expect("a whole record, always");
            if ready(&doc, &record) {
                return (doc, record);
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{}: still waiting for {what}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Seconds from the timeline's t = 0 to `t` (the client's clock and the test's are this machine's).
pub(crate) fn since_start(record: &RunRecord, t: SystemTime) -> f64 {
    let start = record.timeline.as_ref().expect("a timeline").start_unix_us;
    let t = t
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_micros() as f64;
    (t - start as f64) / 1e6
}

/// A child process that is killed if the test ends (or fails) without waiting for it.
pub(crate) struct Child(Option<std::process::Child>);

impl Child {
    pub(crate) fn spawn(cmd: &mut Command) -> Child {
        Child(Some(cmd.spawn().expect("the child starts")))
    }

    pub(crate) fn id(&self) -> u32 {
        self.0.as_ref().expect("running").id()
    }

    /// Waits for the exit, at most `limit` (a client that does not stop fails the test, not hangs it).
    pub(crate) fn wait(mut self, limit: Duration) -> Output {
        let child = self.0.take().expect("running");
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let out = child.wait_with_output();
            let _ = tx.send(());
            out
        });
        assert!(
            rx.recv_timeout(limit).is_ok(),
            "the child did not exit within {limit:?}"
        );
        waiter.join().expect("the waiter").expect("wait")
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Sends `signal` (`-INT`, `-KILL`, …) to a process by its id.
pub(crate) fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill {signal} {pid}");
}
