//! Servers side by side (`--sut a,b,…`, `--target`): for every step, one row per server measured —
//! throughput, p50 and p99, the server's CPU per call and its RSS — each the median of the step's rounds, and
//! a flag where a server's per-second throughput was still rising through the measured interval (a JVM
//! still compiling), for summary.md and report.html alike.

use wsbench_harness::numbers::num;
use wsbench_harness::provenance::SutRecord;
use wsbench_harness::results::{self, Step};
use wsbench_harness::stats::Estimate;

/// Rising by more than this from the first third of the measured interval to the last is flagged.
const RISING: f64 = 0.20;

/// One server's figures for one step (the medians of its rounds).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cell {
    pub sut: String,
    pub per_s: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    /// Server CPU time (user + system) per successful call, µs; None: not sampled.
    pub cpu_us_per_call: Option<f64>,
    pub rss_mb: Option<f64>,
    /// The rise of per-second throughput, first third → last third of the measured interval, when above
    /// 20 % in any round.
    pub rising: Option<f64>,
}

/// Every step (its id without server and round) and its servers' cells, in order of first appearance;
/// empty when the run measured no named server.
pub fn table(run: &results::Run) -> Vec<(String, Vec<Cell>)> {
    let mut out: Vec<(String, Vec<Cell>)> = Vec::new();
    for (group, idx) in run.groups() {
        let Some(sut) = run.steps[idx[0]].meta.sut.clone() else {
            continue;
        };
        let step = group
            .strip_suffix(&format!("-{sut}"))
            .unwrap_or(&group)
            .to_owned();
        let steps: Vec<&Step> = idx.iter().map(|&i| &run.steps[i]).collect();
        let cell = cell(&sut, &steps);
        match out.iter_mut().find(|(s, _)| *s == step) {
            Some((_, cells)) => cells.push(cell),
            None => out.push((step, vec![cell])),
        }
    }
    out
}

fn cell(sut: &str, steps: &[&Step]) -> Cell {
    let median = |f: &dyn Fn(&Step) -> Option<f64>| {
        let v: Vec<f64> = steps.iter().filter_map(|s| f(s)).collect();
        Estimate::of(&v).map(|e| e.median)
    };
    let lat = |s: &Step, p: fn(&bench_proto::results::LatencySummary) -> u64| {
        let d = s.doc.as_ref().ok()?;
        let l = &d.latency_us.corrected;
        (l.count > 0).then(|| p(l) as f64 / 1000.0)
    };
    Cell {
        sut: sut.to_owned(),
        per_s: median(&|s| s.doc.as_ref().ok().map(|d| d.throughput.total_per_s)),
        p50_ms: median(&|s| lat(s, |l| l.p50)),
        p99_ms: median(&|s| lat(s, |l| l.p99)),
        cpu_us_per_call: median(&|s| {
            let d = s.doc.as_ref().ok()?;
            let cpu = s.record.as_ref()?.monitored_process.as_ref()?;
            (d.counts.ok > 0).then(|| (cpu.cpu_user_s + cpu.cpu_sys_s) * 1e6 / d.counts.ok as f64)
        }),
        rss_mb: median(&|s| {
            let kb = s
                .doc
                .as_ref()
                .ok()?
                .system
                .as_ref()?
                .mean
                .server_rss_kb_max?;
            Some(kb as f64 / 1024.0)
        }),
        rising: steps
            .iter()
            .filter_map(|s| rise(s))
            .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))))
            .filter(|r| *r > RISING),
    }
}

/// The relative rise of the ok calls per second from the first third of the step's timeline to its last
/// third (None with fewer than three full intervals).
pub fn rise(step: &Step) -> Option<f64> {
    let t = step.record.as_ref()?.timeline.as_ref()?;
    let full: Vec<f64> = t
        .intervals
        .iter()
        .filter(|i| i.dur_s >= t.interval_s * 0.99 && i.dur_s > 0.0)
        .map(|i| i.ok as f64 / i.dur_s)
        .collect();
    if full.len() < 3 {
        return None;
    }
    let third = full.len() / 3;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let first = mean(&full[..third]);
    let last = mean(&full[full.len() - third..]);
    (first > 0.0).then(|| last / first - 1.0)
}

