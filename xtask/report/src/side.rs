//! Servers side by side (`--sut a,b,…`, `--target`): for every step, one row per server measured —
//! throughput, p50 and p99, the server's CPU per call and its RSS — each the median of the step's rounds, and
//! a flag where a server's per-second throughput was still rising through the measured interval (a JVM
//! still compiling), for summary.md and report.html alike.

use bench_proto::numbers::num;
use wsbench_harness::provenance::SutRecord;
use wsbench_harness::results::{self, Step};
use wsbench_harness::rundoc::Status;
use wsbench_harness::stats::Estimate;

/// Rising by more than this from the first third of the measured interval to the last is flagged.
const RISING: f64 = 0.20;

/// One server's figures for one step (the medians of its rounds).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cell {
    pub sut: String,
    /// A peer's configuration as tables name it (`events`, `Metro 4.0.5`), from provenance.json; None for
    /// bench-server and external servers.
    pub config: Option<String>,
    /// The warm-up the step gave it, s (the median of its rounds), and what its peer.toml says it needs.
    pub warmup_s: Option<f64>,
    pub warmup_needed_s: Option<f64>,
    pub per_s: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    /// Server CPU time (user + system) per successful call, µs; None: not sampled.
    pub cpu_us_per_call: Option<f64>,
    pub rss_mib: Option<f64>,
    /// The rise of per-second throughput, first third → last third of the measured interval, when above
    /// 20 % in any round.
    pub rising: Option<f64>,
    /// Rounds whose step failed (left out of the figures, which come from the others), of `rounds`.
    pub failed: usize,
    pub rounds: usize,
}

impl Cell {
    /// The row's flags in words: rounds that failed, throughput still rising.
    pub fn flags(&self) -> String {
        let mut out = Vec::new();
        if self.failed > 0 {
            out.push(if self.failed == self.rounds {
                "⚠ the step failed: no figures (its notes say why)".to_owned()
            } else {
                format!(
                    "⚠ {} of {} rounds failed: figures from the others",
                    self.failed, self.rounds
                )
            });
        }
        if let Some(r) = self.rising {
            out.push(format!(
                "⚠ still rising: +{} % from the first third of the measured interval to the last",
                num(r * 100.0)
            ));
        }
        out.join(" ")
    }
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
        let mut cell = cell(&sut, &steps);
        if let Some(r) = run
            .provenance
            .iter()
            .flat_map(|p| &p.sut)
            .find(|r| r.name == sut)
        {
            // Its title where peer.toml gives one (`Metro 4.0.5`, not the `--sut jaxws-4` suffix `4`).
            cell.config = r.config_title.clone().or_else(|| r.config_name.clone());
            cell.warmup_needed_s = r.warmup_needed_s;
        }
        match out.iter_mut().find(|(s, _)| *s == step) {
            Some((_, cells)) => cells.push(cell),
            None => out.push((step, vec![cell])),
        }
    }
    out
}

fn cell(sut: &str, all: &[&Step]) -> Cell {
    // A failed step is never compared: its figures (what it measured until it failed) are left out.
    let steps: Vec<&Step> = all
        .iter()
        .copied()
        .filter(|s| s.meta.status != Status::Failed)
        .collect();
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
        config: None,
        warmup_s: median(&|s| s.doc.as_ref().ok().map(|d| d.params.warmup_s)),
        warmup_needed_s: None,
        per_s: median(&|s| s.doc.as_ref().ok().map(|d| d.throughput.total_per_s)),
        p50_ms: median(&|s| lat(s, |l| l.p50)),
        p99_ms: median(&|s| lat(s, |l| l.p99)),
        cpu_us_per_call: median(&|s| {
            let d = s.doc.as_ref().ok()?;
            let cpu = s.record.as_ref()?.monitored_process.as_ref()?;
            (d.counts.ok > 0).then(|| (cpu.cpu_user_s + cpu.cpu_sys_s) * 1e6 / d.counts.ok as f64)
        }),
        rss_mib: median(&|s| {
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
        failed: all.len() - steps.len(),
        rounds: all.len(),
    }
}

/// The relative rise of the ok calls per second from the first third of the step's timeline to its last
/// third (None with fewer than three full intervals, or for a step with stages: its ramp sets the rise).
pub fn rise(step: &Step) -> Option<f64> {
    if step.doc.as_ref().is_ok_and(|d| !d.shape.stages.is_empty()) {
        return None;
    }
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
        parts.push(match (&r.sampled_by_agent, r.sampled_pid) {
            (Some(agent), _) => {
                format!("CPU, RSS, fds and threads sampled on its own host by the agent at {agent}")
            }
            (None, Some(pid)) => format!("CPU and RSS sampled from process {pid}"),
            (None, None) => "its CPU and RSS were not sampled".to_owned(),
        });
    }
    if let Some(c) = &r.configuration {
        parts.push(c.clone());
    }
    if let Some(b) = &r.build {
        parts.push(format!("built in `{b}`"));
    }
    parts.join("; ") + "."
}

