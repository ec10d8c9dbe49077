//! The chat rows of `cargo xtask icount`: instructions and system calls per chat message sent, for
//! bench-server's fan-out and bench-client's VolanoMark users, in VolanoMark's shape (rooms of 20, paced).
//! Instructions come from callgrind; system calls from `perf stat` on the kernel's syscall tracepoints, each
//! marginal over two runs of different message counts. The calls that move bytes (reads and writes of any kind)
//! are counted apart from all calls: the rest are nearly all `epoll_wait`, whose number depends on how often a
//! side runs out of work, so it differs between identical runs (measured: 9,076 and 135,826 waits in two runs
//! of the same 10,000-message client, where one pair of runs had once given 0.13 calls per message). System
//! calls are therefore the median over three pairs of runs. The client's instructions move with that batching
//! too (29.8K–32.0K per message over four runs), the server's do not (within 0.5 %).

use std::fs;
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};
use serde::Serialize;
use xshell::Shell;

use crate::artifacts::Binaries;
use crate::local::process::ServerProcess;
use crate::stats;
use wsbench_tools::valgrind as callgrind;
use wsbench_tools::{perf, process};

/// VolanoMark's room size; 10 rooms as in the scenario, so several rooms have a message in flight at once.
const ROOMS: u64 = 10;
const USERS: u64 = 20;
/// Messages per user in the smaller run (the bigger one sends twice as many).
const COUNT: u64 = 10;
/// Messages per user in the smaller native run that perf counts: natives are fast, so bigger runs, in which
/// start-up and the spread of the waits weigh less.
const PERF_COUNT: u64 = 50;

/// The system calls that move a chat's bytes.
const IO_CALLS: &[&str] = &[
    "read", "write", "readv", "writev", "recvfrom", "sendto", "recvmsg", "sendmsg",
];

/// Pairs of native runs perf counts; each figure is the median of their marginals.
const PERF_REPEATS: usize = 3;

/// System calls a run entered: those of [`IO_CALLS`], and all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Calls {
    io: u64,
    all: u64,
}

/// System calls per message: reads and writes, and all (named in the JSON as the table's other figures are).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(super) struct PerMessage {
    #[serde(rename = "io_calls_per_call")]
    pub(super) io: f64,
    #[serde(rename = "syscalls_per_call")]
    pub(super) all: f64,
}

/// Instructions and system calls per message, for one side.
pub(super) struct Measured {
    pub(super) name: &'static str,
    /// (messages, instructions) of the two runs.
    pub(super) instructions: [(u64, u64); 2],
    /// System calls per message, from native runs.
    pub(super) syscalls: PerMessage,
}

/// Messages sent in a run with `count` messages per user.
fn messages(count: u64) -> u64 {
    ROOMS * USERS * count
}

fn server_argv(bins: &Binaries) -> Vec<String> {
    [
        bins.server.display().to_string(),
        "--http".into(),
        "off".into(),
        "--chat".into(),
        "127.0.0.1:0".into(),
        "--workers".into(),
        "1".into(),
    ]
    .into()
}

fn client_argv(bins: &Binaries, addr: &str, count: u64) -> Vec<String> {
    let mut v = vec![bins.client.display().to_string(), "chat".into()];
    for (flag, value) in [
        ("--addr", addr.to_owned()),
        ("--rooms", ROOMS.to_string()),
        ("--users", USERS.to_string()),
        ("--count", count.to_string()),
        ("--threads", "1".into()),
        ("--timeout", "120s".into()),
    ] {
        v.push(flag.into());
        v.push(value);
    }
    v
}

/// Starts `argv` (bench-server's chat listener, maybe under valgrind); returns it and its chat address.
fn start_server(argv: &[String], dir: &Path, log: &str) -> Result<(ServerProcess, String)> {
    let server = ServerProcess::start(
        argv,
        fs::File::create(dir.join(log))?,
        Duration::from_secs(120),
    )?;
    let addr = server
        .ready
        .chat
        .context("bench-server's READY line has no chat address")?
        .to_string();
    Ok((server, addr))
}

fn stop(server: ServerProcess, what: &str) -> Result<()> {
    let status = server.stop(Duration::from_secs(60))?;
    if !status.success() {
        bail!("{what} exited with {status}");
    }
    Ok(())
}

/// The server's side: callgrind on bench-server, then perf counting its system calls, each against a native
/// client.
pub(super) fn server(sh: &Shell, bins: &Binaries, scale: u64, dir: &Path) -> Result<Measured> {
    let mut instructions = [(0, 0); 2];
    for (i, count) in [COUNT * scale, 2 * COUNT * scale].into_iter().enumerate() {
        let out = dir.join(format!("chat-server.{i}.out"));
        let argv = callgrind::argv(&server_argv(bins), &out);
        let (server, addr) = start_server(&argv, dir, "chat-server.log")?;
        let ran = run_client(sh, &client_argv(bins, &addr, count));
        stop(server, "bench-server --chat under callgrind")?;
        ran?;
        instructions[i] = (messages(count), callgrind::total(&out)?);
    }
    let syscalls = per_message(scale, |count| {
        let (server, addr) = start_server(&server_argv(bins), dir, "chat-server-native.log")?;
        let pid = server.pid.to_string();
        let counted = perf_syscalls(sh, &["-p", &pid], &client_argv(bins, &addr, count), dir);
        stop(server, "bench-server --chat")?;
        counted
    })?;
    Ok(Measured {
        name: "bench-server --chat --workers 1",
        instructions,
        syscalls,
    })
}

