//! SIGINT stops a run early; the summary is still printed and the JSON is written, marked partial. The
//! test interrupts the real binary once the server has answered some of its calls (with no warm-up, the
//! measured interval has begun).

use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use bench_proto::results::ResultsDoc;

use http::StatusCode;

use crate::support::{bin, respond, schema_checked, tmp, Counts, Server};

#[test]
fn sigint_writes_partial_results() {
    let counts = Counts::new();
    let server = Server::http(counts.clone(), |_, _| respond(StatusCode::OK, "ok"));
    let json = tmp("partial.json");
    let child = bin()
        .args([
            "--url",
            &server.url(),
            "--clients",
            "2",
            "--duration",
            "60s",
        ])
        .args(["--json", json.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bench-client starts");
    // Waiting on a condition the run itself causes (its calls reach the server), bounded.
    let started = std::time::Instant::now();
    while counts.requests() < 10 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "bench-client never started calling"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());

    // Bound the wait so that a client that ignores SIGINT fails the test instead of hanging it.
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let out = child.wait_with_output();
        let _ = tx.send(());
        out
    });
    if rx.recv_timeout(Duration::from_secs(30)).is_err() {
        panic!("bench-client did not stop within 30 s of SIGINT");
    }
    let out = waiter.join().unwrap().expect("wait");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("PARTIAL"), "{stdout}");
    assert!(stdout.contains("TOTAL"), "{stdout}");

    let doc: ResultsDoc = serde_json::from_value(schema_checked(&json)).expect("typed");
    assert!(doc.partial);
    assert!(doc.elapsed_s < 60.0, "{}", doc.elapsed_s);
    assert_eq!(doc.latency_us.corrected.count, doc.counts.ok);
    assert!(
        doc.warnings.iter().any(|w| w.contains("SIGINT")),
        "{:?}",
        doc.warnings
    );
}
