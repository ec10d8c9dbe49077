//! Test fixtures: generates the results directories under `xtask/tests/fixtures/results/` and checks the committed ones match.
//!
//! The runs are synthetic but follow the results contract exactly (run.json, provenance.json,
//! steps/*.json with real V2-compressed HdrHistograms) and model a 2-core machine: a closed-loop
//! client sweep that saturates, repeats of it on two builds (for `compare`), an open-loop rate sweep
//! that overloads the server, and a chat run. Regenerate after changing this file with
//! `WSBENCH_WRITE_FIXTURES=1 cargo test -p xtask fixtures`.

use std::fs;
use std::path::{Path, PathBuf};

use bench_proto::results::{
    ChatParams, ChatResults, ChatRun, ClientStats, Counts, ErrorCounts, Mode, Params, ResultsDoc,
    SystemBlock, SystemSample, Tool,
};
use hdrhistogram::Histogram;
use serde_json::{json, Value};

pub fn root() -> PathBuf {
    wsbench_harness::paths::project_root().join("xtask/tests/fixtures/results")
}

/// A closed-loop client sweep (first of the A repeats).
pub(crate) fn sweep_a() -> PathBuf {
    root().join("cxf-client-sweep/20260301T100000Z")
}

/// The A repeats, comma-joined as `compare` takes them.
pub(crate) const SWEEP_A_ALL: [&str; 3] =
    ["20260301T100000Z", "20260301T110000Z", "20260301T120000Z"];
pub(crate) const SWEEP_B_ALL: [&str; 3] =
    ["20260302T100000Z", "20260302T110000Z", "20260302T120000Z"];

pub fn open_loop() -> PathBuf {
    root().join("cxf-rate-sweep/20260303T100000Z")
}

