//! `cargo xtask max-rate`: the highest open-loop rate the server sustains with p99 under an SLO, found by
//! doubling, bisection and confirmation runs of `bench-client --rate R --json`, reported with every probe.

mod json;
mod search;

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use bench_proto::results::ResultsDoc;
use bench_proto::units::DurationArg;
use xshell::Shell;

use crate::local::process::ServerProcess;
use crate::{clock, pinning::Pinning};
use search::{Config, Measured, Outcome};
use wsbench_tools::{host, process};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The p99 latency (corrected for coordinated omission) a rate must stay under: `10ms`, `500us`, `1s`.
    #[arg(long, default_value = "10ms", value_parser = bench_proto::units::parse_duration)]
    slo: Duration,
    /// Operation to drive (as `bench-client --operation`).
    #[arg(long, default_value = "echoComplexTypeDoc")]
    operation: String,
    /// Connections the open-loop schedule is spread over.
    #[arg(long, default_value_t = 64)]
    clients: u32,
    /// First rate tried, requests/s; doubled until a probe fails.
    #[arg(long, default_value_t = 1000.0)]
    start: f64,
    /// Highest rate tried, requests/s.
    #[arg(long, default_value_t = 1_000_000.0)]
    max: f64,
    /// Measured length of each probe.
    #[arg(long, default_value = "10s", value_parser = bench_proto::units::parse_duration)]
    duration: Duration,
    /// Warm-up before each probe's measurement.
    #[arg(long, default_value = "2s", value_parser = bench_proto::units::parse_duration)]
    warmup: Duration,
    /// Stop bisecting when the bracket is narrower than this fraction.
    #[arg(long, default_value_t = 0.05)]
    precision: f64,
    /// Confirmation runs the best rate must also pass.
    #[arg(long, default_value_t = 2)]
    confirm: u32,
    /// Upper bound on probes (each one lasts warm-up + duration).
    #[arg(long, default_value_t = 20)]
    max_probes: usize,
    /// Fraction of failed calls a probe may have (default: none).
    #[arg(long, default_value_t = 0.0)]
    max_error_ratio: f64,
    /// Drive this server instead of starting bench-server (its URL, e.g. `http://127.0.0.1:8080`).
    #[arg(long)]
    url: Option<String>,
    /// bench-server worker threads.
    #[arg(long)]
    workers: Option<u32>,
    /// Do not pin server and client to separate CPUs.
    #[arg(long)]
    no_pin: bool,
    /// Results root: probes are written to `DIR/max-rate/<UTC timestamp>/`.
    #[arg(long, value_name = "DIR", default_value = "results")]
    out: PathBuf,
    /// Print the answer and every probe as JSON (also written as max-rate.json) instead of Markdown.
    #[arg(long)]
    json: bool,
}

pub fn run(sh: &Shell, args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.start > 0.0 && args.max >= args.start,
        "need 0 < --start <= --max"
    );
    anyhow::ensure!(args.precision > 0.0, "--precision must be positive");
    let cfg = Config {
        start: args.start,
        max: args.max,
        slo_p99_us: u64::try_from(args.slo.as_micros()).unwrap_or(u64::MAX),
        precision: args.precision,
        confirm: args.confirm,
        max_probes: args.max_probes,
        min_achieved: 0.97,
        max_error_ratio: args.max_error_ratio,
    };
    let bins = crate::artifacts::build_release(sh)?;
    let stamp: String = clock::timestamp()
        .chars()
        .filter(|c| !matches!(c, '-' | ':'))
        .collect();
    let dir = sh
        .current_dir()
        .join(&args.out)
        .join("max-rate")
        .join(stamp);
    fs::create_dir_all(dir.join("probes"))
        .with_context(|| format!("creating {}", dir.display()))?;
    println!("wsbench max-rate → {}", dir.display());

    let taskset = wsbench_tools::taskset::version(sh);
    let pin = Pinning::plan(
        &host::cpus_allowed(),
        !args.no_pin && args.url.is_none(),
        taskset,
    );
    let (server, url, monitor_pid) = start_server(&args, &pin, &bins, &dir)?;
    let mut n = 0;
    let target = Target {
        url: &url,
        monitor_pid,
        pin: &pin,
        client: &bins.client,
        dir: &dir,
    };
    let outcome = search::search(&cfg, |rate, phase| {
        n += 1;
        probe(&args, &cfg, &target, n, rate, phase)
    });
    if let Some(s) = server {
        s.stop(Duration::from_secs(20))?;
    }
    let outcome = outcome?;
    let text = render(&args, &url, &outcome);
    fs::write(dir.join("max-rate.md"), &text).context("writing max-rate.md")?;
    let json = json::render(&args, &url, &outcome)?;
    fs::write(dir.join("max-rate.json"), &json).context("writing max-rate.json")?;
    record(sh, &args, &outcome, &dir);
    if args.json {
        println!("{json}");
    } else {
        println!("\n{text}");
        println!("evidence: {}", dir.display());
    }
    if outcome.best.is_none() {
        let best = best_unconfirmed(&outcome).map_or("no probe passed even once".to_owned(), |p| {
            format!(
                "the best unconfirmed rate was {:.0}/s (passed once, not confirmed)",
                p.rate
            )
        });
        anyhow::bail!(
            "no rate sustained the SLO: {best}; evidence in {}",
            dir.display()
        );
    }
    Ok(())
}

