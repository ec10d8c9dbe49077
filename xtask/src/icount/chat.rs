//! The chat rows of `cargo xtask icount`: instructions and system calls per chat message sent, for
//! bench-server's fan-out and bench-client's VolanoMark users, in VolanoMark's shape (rooms of 20, paced).
//! Instructions come from callgrind; system calls from `perf stat -e raw_syscalls:sys_enter` (the kernel's
//! count, so exact), both marginal over two runs of different message counts.

use std::fs;
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};
use xshell::{cmd, Shell};

use crate::harness::artifacts::Binaries;
use crate::harness::callgrind;
use crate::harness::local::process::ServerProcess;

/// VolanoMark's room size; 10 rooms as in the scenario, so several rooms have a message in flight at once.
const ROOMS: u64 = 10;
const USERS: u64 = 20;
/// Messages per user in the smaller run (the bigger one sends twice as many).
const COUNT: u64 = 10;

/// Instructions and system calls per message, for one side.
pub(super) struct Measured {
    pub(super) name: &'static str,
    /// (messages, instructions) of the two runs.
    pub(super) instructions: [(u64, u64); 2],
    /// (messages, system calls) of the two runs.
    pub(super) syscalls: [(u64, u64); 2],
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
    let mut cmd = std::process::Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    let server = ServerProcess::start(
        cmd,
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
    let mut syscalls = [(0, 0); 2];
    for (i, count) in [COUNT * scale, 2 * COUNT * scale].into_iter().enumerate() {
        let out = dir.join(format!("chat-server.{i}.out"));
        let mut argv = vec!["valgrind".to_owned()];
        argv.extend(callgrind::args(&server_argv(bins), &out));
        let (server, addr) = start_server(&argv, dir, "chat-server.log")?;
        let ran = run_client(sh, &client_argv(bins, &addr, count));
        stop(server, "bench-server --chat under callgrind")?;
        ran?;
        instructions[i] = (messages(count), callgrind::total(&out)?);

        let (server, addr) = start_server(&server_argv(bins), dir, "chat-server-native.log")?;
        let pid = server.ready.pid.to_string();
        let counted = perf_syscalls(sh, &["-p", &pid], &client_argv(bins, &addr, count), dir);
        stop(server, "bench-server --chat")?;
        syscalls[i] = (messages(count), counted?);
    }
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
    let mut syscalls = [(0, 0); 2];
    let mut measure = || -> Result<()> {
        for (i, count) in [COUNT * scale, 2 * COUNT * scale].into_iter().enumerate() {
            let out = dir.join(format!("chat-client.{i}.out"));
            let vg = callgrind::args(&client_argv(bins, &addr, count), &out);
            run_client(sh, &[&["valgrind".to_owned()][..], &vg].concat())?;
            instructions[i] = (messages(count), callgrind::total(&out)?);
            let counted = perf_syscalls(sh, &[], &client_argv(bins, &addr, count), dir)?;
            syscalls[i] = (messages(count), counted);
        }
        Ok(())
    };
    let measured = measure();
    stop(server, "bench-server --chat")?;
    measured?;
    Ok(Measured {
        name: "bench-client chat --threads 1",
        instructions,
        syscalls,
    })
}

/// Runs a bench-client chat command line; an incomplete or failed run is an error (its exit status says so).
fn run_client(sh: &Shell, argv: &[String]) -> Result<()> {
    let (prog, args) = argv.split_first().context("empty command line")?;
    cmd!(sh, "{prog} {args...}")
        .quiet()
        .ignore_stdout()
        .run()
        .context("bench-client chat")
}

/// System calls entered while `argv` runs: by `argv` itself (and its threads) when `target` is empty, else
/// by the process `target` names (`-p PID`).
fn perf_syscalls(sh: &Shell, target: &[&str], argv: &[String], dir: &Path) -> Result<u64> {
    let out = dir.join("perf.csv");
    let out_s = out.display().to_string();
    cmd!(
        sh,
        "perf stat -x, -o {out_s} -e raw_syscalls:sys_enter {target...} -- {argv...}"
    )
    .quiet()
    .ignore_stdout()
    .run()
    .context("perf stat (apt-get install linux-perf) around bench-client chat")?;
    let text = fs::read_to_string(&out).with_context(|| format!("reading {out_s}"))?;
    parse_perf_count(&text)
        .with_context(|| format!("no system call count in perf's output:\n{text}"))
}

/// The count of perf stat's CSV line for `raw_syscalls:sys_enter`.
fn parse_perf_count(text: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.contains("raw_syscalls:sys_enter"))
        .and_then(|l| l.split(',').next()?.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_perfs_count() {
        let text = "# started on Tue\n\n29,,raw_syscalls:sys_enter,1121134,100.00,,\n";
        assert_eq!(parse_perf_count(text), Some(29));
        assert_eq!(
            parse_perf_count("<not counted>,,raw_syscalls:sys_enter,0,0,,\n"),
            None
        );
        assert_eq!(messages(10), 2000);
    }
}