pub fn chat() -> PathBuf {
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
fn latency_histograms(
    rng: &mut Rng,
    count: u64,
    mean_us: f64,
    backlog_us: Option<f64>,
) -> (Histogram<u64>, Option<Histogram<u64>>) {
    let new = bench_proto::results::new_histogram;
    let (mut corrected, mut uncorrected) = (new(), new());
    let samples = count.clamp(1, 20_000);
    let weight = count / samples;
    let sigma: f64 = 0.35;
    for i in 0..samples {
        let mut v = mean_us * (sigma * rng.normal() - sigma * sigma / 2.0).exp();
        if rng.unit() < 0.005 {
            v *= 3.0 + 7.0 * rng.unit();
        }
        let w = if i == 0 {
            weight + count % samples
        } else {
            weight
        };
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

/// `provenance.json` as `cargo xtask run` writes it (`wsbench_harness::provenance::Provenance`).
fn provenance(
    scenario: &str,
    commit: &str,
    kernel: &str,
    started: &str,
    clients: &[(String, String)],
) -> Value {
    let client: serde_json::Map<String, Value> = clients
        .iter()
        .map(|(id, args)| {
            let mut argv = vec![
                "taskset".to_string(),
                "-c".into(),
                "1".into(),
                "target/release/bench-client".into(),
            ];
            argv.extend(args.split_whitespace().map(str::to_string));
            argv.extend([
                "--json".into(),
                format!("results/{scenario}/x/steps/{id}.json"),
            ]);
            (id.clone(), json!(argv))
        })
        .collect();
    json!({
        "schema": "wsbench.provenance/v1",
        "started_at": started,
        "finished_at": started.replace(":00:00Z", ":02:10Z"),
        "invocation": ["run", scenario, "--quick"],
        "scenario": { "name": scenario, "file": format!("scenarios/{scenario}.toml"),
                      "sha256": sha256(scenario), "quick": true, "sets": [] },
        "git": { "commit": commit, "dirty": false },
        "build": {
            "builder": "cargo", "profile": "release",
            "profile_settings": { "codegen-units": "1", "debug": "\"line-tables-only\"", "lto": "\"fat\"" },
            "target": "x86_64-unknown-linux-gnu", "rustc": "rustc 1.83.0 (90b35a623 2024-11-26)",
            "cargo": "cargo 1.83.0 (5ffbef321 2024-10-29)",
            "server_binary": "/work/wsbench/target/release/bench-server",
            "client_binary": "/work/wsbench/target/release/bench-client"
        },
        "host": { "hostname": "bench-1", "cpu_model": "Intel(R) Xeon(R) CPU @ 2.20GHz", "cpus_online": 2,
                  "cpus_allowed": [0, 1], "kernel": kernel, "memory_total_kb": 24634844 },
        "tunables": { "net.core.somaxconn": "4096", "net.ipv4.tcp_tw_reuse": "2",
                      "net.ipv4.ip_local_port_range": "32768\t60999", "net.ipv4.tcp_fin_timeout": "60" },
        "rlimit_nofile": { "before": { "soft": 1024, "hard": 1048576 }, "in_force": { "soft": 1048576, "hard": 1048576 } },
        "pinning": { "enabled": true, "reason": null, "server_cpus": [0], "client_cpus": [1], "tool": "taskset from util-linux 2.38.1" },
        "commands": {
            "server": [["taskset", "-c", "0", "/work/wsbench/target/release/bench-server", "--http", "127.0.0.1:0", "--workers", "1"]],
            "client": client
        }
    })
}

/// Per-second `/proc` samples for a step of `seconds` at the given load.
fn samples(rng: &mut Rng, seconds: u32, user: f64, sys: f64, rss_kb: f64) -> SystemBlock {
    let samples = (1..=seconds)
        .map(|t| {
            let u = rng.jitter(user, 0.06).min(99.0);
            let s = rng.jitter(sys, 0.06).min(99.0 - u);
            SystemSample {
                t_s: f64::from(t),
                user_pct: round1(u),
                sys_pct: round1(s),
                idle_pct: round1(100.0 - u - s),
                server_rss_kb: Some((rss_kb + f64::from(t) * 24.0).round() as u64),
                ..SystemSample::default()
            }
        })
        .collect();
    SystemBlock::from_samples(samples)
}

/// A stand-in for the scenario file's hash: distinct per scenario, stable.
fn sha256(scenario: &str) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(scenario.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
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

/// What one step measured, to turn into a results document.
struct Measured<'a> {
    elapsed: f64,
    ok: u64,
    errors: ErrorCounts,
    corrected: &'a Histogram<u64>,
    uncorrected: Option<&'a Histogram<u64>>,
    system: SystemBlock,
    /// Request and response body bytes.
    msg_bytes: (u64, u64),
    client_cpu: f64,
}

/// A results document as bench-client writes it.
fn results_doc(step: &StepSpec, started: &str, m: Measured<'_>) -> ResultsDoc {
    let mut warnings = vec![];
    if m.client_cpu > 0.9 {
        warnings.push(format!(
            "client CPU at {:.0}%: the client may be the bottleneck",
            m.client_cpu * 100.0
        ));
    }
    let mut doc = ResultsDoc {
        schema: bench_proto::results::SCHEMA.to_string(),
        partial: false,
        tool: Tool {
            name: "bench-client".into(),
            version: "0.1.0".into(),
        },
        label: Some(step.label.clone()),
        started_at: started.to_string(),
        mode: Mode::Soap,
        params: Params {
            url: "http://127.0.0.1:41233".into(),
            operation: step.operation.into(),
            clients: step.clients,
            threads: 1,
            rate: step.rate,
            duration_s: Some(10.0),
            requests: None,
            warmup_s: 2.0,
            think_time_s: 0.0,
            keepalive: true,
            packet_size: 1,
            message_size: None,
            timeout_s: 30.0,
            connect_timeout_s: 5.0,
            validate_first: 1,
            validate_every: 1000,
            chat: None,
            shape: Default::default(),
        },
        elapsed_s: m.elapsed,
        counts: Counts {
            ok: m.ok,
            errors_total: 0,
            errors: m.errors,
            validated: step.clients + m.ok / 1000,
            bytes_sent: m.ok * m.msg_bytes.0,
            bytes_received: m.ok * m.msg_bytes.1,
            ..Default::default()
        },
        throughput: Default::default(),
        latency_us: Default::default(),
        histograms: Default::default(),
        client: ClientStats {
            cpu_user_s: round1(m.client_cpu * m.elapsed * 0.4),
            cpu_sys_s: round1(m.client_cpu * m.elapsed * 0.6),
            cpu_utilisation: (m.client_cpu * 100.0).round() / 100.0,
            max_schedule_lag_us: step.rate.map(|_| 850),
        },
        system: Some(m.system),
        chat: None,
        warnings,
        shape: Default::default(),
    };
    doc.set_latency(m.corrected, m.uncorrected);
    doc.recompute_throughput();
    doc
}

/// A `run.json` step entry (`wsbench_harness::rundoc::StepEntry`).
fn step_entry(spec: &StepSpec, status: &str, workers: u32) -> Value {
    json!({ "id": spec.id, "label": spec.label, "name": null, "operation": spec.operation,
            "clients": spec.clients, "rate": spec.rate, "workers": workers, "keepalive": true,
            "duration_s": 10.0, "requests": null, "message_size": null,
            "result": format!("steps/{}.json", spec.id), "status": status,
            "client_exit": if status == "ok" { 0 } else { 1 }, "time_wait_before": 3, "time_wait_after": 5 })
}

/// `run.json` as `cargo xtask run` writes it (`wsbench_harness::rundoc::RunDoc`).
fn run_doc(
    scenario: &str,
    description: &str,
    seed: &str,
    started: &str,
    steps: Vec<Value>,
    published: Vec<Value>,
) -> Value {
    let status = if steps.iter().all(|s| s["status"] == "ok") {
        "ok"
    } else {
        "errors"
    };
    json!({
        "schema": "wsbench.run/v1", "scenario": scenario, "description": description,
        "reproduces": "a sweep from the seed's figures", "seed": seed,
        "scenario_sha256": sha256(scenario),
        "quick": true, "sets": [], "notes": ["Quick run: 10 s steps instead of the seed's 60 s."],
        "started_at": started, "finished_at": started.replace(":00:00Z", ":02:10Z"),
        "status": status, "problems": [], "steps": steps, "published": published
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
                    "label": "IBM client → Intel server, 60 s quick test",
                    "conditions": "x86_64 server, ppc64le client, Java 17, 60 s", "source": "000_9511573ff911d3e0.txt" })
        })
        .collect();
    v.push(json!({ "metric": "total_per_s", "value": 34853.39, "unit": "invocations/s", "clients": 100,
                   "label": "8 h run, 100 threads, G1 (348.53/s per client)",
                   "conditions": "x86_64 server and client, 112 GB heap", "source": "000_9511573ff911d3e0.txt" }));
    v.push(json!({ "metric": "mean_latency_ms", "value": 2.869, "unit": "ms", "clients": 100,
                   "label": "8 h run, 100 threads, G1", "conditions": "x86_64 server and client, 112 GB heap",
                   "source": "000_9511573ff911d3e0.txt" }));
    v
}

fn write_json<T: serde::Serialize>(path: &Path, v: &T) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, serde_json::to_string_pretty(v).unwrap() + "\n").unwrap();
}

