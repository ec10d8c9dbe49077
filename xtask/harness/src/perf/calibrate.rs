//! `cargo xtask calibrate`: is bench-client fast enough not to limit a run? It drives the same bench-server
//! endpoint (`GET /health`, or `--operation echoComplexTypeDoc`: wrk posting the same request through a Lua
//! script) with `wrk` and with `bench-client` — same connection count, each
//! pinned to the same client CPUs, the server pinned to the others — and prints both rates and their
//! ratio (goal: bench-client ≥ 1.05 × wrk, the median of the rounds; `--goal` sets another), with each tool's
//! CPU time per request and how busy the server's CPUs were meanwhile. When the server is the limit (its CPUs
//! busy all the time under both tools), the rates measure the server, not the load generators: the CPU each
//! tool spends per request then says which is leaner. `--goals` measures issue 29's throughput goals instead
//! (`calibrate/goals.rs`).

mod goals;
mod sweep;

use std::time::Duration;

use anyhow::{bail, Context as _, Result};
use xshell::Shell;

use crate::local::process::ServerProcess;
use crate::pinning::{format_cpu_list, parse_cpu_list};
use crate::stats::Estimate;
use wsbench_tools::taskset::{self, TASKSET};
use wsbench_tools::wrk::{self, WRK};
use wsbench_tools::{load, process};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Keep-alive connections, for both tools (with `--sut`: the clients, default 100 as cxf-echo-complex).
    #[arg(long, value_name = "N")]
    connections: Option<u32>,
    /// How long each tool runs per round.
    #[arg(long, default_value = "10s", value_name = "DUR", value_parser = bench_proto::units::parse_duration)]
    duration: Duration,
    /// Rounds; the order of the tools alternates between rounds (with `--goals`, the order of the servers and
    /// loads rotates), and the median ratio is reported. Default 1 (3 with `--goals`).
    #[arg(long, value_name = "N")]
    rounds: Option<u32>,
    /// CPUs for the load generators (default: the last allowed CPU).
    #[arg(long, value_name = "LIST")]
    client_cpus: Option<String>,
    /// CPUs for bench-server (default: every other allowed CPU).
    #[arg(long, value_name = "LIST")]
    server_cpus: Option<String>,
    /// The load: `http-get` (GET /health) or `echoComplexTypeDoc` (one item, as the CXF client posts it).
    #[arg(long, value_enum, default_value_t = Load::HttpGet, value_name = "OP")]
    operation: Load,
    /// The least bench-client / wrk ratio (median of the rounds) that passes; below it the command fails.
    #[arg(long, default_value_t = GOAL, value_name = "RATIO")]
    goal: f64,
    /// Measure issue 29's goals 2–4 instead: echo ÷ /health, bench-server against the JAX-WS RI and gSOAP
    /// (built from peers/), and the 100 KB Customer echo in MB/s; each server on one core, wrk on another.
    /// Fails when a goal is missed.
    #[arg(long)]
    goals: bool,
    /// With `--goals`: the least JVM warm-up (jaxws under load) before measuring.
    #[arg(long, default_value = "30s", value_name = "DUR", value_parser = bench_proto::units::parse_duration)]
    jvm_warmup: Duration,
    /// With `--goals`: the most JVM warm-up; measuring starts then even if jaxws's rate is not flat within 3 %.
    #[arg(long, default_value = "180s", value_name = "DUR", value_parser = bench_proto::units::parse_duration)]
    jvm_warmup_max: Duration,
    /// Sweep this peer's configurations and its peer.toml's `[calibrate]` knobs instead (echoComplexTypeDoc,
    /// 100 clients unless `--connections` says otherwise), one server core; the table goes into
    /// peers/NAME/README.md.
    #[arg(long, value_name = "NAME")]
    sut: Option<String>,
    /// With `--sut`: the warm-up load before each measurement (default: the peer's `warmup`, else 5 s).
    #[arg(long = "warmup", value_name = "DUR", value_parser = bench_proto::units::parse_duration)]
    sweep_warmup: Option<Duration>,
}

