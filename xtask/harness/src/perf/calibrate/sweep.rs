//! `cargo xtask calibrate --sut NAME`: sweeps a peer's configurations and the knobs its peer.toml names
//! (`[calibrate] workers`: pool sizes) on this machine — each candidate a fresh server pinned to one core,
//! warmed up, then loaded by bench-client from another core (`--connections` clients, echoComplexTypeDoc, as
//! cxf-echo-complex) — and says which realistic one served most. The warm-up's per-second series also says
//! when the server's throughput settled (the JIT). The table goes to stdout and into `peers/NAME/README.md`
//! (between the `calibration` markers), where the peer's default is chosen from it.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use bench_proto::results::{ResultsDoc, RunRecord};
use xshell::Shell;

use super::goals::cpus;
use super::Args;
use crate::argv::{self, PeerPlace};
use crate::artifacts::{self, peers};
use crate::local::process::ServerProcess;
use crate::scenario::ServerSpec;
use crate::sut::peer::{Label, PeerDef, Workers};
use crate::sut::{Catalog, PeerSut};
use wsbench_tools::{process, taskset};

/// Markers around the table in the peer's README.md.
const BEGIN: &str = "<!-- calibration: written by `cargo xtask calibrate --sut";
const END: &str = "<!-- calibration end -->";

/// One configuration tried, possibly with its workers overridden.
struct Candidate {
    peer: PeerSut,
    /// `pool` or `pool, workers=8`.
    label: String,
    realistic: bool,
}

/// What one candidate measured.
struct Row {
    label: String,
    realistic: bool,
    per_s: f64,
    p99_ms: f64,
    cpu_us: Option<f64>,
    rss_mib: Option<f64>,
    /// None: the warm-up was too short to tell (under 8 s), or still rising at its end.
    settled_s: Option<f64>,
    /// Why the candidate has no figures (it did not start, failed calls, …), or what went wrong after it was
    /// measured (it was slow to stop): one candidate's trouble is a row of the table, not the sweep's end.
    problem: Option<String>,
    /// Whether its figures stand (false: `problem` says why there are none).
    measured: bool,
}

impl Row {
    fn failed(c: &Candidate, problem: &anyhow::Error) -> Row {
        Row {
            label: c.label.clone(),
            realistic: c.realistic,
            per_s: 0.0,
            p99_ms: 0.0,
            cpu_us: None,
            rss_mib: None,
            settled_s: None,
            problem: Some(format!("{problem:#}")),
            measured: false,
        }
    }
}

fn settled_text(s: Option<f64>) -> String {
    s.map_or("not within the warm-up (or under 8 s of it)".into(), |s| {
        format!("{s:.0} s")
    })
}

pub(super) fn run(sh: &Shell, args: &Args, name: &str) -> Result<()> {
    taskset::TASKSET.require(sh)?;
    let catalog = Catalog::project()?;
    let def = catalog
        .peers
        .iter()
        .find(|d| d.name == name || catalog.resolve(name).is_some_and(|p| p.def.name == d.name))
        .with_context(|| {
            format!(
                "--sut {name}: no such peer ({})",
                catalog.names().join(", ")
            )
        })?
        .clone();
    let (server_cpu, client_cpu) = cpus(args)?;
    let bins = artifacts::build_release(sh)?;
    let root = crate::paths::project_root();
    let warmup = args
        .sweep_warmup
        .or(def.warmup)
        .unwrap_or(Duration::from_secs(5));
    let load = wsbench_tools::load::average().map_or("?".to_owned(), |l| format!("{:.2}", l.one));
    let mut rows = Vec::new();
    for c in candidates(&catalog, &def) {
        let dir = peers::build(sh, &root, &def, c.peer.build().0)?;
        println!("calibrate {}: {} …", def.name, c.label);
        let row = measure(
            &bins.client,
            &c,
            &dir,
            (server_cpu, client_cpu),
            args,
            warmup,
        )
        .unwrap_or_else(|e| Row::failed(&c, &e));
        println!("  {}", line(&row));
        rows.push(row);
    }
    let table = table(&def, &rows, args, warmup, &load);
    println!("\n{table}");
    write_readme(
        &root.join("peers").join(&def.name).join("README.md"),
        &def,
        &table,
    )
}

