//! `cargo xtask calibrate`: is bench-client fast enough not to limit a run? It drives the same bench-server
//! endpoint (`GET /health`, or `--operation echoComplexTypeDoc`: wrk posting the same request through a Lua
//! script) with `wrk` and with `bench-client` — same connection count, each
//! pinned to the same client CPUs, the server pinned to the others — and prints both rates and their
//! ratio (goal: bench-client ≥ 1.05 × wrk, the median of the rounds; `--goal` sets another), with each tool's
//! CPU time per request and how busy the server's CPUs were meanwhile. When the server is the limit (its CPUs
//! busy all the time under both tools), the rates measure the server, not the load generators: the CPU each
//! tool spends per request then says which is leaner.

use std::time::Duration;

use anyhow::{bail, Context as _, Result};
use xshell::{cmd, Shell};

use wsbench_harness::local::process::ServerProcess;
use wsbench_harness::pinning::format_cpu_list;
use wsbench_harness::stats::Estimate;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Keep-alive connections, for both tools.
    #[arg(long, default_value_t = 50, value_name = "N")]
    connections: u32,
    /// How long each tool runs per round.
    #[arg(long, default_value = "10s", value_name = "DUR", value_parser = bench_proto::units::parse_duration)]
    duration: Duration,
    /// Rounds; the order of the tools alternates between rounds, and the median ratio is reported.
    #[arg(long, default_value_t = 1, value_name = "N")]
    rounds: u32,
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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Load {
    #[value(name = "http-get")]
    HttpGet,
    #[value(name = "echoComplexTypeDoc")]
    EchoComplexTypeDoc,
}