fn client_args(spec: &StepSpec) -> (String, String) {
    let mut args = format!(
        "--url http://127.0.0.1:41233 --operation {} --clients {}",
        spec.operation, spec.clients
    );
    if let Some(r) = spec.rate {
        args.push_str(&format!(" --rate {r}"));
    }
    args.push_str(&format!(
        " --duration 10s --warmup 2s --label {} --monitor-pid 4242",
        spec.label
    ));
    (spec.id.clone(), args)
}

/// A closed-loop sweep on a 2-core machine: `capacity` calls/s at saturation, 0.25 ms unloaded.
fn write_sweep(dir: &Path, seed: u64, capacity: f64, commit: &str, kernel: &str, started: &str) {
    let mut rng = Rng(seed);
    let clients = [1u64, 2, 4, 8, 16, 32, 64, 128, 256];
    let (mut steps, mut argv) = (vec![], vec![]);
    for (i, &c) in clients.iter().enumerate() {
        let spec = StepSpec {
            id: format!("{:02}-clients-{c}", i + 1),
            label: format!("clients={c}"),
            clients: c,
            rate: None,
            operation: "echoComplexTypeDoc",
        };
        let unloaded = 4000.0 * c as f64;
        let t = rng.jitter(
            unloaded.min(capacity) * (1.0 - 0.02 * (c as f64).log2().max(0.0) / 8.0),
            0.015,
        );
        let elapsed = 10.0 + rng.unit() * 0.01;
        let ok = (t * elapsed) as u64;
        let h = latency_histogram(&mut rng, ok, c as f64 / t * 1e6);
        let load = (t / capacity).min(1.0);
        let m = Measured {
            elapsed,
            ok,
            errors: ErrorCounts::default(),
            corrected: &h,
            uncorrected: None,
            system: samples(
                &mut rng,
                10,
                8.0 + 30.0 * load,
                10.0 + 50.0 * load,
                9000.0 + 60.0 * c as f64,
            ),
            msg_bytes: (1830, 1968),
            client_cpu: 0.3 + 0.68 * load,
        };
        write_json(
            &dir.join(format!("steps/{}.json", spec.id)),
            &results_doc(&spec, started, m),
        );
        steps.push(step_entry(&spec, "ok", 1));
        argv.push(client_args(&spec));
    }
    let description = "CXF echoComplexTypeDoc, closed loop, client count swept 1…256 (the seed's quick-test table)";
    let run = run_doc(
        "cxf-client-sweep",
        description,
        "000_9511573ff911d3e0.txt",
        started,
        steps,
        cxf_published(),
    );
    write_json(&dir.join("run.json"), &run);
    write_json(
        &dir.join("provenance.json"),
        &provenance("cxf-client-sweep", commit, kernel, started, &argv),
    );
}