/// The server to probe: `--url`'s, or bench-server started here (pinned, its log in `dir`); with its pid
/// for RSS sampling.
fn start_server(
    args: &Args,
    pin: &Pinning,
    bins: &crate::artifacts::Binaries,
    dir: &Path,
) -> anyhow::Result<(Option<ServerProcess>, String, Option<u32>)> {
    if let Some(url) = &args.url {
        return Ok((None, url.clone(), None));
    }
    let mut argv = pin.prefix(&pin.server_cpus);
    argv.push(bins.server.display().to_string());
    argv.extend(["--http".into(), "127.0.0.1:0".into()]);
    if let Some(w) = args
        .workers
        .or(pin.enabled.then_some(pin.server_cpus.len() as u32))
    {
        argv.extend(["--workers".into(), w.to_string()]);
    }
    let log = fs::File::create(dir.join("server.log")).context("creating server.log")?;
    let s = ServerProcess::start(&argv, log, Duration::from_secs(30))?;
    let http = s
        .ready
        .http
        .context("bench-server's READY line has no http address")?;
    let pid = s.pid;
    Ok((Some(s), format!("http://{http}"), Some(pid)))
}

/// Where the probes go and how bench-client is run.
struct Target<'a> {
    url: &'a str,
    monitor_pid: Option<u32>,
    pin: &'a Pinning,
    client: &'a Path,
    dir: &'a Path,
}

/// One probe at `rate`: bench-client's run, its results read back and judged.
fn probe(
    args: &Args,
    cfg: &Config,
    t: &Target<'_>,
    n: usize,
    rate: f64,
    phase: search::Phase,
) -> anyhow::Result<Measured> {
    let json = t.dir.join(format!("probes/{n:02}-{phase}-{rate:.0}.json"));
    let mut argv = t.pin.prefix(&t.pin.client_cpus);
    argv.push(t.client.display().to_string());
    for (flag, value) in [
        ("--url", t.url.to_owned()),
        ("--operation", args.operation.clone()),
        ("--clients", args.clients.to_string()),
        ("--rate", format!("{rate:.0}")),
        ("--duration", DurationArg(args.duration).to_string()),
        ("--warmup", DurationArg(args.warmup).to_string()),
        ("--label", format!("rate={rate:.0}")),
        ("--json", json.display().to_string()),
    ] {
        argv.extend([flag.to_string(), value]);
    }
    argv.push("--allow-errors".into());
    if let Some(pid) = t.monitor_pid {
        argv.extend(["--monitor-pid".into(), pid.to_string()]);
    }
    println!("\n── probe {n} ({phase}): {rate:.0}/s ──");
    let status = process::status(&argv).context("running bench-client")?;
    let measured = read_probe(&json)
        .with_context(|| format!("bench-client exited {status} without usable results"))?;
    let (pass, why) = cfg.judge(rate, &measured);
    println!(
        "probe {n}: offered {rate:.0}/s, achieved {:.0}/s, p99 {:.2} ms, {} errors → {}",
        measured.achieved,
        measured.p99_us as f64 / 1000.0,
        measured.errors,
        if pass {
            "pass".to_string()
        } else {
            format!("FAIL ({why})")
        }
    );
    Ok(measured)
}

/// The highest offered rate that passed a probe but is not the confirmed answer (above it, or none).
pub(crate) fn best_unconfirmed(out: &Outcome) -> Option<&search::Probe> {
    out.probes
        .iter()
        .filter(|p| p.pass && out.best.map_or(true, |b| p.rate > b))
        .max_by(|a, b| a.rate.total_cmp(&b.rate))
}