/// Every configuration as it is; and each realistic one whose workers are neither tied to the client count nor a
/// per-core rule (a sweep's outcome already), once per `[calibrate] workers` value.
fn candidates(catalog: &Catalog, def: &Arc<PeerDef>) -> Vec<Candidate> {
    let mut out = Vec::new();
    for c in &def.configs {
        let peer = catalog
            .resolve(&def.sut_name(&c.name))
            .expect("a configuration");
        let realistic = c.label.unwrap_or(def.label) == Label::Realistic;
        // Tied to the clients, or already a per-core rule calibrated from a sweep: measured as it is.
        let tied = matches!(
            c.workers,
            Some(Workers::Clients { .. } | Workers::PerCore(_))
        );
        out.push(Candidate {
            peer: peer.clone(),
            label: c.name.clone(),
            realistic,
        });
        if !realistic || tied {
            continue;
        }
        for n in def.calibrate.iter().flat_map(|k| &k.workers) {
            let mut d = (**def).clone();
            if let Some(cfg) = d.configs.iter_mut().find(|x| x.name == c.name) {
                cfg.workers = Some(Workers::Fixed(*n));
            }
            let Some(p) = (Catalog {
                peers: vec![Arc::new(d)],
            })
            .resolve(&peer.name) else {
                continue;
            };
            out.push(Candidate {
                peer: p,
                label: format!("{}, workers={n}", c.name),
                realistic,
            });
        }
    }
    out
}

/// Starts the candidate pinned to the server CPU, warms it up, measures it, stops it.
fn measure(
    client: &Path,
    c: &Candidate,
    dir: &Path,
    (server_cpu, client_cpu): (usize, usize),
    args: &Args,
    warmup: Duration,
) -> Result<Row> {
    let spec = ServerSpec::default();
    let place = PeerPlace::Process(dir);
    let mut cmd = taskset::prefix(&[server_cpu]);
    cmd.extend(argv::peer_for(
        &c.peer,
        place,
        &spec,
        args.connections(),
        (Some(1), 1),
        "127.0.0.1:0",
    )?);
    let tmp = tempfile::tempdir()?;
    let log = std::fs::File::create(tmp.path().join("server.log"))?;
    let server = ServerProcess::start(&cmd, log, Duration::from_secs(120))
        .with_context(|| format!("`{}` did not start", cmd.join(" ")))?;
    let url = format!("http://{}", server.ready.http.context("no HTTP address")?);
    let load = |secs: Duration, json: &Path| -> Result<()> {
        let mut a = taskset::prefix(&[client_cpu]);
        a.push(process::arg(client));
        let opts = [
            ("--url", url.clone()),
            ("--operation", "echoComplexTypeDoc".to_owned()),
            ("--clients", args.connections().to_string()),
            ("--duration", format!("{}ms", secs.as_millis())),
            ("--interval", "1s".to_owned()),
            ("--monitor-pid", server.pid.to_string()),
            ("--json", json.display().to_string()),
        ];
        for (k, v) in opts {
            a.extend([k.to_owned(), v]);
        }
        let status = process::status_quiet(&a)?;
        anyhow::ensure!(status.success(), "bench-client: {status}");
        Ok(())
    };
    let (warm, measured) = (tmp.path().join("warm.json"), tmp.path().join("load.json"));
    let result = load(warmup, &warm).and_then(|()| load(args.duration, &measured));
    let stopped = server.stop(Duration::from_secs(20));
    result?;
    let settled_s = RunRecord::from_json(&std::fs::read(&warm)?)?
        .timeline
        .and_then(|t| {
            settled(
                &t.intervals
                    .iter()
                    .map(|i| i.ok as f64 / i.dur_s.max(1e-9))
                    .collect::<Vec<_>>(),
            )
        });
    let text = std::fs::read(&measured)?;
    let doc: ResultsDoc = serde_json::from_slice(&text)?;
    let record = RunRecord::from_json(&text)?;
    anyhow::ensure!(
        doc.counts.errors_total == 0,
        "{} failed calls: a candidate that fails is not a configuration",
        doc.counts.errors_total
    );
    let ok = doc.counts.ok.max(1) as f64;
    Ok(Row {
        label: c.label.clone(),
        realistic: c.realistic,
        per_s: doc.throughput.total_per_s,
        p99_ms: doc.latency_us.corrected.p99 as f64 / 1000.0,
        cpu_us: record
            .monitored_process
            .map(|m| (m.cpu_user_s + m.cpu_sys_s) * 1e6 / ok),
        rss_mib: doc
            .system
            .and_then(|s| s.samples.iter().filter_map(|x| x.server_rss_kb).max())
            .map(|kb| kb as f64 / 1024.0),
        settled_s,
        problem: stopped.err().map(|e| format!("measured, then: {e:#}")),
        measured: true,
    })
}

/// When a per-second series settled: the first second from which its 5-second moving average stays at 90 %
/// or more of the mean of its last quarter; None when it never did (still rising at the end).
fn settled(rates: &[f64]) -> Option<f64> {
    if rates.len() < 8 {
        return None;
    }
    let tail = &rates[rates.len() * 3 / 4..];
    let plateau = tail.iter().sum::<f64>() / tail.len() as f64;
    let avg: Vec<f64> = rates
        .windows(5)
        .map(|w| w.iter().sum::<f64>() / 5.0)
        .collect();
    let last_low = avg.iter().rposition(|a| *a < 0.9 * plateau);
    match last_low {
        None => Some(0.0),
        Some(i) if i + 1 < avg.len() => Some((i + 1) as f64),
        Some(_) => None,
    }
}

