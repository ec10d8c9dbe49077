//! One call of a scenario, counted on one side of the gate: bench-server (`--workers 1`; for an OSS/J order an
//! app instance and a back end, with a broker that is not counted) and bench-client (one connection, one
//! thread, a fixed number of calls; a chat's rooms of users) run together, first both under callgrind, then both
//! under strace, each twice — `n` calls, then `2n` — so that what a run pays once (start-up, connecting,
//! shutdown) cancels out of the marginal `(x(2n) − x(n)) / n`. A count that depends on timing (see
//! [`super::Band::Timing`]) is the median of [`TIMING_REPEATS`] such marginals. Then `repeats` native runs
//! of `n` calls, timed (wall clock: shown; gated only when both sides have repeats).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use xshell::Shell;

use bench_proto::ready::Ready;
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

/// How many `n`/`2n` pairs give a count that depends on timing: its median marginal is the count. Three
/// pairs outvote one run whose timing was unusual (a burst of load from another process).
pub(crate) const TIMING_REPEATS: usize = 3;

/// A call as a scenario makes it: bench-client's flags for it, and calls in the smaller counted run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Call {
    /// `echoComplexTypeDoc`, `echo 100K`, `get 1K no-keepalive`.
    pub(crate) name: String,
    pub(crate) args: Vec<String>,
    pub(crate) calls: u64,
    /// A new connection per call (no keep-alive): bench-server's instructions then depend on timing too.
    pub(crate) fresh_connections: bool,
    /// Messages of 32 KiB or more: how many reads bench-client takes for a response depends on how much of it
    /// has arrived, so its instructions depend on timing too (get 100K: 105,755 against 104,717, ×0.990, in
    /// two countings of one build on a loaded machine).
    pub(crate) big_messages: bool,
    pub(crate) load: Load,
}

/// What the call is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Load {
    /// An HTTP request of bench-client's `--operation`; a call is one request and its response.
    Http,
    /// VolanoMark's chat (`bench-client chat`, `bench-server --chat`) in rooms of `users`: a call is one
    /// message sent, which the server delivers to each of the room's `users` members (its sender too).
    Chat { rooms: u32, users: u32 },
    /// An OSS/J order (`--operation ossj-order`) posted straight to one application instance (`bench-server
    /// --role app`), which sends it through the broker to one back end (`--role backend`) and waits for the
    /// reply: a call is one transaction. The front end is left out (it is Debian's HAProxy, not built here),
    /// and so is the broker (see `broker.rs`): the "server" counts are the app's and the back end's, added.
    Portal,
}

impl Load {
    /// Deliveries per message sent (1 for HTTP: a response per request).
    pub(crate) fn fan_out(self) -> u32 {
        match self {
            Load::Http | Load::Portal => 1,
            Load::Chat { users, .. } => users,
        }
    }
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

impl Measured {
    /// Per `k`th of a call: a chat message's counts per delivery (`k`, the fan-out).
    pub(crate) fn per(&self, k: u32) -> Measured {
        let k = f64::from(k);
        let c = &self.counts;
        Measured {
            counts: Counts {
                server_instructions: c.server_instructions / k,
                client_instructions: c.client_instructions / k,
                server_syscalls: c.server_syscalls / k,
                client_syscalls: c.client_syscalls / k,
                bytes_sent: c.bytes_sent / k,
                bytes_received: c.bytes_received / k,
            },
            calls_per_s: self.calls_per_s.iter().map(|x| x * k).collect(),
        }
    }
}

/// How a pair of processes is run: both under callgrind, both under strace, or natively.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tool {
    Callgrind,
    Strace,
    Native,
}

/// The server processes of a call, in the order they start (and the reverse of their stopping): their names
/// (in file names) and their argv. The last is the one bench-client talks to.
fn servers(
    bins: &Binaries,
    load: Load,
    broker: Option<&str>,
) -> Result<Vec<(&'static str, Vec<String>)>> {
    let server = |args: &[&str]| -> Vec<String> {
        [process::arg(&bins.server)]
            .into_iter()
            .chain(args.iter().map(|s| (*s).to_owned()))
            .chain(["--workers", "1"].map(String::from))
            .collect()
    };
    Ok(match load {
        Load::Http => vec![("server", server(&["--http", "127.0.0.1:0"]))],
        Load::Chat { .. } => vec![(
            "server",
            server(&["--http", "off", "--chat", "127.0.0.1:0"]),
        )],
        Load::Portal => {
            let broker = broker.context("an OSS/J order needs its broker")?;
            vec![
                (
                    "backend",
                    server(&["--role", "backend", "--http", "off", "--broker", broker]),
                ),
                (
                    "app",
                    server(&[
                        "--role",
                        "app",
                        "--http",
                        "127.0.0.1:0",
                        "--broker",
                        broker,
                        "--instance",
                        "app1",
                    ]),
                ),
            ]
        }
    })
}

