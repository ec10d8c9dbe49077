//! valgrind: counting instructions with `valgrind --tool=callgrind`, deterministic where wall-clock time is
//! not (the same binary and input repeat within a fraction of a percent, whatever else the machine is doing).

use std::path::Path;

use anyhow::{bail, Context as _};
use xshell::{cmd, Shell};

use crate::Program;

pub const VALGRIND: Program = Program {
    name: "valgrind",
    version_args: &["--version"],
    install: "apt-get install valgrind",
    used_for: "instruction counts (icount, the gate's instruction tier)",
};

/// valgrind's version line; a clear error when it is not installed.
pub fn check_valgrind(sh: &Shell) -> anyhow::Result<String> {
    VALGRIND.require(sh)
}

/// Runs `valgrind ARGS…` quietly; its stdout (what the program under it printed).
pub fn read(sh: &Shell, args: &[String]) -> anyhow::Result<String> {
    cmd!(sh, "valgrind {args...}")
        .quiet()
        .read()
        .context("running valgrind")
}

/// Runs `valgrind ARGS…` quietly, whatever its exit status; its output.
pub fn output(sh: &Shell, args: &[String]) -> anyhow::Result<std::process::Output> {
    cmd!(sh, "valgrind {args...}")
        .quiet()
        .ignore_status()
        .output()
        .context("running valgrind")
}

/// Runs `valgrind ARGS…` quietly, its output discarded.
pub fn run(sh: &Shell, args: &[String]) -> anyhow::Result<()> {
    cmd!(sh, "valgrind {args...}")
        .quiet()
        .ignore_stdout()
        .run()
        .context("running valgrind")
}

/// The argv of `valgrind` running `argv` under callgrind (for a process spawned and stopped by the caller).
pub fn argv(argv: &[String], out_file: &Path) -> Vec<String> {
    let mut v = vec!["valgrind".to_owned()];
    v.extend(args(argv, out_file));
    v
}

/// The argv of `valgrind` running `argv` under callgrind, counting only inside `function` (and what it calls):
/// callgrind's `--toggle-collect`, which also turns collection off at start. A function that never runs
/// leaves a profile that [`total`] refuses (no instructions counted), so a renamed or inlined one is not
/// mistaken for a free one.
pub fn argv_within(argv: &[String], out_file: &Path, function: &str) -> Vec<String> {
    let mut v = vec!["valgrind".to_owned()];
    v.extend(args(argv, out_file));
    v.insert(2, format!("--toggle-collect={function}"));
    v
}

/// valgrind's arguments (after `valgrind`) that run `argv` under callgrind, writing its profile to `out_file`.
pub fn args(argv: &[String], out_file: &Path) -> Vec<String> {
    let mut v = vec![
        "--tool=callgrind".to_owned(),
        "--quiet".to_owned(),
        format!("--callgrind-out-file={}", out_file.display()),
    ];
    v.extend(argv.iter().cloned());
    v
}

/// Instructions a profile counted, over every thread of the process.
pub fn total(out_file: &Path) -> anyhow::Result<u64> {
    let text = std::fs::read_to_string(out_file)
        .with_context(|| format!("reading {}", out_file.display()))?;
    match parse_totals(&text) {
        Some(0) | None => bail!("{}: no instructions counted", out_file.display()),
        Some(n) => Ok(n),
    }
}

/// The first event (Ir, instructions executed) of callgrind's `totals:` line, or of `summary:` when there is no
/// `totals:`.
pub fn parse_totals(text: &str) -> Option<u64> {
    let first_number = |prefix: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
    };
    first_number("totals:").or_else(|| first_number("summary:"))
}

/// Instructions per unit of work from two runs of different sizes: `(i2 − i1) / (n2 − n1)`, so what every run
/// pays once (start-up, warm-up, shutdown) cancels out. None when the runs do not grow with the work.
pub fn marginal((n1, i1): (u64, u64), (n2, i2): (u64, u64)) -> Option<f64> {
    (n2 > n1 && i2 > i1).then(|| (i2 - i1) as f64 / (n2 - n1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_and_marginals() {
        assert_eq!(parse_totals("events: Ir\nsummary: 42 7\n"), Some(42));
        assert_eq!(
            parse_totals("events: Ir\ntotals: 9\nsummary: 42\n"),
            Some(9)
        );
        assert_eq!(parse_totals("events: Ir\n"), None);
        assert_eq!(marginal((100, 1_000_000), (300, 3_000_000)), Some(10_000.0));
        assert_eq!(marginal((100, 5), (100, 9)), None);
        assert_eq!(marginal((100, 9), (200, 5)), None);
        let within = argv_within(&["prog".to_owned()], Path::new("out"), "a::b");
        assert_eq!(
            within,
            [
                "valgrind",
                "--tool=callgrind",
                "--toggle-collect=a::b",
                "--quiet",
                "--callgrind-out-file=out",
                "prog"
            ]
        );
    }
}