fn line(r: &Row) -> String {
    if !r.measured {
        return format!("failed: {}", r.problem.as_deref().unwrap_or("?"));
    }
    format!(
        "{:.0} calls/s, p99 {:.2} ms, server CPU {} per call, RSS {}, settled after {}",
        r.per_s,
        r.p99_ms,
        r.cpu_us.map_or("?".into(), |c| format!("{c:.0} µs")),
        r.rss_mib.map_or("?".into(), |m| format!("{m:.0} MiB")),
        settled_text(r.settled_s)
    )
}

/// The markdown table, best first, with the conditions and the best realistic candidate.
fn table(def: &PeerDef, rows: &[Row], args: &Args, warmup: Duration, load: &str) -> String {
    let mut sorted: Vec<&Row> = rows.iter().collect();
    sorted.sort_by(|a, b| b.per_s.total_cmp(&a.per_s));
    let mut t = String::new();
    let _ = writeln!(
        t,
        "echoComplexTypeDoc, {} closed-loop clients (bench-client), the server pinned to one core and bench-client \
         to another, a fresh server per row: {} of warm-up load, then {} measured (`cargo xtask calibrate --sut {} \
         --duration {}s{}`; machine: {}, load average {} before the sweep: above 0.5 the machine was busy and the \
         rates are noisy, compare the CPU per call).\n",
        args.connections(),
        bench_proto::units::DurationArg(warmup),
        bench_proto::units::DurationArg(args.duration),
        def.name,
        args.duration.as_secs(),
        args.sweep_warmup
            .map(|w| format!(" --warmup {}", bench_proto::units::DurationArg(w)))
            .unwrap_or_default(),
        wsbench_tools::host::cpu_model().unwrap_or_else(|| "?".into()),
        load
    );
    t.push_str("| configuration | label | calls/s | p99 ms | server CPU per call | RSS | throughput settled after |\n");
    t.push_str("|---|---|---|---|---|---|---|\n");
    for r in &sorted {
        let label = if r.realistic { "realistic" } else { "stripped" };
        let problem = r
            .problem
            .as_deref()
            .map(|p| format!(" ({})", p.replace('|', "/").replace('\n', " ")))
            .unwrap_or_default();
        if !r.measured {
            let _ = writeln!(t, "| {} | {label} | failed | | | | {problem} |", r.label);
            continue;
        }
        let _ = writeln!(
            t,
            "| {} | {label} | {:.0} | {:.2} | {} | {} | {}{problem} |",
            r.label,
            r.per_s,
            r.p99_ms,
            r.cpu_us.map_or("?".into(), |c| format!("{c:.0} µs")),
            r.rss_mib.map_or("?".into(), |m| format!("{m:.0} MiB")),
            settled_text(r.settled_s)
        );
    }
    if let Some(best) = sorted.iter().find(|r| r.realistic && r.measured) {
        let _ = writeln!(
            t,
            "\nBest realistic: **{}** (the peer.toml's default is `{}`).",
            best.label, def.default
        );
    }
    t
}

/// Replaces (or appends) the table between the markers in the peer's README.md.
fn write_readme(path: &Path, def: &PeerDef, table: &str) -> Result<()> {
    let old =
        std::fs::read_to_string(path).unwrap_or_else(|_| format!("# The {} peer\n", def.name));
    let section = format!("{BEGIN} {}` -->\n{table}{END}\n", def.name);
    let new = match (old.find(BEGIN), old.find(END)) {
        (Some(a), Some(b)) if a < b => {
            format!("{}{section}{}", &old[..a], &old[b + END.len() + 1..])
        }
        _ => format!("{old}\n## Calibration\n\n{section}"),
    };
    std::fs::write(path, new)?;
    println!("written to {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settling_is_where_the_average_stays_near_the_plateau() {
        let mut jit: Vec<f64> = (0..20).map(|i| 100.0 * f64::from(i)).collect();
        jit.extend([2000.0; 40]);
        let s = settled(&jit).unwrap();
        assert!((14.0..=20.0).contains(&s), "{s}");
        assert_eq!(settled(&[500.0; 30]), Some(0.0));
        let rising: Vec<f64> = (0..30).map(f64::from).collect();
        assert!(settled(&rising).is_some_and(|s| s > 15.0) || settled(&rising).is_none());
        assert_eq!(settled(&[1.0; 3]), None);
    }
}
