//! `bench-client chat` against the in-process chat server: VolanoMark's counts, exactly-once in-order
//! delivery checked by the client, fan-out latency, VolanoMark-style scoring, a failing server, and the
//! real binary writing a results document.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bench_client::chat::{ChatLoad, ChatReport};
use bench_proto::results::{Mode, ResultsDoc};
use bench_server::chat::{ChatConfig, ChatStats};
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};

/// Upper bound on a whole benchmark in these tests, so a hang fails instead of stalling CI.
const BOUND: Duration = Duration::from_secs(60);

struct Server {
    addr: SocketAddr,
    stats: Arc<ChatStats>,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

async fn server() -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let stats = Arc::new(ChatStats::default());
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(bench_server::chat::serve(
        listener,
        ChatConfig::default(),
        stats.clone(),
        async {
            let _ = stopped.await;
        },
    ));
    Server {
        addr,
        stats,
        stop,
        task,
    }
}

impl Server {
    async fn stop(self) {
        let _ = self.stop.send(());
        self.task.await.expect("server task").expect("server run");
    }
}

async fn bench(load: &ChatLoad) -> ChatReport {
    let (_stop_tx, stop) = watch::channel(false);
    tokio::time::timeout(BOUND, bench_client::chat::run(load, 2, None, stop))
        .await
        .expect("the benchmark finished")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paced_run_has_volanomarks_counts_and_every_delivery_checks_out() {
    let server = server().await;
    let load = ChatLoad::new(server.addr, 3, 4, 10);
    let report = bench(&load).await;
    assert_eq!(report.runs.len(), 1);
    let run = &report.runs[0];
    assert!(run.completed(), "{:?}", run.first_errors);
    assert_eq!(run.errors.total(), 0, "{:?}", run.first_errors);
    // Each of 12 users sends 10; each message reaches the 3 other members of its room.
    assert_eq!((run.sent, run.received, run.validated), (120, 360, 360));
    assert_eq!(run.latency.len(), 360);
    assert!(run.elapsed > Duration::ZERO);
    assert_eq!(run.score(), 480.0 / run.elapsed.as_secs_f64());
    let stats = server.stats.snapshot();
    assert_eq!(stats.chat_messages, 120);
    assert_eq!((stats.accepted, stats.rooms_created), (12, 3));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_with_a_pause_delivers_everything_and_ends() {
    let server = server().await;
    let mut load = ChatLoad::new(server.addr, 2, 3, 4);
    load.pause = Duration::from_millis(5);
    let report = bench(&load).await;
    let run = &report.runs[0];
    assert!(run.completed(), "{:?}", run.first_errors);
    assert_eq!(run.errors.total(), 0, "{:?}", run.first_errors);
    assert_eq!((run.sent, run.received), (24, 48));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_runs_are_scored_as_volanomark_does_and_the_document_is_valid() {
    let server = server().await;
    let mut load = ChatLoad::new(server.addr, 2, 3, 5);
    load.runs = 3;
    let report = bench(&load).await;
    assert_eq!(report.runs.len(), 3);
    let scored: Vec<u64> = report.scored().iter().map(|r| r.run).collect();
    assert_eq!(scored, [2, 3]);
    let mean = (report.runs[1].score() + report.runs[2].score()) / 2.0;
    assert!((report.score() - mean).abs() < 1e-6);

    let doc = report.doc();
    assert_eq!(doc.mode, Mode::Chat);
    let chat = doc.chat.as_ref().expect("chat block");
    assert_eq!(chat.scored_runs, [2, 3]);
    assert_eq!((chat.messages_sent, chat.messages_received), (60, 120));
    assert_eq!(doc.counts.ok, 120);
    assert_eq!(doc.counts.errors_total, 0);
    assert_eq!(doc.latency_us.corrected.count, 120);
    assert_eq!(doc.params.chat.as_ref().map(|c| c.runs), Some(3));
    let json = serde_json::to_value(&doc).expect("serialise");
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../../schemas/results.v1.schema.json"))
            .expect("schema");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let problems: Vec<String> = validator
        .iter_errors(&json)
        .map(|e| e.to_string())
        .collect();
    assert!(problems.is_empty(), "{problems:?}");
    assert!(report.human(&doc).contains("Average throughput = "));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_hangs_up_fails_the_run_promptly() {
    let (addr, rude) = hanging_up().await;
    let report = bench(&ChatLoad::new(addr, 2, 2, 5)).await;
    assert!(!report.runs[0].completed());
    assert!(report.errors_total() >= 1);
    assert!(report.measured().is_empty());
    rude.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_run_that_measured_nothing_fails_even_with_allow_errors() {
    // A server that hangs up fails the check before the load: nothing is measured.
    let (addr, rude) = hanging_up().await;
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_bench-client"));
    cmd.args(["chat", "--addr", &addr.to_string(), "--rooms", "1"])
        .args([
            "--users",
            "2",
            "--count",
            "2",
            "--threads",
            "1",
            "--allow-errors",
        ]);
    let out = tokio::task::spawn_blocking(move || cmd.output());
    let out = tokio::time::timeout(BOUND, out)
        .await
        .expect("bench-client finished")
        .expect("join")
        .expect("bench-client ran");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("verification failed"), "{stderr}");
    rude.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_runs_the_benchmark_and_writes_the_results() {
    let server = server().await;
    let json = std::env::temp_dir().join(format!("wsbench-chat-{}.json", std::process::id()));
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_bench-client"));
    cmd.args([
        "chat",
        "--addr",
        &server.addr.to_string(),
        "--rooms",
        "2",
        "--users",
        "3",
        "--count",
        "4",
    ])
    .args(["--runs", "2", "--threads", "1", "--json"])
    .arg(&json);
    // The server runs on this runtime, so wait for the child on a blocking thread.
    let out = tokio::task::spawn_blocking(move || cmd.output());
    let out = tokio::time::timeout(BOUND, out)
        .await
        .expect("bench-client finished")
        .expect("join")
        .expect("bench-client ran");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("Average throughput = "), "{stdout}");
    let doc: ResultsDoc = serde_json::from_slice(&std::fs::read(&json).expect("json written"))
        .expect("a results doc");
    let _ = std::fs::remove_file(&json);
    assert_eq!(doc.mode, Mode::Chat);
    let chat = doc.chat.expect("chat block");
    assert_eq!(chat.scored_runs, [2]);
    assert_eq!(chat.runs.len(), 2);
    assert!(chat.score_msg_per_s > 0.0);
    assert_eq!((chat.messages_sent, chat.messages_received), (24, 48));
    server.stop().await;
}

/// A server that accepts every connection and closes it at once; abort the handle when done.
async fn hanging_up() -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let task = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            drop(stream);
        }
    });
    (addr, task)
}
