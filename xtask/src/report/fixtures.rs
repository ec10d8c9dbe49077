//! Test fixtures: generates the results directories under `xtask/tests/fixtures/results/` and checks the committed ones match.
//!
//! The runs are synthetic but follow the results contract exactly (run.json, provenance.json,
//! steps/*.json with real V2-compressed HdrHistograms) and model a 2-core machine: a closed-loop
//! client sweep that saturates, repeats of it on two builds (for `compare`), an open-loop rate sweep
//! that overloads the server, and a chat run. Regenerate after changing this file with
//! `WSBENCH_WRITE_FIXTURES=1 cargo test -p xtask fixtures`.

use std::fs;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde_json::{json, Value};

pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results")
}

/// A closed-loop client sweep (first of the A repeats).
pub(crate) fn sweep_a() -> PathBuf {
    root().join("cxf-client-sweep/20260301T100000Z")
}

/// The A repeats, comma-joined as `compare` takes them.
pub(crate) const SWEEP_A_ALL: [&str; 3] = ["20260301T100000Z", "20260301T110000Z", "20260301T120000Z"];
pub(crate) const SWEEP_B_ALL: [&str; 3] = ["20260302T100000Z", "20260302T110000Z", "20260302T120000Z"];

pub(crate) fn open_loop() -> PathBuf {
    root().join("cxf-rate-sweep/20260303T100000Z")
}

pub(crate) fn chat() -> PathBuf {
    root().join("volano-chat/20260304T100000Z")
}

/// splitmix64: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let u1 = self.unit().max(1e-12);
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
    /// `x` times a factor in `1 ± spread`.
    fn jitter(&mut self, x: f64, spread: f64) -> f64 {
        x * (1.0 + spread * (2.0 * self.unit() - 1.0))
    }
}

/// A latency histogram (µs) of `count` calls with the given mean: log-normal body plus a 0.5 % tail.
fn latency_histogram(rng: &mut Rng, count: u64, mean_us: f64) -> Histogram<u64> {
    latency_histograms(rng, count, mean_us, None).0
}

/// As [`latency_histogram`]; with `Some(backlog_us)` the first histogram is the corrected one (each
/// call also waited behind a backlog averaging `backlog_us`) and the second the uncorrected one.
fn latency_histograms(rng: &mut Rng, count: u64, mean_us: f64, backlog_us: Option<f64>) -> (Histogram<u64>, Option<Histogram<u64>>) {
    let new = || Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
    let (mut corrected, mut uncorrected) = (new(), new());
    let samples = count.clamp(1, 20_000);
    let weight = count / samples;
    let sigma: f64 = 0.35;
    for i in 0..samples {
        let mut v = mean_us * (sigma * rng.normal() - sigma * sigma / 2.0).exp();
        if rng.unit() < 0.005 {
            v *= 3.0 + 7.0 * rng.unit();
        }
        let w = if i == 0 { weight + count % samples } else { weight };
        let v = (v.round() as u64).max(1);
        match backlog_us {
            None => corrected.record_n(v, w).unwrap(),
            Some(b) => {
                uncorrected.record_n(v, w).unwrap();
                let waited = v as f64 * 1.05 + 2.0 * b * rng.unit();
                corrected.record_n(waited.round() as u64, w).unwrap();
            }
        }
    }
    (corrected, backlog_us.map(|_| uncorrected))
}

fn encode(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut buf).unwrap();
    base64::engine::general_purpose::STANDARD.encode(buf)
}

fn summary(h: &Histogram<u64>) -> Value {
    let q = |p: f64| h.value_at_quantile(p);
    json!({
        "count": h.len(), "min": h.min(), "mean": (h.mean() * 10.0).round() / 10.0,
        "stdev": (h.stdev() * 10.0).round() / 10.0, "max": h.max(),
        "p50": q(0.50), "p75": q(0.75), "p90": q(0.90), "p99": q(0.99), "p99_9": q(0.999), "p99_99": q(0.9999)
    })
}