pub(crate) fn run(sh: &Shell, args: Args) -> Result<()> {
    if cmd!(sh, "which wrk").quiet().ignore_stdout().run().is_err() {
        bail!("wrk is not installed (apt-get install wrk)");
    }
    cmd!(sh, "taskset --version")
        .quiet()
        .ignore_stdout()
        .run()
        .context("taskset (util-linux) is needed to pin")?;
    let allowed = wsbench_tools::host::cpus_allowed();
    let (default_server, default_client) = match allowed.split_last() {
        Some((last, rest)) if !rest.is_empty() => (format_cpu_list(rest), last.to_string()),
        _ => bail!(
            "calibration needs at least two CPUs (one for the server, one for the load generators)"
        ),
    };
    let client_cpus = args.client_cpus.clone().unwrap_or(default_client);
    let server_cpus = args.server_cpus.clone().unwrap_or(default_server);
    let client_threads = wsbench_harness::pinning::parse_cpu_list(&client_cpus)?
        .len()
        .max(1)
        .to_string();
    let server_cpu_count = wsbench_harness::pinning::parse_cpu_list(&server_cpus)?
        .len()
        .max(1);
    let server_workers = server_cpu_count.to_string();

    let bins = wsbench_harness::artifacts::build_release(sh)?;
    let mut server_cmd = std::process::Command::new("taskset");
    server_cmd
        .args(["-c", &server_cpus])
        .arg(&bins.server)
        .args(["--http", "127.0.0.1:0", "--workers", &server_workers]);
    let log_path = std::env::temp_dir().join(format!(
        "wsbench-calibrate-server-{}.log",
        std::process::id()
    ));
    let log = std::fs::File::create(&log_path)
        .with_context(|| format!("creating {}", log_path.display()))?;
    let server = ServerProcess::start(server_cmd, log, Duration::from_secs(30))?;
    let addr = server
        .ready
        .http
        .context("bench-server's READY line has no http address")?;
    let (url, op, wrk_script) = match args.operation {
        Load::HttpGet => (format!("http://{addr}/health"), "http-get", Vec::new()),
        Load::EchoComplexTypeDoc => {
            let script =
                std::env::temp_dir().join(format!("wsbench-calibrate-{}.lua", std::process::id()));
            std::fs::write(&script, wsbench_harness::wrk::echo_complex_post_script())
                .with_context(|| format!("writing {}", script.display()))?;
            let url = format!("http://{addr}{}", bench_proto::cxf::PATH);
            (
                url,
                "echoComplexTypeDoc",
                vec!["-s".to_owned(), script.display().to_string()],
            )
        }
    };

    let conns = args.connections.to_string();
    let secs = format!("{}s", args.duration.as_secs().max(1));
    let json = std::env::temp_dir().join(format!("wsbench-calibrate-{}.json", std::process::id()));
    let client = &bins.client;
    println!(
        "calibrate: {op} {url} · {conns} connections · {secs} per tool · load generators on CPU {client_cpus} \
         ({client_threads} thread(s)), bench-server on CPU {server_cpus} ({server_workers} worker(s))"
    );

    let wrk_args = &wrk_script;
    let server_pid = server.ready.pid;
    let server_cpus_n = server_cpu_count as f64;
    let wrk = || -> Result<Measured> {
        let server0 = ServerBusy::start(server_pid);
        let cpu0 = children_cpu_s();
        let out = cmd!(
            sh,
            "taskset -c {client_cpus} wrk -t {client_threads} -c {conns} -d {secs} {wrk_args...} {url}"
        )
        .quiet()
        .read()
        .context("running wrk")?;
        let cpu_s = children_cpu_s() - cpu0;
        if let Some(line) = out
            .lines()
            .find(|l| l.contains("Non-2xx") || l.contains("Socket errors"))
        {
            eprintln!("  wrk: {}", line.trim());
        }
        let rate = parse_wrk_rate(&out)
            .with_context(|| format!("no Requests/sec in wrk's output:\n{out}"))?;
        let requests = parse_wrk_requests(&out).unwrap_or(rate * args.duration.as_secs_f64());
        Ok(Measured {
            rate,
            cpu_us_per_request: 1e6 * cpu_s / requests.max(1.0),
            server_busy: server0.share(server_cpus_n),
        })
    };
    let bench = || -> Result<Measured> {
        let server0 = ServerBusy::start(server_pid);
        let cpu0 = children_cpu_s();
        cmd!(
            sh,
            "taskset -c {client_cpus} {client} --url {url} --operation {op} --clients {conns} --threads {client_threads} --duration {secs} --json {json}"
        )
        .quiet()
        .ignore_stdout()
        .ignore_stderr()
        .run()
        .context("running bench-client")?;
        let cpu_s = children_cpu_s() - cpu0;
        let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json)?)?;
        let rate = doc["throughput"]["total_per_s"]
            .as_f64()
            .context("results document without total_per_s")?;
        let calls = doc["counts"]["ok"].as_f64().unwrap_or(0.0)
            + doc["counts"]["errors_total"].as_f64().unwrap_or(0.0);
        Ok(Measured {
            rate,
            cpu_us_per_request: 1e6 * cpu_s / calls.max(1.0),
            server_busy: server0.share(server_cpus_n),
        })
    };

    let (mut ratios, mut cpu_ratios, mut busiest) = (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=args.rounds {
        // Alternate the order so that neither tool always meets a warmer server.
        let (w, b) = if round % 2 == 1 {
            let w = wrk()?;
            (w, bench()?)
        } else {
            let b = bench()?;
            (wrk()?, b)
        };
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
        ratios.push(ratio);
        cpu_ratios.push(b.cpu_us_per_request / w.cpu_us_per_request);
        if let (Some(x), Some(y)) = (w.server_busy, b.server_busy) {
            busiest.push(x.min(y));
        }
    }
    let _ = std::fs::remove_file(&json);
    if let Some(script) = wrk_script.get(1) {
        let _ = std::fs::remove_file(script);
    }
    server.stop(Duration::from_secs(20))?;
    let _ = std::fs::remove_file(&log_path);

    let est = Estimate::of(&ratios).context("no round measured")?;
    let best = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let interval = est.interval(|v| format!("{v:.3}"));
    println!(
        "bench-client / wrk = {:.3}{interval} (median of {} round(s); best round {best:.3})",
        est.median, est.n
    );
    if let Some(cpu) = Estimate::of(&cpu_ratios) {
        println!(
            "CPU per request, bench-client / wrk = {:.3}{} (below 1: bench-client is the leaner)",
            cpu.median,
            cpu.interval(|v| format!("{v:.3}"))
        );
    }
    if let Some(busy) = Estimate::of(&busiest).filter(|b| b.median >= SATURATED) {
        println!(
            "the server was the limit: its CPUs were {:.0} % busy under both tools (median of the rounds), so \
             both rates are the server's; compare the CPU per request above",
            100.0 * busy.median
        );
    }
    let goal = args.goal;
    if est.median < goal {
        bail!(
            "bench-client / wrk = {:.3} is below the goal of {goal} (best round {best:.3})",
            est.median
        );
    }
    println!("goal of {goal} met");
    Ok(())
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
            cpu_s: process_cpu_s(pid),
            at: std::time::Instant::now(),
        }
    }

    /// The share of `cpus` CPUs the server used since [`ServerBusy::start`] (the tool's start-up included,
    /// which only makes it lower).
    fn share(&self, cpus: f64) -> Option<f64> {
        let used = process_cpu_s(self.pid)? - self.cpu_s?;
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

/// A process's CPU time so far (user + system, all its threads), from /proc.
fn process_cpu_s(pid: u32) -> Option<f64> {
    let stat = procfs::process::Process::new(i32::try_from(pid).ok()?)
        .ok()?
        .stat()
        .ok()?;
    Some((stat.utime + stat.stime) as f64 / procfs::ticks_per_second() as f64)
}

/// CPU seconds (user + system) used by this process's finished children so far.
fn children_cpu_s() -> f64 {
    use nix::sys::resource::{getrusage, UsageWho};
    let s = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
    getrusage(UsageWho::RUSAGE_CHILDREN).map_or(0.0, |u| s(u.user_time()) + s(u.system_time()))
}

/// `52000 requests in 10.00s, …` from wrk's summary.
fn parse_wrk_requests(out: &str) -> Option<f64> {
    out.lines()
        .find_map(|l| l.trim().split_once(" requests in "))
        .and_then(|(n, _)| n.trim().parse().ok())
}

/// `Requests/sec:  12345.67` from wrk's summary.
fn parse_wrk_rate(out: &str) -> Option<f64> {
    out.lines()
        .find_map(|l| l.trim().strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::{busy_share, parse_wrk_rate, parse_wrk_requests, SATURATED};

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

    #[test]
    fn reads_wrk_summary() {
        let out = "Running 10s test @ http://127.0.0.1:1/\n  1 threads and 50 connections\n\
                   52000 requests in 10.00s, 7.00MB read\nRequests/sec:   5200.31\nTransfer/sec:    716.80KB\n";
        assert_eq!(parse_wrk_rate(out), Some(5200.31));
        assert_eq!(parse_wrk_rate("nothing"), None);
        assert_eq!(parse_wrk_requests(out), Some(52000.0));
    }
}
