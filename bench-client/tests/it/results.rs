//! The results document end to end: the real binary's `--json` against the committed schema (with
//! `--hlog`, `--monitor-pid`, `--format cxf`), and `merge` equal to one big run.

use bench_proto::results::{decode_histogram, ResultsDoc};
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

use crate::support::{added_histograms, merge_ok, run_bin, run_ok, schema_checked, tmp, Server};

#[test]
fn json_hlog_monitor_and_cxf_format_from_the_binary() {
    let server = Server::bench_server();
    let (json, hlog) = (tmp("full.json"), tmp("full.hlog"));
    let pid = std::process::id().to_string();
    let out = run_bin(&[
        "--url",
        &server.url(),
        "--operation",
        "echoComplexTypeDoc",
        "--clients",
        "2",
        "--duration",
        "1200ms",
        "--json",
        json.to_str().unwrap(),
        "--hlog",
        hlog.to_str().unwrap(),
        "--interval",
        "1s",
        "--monitor-pid",
        &pid,
        "--format",
        "cxf",
        "--label",
        "clients=2",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        !stderr.contains("MEASURING"),
        "the stray MEASURING line is gone: {stderr}"
    );
    for label in [
        "TOTAL",
        "PER CLIENT",
        "MB/s",
        "p99.99",
        "Overall Throughput: echoComplexTypeDoc",
        "PER-CLIENT rate",
    ] {
        assert!(stdout.contains(label), "{label} missing from:\n{stdout}");
    }

    let v = schema_checked(&json);
    assert_eq!(v["label"], "clients=2");
    assert_eq!(v["partial"], false);
    let doc: ResultsDoc = serde_json::from_value(v).expect("the typed document");
    assert_eq!(doc.elapsed_s, 1.2);
    assert!(doc.counts.ok > 0 && doc.counts.errors_total == 0);
    let h = decode_histogram(&doc.histograms.corrected).unwrap();
    assert_eq!(h.len(), doc.counts.ok);
    let system = doc
        .system
        .as_ref()
        .expect("--monitor-pid fills the system block");
    assert!(!system.samples.is_empty());
    assert!(system
        .samples
        .iter()
        .all(|s| s.server_rss_kb.is_some_and(|kb| kb > 0)));
    assert!(system
        .samples
        .iter()
        .all(|s| (s.user_pct + s.sys_pct + s.idle_pct) <= 100.01));
    let last = system.samples.last().unwrap();
    assert!(
        last.t_s >= doc.elapsed_s,
        "the samples cover the whole measured interval, its last 0.2 s too: {:?}",
        system.samples
    );
    assert!(system.mean.user_pct.is_some() && system.mean.idle_pct.is_some());

    let log = std::fs::read(&hlog).expect("hlog written");
    let mut intervals = 0;
    let mut calls = 0;
    for entry in IntervalLogIterator::new(&log) {
        if let LogEntry::Interval(i) = entry.expect("a valid interval log") {
            intervals += 1;
            calls += decode_histogram(i.encoded_histogram()).unwrap().len();
        }
    }
    assert_eq!(intervals, 2, "1.2 s makes two one-second intervals");
    assert_eq!(
        calls, doc.counts.ok,
        "the intervals hold every measured call"
    );
}

#[test]
fn a_run_shorter_than_the_sampling_interval_still_measures_the_machine() {
    let server = Server::bench_server();
    let json = tmp("short-monitored.json");
    let pid = std::process::id().to_string();
    let out = run_bin(&[
        "--url",
        &server.url(),
        "--clients",
        "1",
        "--duration",
        "300ms",
        "--json",
        json.to_str().unwrap(),
        "--monitor-pid",
        &pid,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: ResultsDoc = serde_json::from_value(schema_checked(&json)).unwrap();
    let system = doc.system.expect("--monitor-pid fills the system block");
    assert_eq!(system.samples.len(), 1, "{:?}", system.samples);
    let (user, sys, idle) = (
        system.mean.user_pct.expect("measured, not missing"),
        system.mean.sys_pct.unwrap(),
        system.mean.idle_pct.unwrap(),
    );
    // Not 100 exactly: a virtual machine's stolen time counts in the total only.
    assert!(user + sys + idle <= 100.01);
    assert!(user + sys > 0.0, "a run that did work was not all idle");
}

#[test]
fn merging_two_runs_adds_them_exactly() {
    let server = Server::bench_server();
    let paths = [tmp("m-a.json"), tmp("m-b.json"), tmp("m-out.json")];
    for (path, clients) in paths[..2].iter().zip(["1", "3"]) {
        run_ok(&[
            "--url",
            &server.url(),
            "--operation",
            "get",
            "--clients",
            clients,
            "--requests",
            "30",
            "--json",
            path.to_str().unwrap(),
        ]);
    }
    let out = merge_ok(&paths);
    assert!(String::from_utf8_lossy(&out.stdout).contains("TOTAL"));
    // `--json -`: the same document on stdout, the summary on stderr.
    let out = run_bin(&[
        "merge",
        paths[0].to_str().unwrap(),
        paths[1].to_str().unwrap(),
        "--json",
        "-",
    ]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("TOTAL"));
    let on_stdout: ResultsDoc = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(on_stdout.counts.ok, 60);

    let docs: Vec<ResultsDoc> = paths
        .iter()
        .map(|p| serde_json::from_value(schema_checked(p)).expect("typed"))
        .collect();
    let (a, b, m) = (&docs[0], &docs[1], &docs[2]);
    assert_eq!(m.counts.ok, 60);
    assert_eq!(
        m.counts.bytes_received,
        a.counts.bytes_received + b.counts.bytes_received
    );
    assert_eq!(m.params.clients, 4);
    assert_eq!(m.elapsed_s, a.elapsed_s.max(b.elapsed_s));
    let sum = added_histograms(&a.histograms.corrected, &b.histograms.corrected);
    let merged = decode_histogram(&m.histograms.corrected).unwrap();
    assert_eq!(merged, sum);
    assert_eq!(m.latency_us.corrected.p99, sum.value_at_quantile(0.99));
    assert_eq!(m.latency_us.corrected.max, sum.max());
    assert!((m.throughput.total_per_s - 60.0 / m.elapsed_s).abs() < 1e-9);
}

#[test]
fn merge_refuses_different_operations() {
    let server = Server::bench_server();
    let paths = [tmp("x-a.json"), tmp("x-b.json"), tmp("x-out.json")];
    for (path, op) in paths[..2].iter().zip(["get", "echo"]) {
        let out = run_bin(&[
            "--url",
            &server.url(),
            "--operation",
            op,
            "--requests",
            "2",
            "--json",
            path.to_str().unwrap(),
        ]);
        assert!(out.status.success());
    }
    let out = run_bin(&[
        "merge",
        paths[0].to_str().unwrap(),
        paths[1].to_str().unwrap(),
        "--json",
        paths[2].to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("operation"));
    assert!(!paths[2].exists());
}