fn provenance(commit: &str, kernel: &str, started: &str) -> Value {
    json!({
        "started_at": started,
        "git": { "commit": commit, "dirty": false, "describe": format!("v0.1.0-3-g{}", &commit[..7]) },
        "rustc": "rustc 1.83.0 (90b35a623 2024-11-26)",
        "profile": "release",
        "target": "x86_64-unknown-linux-gnu",
        "cpu": { "model": "Intel(R) Xeon(R) CPU @ 2.20GHz", "logical_cpus": 2, "mhz": 2200.0 },
        "memory_kb": 25165824,
        "kernel": kernel,
        "os": "Debian GNU/Linux 12 (bookworm)",
        "hostname": "bench-1",
        "tunables": { "net.core.somaxconn": "4096", "net.ipv4.tcp_tw_reuse": "2", "net.ipv4.ip_local_port_range": "32768\t60999" },
        "rlimits": { "nofile": "1048576" },
        "pinning": { "server": null, "client": null },
        "commands": [
            "target/release/bench-server --http 127.0.0.1:0 --workers 2",
            "target/release/bench-client --url http://127.0.0.1:41233 --operation echoComplexTypeDoc --clients N --duration 10s --warmup 2s --json steps/NN.json --monitor-pid 4242"
        ]
    })
}

/// Per-second `/proc` samples for a step of `seconds` at the given load.
fn samples(rng: &mut Rng, seconds: u32, user: f64, sys: f64, rss_kb: f64) -> Value {
    let samples: Vec<Value> = (1..=seconds)
        .map(|t| {
            let u = rng.jitter(user, 0.06).min(99.0);
            let s = rng.jitter(sys, 0.06).min(99.0 - u);
            json!({ "t_s": f64::from(t), "user_pct": round1(u), "sys_pct": round1(s), "idle_pct": round1(100.0 - u - s),
                    "server_rss_kb": (rss_kb + f64::from(t) * 24.0).round() as u64 })
        })
        .collect();
    let n = samples.len() as f64;
    let mean = |k: &str| round1(samples.iter().map(|s| s[k].as_f64().unwrap()).sum::<f64>() / n);
    let rss_max = samples.iter().map(|s| s["server_rss_kb"].as_u64().unwrap()).max();
    json!({ "samples": samples, "mean": { "user_pct": mean("user_pct"), "sys_pct": mean("sys_pct"),
            "idle_pct": mean("idle_pct"), "server_rss_kb_max": rss_max } })
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

struct StepSpec {
    id: String,
    label: String,
    clients: u64,
    rate: Option<f64>,
    operation: &'static str,
}

#[allow(clippy::too_many_arguments)]
fn results_doc(
    step: &StepSpec,
    started: &str,
    elapsed: f64,
    ok: u64,
    errors: &[(&str, u64)],
    corrected: &Histogram<u64>,
    uncorrected: Option<&Histogram<u64>>,
    system: Value,
    msg_bytes: (u64, u64),
    client_cpu: f64,
) -> Value {
    let mut err = json!({ "connect": 0, "timeout": 0, "http_status": 0, "fault": 0, "validation": 0, "io": 0 });
    for (k, n) in errors {
        err[*k] = json!(n);
    }
    let errors_total: u64 = errors.iter().map(|e| e.1).sum();
    let (sent, received) = (ok * msg_bytes.0, ok * msg_bytes.1);
    let total = ok as f64 / elapsed;
    let mut warnings = vec![];
    if client_cpu > 0.9 {
        warnings.push(format!("client CPU at {:.0}%: the client may be the bottleneck", client_cpu * 100.0));
    }
    json!({
        "schema": "wsbench.results/v1",
        "partial": false,
        "tool": { "name": "bench-client", "version": "0.1.0" },
        "label": step.label,
        "started_at": started,
        "mode": "soap",
        "params": {
            "url": "http://127.0.0.1:41233", "operation": step.operation, "clients": step.clients, "threads": 2,
            "rate": step.rate, "duration_s": 10.0, "requests": null, "warmup_s": 2.0, "think_time_s": 0.0,
            "keepalive": true, "packet_size": 1, "message_size": null, "timeout_s": 30.0, "connect_timeout_s": 5.0,
            "chat": null
        },
        "elapsed_s": elapsed,
        "counts": { "ok": ok, "errors_total": errors_total, "errors": err, "validated": ok.min(100),
                    "bytes_sent": sent, "bytes_received": received },
        "throughput": {
            "total_per_s": round1(total), "per_client_per_s": round1(total / step.clients as f64),
            "sent_mb_per_s": (sent as f64 / elapsed / 1e4).round() / 100.0,
            "received_mb_per_s": (received as f64 / elapsed / 1e4).round() / 100.0
        },
        "latency_us": { "corrected": summary(corrected), "uncorrected": uncorrected.map(summary) },
        "histograms": { "corrected": encode(corrected), "uncorrected": uncorrected.map(encode) },
        "client": { "cpu_user_s": round1(client_cpu * elapsed * 0.4), "cpu_sys_s": round1(client_cpu * elapsed * 0.6),
                    "cpu_utilisation": (client_cpu * 100.0).round() / 100.0, "max_schedule_lag_us": null },
        "system": system,
        "chat": null,
        "warnings": warnings
    })
}

const PUBLISHED_CXF: [(u64, f64); 10] = [
    (1, 803.82),
    (8, 1366.39),
    (16, 1033.03),
    (32, 548.34),
    (64, 275.75),
    (100, 179.31),
    (128, 142.45),
    (256, 70.24),
    (512, 36.75),
    (1024, 20.03),
];

fn cxf_published() -> Vec<Value> {
    let mut v: Vec<Value> = PUBLISHED_CXF
        .iter()
        .map(|&(c, x)| {
            json!({ "metric": "per_client_per_s", "value": x, "unit": "invocations/s", "clients": c,
                    "label": "IBM client → Intel server, 60 s quick test", "source": "000_9511573ff911d3e0.txt" })
        })
        .collect();
    v.push(json!({ "metric": "total_per_s", "value": 34853.39, "unit": "invocations/s", "clients": 100,
                   "label": "8 h run, 100 threads, G1 (348.53/s per client)", "source": "000_9511573ff911d3e0.txt" }));
    v.push(json!({ "metric": "mean_latency_ms", "value": 2.869, "unit": "ms", "clients": 100,
                   "label": "8 h run, 100 threads, G1", "source": "000_9511573ff911d3e0.txt" }));
    v
}

fn write_json(path: &Path, v: &Value) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, serde_json::to_string_pretty(v).unwrap() + "\n").unwrap();
}