/// An open-loop rate sweep past saturation: queueing shows in corrected latency only.
fn write_rate_sweep(dir: &Path) {
    let mut rng = Rng(7);
    let capacity = 17_000.0;
    let started = "2026-03-03T10:00:00Z";
    let (mut steps, mut argv) = (vec![], vec![]);
    for (i, rate) in [2000.0, 6000.0, 10000.0, 14000.0, 16000.0, 18000.0, 22000.0]
        .into_iter()
        .enumerate()
    {
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
        // Overload: the backlog grows through the run, so the average wait behind it is half the final backlog.
        let backlog_us = if rate > capacity {
            (rate - capacity) / rate * elapsed * 1e6 / 2.0
        } else {
            service_us * 0.1
        };
        let (corrected, uncorrected) =
            latency_histograms(&mut rng, ok, service_us, Some(backlog_us));
        let m = Measured {
            elapsed,
            ok,
            errors: ErrorCounts {
                timeout: timeouts,
                ..Default::default()
            },
            corrected: &corrected,
            uncorrected: uncorrected.as_ref(),
            system: samples(&mut rng, 10, 8.0 + 30.0 * load, 10.0 + 50.0 * load, 15000.0),
            msg_bytes: (1830, 1968),
            client_cpu: 0.5,
        };
        write_json(
            &dir.join(format!("steps/{}.json", spec.id)),
            &results_doc(&spec, started, m),
        );
        steps.push(step_entry(
            &spec,
            if timeouts > 0 { "errors" } else { "ok" },
            1,
        ));
        argv.push(client_args(&spec));
    }
    let description = "CXF echoComplexTypeDoc, open loop, offered rate swept past saturation";
    let run = run_doc(
        "cxf-rate-sweep",
        description,
        "000_9511573ff911d3e0.txt",
        started,
        steps,
        vec![],
    );
    write_json(&dir.join("run.json"), &run);
    let commit = "1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c";
    write_json(
        &dir.join("provenance.json"),
        &provenance(
            "cxf-rate-sweep",
            commit,
            "Linux 6.1.0-28-amd64",
            started,
            &argv,
        ),
    );
}