/// The published throughput (the first `total_per_s` figure whose selectors match a step) with its
/// conditions and this run's, then one line per server measured in a step it selects — for cxf-echo-complex,
/// how CXF here compares with CXF's published 34,854/s. A server whose step failed is not compared.
fn beside_published(run: &results::Run, table: &[(String, Vec<Cell>)]) -> Vec<String> {
    use wsbench_harness::metric::Metric;
    let Some(c) = run
        .comparisons()
        .into_iter()
        .find(|c| c.published.metric == Metric::TotalPerS && !c.rows.is_empty())
    else {
        return Vec::new();
    };
    let p = c.published;
    let mut out = Vec::new();
    for (step, cells) in table {
        for cell in cells {
            let rows: Vec<Option<f64>> = c
                .rows
                .iter()
                .filter(|(i, _)| {
                    let m = &run.steps[*i].meta;
                    m.sut.as_deref() == Some(cell.sut.as_str()) && m.id.starts_with(step.as_str())
                })
                .map(|(_, v)| *v)
                .collect();
            if rows.is_empty() {
                continue;
            }
            let Some(v) = cell.per_s.filter(|_| rows.iter().all(Option::is_some)) else {
                out.push(format!(
                    "- **{}**: step {step} failed here, so it is not compared with the published figure.",
                    cell.sut
                ));
                continue;
            };
            let config = cell
                .config
                .as_ref()
                .map_or(String::new(), |c| format!("configuration `{c}`, "));
            out.push(format!(
                "- **{}** ({config}warm-up {}): {} /s in step {step} here, {} % of the published {} {}.",
                cell.sut,
                warm_up(cell),
                num(v),
                num(100.0 * v / p.value),
                num(p.value),
                p.unit,
            ));
        }
    }
    if out.is_empty() {
        return out;
    }
    let here = run.provenance.as_ref().map_or(String::new(), |prov| {
        format!("; here: {}", prov.pinning.words())
    });
    out.insert(
        0,
        format!(
            "\nBeside the published {} {} ({}: {}){here}:\n",
            num(p.value),
            p.unit,
            p.label,
            p.conditions
        ),
    );
    out
}

/// The warm-up a step gave a server, and what its peer.toml says it needs when that is more: `10 s (needs
/// 60 s)`.
pub fn warm_up(c: &Cell) -> String {
    let given = c
        .warmup_s
        .map_or("–".to_owned(), |w| format!("{} s", num(w)));
    match c.warmup_needed_s {
        Some(n) if c.warmup_s.is_none_or(|w| w < n) => format!("{given} (needs {} s)", num(n)),
        _ => given,
    }
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
        "| step | server | configuration | warm-up | req/s | p50 ms | p99 ms | server CPU per call | server RSS | |"
            .to_owned(),
        "|---|---|---|---|---|---|---|---|---|---|".to_owned(),
    ];
    for (step, cells) in &table {
        for c in cells {
            let flag = c.flags();
            o.push(format!(
                "| {step} | {} | {} | {} | {} | {} | {} | {} | {} | {flag} |",
                c.sut,
                c.config.as_deref().unwrap_or("–"),
                warm_up(c),
                c.per_s.map_or_else(dash, num),
                c.p50_ms.map_or_else(dash, num),
                c.p99_ms.map_or_else(dash, num),
                c.cpu_us_per_call
                    .map_or("not sampled".to_owned(), |v| format!("{} µs", num(v))),
                c.rss_mib
                    .map_or("not sampled".to_owned(), |v| format!("{} MiB", num(v))),
            ));
        }
    }
    o.extend(beside_published(run, &table));
    o.push(format!(
        "\nEach server ran the same steps with the same pinning, one after the other{}; req/s counts only \
         answers that passed bench-client's checks. A peer's configuration is its peer.toml's (`cargo xtask \
         peers` says what differs and why; provenance.json's `sut` has it in words); its warm-up is the \
         unmeasured load the step gave a fresh server, and what calibration found a JIT needs where that is \
         more. Server CPU per call is the server process's user + system \
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
            sampled_by_agent: None,
            build: None,
            notes: notes.iter().map(|n| n.to_string()).collect(),
            ..SutRecord::default()
        }
    }

    #[test]
    fn a_failed_round_is_left_out_and_said() {
        let c = |failed: usize, rounds: usize| Cell {
            failed,
            rounds,
            ..Cell::default()
        };
        assert_eq!(
            c(2, 2).flags(),
            "⚠ the step failed: no figures (its notes say why)"
        );
        assert_eq!(
            c(1, 2).flags(),
            "⚠ 1 of 2 rounds failed: figures from the others"
        );
        assert_eq!(c(0, 2).flags(), "");
    }

    #[test]
    fn the_warm_up_says_what_a_jit_needs_when_it_got_less() {
        let c = |given: Option<f64>, needs: Option<f64>| Cell {
            warmup_s: given,
            warmup_needed_s: needs,
            ..Cell::default()
        };
        let s = |v: f64| format!("{} s", num(v));
        assert_eq!(
            warm_up(&c(Some(10.0), Some(60.0))),
            format!("{} (needs {})", s(10.0), s(60.0))
        );
        assert_eq!(warm_up(&c(Some(90.0), Some(60.0))), s(90.0));
        assert_eq!(warm_up(&c(Some(5.0), None)), s(5.0));
    }

    /// A ramp's throughput rises because the ramp raises the load, not because the server is still warming
    /// up: a staged step is never flagged "still rising" (found running a staged step with --target).
    #[test]
    fn a_staged_step_is_not_still_rising() {
        let tmp = tempfile::tempdir().unwrap();
        let run = crate::stage_charts::tests::staged_run(tmp.path());
        assert_eq!(rise(&run.steps[0]), None);
        let step = tmp.path().join("steps/01-clients-16.json");
        let mut doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&step).unwrap()).unwrap();
        doc.as_object_mut().unwrap().remove("stages");
        std::fs::write(&step, doc.to_string()).unwrap();
        let run = results::Run::load(tmp.path()).unwrap();
        assert!(
            rise(&run.steps[0]).unwrap() > RISING,
            "the same seconds without stages"
        );
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