/// A closed-loop sweep of a 2-core server: `capacity` calls/s at saturation, 0.25 ms unloaded.
fn write_sweep(dir: &Path, seed: u64, capacity: f64, commit: &str, kernel: &str, started: &str) {
    let mut rng = Rng(seed);
    let clients = [1u64, 2, 4, 8, 16, 32, 64, 128, 256];
    let mut steps = vec![];
    for (i, &c) in clients.iter().enumerate() {
        let spec = StepSpec {
            id: format!("{:02}-clients-{c}", i + 1),
            label: format!("clients={c}"),
            clients: c,
            rate: None,
            operation: "echoComplexTypeDoc",
        };
        let unloaded = 4000.0 * c as f64;
        let t = rng.jitter(unloaded.min(capacity) * (1.0 - 0.02 * (c as f64).log2().max(0.0) / 8.0), 0.015);
        let elapsed = 10.0 + rng.unit() * 0.01;
        let ok = (t * elapsed) as u64;
        let mean_us = c as f64 / t * 1e6;
        let h = latency_histogram(&mut rng, ok, mean_us);
        let load = (t / capacity).min(1.0);
        let system = samples(&mut rng, 12, 8.0 + 30.0 * load, 10.0 + 50.0 * load, 9000.0 + 60.0 * c as f64);
        let client_cpu = 0.3 + 0.68 * load;
        let doc = results_doc(&spec, started, elapsed, ok, &[], &h, None, system, (1830, 1968), client_cpu);
        write_json(&dir.join(format!("steps/{}.json", spec.id)), &doc);
        steps.push(json!({ "id": spec.id, "label": spec.label, "clients": c, "rate": null, "workers": null,
                           "operation": spec.operation, "result": format!("steps/{}.json", spec.id) }));
    }
    let run = json!({
        "scenario": "cxf-client-sweep",
        "description": "CXF echoComplexTypeDoc, closed loop, client count swept 1…256 (seed 000, quick-test table)",
        "seed": 42, "scenario_sha256": "5f0c3b8e9d2a41c7b6e8f90a1d2c3b4a5e6f708192a3b4c5d6e7f8091a2b3c4d",
        "quick": true, "steps": steps, "published": cxf_published()
    });
    write_json(&dir.join("run.json"), &run);
    write_json(&dir.join("provenance.json"), &provenance(commit, kernel, started));
}