/// VolanoMark-style chat runs: rooms of 20 users, score = messages delivered per second.
fn write_chat(dir: &Path) {
    let mut rng = Rng(11);
    let started = "2026-03-04T10:00:00Z";
    let (mut steps, mut argv) = (vec![], vec![]);
    for (i, rooms) in [1u64, 5, 10, 20].into_iter().enumerate() {
        let spec = StepSpec {
            id: format!("{:02}-rooms-{rooms}", i + 1),
            label: format!("rooms={rooms}"),
            clients: rooms * 20,
            rate: None,
            operation: "chat",
        };
        let score = rng.jitter(f64::min(45_000.0 * rooms as f64, 140_000.0), 0.02);
        let per_run_received = rooms * 20 * 100 * 20;
        let runs: Vec<ChatRun> = (1..=4)
            .map(|r| {
                let s = rng.jitter(if r == 1 { score * 0.8 } else { score }, 0.03);
                ChatRun {
                    run: r,
                    elapsed_s: per_run_received as f64 / s,
                    messages_sent: rooms * 20 * 100,
                    messages_received: per_run_received,
                    msg_per_s: round1(s),
                    ..ChatRun::default()
                }
            })
            .collect();
        let scored: Vec<&ChatRun> = runs.iter().filter(|r| r.run > 1).collect();
        let score = scored.iter().map(|r| r.msg_per_s).sum::<f64>() / scored.len() as f64;
        let elapsed: f64 = runs.iter().map(|r| r.elapsed_s).sum();
        let received = per_run_received * 4;
        let h = latency_histogram(&mut rng, received, 400.0 * rooms as f64);
        let load = (score / 140_000.0).min(1.0);
        let m = Measured {
            elapsed,
            ok: received,
            errors: ErrorCounts::default(),
            corrected: &h,
            uncorrected: None,
            system: samples(
                &mut rng,
                elapsed.ceil() as u32,
                20.0 + 15.0 * load,
                30.0 + 40.0 * load,
                7000.0 + 40.0 * (rooms * 20) as f64,
            ),
            msg_bytes: (60, 60),
            client_cpu: 0.6,
        };
        let mut doc = results_doc(&spec, started, m);
        doc.mode = Mode::Chat;
        doc.params.url = "127.0.0.1:40001".into();
        doc.params.chat = Some(ChatParams {
            rooms,
            users: 20,
            count: 100,
            pause_s: 0.0,
            runs: 4,
        });
        doc.chat = Some(ChatResults {
            score_msg_per_s: round1(score),
            messages_sent: rooms * 20 * 100 * 4,
            messages_received: received,
            runs,
            scored_runs: vec![2, 3, 4],
            ..ChatResults::default()
        });
        write_json(&dir.join(format!("steps/{}.json", spec.id)), &doc);
        steps.push(step_entry(&spec, "ok", 1));
        argv.push((
            spec.id.clone(),
            format!("chat --addr 127.0.0.1:40001 --rooms {rooms} --users 20 --count 100 --runs 4"),
        ));
    }
    let published = vec![
        json!({ "metric": "chat_score_msg_per_s", "value": 15052.0, "unit": "messages/s",
                "label": "2.4.1 kernel, 64 MB client heap", "conditions": "8 CPUs, IBM JVM 1.2.2",
                "source": "002_0f52f2cc9039c474.txt" }),
        json!({ "metric": "chat_score_msg_per_s", "value": 38700.0, "unit": "messages/s",
                "label": "2.4.1 + MQ scheduler, 64 MB client heap", "conditions": "8 CPUs, IBM JVM 1.2.2",
                "source": "002_0f52f2cc9039c474.txt" }),
    ];
    let description = "VolanoMark-style loopback chat, rooms of 20 users, rooms swept";
    let run = run_doc(
        "volano-chat",
        description,
        "002_0f52f2cc9039c474.txt",
        started,
        steps,
        published,
    );
    write_json(&dir.join("run.json"), &run);
    let commit = "1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c";
    write_json(
        &dir.join("provenance.json"),
        &provenance(
            "volano-chat",
            commit,
            "Linux 6.1.0-28-amd64",
            started,
            &argv,
        ),
    );
}