/// bench-client making `calls` calls to the server's announced address.
fn client_argv(bins: &Binaries, ready: &Ready, call: &Call, calls: u64) -> Result<Vec<String>> {
    let Load::Chat { rooms, users } = call.load else {
        let addr = ready
            .http
            .context("bench-server's READY line has no http address")?;
        return Ok(http_client_argv(
            bins,
            &format!("http://{addr}"),
            call,
            calls,
        ));
    };
    let addr = ready
        .chat
        .context("bench-server's READY line has no chat address")?;
    let members = u64::from(rooms) * u64::from(users);
    anyhow::ensure!(
        calls % members == 0,
        "{calls} messages do not share out over {members} users"
    );
    let mut v = vec![
        process::arg(&bins.client),
        "chat".to_owned(),
        "--addr".to_owned(),
        addr.to_string(),
    ];
    for (flag, value) in [
        ("--rooms", rooms.to_string()),
        ("--users", users.to_string()),
        ("--count", (calls / members).to_string()),
        ("--runs", "1".to_owned()),
        ("--threads", "1".to_owned()),
        ("--timeout", "300s".to_owned()),
    ] {
        v.extend([flag.to_owned(), value]);
    }
    Ok(v)
}

fn http_client_argv(bins: &Binaries, url: &str, call: &Call, calls: u64) -> Vec<String> {
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
/// What a counted run runs with: the binaries, the call, and the broker's address for an OSS/J order.
#[derive(Clone, Copy)]
struct Setup<'a> {
    bins: &'a Binaries,
    call: &'a Call,
    broker: Option<&'a str>,
}

fn pair(
    sh: &Shell,
    setup: Setup<'_>,
    calls: u64,
    tool: Tool,
    dir: &Path,
    tag: &str,
) -> Result<Duration> {
    let Setup { bins, call, broker } = setup;
    let wrap = |argv: Vec<String>, side: &str| match tool {
        Tool::Callgrind if side == "client" && call.load == Load::Http => callgrind::argv_within(
            &argv,
            &dir.join(format!("{tag}.{side}.callgrind")),
            CLIENT_LOAD_LOOP,
        ),
        Tool::Callgrind => callgrind::argv(&argv, &dir.join(format!("{tag}.{side}.callgrind"))),
        Tool::Strace => strace::argv(&argv, &dir.join(format!("{tag}.{side}.strace"))),
        Tool::Native => argv,
    };
    let mut started_servers: Vec<ServerProcess> = Vec::new();
    for (name, argv) in servers(bins, call.load, broker)? {
        let log = std::fs::File::create(dir.join(format!("{tag}.{name}.log")))?;
        let started = ServerProcess::start(&wrap(argv, name), log, Duration::from_secs(120));
        match started {
            Ok(s) => started_servers.push(s),
            Err(e) => {
                stop_all(started_servers, tool)?;
                return Err(e);
            }
        }
    }
    let ready = &started_servers.last().context("no server")?.ready;
    let client = wrap(client_argv(bins, ready, call, calls)?, "client");
    let started = Instant::now();
    let ran = process::run(sh, &client);
    let elapsed = started.elapsed();
    let stopped = stop_all(started_servers, tool);
    ran.with_context(|| format!("bench-client {} ({calls} calls, {tool:?})", call.name))?;
    stopped?;
    Ok(elapsed)
}