/// An open-loop rate sweep past saturation: queueing shows in corrected latency only.
fn write_rate_sweep(dir: &Path) {
    let mut rng = Rng(7);
    let capacity = 17_000.0;
    let started = "2026-03-03T10:00:00Z";
    let mut steps = vec![];
    for (i, rate) in [2000.0, 6000.0, 10000.0, 14000.0, 16000.0, 18000.0, 22000.0].into_iter().enumerate() {
        let spec = StepSpec {
            id: format!("{:02}-rate-{rate}", i + 1),
            label: format!("rate={rate}/s"),
            clients: 64,
            rate: Some(rate),
            operation: "echoComplexTypeDoc",
        };
        let achieved = rng.jitter(f64::min(rate, capacity), 0.01);
        let elapsed = 10.0;
        let load = achieved / capacity;
        let service_us = 250.0 / (1.0 - 0.9 * load);
        let timeouts = if rate > capacity * 1.2 { 37 } else { 0 };
        let ok = (achieved * elapsed) as u64 - timeouts;
        // Overload: the backlog grows through the run, so the average intended-to-done wait is half the final backlog.
        let backlog_us = if rate > capacity { (rate - capacity) / rate * elapsed * 1e6 / 2.0 } else { service_us * 0.1 };
        let (corrected, uncorrected) = latency_histograms(&mut rng, ok, service_us, Some(backlog_us));
        let uncorrected = uncorrected.unwrap();
        let system = samples(&mut rng, 12, 8.0 + 30.0 * load, 10.0 + 50.0 * load, 15000.0);
        let errors = [("timeout", timeouts)];
        let doc = results_doc(&spec, started, elapsed, ok, &errors, &corrected, Some(&uncorrected), system, (1830, 1968), 0.5);
        write_json(&dir.join(format!("steps/{}.json", spec.id)), &doc);
        steps.push(json!({ "id": spec.id, "label": spec.label, "clients": 64, "rate": rate, "workers": null,
                           "operation": spec.operation, "result": format!("steps/{}.json", spec.id) }));
    }
    let run = json!({
        "scenario": "cxf-rate-sweep", "description": "CXF echoComplexTypeDoc, open loop, offered rate swept past saturation",
        "seed": 42, "scenario_sha256": "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9",
        "quick": true, "steps": steps, "published": []
    });
    write_json(&dir.join("run.json"), &run);
    write_json(&dir.join("provenance.json"), &provenance("1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c", "Linux 6.1.0-28-amd64", started));
}

/// VolanoMark-style chat runs: rooms of 20 users, score = messages delivered per second.
fn write_chat(dir: &Path) {
    let mut rng = Rng(11);
    let started = "2026-03-04T10:00:00Z";
    let mut steps = vec![];
    for (i, rooms) in [1u64, 5, 10, 20].into_iter().enumerate() {
        let users = rooms * 20;
        let id = format!("{:02}-rooms-{rooms}", i + 1);
        let score = rng.jitter(f64::min(45_000.0 * rooms as f64, 140_000.0), 0.02);
        let runs: Vec<Value> = (0..4)
            .map(|r| {
                let s = rng.jitter(if r == 0 { score * 0.8 } else { score }, 0.03);
                json!({ "run": r, "elapsed_s": 2.0, "messages_sent": rooms * 20 * 100, "messages_received": rooms * 20 * 100 * 20,
                        "score_msg_per_s": round1(s) })
            })
            .collect();
        let received: u64 = rooms * 20 * 100 * 20 * 4;
        let elapsed = received as f64 / score;
        let h = latency_histogram(&mut rng, received, 400.0 * rooms as f64);
        let load = (score / 140_000.0).min(1.0);
        let mut doc = results_doc(
            &StepSpec { id: id.clone(), label: format!("rooms={rooms}"), clients: users, rate: None, operation: "chat" },
            started,
            elapsed,
            received,
            &[],
            &h,
            None,
            samples(&mut rng, elapsed.ceil() as u32 + 1, 20.0 + 15.0 * load, 30.0 + 40.0 * load, 7000.0 + 40.0 * users as f64),
            (60, 60),
            0.6,
        );
        doc["mode"] = json!("chat");
        doc["params"]["operation"] = Value::Null;
        doc["params"]["url"] = Value::Null;
        doc["params"]["chat"] = json!({ "rooms": rooms, "users": 20, "count": 100, "pause_s": 0.0, "runs": 4 });
        doc["chat"] = json!({ "score_msg_per_s": round1(score), "messages_sent": rooms * 20 * 100 * 4,
                              "messages_received": received, "runs": runs, "scored_runs": [1, 2, 3] });
        write_json(&dir.join(format!("steps/{id}.json")), &doc);
        steps.push(json!({ "id": id, "label": format!("rooms={rooms}"), "clients": users, "rate": null, "workers": null,
                           "operation": "chat", "result": format!("steps/{id}.json") }));
    }
    let run = json!({
        "scenario": "volano-chat", "description": "VolanoMark-style loopback chat, rooms of 20 users, rooms swept",
        "seed": 42, "scenario_sha256": "99887766554433221100ffeeddccbbaa99887766554433221100ffeeddccbbaa",
        "quick": true, "steps": steps,
        "published": [
            { "metric": "chat_score_msg_per_s", "value": 15052.0, "unit": "messages/s", "clients": null,
              "label": "2.4.1 kernel, 64 MB client heap, 8 CPUs", "source": "002_0f52f2cc9039c474.txt" },
            { "metric": "chat_score_msg_per_s", "value": 38700.0, "unit": "messages/s", "clients": null,
              "label": "2.4.1 + MQ scheduler, 64 MB client heap, 8 CPUs", "source": "002_0f52f2cc9039c474.txt" }
        ]
    });
    write_json(&dir.join("run.json"), &run);
    write_json(&dir.join("provenance.json"), &provenance("1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c", "Linux 6.1.0-28-amd64", started));
}