/// What the server said of itself in its `Server` header, plainly also when it sent none; None when it was
/// not reached or the GET that asks failed (its note says why).
pub fn server_header(r: &SutRecord) -> Option<String> {
    match (&r.server_header, &r.url) {
        (Some(h), _) => Some(format!("Server: `{h}`")),
        (None, Some(url))
            if url.starts_with("http")
                && !r.notes.iter().any(|n| n.starts_with(&format!("GET {url}"))) =>
        {
            Some("Server header: none sent".to_owned())
        }
        _ => None,
    }
}

/// One server's identity, as provenance.json records it, in a sentence.
pub fn identity(r: &SutRecord) -> String {
    let mut parts = vec![format!(
        "**{}** at {}",
        r.name,
        r.url.as_deref().unwrap_or("(not reached)")
    )];
    parts.push(if r.started_by_wsbench {
        "started by wsbench".to_owned()
    } else {
        "not started by wsbench".to_owned()
    });
    if let Some(h) = server_header(r) {
        parts.push(h);
    }
    for (path, sha) in &r.wsdl_sha256 {
        parts.push(format!(
            "WSDL {path}?wsdl SHA-256 {}…",
            &sha[..sha.len().min(16)]
        ));
    }
    if !r.started_by_wsbench {
        parts.push(match r.sampled_pid {
            Some(pid) => format!("CPU and RSS sampled from process {pid}"),
            None => "its CPU and RSS were not sampled".to_owned(),
        });
    }
    if let Some(b) = &r.build {
        parts.push(format!("built in `{b}`"));
    }
    parts.join("; ") + "."
}

/// summary.md's section (empty when the run named no server).
pub fn lines(run: &results::Run) -> Vec<String> {
    let table = table(run);
    if table.is_empty() {
        return Vec::new();
    }
    let dash = || "–".to_owned();
    let mut o = vec![
        "\n## Servers side by side\n".to_owned(),
        "| step | server | req/s | p50 ms | p99 ms | server CPU per call | server RSS | |"
            .to_owned(),
        "|---|---|---|---|---|---|---|---|".to_owned(),
    ];
    for (step, cells) in &table {
        for c in cells {
            let flag = c.rising.map_or(String::new(), |r| {
                format!(
                    "⚠ still rising: +{} % from the first third of the measured interval to the last",
                    num(r * 100.0)
                )
            });
            o.push(format!(
                "| {step} | {} | {} | {} | {} | {} | {} | {flag} |",
                c.sut,
                c.per_s.map_or_else(dash, num),
                c.p50_ms.map_or_else(dash, num),
                c.p99_ms.map_or_else(dash, num),
                c.cpu_us_per_call
                    .map_or("not sampled".to_owned(), |v| format!("{} µs", num(v))),
                c.rss_mb
                    .map_or("not sampled".to_owned(), |v| format!("{} MB", num(v))),
            ));
        }
    }
    o.push(format!(
        "\nEach server ran the same steps with the same pinning, one after the other{}; req/s counts only \
         answers that passed bench-client's checks. Server CPU per call is the server process's user + system \
         CPU time over the measured interval divided by its successful calls; RSS the most seen. Wall-clock \
         figures on a shared machine are noisy (5 % and more).",
        if run.manifest.repeat.is_some() {
            ", rounds interleaved (figures: medians of the rounds)"
        } else {
            ""
        }
    ));
    o
}

#[cfg(test)]
mod identity_tests {
    use super::*;

    fn record(header: Option<&str>, notes: &[&str]) -> SutRecord {
        SutRecord {
            name: "bench-server".into(),
            started_by_wsbench: true,
            url: Some("http://127.0.0.1:1".into()),
            server_header: header.map(String::from),
            wsdl_sha256: Default::default(),
            sampled_pid: None,
            build: None,
            notes: notes.iter().map(|n| n.to_string()).collect(),
        }
    }

    #[test]
    fn the_server_header_is_named_or_said_absent() {
        let said = identity(&record(Some("gSOAP/2.8"), &[]));
        assert!(said.contains("Server: `gSOAP/2.8`"), "{said}");
        let none = identity(&record(None, &[]));
        assert!(none.contains("Server header: none sent"), "{none}");
        let failed = identity(&record(None, &["GET http://127.0.0.1:1: refused"]));
        assert!(!failed.contains("Server header"), "{failed}");
    }
}