impl Args {
    /// `--connections`: 50, or 100 (cxf-echo-complex's clients) with `--sut`.
    fn connections(&self) -> u32 {
        self.connections
            .unwrap_or(if self.sut.is_some() { 100 } else { 50 })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Load {
    #[value(name = "http-get")]
    HttpGet,
    #[value(name = "echoComplexTypeDoc")]
    EchoComplexTypeDoc,
}

pub fn run(sh: &Shell, args: Args) -> Result<()> {
    if args.goals {
        return goals::run(sh, &args);
    }
    if let Some(name) = &args.sut {
        return sweep::run(sh, &args, name);
    }
    WRK.require(sh)?;
    TASKSET.require(sh)?;
    let setup = Setup::new(sh, &args)?;
    println!(
        "calibrate: {} {} · {} connections · {} per tool · load generators on CPU {} ({} thread(s)), bench-server \
         on CPU {} ({} worker(s))",
        setup.op,
        setup.url,
        args.connections(),
        setup.secs,
        setup.client_cpus_text,
        setup.client_threads,
        setup.server_cpus_text,
        setup.server_cpus.len()
    );
    let mut rounds = Rounds::default();
    for round in 1..=args.rounds.unwrap_or(1) {
        // Alternate the order so that neither tool always meets a warmer server.
        let (w, b) = if round % 2 == 1 {
            let w = setup.wrk(sh, &args)?;
            (w, setup.bench(sh, &args)?)
        } else {
            let b = setup.bench(sh, &args)?;
            (setup.wrk(sh, &args)?, b)
        };
        rounds.add(round, &w, &b);
    }
    let Setup { server, op, .. } = setup;
    server.stop(Duration::from_secs(20))?;
    rounds.record(sh, op, &args);
    rounds.conclude(args.goal)
}

/// The server started, the endpoint, and the temporary files of one calibration (removed when it ends,
/// however it ends).
struct Setup {
    server: ServerProcess,
    url: String,
    op: &'static str,
    secs: String,
    client_cpus: Vec<usize>,
    client_cpus_text: String,
    client_threads: u32,
    server_cpus: Vec<usize>,
    server_cpus_text: String,
    bins: crate::artifacts::Binaries,
    script: Option<tempfile::NamedTempFile>,
    json: tempfile::TempPath,
    _log: tempfile::NamedTempFile,
}

impl Setup {
    fn new(sh: &Shell, args: &Args) -> Result<Setup> {
        let allowed = wsbench_tools::host::cpus_allowed();
        let (default_server, default_client) = match allowed.split_last() {
            Some((last, rest)) if !rest.is_empty() => (format_cpu_list(rest), last.to_string()),
            _ => bail!(
                "calibration needs at least two CPUs (one for the server, one for the load generators)"
            ),
        };
        let client_cpus_text = args.client_cpus.clone().unwrap_or(default_client);
        let server_cpus_text = args.server_cpus.clone().unwrap_or(default_server);
        let client_cpus = parse_cpu_list(&client_cpus_text)?;
        let server_cpus = parse_cpu_list(&server_cpus_text)?;
        let workers = server_cpus.len().max(1).to_string();
        let bins = crate::artifacts::build_release(sh)?;
        let mut argv = taskset::prefix(&server_cpus);
        argv.push(process::arg(&bins.server));
        argv.extend(["--http", "127.0.0.1:0", "--workers", &workers].map(String::from));
        let log = tempfile::Builder::new()
            .prefix("wsbench-calibrate-server-")
            .suffix(".log")
            .tempfile()?;
        let server = ServerProcess::start(&argv, log.reopen()?, Duration::from_secs(30))?;
        let addr = server
            .ready
            .http
            .context("bench-server's READY line has no http address")?;
        let (url, op, script) = match args.operation {
            Load::HttpGet => (format!("http://{addr}/health"), "http-get", None),
            Load::EchoComplexTypeDoc => {
                let mut script = tempfile::Builder::new()
                    .prefix("wsbench-calibrate-")
                    .suffix(".lua")
                    .tempfile()?;
                std::io::Write::write_all(
                    &mut script,
                    super::echo_complex_post_script().as_bytes(),
                )?;
                let url = format!("http://{addr}{}", bench_proto::cxf::PATH);
                (url, "echoComplexTypeDoc", Some(script))
            }
        };
        let json = tempfile::Builder::new()
            .prefix("wsbench-calibrate-")
            .suffix(".json")
            .tempfile()?
            .into_temp_path();
        Ok(Setup {
            server,
            url,
            op,
            secs: format!("{}s", args.duration.as_secs().max(1)),
            client_threads: u32::try_from(client_cpus.len().max(1))?,
            client_cpus,
            client_cpus_text,
            server_cpus,
            server_cpus_text,
            bins,
            script,
            json,
            _log: log,
        })
    }

    /// One run of wrk.
    fn wrk(&self, sh: &Shell, args: &Args) -> Result<Measured> {
        let busy = ServerBusy::start(self.server.pid);
        let cpu0 = load::children_cpu_s();
        let script = self.script.as_ref().map(|s| process::arg(s.path()));
        let argv = wrk::argv(
            self.client_threads,
            args.connections(),
            &self.secs,
            script.as_deref(),
            &self.url,
        );
        let (out, summary) =
            wrk::run(sh, &taskset::prefix(&self.client_cpus), &argv).context("running wrk")?;
        let cpu_s = load::children_cpu_s() - cpu0;
        if let Some(line) = &summary.errors {
            eprintln!("  wrk: {line}");
        }
        let rate = summary
            .rate
            .with_context(|| format!("no Requests/sec in wrk's output:\n{out}"))?;
        let requests = summary
            .requests
            .map_or(rate * args.duration.as_secs_f64(), |n| n as f64);
        Ok(Measured {
            rate,
            cpu_us_per_request: 1e6 * cpu_s / requests.max(1.0),
            server_busy: busy.share(self.server_cpus.len().max(1) as f64),
        })
    }

    /// One run of bench-client.
    fn bench(&self, sh: &Shell, args: &Args) -> Result<Measured> {
        let busy = ServerBusy::start(self.server.pid);
        let cpu0 = load::children_cpu_s();
        let mut argv = taskset::prefix(&self.client_cpus);
        argv.push(process::arg(&self.bins.client));
        for (flag, value) in [
            ("--url", self.url.clone()),
            ("--operation", self.op.to_owned()),
            ("--clients", args.connections().to_string()),
            ("--threads", self.client_threads.to_string()),
            ("--duration", self.secs.clone()),
            ("--json", process::arg(&self.json)),
        ] {
            argv.extend([flag.to_owned(), value]);
        }
        let status = process::status_quiet(&argv)?;
        anyhow::ensure!(status.success(), "running bench-client: {status}");
        let _ = sh;
        let cpu_s = load::children_cpu_s() - cpu0;
        let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&self.json)?)?;
        let rate = doc["throughput"]["total_per_s"]
            .as_f64()
            .context("results document without total_per_s")?;
        let calls = doc["counts"]["ok"].as_f64().unwrap_or(0.0)
            + doc["counts"]["errors_total"].as_f64().unwrap_or(0.0);
        Ok(Measured {
            rate,
            cpu_us_per_request: 1e6 * cpu_s / calls.max(1.0),
            server_busy: busy.share(self.server_cpus.len().max(1) as f64),
        })
    }
}