/// Writes every fixture under `root`.
pub(crate) fn generate(root: &Path) {
    let sweep = root.join("cxf-client-sweep");
    let a_commit = "1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c";
    let b_commit = "8a7b6c5d4e3f20118a7b6c5d4e3f20118a7b6c5d";
    for (i, stamp) in SWEEP_A_ALL.iter().enumerate() {
        let started = format!("2026-03-01T1{i}:00:00Z");
        write_sweep(&sweep.join(stamp), 100 + i as u64, 17_000.0, a_commit, "Linux 6.1.0-28-amd64", &started);
    }
    for (i, stamp) in SWEEP_B_ALL.iter().enumerate() {
        let started = format!("2026-03-02T1{i}:00:00Z");
        write_sweep(&sweep.join(stamp), 200 + i as u64, 18_400.0, b_commit, "Linux 6.12.9-amd64", &started);
    }
    write_rate_sweep(&root.join("cxf-rate-sweep/20260303T100000Z"));
    write_chat(&root.join("volano-chat/20260304T100000Z"));
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// JSON equal, except histogram strings, which must decode to equal histograms.
fn same(a: &Value, b: &Value, key: &str) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w, k)))
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w, key)),
        (Value::String(x), Value::String(y)) if matches!(key, "corrected" | "uncorrected") => {
            let dx = super::load::decode_histogram(x).unwrap();
            let dy = super::load::decode_histogram(y).unwrap();
            dx == dy
        }
        _ => a == b,
    }
}

#[test]
fn fixtures_match_their_generator() {
    let tmp = std::env::temp_dir().join(format!("wsbench-fixtures-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    generate(&tmp);
    if std::env::var_os("WSBENCH_WRITE_FIXTURES").is_some() {
        let _ = fs::remove_dir_all(root());
        generate(&root());
    }
    let want = files(&tmp);
    let have = files(&root());
    let rel = |v: &[PathBuf], base: &Path| -> Vec<PathBuf> {
        v.iter().map(|p| p.strip_prefix(base).unwrap().to_path_buf()).collect()
    };
    // Reports written into the fixtures by other tests are not fixtures.
    let have: Vec<PathBuf> = rel(&have, &root())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(rel(&want, &tmp), have, "fixture files differ; regenerate with WSBENCH_WRITE_FIXTURES=1");
    for p in &have {
        let a: Value = serde_json::from_str(&fs::read_to_string(tmp.join(p)).unwrap()).unwrap();
        let b: Value = serde_json::from_str(&fs::read_to_string(root().join(p)).unwrap()).unwrap();
        assert!(same(&a, &b, ""), "{} differs from its generator; regenerate with WSBENCH_WRITE_FIXTURES=1", p.display());
    }
    fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn fixture_summaries_agree_with_their_histograms() {
    let run = super::load::Run::load(&sweep_a()).unwrap();
    for s in &run.steps {
        let doc = s.doc.as_ref().unwrap();
        let (h, _) = s.histograms().unwrap();
        let h = h.unwrap();
        let l = s.latency().unwrap();
        assert_eq!(h.len(), doc.counts.ok);
        assert_eq!(h.value_at_quantile(0.99) as f64, l.p99);
        assert_eq!(h.max() as f64, l.max);
    }
}