/// The client's side: callgrind on bench-client chat, then perf counting its system calls, against a native
/// server.
pub(super) fn client(sh: &Shell, bins: &Binaries, scale: u64, dir: &Path) -> Result<Measured> {
    let (server, addr) = start_server(&server_argv(bins), dir, "chat-native.log")?;
    let mut instructions = [(0, 0); 2];
    let mut measure = || -> Result<PerMessage> {
        for (i, count) in [COUNT * scale, 2 * COUNT * scale].into_iter().enumerate() {
            let out = dir.join(format!("chat-client.{i}.out"));
            run_client(sh, &callgrind::argv(&client_argv(bins, &addr, count), &out))?;
            instructions[i] = (messages(count), callgrind::total(&out)?);
        }
        per_message(scale, |count| {
            perf_syscalls(sh, &[], &client_argv(bins, &addr, count), dir)
        })
    };
    let measured = measure();
    stop(server, "bench-server --chat")?;
    let syscalls = measured?;
    Ok(Measured {
        name: "bench-client chat --threads 1",
        instructions,
        syscalls,
    })
}

/// System calls per message: for each of [`PERF_REPEATS`] pairs of runs (`count` messages per user, then twice
/// as many) counted by `run`, the marginal; the median of those.
fn per_message(scale: u64, mut run: impl FnMut(u64) -> Result<Calls>) -> Result<PerMessage> {
    let (small, big) = (PERF_COUNT * scale, 2 * PERF_COUNT * scale);
    let mut pairs = Vec::with_capacity(PERF_REPEATS);
    for _ in 0..PERF_REPEATS {
        pairs.push([(messages(small), run(small)?), (messages(big), run(big)?)]);
    }
    median_marginals(&pairs)
}

/// The median over `pairs` of each figure's marginal; an error if one did not grow.
fn median_marginals(pairs: &[[(u64, Calls); 2]]) -> Result<PerMessage> {
    let figure = |pick: fn(&Calls) -> u64, what: &str| -> Result<f64> {
        let mut marginals = Vec::with_capacity(pairs.len());
        for [(n1, c1), (n2, c2)] in pairs {
            let m = callgrind::marginal((*n1, pick(c1)), (*n2, pick(c2)))
                .with_context(|| format!("{what} did not grow with the messages sent"))?;
            marginals.push(m);
        }
        stats::median(&marginals).context("no runs")
    };
    Ok(PerMessage {
        io: figure(|c| c.io, "reads and writes")?,
        all: figure(|c| c.all, "system calls")?,
    })
}

/// Runs a bench-client chat command line; an incomplete or failed run is an error (its exit status says so).
fn run_client(sh: &Shell, argv: &[String]) -> Result<()> {
    process::run(sh, argv).context("bench-client chat")
}

/// System calls entered while `argv` runs: by `argv` itself (and its threads) when `target` is empty, else
/// by the process `target` names (`-p PID`).
fn perf_syscalls(sh: &Shell, target: &[&str], argv: &[String], dir: &Path) -> Result<Calls> {
    let text = perf::stat(sh, &events(), target, argv, &dir.join("perf.csv"))
        .context("perf stat around bench-client chat")?;
    parse_perf_count(&text)
        .with_context(|| format!("no system call count in perf's output:\n{text}"))
}

/// perf's event list: every system call, and each of [`IO_CALLS`].
fn events() -> String {
    let mut v = vec!["raw_syscalls:sys_enter".to_owned()];
    v.extend(IO_CALLS.iter().map(|c| format!("syscalls:sys_enter_{c}")));
    v.join(",")
}

/// The counts of perf stat's CSV lines (`count,unit,event,…`); `None` unless every event was counted.
fn parse_perf_count(text: &str) -> Option<Calls> {
    let count = |event: &str| perf::count(text, event);
    let mut io = 0;
    for c in IO_CALLS {
        io += count(&format!("syscalls:sys_enter_{c}"))?;
    }
    Some(Calls {
        io,
        all: count("raw_syscalls:sys_enter")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_perfs_count() {
        let mut text =
            "# started on Tue\n\n29,,raw_syscalls:sys_enter,1121134,100.00,,\n".to_owned();
        for (i, c) in IO_CALLS.iter().enumerate() {
            text += &format!("{i},,syscalls:sys_enter_{c},1121134,100.00,,\n");
        }
        let io = (0..IO_CALLS.len() as u64).sum();
        assert_eq!(parse_perf_count(&text), Some(Calls { io, all: 29 }));
        // `sys_enter_read` must not be taken for `sys_enter_readv`'s line, nor a missing event for zero.
        let without_read: String = text
            .lines()
            .filter(|l| !l.contains("sys_enter_read,"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(parse_perf_count(&without_read), None);
        assert_eq!(
            parse_perf_count("<not counted>,,raw_syscalls:sys_enter,0,0,,\n"),
            None
        );
        assert_eq!(messages(10), 2000);
        assert!(events().contains(",syscalls:sys_enter_sendto"));
    }

    #[test]
    fn takes_the_median_of_the_marginals() {
        let pair = |io2, all2| {
            [
                (1000, Calls { io: 0, all: 0 }),
                (2000, Calls { io: io2, all: all2 }),
            ]
        };
        let pairs = [
            pair(21_000, 9_000),
            pair(20_000, 30_000),
            pair(22_000, 22_000),
        ];
        let m = median_marginals(&pairs).expect("every figure grew");
        assert_eq!(
            m,
            PerMessage {
                io: 21.0,
                all: 22.0
            }
        );
        assert!(median_marginals(&[pair(0, 1)]).is_err());
    }
}