/// What the rounds measured.
#[derive(Default)]
struct Rounds {
    wrk: Vec<f64>,
    bench: Vec<f64>,
    ratios: Vec<f64>,
    cpu_ratios: Vec<f64>,
    busiest: Vec<f64>,
}

impl Rounds {
    fn add(&mut self, round: u32, w: &Measured, b: &Measured) {
        let ratio = b.rate / w.rate;
        println!(
            "round {round}: wrk {:>10.1} req/s ({:.1} µs CPU/req, server {})   bench-client {:>10.1} req/s \
             ({:.1} µs CPU/req, server {})   bench-client / wrk = {ratio:.3}",
            w.rate,
            w.cpu_us_per_request,
            busy_text(w.server_busy),
            b.rate,
            b.cpu_us_per_request,
            busy_text(b.server_busy),
        );
        self.ratios.push(ratio);
        self.wrk.push(w.rate);
        self.bench.push(b.rate);
        self.cpu_ratios
            .push(b.cpu_us_per_request / w.cpu_us_per_request);
        if let (Some(x), Some(y)) = (w.server_busy, b.server_busy) {
            self.busiest.push(x.min(y));
        }
    }

    /// Both tools' rates into the results store (scenario `calibrate`, a step per operation, the tool as
    /// its "server").
    fn record(&self, sh: &Shell, op: &str, args: &Args) {
        use crate::history::{tool, Kind};
        let m = |sut: &str, xs: &[f64]| {
            tool::measurement(op, sut, crate::metric::Metric::TotalPerS, xs)
        };
        let measurements = [m("bench-client", &self.bench), m("wrk", &self.wrk)]
            .into_iter()
            .flatten()
            .collect();
        let config = format!("{} connections", args.connections());
        let entry = tool::entry(sh, Kind::Calibrate, "calibrate", config, measurements);
        tool::record(&sh.current_dir().join("results"), &[entry]);
    }

