//! perf (linux-perf): counts kernel events, here the system calls a command enters (`perf stat`).

use std::path::Path;

use anyhow::Context as _;
use xshell::{cmd, Shell};

use crate::Program;

pub const PERF: Program = Program {
    name: "perf",
    version_args: &["--version"],
    install: "apt-get install linux-perf",
    used_for: "the system calls of icount's chat rows",
};

/// `perf stat -x, -o OUT -e EVENTS [TARGET…] -- ARGV…`: counts `events` while `argv` runs, by `argv` itself
/// (and its threads) when `target` is empty, else by the process `target` names (`-p PID`); perf's CSV.
pub fn stat(
    sh: &Shell,
    events: &str,
    target: &[&str],
    argv: &[String],
    out: &Path,
) -> anyhow::Result<String> {
    let out_s = out.display().to_string();
    cmd!(
        sh,
        "perf stat -x, -o {out_s} -e {events} {target...} -- {argv...}"
    )
    .quiet()
    .ignore_stdout()
    .run()
    .with_context(|| format!("perf stat ({})", PERF.install))?;
    std::fs::read_to_string(out).with_context(|| format!("reading {out_s}"))
}

/// The count of `event` in perf stat's CSV lines (`count,unit,event,…`).
pub fn count(csv: &str, event: &str) -> Option<u64> {
    csv.lines()
        .find(|l| l.split(',').nth(2) == Some(event))
        .and_then(|l| l.split(',').next()?.trim().parse::<u64>().ok())
}
