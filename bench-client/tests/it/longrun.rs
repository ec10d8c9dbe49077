//! Long runs lose nothing: the real binary checkpoints its results document at every interval, so a
//! client killed with SIGKILL at any moment leaves a valid document covering everything up to its last
//! interval; a results folder deleted mid-run stops the run with exit status 3, never a torn document.

use std::process::Stdio;
use std::time::{Duration, SystemTime};

use bench_proto::results::{decode_histogram, ResultsDoc, RunRecord, RunState};

use crate::support::{bin, schema_checked, signal, since_start, tmp, wait_for_doc, Child, Server};

/// The killed run's interval: a second, as a quick run's (a checkpoint is written a little after its
/// interval ends, by more on a machine busy with the other tests: a shorter interval would measure that).
const INTERVAL_S: f64 = 1.0;

fn intervals(r: &RunRecord) -> usize {
    r.timeline.as_ref().map_or(0, |t| t.intervals.len())
}

/// The timeline adds up to the document's own figures, interval after interval without a hole.
fn timeline_agrees(doc: &ResultsDoc, record: &RunRecord) {
    let t = record.timeline.as_ref().expect("a timeline");
    let mut ok = 0;
    let mut errors = 0;
    let mut calls = 0;
    for (i, iv) in t.intervals.iter().enumerate() {
        assert!(
            (iv.t_s - i as f64 * t.interval_s).abs() < 1e-9,
            "{i}: {}",
            iv.t_s
        );
        ok += iv.ok;
        errors += iv.errors.total();
        calls += decode_histogram(&iv.corrected).expect("a histogram").len();
    }
    assert_eq!(ok, doc.counts.ok);
    assert_eq!(calls, doc.counts.ok);
    assert_eq!(errors, doc.counts.errors_total);
    let covered: f64 = t.intervals.iter().map(|i| i.dur_s).sum();
    assert!(
        (covered - doc.elapsed_s).abs() < 1e-6,
        "{covered} vs {}",
        doc.elapsed_s
    );
}

#[test]
fn a_client_killed_mid_run_leaves_everything_up_to_its_last_interval() {
    let server = Server::bench_server();
    let json = tmp("killed.json");
    let child = Child::spawn(
        bin()
            .args(["--url", &server.url(), "--operation", "echoComplexTypeDoc"])
            .args(["--clients", "2", "--duration", "120s", "--interval", "1s"])
            .args(["--json", json.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    );
    let pid = child.id();
    wait_for_doc(&json, "a checkpoint of two intervals", |_, r| {
        intervals(r) >= 2
    });
    signal(pid, "-KILL");
    let killed_at = SystemTime::now();
    let out = child.wait(Duration::from_secs(30));
    assert_eq!(out.status.code(), None, "killed by a signal");

    let doc: ResultsDoc = serde_json::from_value(schema_checked(&json)).expect("typed");
    let record = RunRecord::from_json(&std::fs::read(&json).unwrap()).unwrap();
    let measured = since_start(&record, killed_at);
    eprintln!("kept {:.3} s of {measured:.3} s measured", doc.elapsed_s);
    assert_eq!(record.state, Some(RunState::Running));
    assert!(doc.partial);
    assert!(
        doc.elapsed_s >= measured - INTERVAL_S,
        "the document covers {} s of {measured} s measured",
        doc.elapsed_s
    );
    assert!(doc.counts.ok > 0);
    assert_eq!(doc.latency_us.corrected.count, doc.counts.ok);
    timeline_agrees(&doc, &record);
    assert!(
        doc.warnings.iter().any(|w| w.contains("checkpoint")),
        "{:?}",
        doc.warnings
    );
}

#[test]
fn a_results_folder_deleted_mid_run_stops_it_with_status_3() {
    let server = Server::bench_server();
    let dir = tmp("gone");
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("r.json");
    let child = Child::spawn(
        bin()
            .args([
                "--url",
                &server.url(),
                "--duration",
                "120s",
                "--interval",
                "250ms",
            ])
            .args(["--json", json.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    );
    wait_for_doc(&json, "a checkpoint", |_, r| intervals(r) >= 1);
    // Taken away in one step (a rename), then deleted once the client is gone: removing it in place races
    // with the client's next checkpoint file and fails with "directory not empty".
    let moved = dir.with_extension("removed");
    std::fs::rename(&dir, &moved).unwrap();
    let out = child.wait(Duration::from_secs(30));
    std::fs::remove_dir_all(&moved).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("the results could not be written") && stderr.contains("r.json"),
        "{stderr}"
    );
    assert!(!dir.exists(), "nothing written where the folder was");
}

#[test]
fn a_finished_run_replaces_its_checkpoints_with_the_whole_document() {
    let server = Server::bench_server();
    let json = tmp("finished.json");
    let out = bin()
        .args([
            "--url",
            &server.url(),
            "--clients",
            "2",
            "--duration",
            "1100ms",
        ])
        .args(["--interval", "250ms", "--json", json.to_str().unwrap()])
        .output()
        .expect("bench-client runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: ResultsDoc = serde_json::from_value(schema_checked(&json)).expect("typed");
    let record = RunRecord::from_json(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(record.state, Some(RunState::Complete));
    assert!(!doc.partial);
    let t = record.timeline.as_ref().unwrap();
    let lengths: Vec<f64> = t.intervals.iter().map(|i| i.dur_s).collect();
    assert_eq!(lengths.len(), 5, "{lengths:?}");
    assert!(
        (lengths[4] - 0.1).abs() < 1e-6,
        "the last interval is cut by the deadline: {lengths:?}"
    );
    timeline_agrees(&doc, &record);
    let c = record.connections.as_ref().unwrap();
    assert_eq!((c.opened, c.failed, c.setup_us.count), (2, 0, 2));
    let m = record.client_memory.as_ref().unwrap();
    assert!(m.rss_kb_start.is_some() && m.rss_kb_max >= m.rss_kb_connected);
    let leftovers: Vec<_> = std::fs::read_dir(json.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("finished.json."))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}