/// Writes every fixture under `root`.
pub fn generate(root: &Path) {
    let sweep = root.join("cxf-client-sweep");
    let a_commit = "1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c";
    let b_commit = "8a7b6c5d4e3f20118a7b6c5d4e3f20118a7b6c5d";
    for (i, stamp) in SWEEP_A_ALL.iter().enumerate() {
        let started = format!("2026-03-01T1{i}:00:00Z");
        write_sweep(
            &sweep.join(stamp),
            100 + i as u64,
            17_000.0,
            a_commit,
            "Linux 6.1.0-28-amd64",
            &started,
        );
    }
    for (i, stamp) in SWEEP_B_ALL.iter().enumerate() {
        let started = format!("2026-03-02T1{i}:00:00Z");
        write_sweep(
            &sweep.join(stamp),
            200 + i as u64,
            18_400.0,
            b_commit,
            "Linux 6.12.9-amd64",
            &started,
        );
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
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same(v, w, k)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w, key))
        }
        (Value::String(x), Value::String(y))
            if matches!(key, "corrected" | "uncorrected") && x != y =>
        {
            let dx = bench_proto::results::decode_histogram(x).unwrap();
            let dy = bench_proto::results::decode_histogram(y).unwrap();
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
        v.iter()
            .map(|p| p.strip_prefix(base).unwrap().to_path_buf())
            .collect()
    };
    // Reports written into the fixtures by other tests are not fixtures.
    let have: Vec<PathBuf> = rel(&have, &root())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(
        rel(&want, &tmp),
        have,
        "fixture files differ; regenerate with WSBENCH_WRITE_FIXTURES=1"
    );
    for p in &have {
        let a: Value = serde_json::from_str(&fs::read_to_string(tmp.join(p)).unwrap()).unwrap();
        let b: Value = serde_json::from_str(&fs::read_to_string(root().join(p)).unwrap()).unwrap();
        assert!(
            same(&a, &b, ""),
            "{} differs from its generator; regenerate with WSBENCH_WRITE_FIXTURES=1",
            p.display()
        );
    }
    fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn fixture_summaries_agree_with_their_histograms() {
    let run = wsbench_harness::results::Run::load(&sweep_a()).unwrap();
    for s in &run.steps {
        let doc = s.doc.as_ref().unwrap();
        let (h, _) = s.histograms().unwrap();
        let h = h.unwrap();
        let l = s.latency().unwrap();
        assert_eq!(h.len(), doc.counts.ok);
        assert_eq!(h.value_at_quantile(0.99), l.p99);
        assert_eq!(h.max(), l.max);
    }
}

#[test]
fn fixtures_follow_the_xtask_run_and_provenance_types() {
    for scenario in ["cxf-client-sweep", "cxf-rate-sweep", "volano-chat"] {
        for dir in wsbench_harness::results::run_dirs(&root().join(scenario)).unwrap() {
            let read = |f: &str| fs::read_to_string(dir.join(f)).unwrap();
            let run: wsbench_harness::rundoc::RunDoc =
                serde_json::from_str(&read("run.json")).unwrap();
            let _: wsbench_harness::provenance::Provenance =
                serde_json::from_str(&read("provenance.json")).unwrap();
            for step in &run.steps {
                let doc: ResultsDoc = serde_json::from_str(&read(&step.result)).unwrap();
                assert_eq!(doc.schema, bench_proto::results::SCHEMA);
            }
        }
    }
}