fn read_probe(path: &Path) -> anyhow::Result<Measured> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let doc: ResultsDoc =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    Ok(Measured {
        achieved: doc.throughput.total_per_s,
        p99_us: doc.latency_us.corrected.p99,
        ok: doc.counts.ok,
        errors: doc.counts.errors_total,
        warnings: doc.warnings,
    })
}

/// The answer and its evidence, as Markdown.
fn render(args: &Args, url: &str, out: &Outcome) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Max rate: {} at {url}\n", args.operation);
    let _ = writeln!(
        s,
        "SLO: corrected p99 ≤ {}; a probe also fails below 97 % of the offered rate or with more than {:.2} % failed calls. \
         {} connections, {} measured after {} warm-up per probe.\n",
        humantime::format_duration(args.slo),
        args.max_error_ratio * 100.0,
        args.clients,
        humantime::format_duration(args.duration),
        humantime::format_duration(args.warmup),
    );
    match (out.best, out.failed_at) {
        (Some(b), Some(f)) => {
            let _ = writeln!(
                s,
                "**Max rate: {b:.0}/s** (first failing rate above it: {f:.0}/s). {}\n",
                out.verdict
            );
        }
        (Some(b), None) => {
            let _ = writeln!(s, "**At least {b:.0}/s.** {}\n", out.verdict);
        }
        (None, _) => {
            let best = best_unconfirmed(out).map_or(String::new(), |p| {
                format!(
                    " Best unconfirmed: {:.0}/s passed once (p99 {:.2} ms) but did not hold on confirmation.",
                    p.rate,
                    p.measured.p99_us as f64 / 1000.0
                )
            });
            let _ = writeln!(s, "**No rate found.** {}{best}\n", out.verdict);
        }
    }
    s.push_str("| # | phase | offered /s | achieved /s | p99 ms | ok | errors | verdict |\n|---|---|---|---|---|---|---|---|\n");
    for (i, p) in out.probes.iter().enumerate() {
        let verdict = if p.pass {
            "pass".to_string()
        } else {
            format!("fail: {}", p.reason)
        };
        let _ = writeln!(
            s,
            "| {} | {} | {:.0} | {:.0} | {:.2} | {} | {} | {verdict} |",
            i + 1,
            p.phase,
            p.rate,
            p.measured.achieved,
            p.measured.p99_us as f64 / 1000.0,
            p.measured.ok,
            p.measured.errors
        );
    }
    let notes: Vec<String> = out
        .probes
        .iter()
        .enumerate()
        .flat_map(|(i, p)| {
            p.measured
                .warnings
                .iter()
                .map(move |w| format!("- probe {}: {w}", i + 1))
        })
        .collect();
    if !notes.is_empty() {
        s.push_str("\nbench-client's warnings (a busy or lagging client inflates latency and caps the rate):\n\n");
        s.push_str(&notes.join("\n"));
        s.push('\n');
    }
    s
}

/// The answer into the results store (scenario `max-rate`, a step per operation and SLO): the highest
/// confirmed rate and the p99 there, or a failed run when none was.
fn record(sh: &Shell, args: &Args, outcome: &Outcome, dir: &Path) {
    use crate::history::{tool, Kind};
    use crate::metric::Metric;
    let step = format!(
        "{} p99<{}",
        args.operation,
        humantime::format_duration(args.slo)
    );
    let best = outcome
        .best
        .and_then(|rate| outcome.probes.iter().find(|p| p.pass && p.rate == rate));
    let mut measurements = Vec::new();
    if let Some(p) = best {
        measurements.extend(tool::measurement(
            &step,
            "bench-server",
            Metric::TotalPerS,
            &[p.measured.achieved],
        ));
        let p99_ms = p.measured.p99_us as f64 / 1000.0;
        measurements.extend(tool::measurement(
            &step,
            "bench-server",
            Metric::P99LatencyMs,
            &[p99_ms],
        ));
    }
    let mut entry = tool::entry(sh, Kind::MaxRate, "max-rate", String::new(), measurements);
    entry.dir = Some(dir.to_path_buf());
    if outcome.best.is_none() {
        entry.status = crate::rundoc::Status::Failed;
    }
    tool::record(&sh.current_dir().join(&args.out), &[entry]);
}
