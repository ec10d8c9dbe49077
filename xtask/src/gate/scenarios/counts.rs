//! One call of a scenario, counted on one side of the gate: bench-server (`--workers 1`) and bench-client
//! (one connection, one thread, a fixed number of calls) run together, first both under callgrind, then both
//! under strace, each twice — `n` calls, then `2n` — so that what a run pays once (start-up, connecting,
//! shutdown) cancels out of the marginal `(x(2n) − x(n)) / n`. Then `repeats` native runs of `n` calls,
//! timed (wall clock: shown; gated only when both sides have repeats).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use xshell::Shell;

use wsbench_harness::artifacts::Binaries;
use wsbench_harness::local::process::ServerProcess;
use wsbench_tools::process;
use wsbench_tools::strace::{self, Traced};
use wsbench_tools::valgrind as callgrind;

/// bench-client's instructions are counted in its worker thread only (this function and what it calls): the
/// load loop, every call's encoding, exchange, reading, checking and recording. Left out is the main thread's
/// work once the calls are done — the results document's percentiles, means and compressed histograms — which
/// costs ~4 M instructions a run and moves by ±0.5 M with the spread of the latencies recorded (HDR iteration
/// up to the largest bucket): it does not cancel out of the marginal, and made the whole client's count per
/// cxf-echo-complex call vary from 3,080 to 4,800 between identical builds (worker thread only: 3,738 ± 1).
const CLIENT_LOAD_LOOP: &str = "bench_client::engine::worker::main";

/// How long bench-server has to finish after SIGTERM before it is killed.
const SERVER_GRACE: Duration = Duration::from_secs(300);

/// A call as a scenario makes it: bench-client's flags for it, and calls in the smaller counted run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Call {
    /// `echoComplexTypeDoc`, `echo 100K`, `get 1K no-keepalive`.
    pub(crate) name: String,
    pub(crate) args: Vec<String>,
    pub(crate) calls: u64,
}

/// Per call, on one side.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Counts {
    pub(crate) server_instructions: f64,
    pub(crate) client_instructions: f64,
    pub(crate) server_syscalls: f64,
    pub(crate) client_syscalls: f64,
    /// Bytes the client sent and received through its TCP sockets (HTTP heads and bodies).
    pub(crate) bytes_sent: f64,
    pub(crate) bytes_received: f64,
}

/// Counts, and the calls per second of each native run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Measured {
    pub(crate) counts: Counts,
    pub(crate) calls_per_s: Vec<f64>,
}

/// How a pair of processes is run: both under callgrind, both under strace, or natively.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tool {
    Callgrind,
    Strace,
    Native,
}

fn server_argv(bins: &Binaries) -> Vec<String> {
    [process::arg(&bins.server)]
        .into_iter()
        .chain(["--http", "127.0.0.1:0", "--workers", "1"].map(String::from))
        .collect()
}

fn client_argv(bins: &Binaries, url: &str, call: &Call, calls: u64) -> Vec<String> {
    let mut v = vec![
        process::arg(&bins.client),
        "--url".to_owned(),
        url.to_owned(),
    ];
    v.extend(call.args.iter().cloned());
    v.extend(
        [
            "--clients",
            "1",
            "--threads",
            "1",
            "--timeout",
            "60s",
            // No interval closes during a counted run: how many would depends on how long it takes.
            "--interval",
            "1h",
            "--requests",
        ]
        .map(String::from),
    );
    v.push(calls.to_string());
    v
}

/// One run of `calls` calls under `tool`, its files in `dir` under `tag`; the elapsed time of the client.
fn pair(
    sh: &Shell,
    bins: &Binaries,
    call: &Call,
    calls: u64,
    tool: Tool,
    dir: &Path,
    tag: &str,
) -> Result<Duration> {
    let wrap = |argv: Vec<String>, side: &str| match tool {
        Tool::Callgrind if side == "client" => callgrind::argv_within(
            &argv,
            &dir.join(format!("{tag}.{side}.callgrind")),
            CLIENT_LOAD_LOOP,
        ),
        Tool::Callgrind => callgrind::argv(&argv, &dir.join(format!("{tag}.{side}.callgrind"))),
        Tool::Strace => strace::argv(&argv, &dir.join(format!("{tag}.{side}.strace"))),
        Tool::Native => argv,
    };
    let log = std::fs::File::create(dir.join(format!("{tag}.server.log")))?;
    let server = ServerProcess::start(
        &wrap(server_argv(bins), "server"),
        log,
        Duration::from_secs(120),
    )?;
    let addr = server
        .ready
        .http
        .context("bench-server's READY line has no http address")?;
    let client = wrap(
        client_argv(bins, &format!("http://{addr}"), call, calls),
        "client",
    );
    let started = Instant::now();
    let ran = process::run(sh, &client);
    let elapsed = started.elapsed();
    // SIGTERM to bench-server itself (its pid from READY): strace passes no signal on to its tracee. A server
    // under callgrind on a loaded machine was seen still finishing addAsync's queued adds 60 s after SIGTERM;
    // a kill would lose its profile, so it gets longer.
    let stopped = process::terminate(server.pid, SERVER_GRACE);
    let status = server.stop(SERVER_GRACE)?;
    ran.with_context(|| format!("bench-client {} ({calls} calls, {tool:?})", call.name))?;
    stopped?;
    anyhow::ensure!(
        status.success(),
        "bench-server ({tool:?}) exited with {status}"
    );
    Ok(elapsed)
}

/// Counts `call` with the binaries `bins`, its working files in `dir`.
pub(crate) fn measure(
    sh: &Shell,
    bins: &Binaries,
    call: &Call,
    repeats: u16,
    dir: &Path,
) -> Result<Measured> {
    let (n1, n2) = (call.calls, 2 * call.calls);
    let mut instr = [(0, 0); 4];
    let mut traced = [Traced::default(); 4];
    for (k, n) in [n1, n2].into_iter().enumerate() {
        let tag = format!("c{k}");
        pair(sh, bins, call, n, Tool::Callgrind, dir, &tag)?;
        instr[2 * k] = (
            n,
            callgrind::total(&dir.join(format!("{tag}.server.callgrind")))?,
        );
        instr[2 * k + 1] = (
            n,
            callgrind::total(&dir.join(format!("{tag}.client.callgrind")))?,
        );
        let tag = format!("s{k}");
        pair(sh, bins, call, n, Tool::Strace, dir, &tag)?;
        traced[2 * k] = strace::read(&dir.join(format!("{tag}.server.strace")))?;
        traced[2 * k + 1] = strace::read(&dir.join(format!("{tag}.client.strace")))?;
    }
    let per_call = |a: u64, b: u64| (b as f64 - a as f64) / (n2 - n1) as f64;
    let counts = Counts {
        server_instructions: per_call(instr[0].1, instr[2].1),
        client_instructions: per_call(instr[1].1, instr[3].1),
        server_syscalls: per_call(traced[0].syscalls, traced[2].syscalls),
        client_syscalls: per_call(traced[1].syscalls, traced[3].syscalls),
        bytes_sent: per_call(traced[1].tcp_sent, traced[3].tcp_sent),
        bytes_received: per_call(traced[1].tcp_received, traced[3].tcp_received),
    };
    let mut calls_per_s = Vec::new();
    for r in 0..repeats {
        let elapsed = pair(sh, bins, call, n2, Tool::Native, dir, &format!("w{r}"))?;
        calls_per_s.push(n2 as f64 / elapsed.as_secs_f64());
    }
    Ok(Measured {
        counts,
        calls_per_s,
    })
}
