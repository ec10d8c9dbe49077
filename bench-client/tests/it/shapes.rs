//! The shapes of a load doing what they say (issue 43), end to end: a mix's operations within statistical
//! bounds of their weights and reproducible from the seed, stages whose per-interval calls follow the ramp,
//! every operation of a mix verified before load, phases that add up, and a run stopped within a window of a
//! failure it was told to stop on. (The Poisson gaps' goodness of fit is `engine::schedule`'s test.)

use std::sync::Arc;
use std::time::{Duration, Instant};

use bench_proto::results::decode_histogram;
use http::StatusCode;
use serde_json::Value;
use statrs::distribution::{ChiSquared, ContinuousCDF};

use crate::support::{
    added_histograms, client, merge_ok, respond, run_bin, run_ok, schema_checked, tmp, Counts,
    Server,
};

/// Pearson's χ² of observed counts against expected shares: the p-value.
fn chi_square_p(observed: &[u64], shares: &[f64]) -> f64 {
    let n: u64 = observed.iter().sum();
    let stat: f64 = observed
        .iter()
        .zip(shares)
        .map(|(&o, &p)| {
            let e = n as f64 * p;
            (o as f64 - e).powi(2) / e
        })
        .sum();
    let df = (observed.len() - 1) as f64;
    1.0 - ChiSquared::new(df).unwrap().cdf(stat)
}

#[test]
fn a_mix_of_10000_calls_is_within_statistical_bounds_of_its_weights() {
    let s = Server::bench_server();
    let url = s.url();
    let run = |seed: &str, n: &str| {
        client(&[
            "--url",
            &url,
            "--mix",
            "get=80,add=15,echo=5",
            "-c",
            "4",
            "-n",
            n,
            "--seed",
            seed,
        ])
        .doc
    };
    let doc = run("1", "10000");
    assert_eq!((doc.counts.ok, doc.counts.errors_total), (10_000, 0));
    let ops = &doc.shape.operations;
    let names: Vec<&str> = ops.iter().map(|o| o.operation.as_str()).collect();
    assert_eq!(names, ["get", "add", "echo"]);
    let observed: Vec<u64> = ops.iter().map(|o| o.calls.ok).collect();
    let p = chi_square_p(&observed, &[0.80, 0.15, 0.05]);
    assert!(p > 0.001, "{observed:?}: χ² p = {p}");
    // Each operation's calls, bytes and latencies add up to the totals.
    assert_eq!(observed.iter().sum::<u64>(), doc.counts.ok);
    let sent: u64 = ops.iter().map(|o| o.bytes_sent).sum();
    assert_eq!(sent, doc.counts.bytes_sent);
    let mut all = bench_proto::results::new_histogram();
    for o in ops {
        all.add(decode_histogram(&o.calls.histogram).unwrap())
            .unwrap();
    }
    assert_eq!(all, decode_histogram(&doc.histograms.corrected).unwrap());
    // The same seed draws the same operations; another seed others.
    let counts = |d: &bench_proto::results::ResultsDoc| -> Vec<u64> {
        d.shape.operations.iter().map(|o| o.calls.ok).collect()
    };
    let again = run("1", "10000");
    assert_eq!(counts(&again), observed);
    assert_ne!(counts(&run("2", "10000")), observed);
}