/// Stops `servers`, the last started first (an app before its back end), each by SIGTERM to bench-server
/// itself (its pid from READY): strace passes no signal on to its tracee. A server under callgrind on a
/// loaded machine was seen still finishing addAsync's queued adds 60 s after SIGTERM; a kill would lose its
/// profile, so it gets longer.
fn stop_all(servers: Vec<ServerProcess>, tool: Tool) -> Result<()> {
    let mut first_error = None;
    for server in servers.into_iter().rev() {
        let stopped = process::terminate(server.pid, SERVER_GRACE);
        let status = server.stop(SERVER_GRACE).and_then(|status| {
            stopped?;
            anyhow::ensure!(
                status.success(),
                "bench-server ({tool:?}) exited with {status}"
            );
            Ok(())
        });
        if let Err(e) = status {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// The per-call marginal `(x(2n) − x(n)) / n` of a count read from the `n` and `2n` runs.
fn marginal(n1: u64, n2: u64, x1: u64, x2: u64) -> f64 {
    (x2 as f64 - x1 as f64) / (n2 - n1) as f64
}

fn median(xs: &[f64]) -> f64 {
    wsbench_harness::stats::median(xs).unwrap_or(f64::NAN)
}

/// The names of a call's server processes in its files (see [`servers`]).
fn server_names(load: Load) -> &'static [&'static str] {
    match load {
        Load::Portal => &["backend", "app"],
        Load::Http | Load::Chat { .. } => &["server"],
    }
}

/// Counts `call` with the binaries `bins`, its working files in `dir`.
pub(crate) fn measure(
    sh: &Shell,
    bins: &Binaries,
    call: &Call,
    repeats: u16,
    dir: &Path,
) -> Result<Measured> {
    let broker = match call.load {
        Load::Portal => Some(super::broker::Broker::start(dir)?),
        Load::Http | Load::Chat { .. } => None,
    };
    let setup = Setup {
        bins,
        call,
        broker: broker.as_ref().map(|b| b.addr.as_str()),
    };
    let [server_instructions, client_instructions] = instructions(sh, setup, dir)?;
    let [server_syscalls, client_syscalls, bytes_sent, bytes_received] = traced(sh, setup, dir)?;
    let mut calls_per_s = Vec::new();
    let n2 = 2 * call.calls;
    for r in 0..repeats {
        let elapsed = pair(sh, setup, n2, Tool::Native, dir, &format!("w{r}"))?;
        calls_per_s.push(n2 as f64 / elapsed.as_secs_f64());
    }
    Ok(Measured {
        counts: Counts {
            server_instructions,
            client_instructions,
            server_syscalls,
            client_syscalls,
            bytes_sent,
            bytes_received,
        },
        calls_per_s,
    })
}

/// Instructions per call of the server(s) and of the client: the marginal of one pair of runs when they repeat
/// exactly (HTTP on a kept-alive connection), else the median of [`TIMING_REPEATS`] pairs' marginals.
fn instructions(sh: &Shell, setup: Setup<'_>, dir: &Path) -> Result<[f64; 2]> {
    let call = setup.call;
    let (n1, n2) = (call.calls, 2 * call.calls);
    // With a connection per call, how often bench-server's connection task is polled before its request has
    // arrived depends on timing; so does how the chat's and the portal's messages batch.
    let pairs = if call.fresh_connections || call.big_messages || call.load != Load::Http {
        TIMING_REPEATS
    } else {
        1
    };
    let mut marginals = [Vec::new(), Vec::new()];
    for r in 0..pairs {
        let mut totals = [[0; 2]; 2];
        for (k, n) in [n1, n2].into_iter().enumerate() {
            let tag = format!("c{r}.{k}");
            pair(sh, setup, n, Tool::Callgrind, dir, &tag)?;
            for name in server_names(call.load) {
                totals[0][k] += callgrind::total(&dir.join(format!("{tag}.{name}.callgrind")))?;
            }
            totals[1][k] = callgrind::total(&dir.join(format!("{tag}.client.callgrind")))?;
        }
        for side in 0..2 {
            marginals[side].push(marginal(n1, n2, totals[side][0], totals[side][1]));
        }
    }
    Ok(marginals.map(|m| median(&m)))
}

/// System calls per call of the server(s) and of the client, and the bytes the client sent and received, each
/// the median of [`TIMING_REPEATS`] pairs' marginals. System calls always depend on timing: a read that finds
/// nothing returns EAGAIN, one epoll wake-up brings one event or several.
fn traced(sh: &Shell, setup: Setup<'_>, dir: &Path) -> Result<[f64; 4]> {
    let call = setup.call;
    let (n1, n2) = (call.calls, 2 * call.calls);
    let mut marginals: [Vec<f64>; 4] = Default::default();
    for r in 0..TIMING_REPEATS {
        let mut runs = [[Traced::default(); 2]; 2];
        for (k, n) in [n1, n2].into_iter().enumerate() {
            let tag = format!("s{r}.{k}");
            pair(sh, setup, n, Tool::Strace, dir, &tag)?;
            for name in server_names(call.load) {
                runs[0][k] += strace::read(&dir.join(format!("{tag}.{name}.strace")))?;
            }
            runs[1][k] = strace::read(&dir.join(format!("{tag}.client.strace")))?;
        }
        let [server, client] = runs;
        marginals[0].push(marginal(n1, n2, server[0].syscalls, server[1].syscalls));
        marginals[1].push(marginal(n1, n2, client[0].syscalls, client[1].syscalls));
        marginals[2].push(marginal(n1, n2, client[0].tcp_sent, client[1].tcp_sent));
        marginals[3].push(marginal(
            n1,
            n2,
            client[0].tcp_received,
            client[1].tcp_received,
        ));
    }
    Ok(marginals.map(|m| median(&m)))
}