    /// Prints the medians; Err when the ratio is below `goal`.
    fn conclude(&self, goal: f64) -> Result<()> {
        let est = Estimate::of(&self.ratios).context("no round measured")?;
        let best = self
            .ratios
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        let interval = est.interval(|v| format!("{v:.3}"));
        println!(
            "bench-client / wrk = {:.3}{interval} (median of {} round(s); best round {best:.3})",
            est.median, est.n
        );
        if let Some(cpu) = Estimate::of(&self.cpu_ratios) {
            println!(
                "CPU per request, bench-client / wrk = {:.3}{} (below 1: bench-client is the leaner)",
                cpu.median,
                cpu.interval(|v| format!("{v:.3}"))
            );
        }
        if let Some(busy) = Estimate::of(&self.busiest).filter(|b| b.median >= SATURATED) {
            println!(
                "the server was the limit: its CPUs were {:.0} % busy under both tools (median of the rounds), \
                 so both rates are the server's; compare the CPU per request above",
                100.0 * busy.median
            );
        }
        if est.median < goal {
            bail!(
                "bench-client / wrk = {:.3} is below the goal of {goal} (best round {best:.3})",
                est.median
            );
        }
        println!("goal of {goal} met");
        Ok(())
    }
}

/// bench-client must beat wrk's rate by 5 % (median of the rounds): a load generator that merely equals the
/// reference would be the limit of any server as fast as wrk can drive.
const GOAL: f64 = 1.05;

/// A server this busy during a tool's run (share of its CPUs) was the limit of that run.
const SATURATED: f64 = 0.95;

/// One tool's run: its rate, and the CPU it used per request (user + system, all its threads): the second
/// says how close the tool is to being the limit, even on a machine too noisy for the first; and the share of
/// the server's CPUs the server used meanwhile (None where /proc could not tell).
struct Measured {
    rate: f64,
    cpu_us_per_request: f64,
    server_busy: Option<f64>,
}

/// The server's CPU time (user + system) at the start of a tool's run, and when that was.
struct ServerBusy {
    pid: u32,
    cpu_s: Option<f64>,
    at: std::time::Instant,
}

impl ServerBusy {
    fn start(pid: u32) -> ServerBusy {
        ServerBusy {
            pid,
            cpu_s: load::process_cpu_s(pid),
            at: std::time::Instant::now(),
        }
    }

    /// The share of `cpus` CPUs the server used since [`ServerBusy::start`] (the tool's start-up included,
    /// which only makes it lower).
    fn share(&self, cpus: f64) -> Option<f64> {
        let used = load::process_cpu_s(self.pid)? - self.cpu_s?;
        busy_share(used, self.at.elapsed().as_secs_f64(), cpus)
    }
}

/// CPU seconds `used` over `wall` seconds on `cpus` CPUs, as a share of what they could give.
fn busy_share(used: f64, wall: f64, cpus: f64) -> Option<f64> {
    (wall > 0.0 && cpus > 0.0).then(|| used / (wall * cpus))
}

fn busy_text(share: Option<f64>) -> String {
    share.map_or_else(
        || "busy ?".to_owned(),
        |b| format!("{:.0} % busy", 100.0 * b),
    )
}

#[cfg(test)]
mod tests {
    use super::{busy_share, SATURATED};

    #[test]
    fn busy_share_is_cpu_time_over_what_the_cpus_could_give() {
        let near = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-9);
        assert!(near(busy_share(4.9, 5.0, 1.0), 0.98));
        assert!(near(busy_share(5.0, 5.0, 2.0), 0.5));
        assert!(busy_share(4.9, 5.0, 1.0).unwrap() >= SATURATED);
        assert!(busy_share(5.0, 5.0, 2.0).unwrap() < SATURATED);
        assert_eq!(busy_share(1.0, 0.0, 1.0), None);
        assert_eq!(busy_share(1.0, 1.0, 0.0), None);
    }
}