#[test]
fn every_operation_of_a_mix_is_verified_before_load() {
    let s = Server::bench_server();
    let out = run_bin(&[
        "--url",
        &s.url(),
        "--mix",
        "get=1,echo=1,add=2",
        "--verify-only",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for op in ["get", "echo", "add"] {
        assert!(text.contains(&format!("verified {op} at")), "{op}: {text}");
    }
    // A server that answers one of them wrongly is refused, naming it.
    let stats = Arc::new(Counts::default());
    let bad = Server::http(stats, |_, _| respond(StatusCode::NOT_FOUND, "no"));
    let out = run_bin(&[
        "--url",
        &bad.url(),
        "--mix",
        "get=1,echo=1",
        "--verify-only",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("operation get") && err.contains("operation echo"),
        "{err}"
    );
}

/// Offered calls between `a` and `b` seconds of a ramp 0 → 400/s over 1 s, 400/s for 1 s, 400 → 0 over 1 s.
fn offered(a: f64, b: f64) -> f64 {
    let area = |t: f64| match t {
        t if t <= 1.0 => 200.0 * t * t,
        t if t <= 2.0 => 200.0 + 400.0 * (t - 1.0),
        t => 600.0 + 400.0 * (t - 2.0) - 200.0 * (t - 2.0) * (t - 2.0),
    };
    area(b) - area(a)
}

#[test]
fn a_rate_ramps_calls_follow_its_stages_interval_by_interval() {
    let s = Server::bench_server();
    let json = tmp("ramp.json");
    let out = run_bin(&[
        "--url",
        &s.url(),
        "--operation",
        "echo",
        "-c",
        "4",
        "--interval",
        "500ms",
        "--stage",
        "1s:rate=400,1s:rate=400",
        "--stage",
        "1s:rate=0",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = schema_checked(&json);
    let intervals = doc["timeline"]["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), 6);
    // Calls count where they complete: by the end of each interval, every call offered up to then, less
    // those still behind by the run's worst lag and latency (both measured), and no call not yet offered.
    let us = |v: &Value| v.as_f64().unwrap_or(0.0) / 1e6;
    let slack =
        us(&doc["client"]["max_schedule_lag_us"]) + us(&doc["latency_us"]["uncorrected"]["max"]);
    let mut done = 0.0;
    for i in intervals {
        let end = i["t_s"].as_f64().unwrap() + i["dur_s"].as_f64().unwrap();
        done += i["ok"].as_f64().unwrap();
        let (most, least) = (offered(0.0, end), offered(0.0, (end - slack).max(0.0)));
        assert!(
            done <= most + 4.0,
            "by {end} s: {done} calls, {most} offered"
        );
        assert!(
            done >= least - 4.0,
            "by {end} s: {done} calls, {least} offered {slack} s before"
        );
    }
    // All 800 offered: done, or still waiting at the end.
    let waiting = doc["counts"]["in_flight"]["calls"].as_f64().unwrap();
    assert!((done + waiting - 800.0).abs() <= 4.0, "{done} + {waiting}");
    let stages = doc["stages"].as_array().unwrap();
    let shape: Vec<(f64, f64, f64, f64)> = stages
        .iter()
        .map(|s| {
            let f = |k: &str| s[k].as_f64().unwrap();
            (f("from_s"), f("to_s"), f("start"), f("end"))
        })
        .collect();
    assert_eq!(
        shape,
        [
            (0.0, 1.0, 0.0, 400.0),
            (1.0, 2.0, 400.0, 400.0),
            (2.0, 3.0, 400.0, 0.0)
        ]
    );
    for (s, want) in stages.iter().zip([200.0, 400.0, 200.0]) {
        let got = s["ok"].as_f64().unwrap();
        assert!(
            (got - want).abs() <= want * 0.1,
            "stage {}: {got} of {want}",
            s["stage"]
        );
    }
    assert_eq!(doc["params"]["stages"][2]["target"], 0.0);
    assert_eq!(doc["params"]["arrivals"], "even");
}

#[test]
fn a_clients_ramp_adds_its_clients_as_it_goes() {
    let s = Server::bench_server();
    let out = client(&[
        "--url",
        &s.url(),
        "--operation",
        "get",
        "--think-time",
        "10ms",
        "--interval",
        "500ms",
        "--stage",
        "1s:clients=4,1s:clients=4",
    ]);
    let (doc, rec) = (&out.doc, &out.record);
    assert_eq!(doc.params.clients, 4);
    // Each client connected as it arrived (none before the clock), once.
    assert_eq!(rec.connections.as_ref().unwrap().opened, 4);
    let ok: Vec<u64> = rec
        .timeline
        .as_ref()
        .unwrap()
        .intervals
        .iter()
        .map(|i| i.ok)
        .collect();
    assert_eq!(ok.len(), 4);
    // Clients 1 and 2 in the first half second (from 0.25 and 0.5 s), all four on the plateau.
    assert!(ok[0] * 2 < ok[3], "{ok:?}");
    let st = &doc.shape.stages;
    assert!(
        st[0].calls.ok * 4 < st[1].calls.ok * 3,
        "{} {}",
        st[0].calls.ok,
        st[1].calls.ok
    );
}

#[test]
fn phases_split_connect_first_byte_and_transfer() {
    let s = Server::bench_server();
    // 100 KB echoes come in several reads; a new connection per call: every call has all three phases.
    let doc = client(&[
        "--url",
        &s.url(),
        "--operation",
        "echo",
        "--message-size",
        "100K",
        "-n",
        "40",
        "--no-keepalive",
    ])
    .doc;
    let p = doc.shape.phases.as_ref().unwrap();
    assert_eq!(p.ttfb.latency_us.count, 40);
    assert_eq!(p.transfer.latency_us.count, 40);
    assert_eq!(p.connect.latency_us.count, 40);
    assert!(
        p.transfer.latency_us.max > 0,
        "a 100 KB body takes more than one read"
    );
    // A call's first byte comes before its last: no phase is longer than the longest call.
    assert!(p.ttfb.latency_us.max <= doc.latency_us.corrected.max);
    // Small answers on kept connections: one read each, transfer 0, first byte = latency.
    let doc = client(&["--url", &s.url(), "--operation", "echo", "-n", "200"]).doc;
    let p = doc.shape.phases.unwrap();
    assert_eq!(p.transfer.latency_us.max, 0);
    assert_eq!(p.ttfb.latency_us.count, 200);
    assert_eq!(p.ttfb.latency_us.p99, doc.latency_us.corrected.p99);
}

#[test]
fn a_run_told_to_abort_stops_within_a_window_of_the_failure() {
    // Answers ok for 1.5 s after its first request, then 503 to everything.
    let first = Arc::new(std::sync::OnceLock::<Instant>::new());
    let stats = Arc::new(Counts::default());
    let s = Server::http(stats, move |_, _| {
        let t0 = *first.get_or_init(Instant::now);
        if t0.elapsed() < Duration::from_millis(1500) {
            respond(StatusCode::OK, "ok")
        } else {
            respond(StatusCode::SERVICE_UNAVAILABLE, "down")
        }
    });
    let json = tmp("abort.json");
    let (window, interval) = (0.5, 0.1);
    let out = run_bin(&[
        &s.url(),
        "-c",
        "2",
        "-d",
        "30s",
        "--interval",
        "100ms",
        "--threshold",
        "errors<1%",
        "--abort-on-fail",
        "--abort-grace",
        "500ms",
        "--abort-window",
        "500ms",
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{text}");
    assert!(
        text.contains("STOPPED") && text.contains("errors<1% failed"),
        "{text}"
    );
    let doc: Value = schema_checked(&json);
    let at = doc["aborted"]["at_s"].as_f64().unwrap();
    let intervals = doc["timeline"]["intervals"].as_array().unwrap();
    let failed_from = intervals
        .iter()
        .find(|i| i["errors"]["http_status"].as_u64().unwrap() > 0)
        .map(|i| i["t_s"].as_f64().unwrap())
        .expect("the failure is in the timeline");
    assert!(
        at >= failed_from,
        "stopped at {at} s, before the failure at {failed_from} s"
    );
    assert!(
        at <= failed_from + window + 2.0 * interval + 1e-9,
        "stopped at {at} s, the failure began at {failed_from} s"
    );
    assert!(doc["elapsed_s"].as_f64().unwrap() < at + 1.0);
    assert_eq!(doc["partial"], true);
    assert_eq!(doc["params"]["abort"]["thresholds"][0], "errors<1%");
}

/// Issue 43, item 4: two client processes that share a staged mix (as client containers do: the ramp split
/// between them, a seed each) merge exactly per operation, per stage and second by second.
#[test]
fn two_processes_of_a_staged_mix_merge_per_operation_per_stage_and_per_second() {
    let s = Server::bench_server();
    let paths = [tmp("sm-a.json"), tmp("sm-b.json"), tmp("sm-out.json")];
    for (path, (ramp, seed)) in paths[..2].iter().zip([
        ("1s:rate=120,1s:rate=120", "1"),
        ("1s:rate=80,1s:rate=80", "2"),
    ]) {
        run_ok(&[
            "--url",
            &s.url(),
            "--mix",
            "get=60,echo=40",
            "--seed",
            seed,
            "-c",
            "2",
            "--interval",
            "500ms",
            "--stage",
            ramp,
            "--json",
            path.to_str().unwrap(),
        ]);
    }
    merge_ok(&paths);
    let docs: Vec<Value> = paths.iter().map(|p| schema_checked(p)).collect();
    let (a, b, m) = (&docs[0], &docs[1], &docs[2]);
    let sum_hist =
        |x: &Value, y: &Value| added_histograms(x.as_str().unwrap(), y.as_str().unwrap());
    let f = |v: &Value| v.as_f64().unwrap();
    for part in ["operations", "stages"] {
        let (pa, pb, pm) = (
            a[part].as_array().unwrap(),
            b[part].as_array().unwrap(),
            m[part].as_array().unwrap(),
        );
        assert_eq!(pm.len(), pa.len(), "{part}");
        for ((x, y), z) in pa.iter().zip(pb).zip(pm) {
            assert_eq!(f(&z["ok"]), f(&x["ok"]) + f(&y["ok"]), "{part}");
            let h = sum_hist(&x["histogram"], &y["histogram"]);
            assert_eq!(
                decode_histogram(z["histogram"].as_str().unwrap()).unwrap(),
                h
            );
            assert_eq!(
                z["latency_us"]["p99"].as_u64().unwrap(),
                h.value_at_quantile(0.99)
            );
        }
    }
    // The stages' levels add up to the whole ramp: 200/s.
    let ends: Vec<f64> = m["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| f(&s["end"]))
        .collect();
    assert_eq!(ends, [200.0, 200.0]);
    // Second by second (here half second by half second): the same interval of each process added.
    let iv = |d: &Value| d["timeline"]["intervals"].as_array().unwrap().clone();
    let (ia, ib, im) = (iv(a), iv(b), iv(m));
    assert_eq!(im.len(), ia.len().max(ib.len()));
    for (k, z) in im.iter().enumerate() {
        let ok = |v: &[Value]| v.get(k).map_or(0.0, |i| f(&i["ok"]));
        assert_eq!(f(&z["ok"]), ok(&ia) + ok(&ib), "interval {k}");
    }
    let total: f64 = im.iter().map(|i| f(&i["ok"])).sum();
    assert_eq!(total, f(&m["counts"]["ok"]));
}
