//! `cargo xtask verify <scenario> [--sut LIST | --target URL]`: would these servers pass? Each is started (or
//! reached) as `run` would, and every call the scenario's steps make is made once and its answer checked in
//! full (bench-client `--verify-only`); no load, no results. Exit 1 names the server, operation, field path,
//! expected and received values.

use std::path::PathBuf;

use anyhow::{bail, Result};
use xshell::Shell;

use wsbench_harness::pipeline::check;
use wsbench_harness::pipeline::{Engine, RunOptions};
use wsbench_harness::sut::{Sut, Target};

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Args {
    /// Scenario name (see `cargo xtask list`) or the path of a scenario .toml file.
    pub(crate) scenario: String,
    /// The servers to check: `bench-server`, `jaxws`, `gsoap`, comma-separated.
    #[arg(long, value_name = "LIST", default_value = "bench-server", conflicts_with = "target")]
    pub(crate) sut: String,
    /// A server wsbench did not start: `http://HOST:PORT` (a URL with a path of its own is the service's).
    #[arg(long, value_name = "URL")]
    pub(crate) target: Option<String>,
    /// Override a scenario value (as `run --set`): the calls checked are those of the steps it makes.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) sets: Vec<String>,
}

pub(crate) fn run(sh: &Shell, args: Args) -> Result<()> {
    let suts = match &args.target {
        Some(t) => vec![Sut::External(Target::parse(t, None)?)],
        None => Sut::parse_list(&args.sut)?,
    };
    let opts = RunOptions {
        scenario: args.scenario.clone(),
        quick: false,
        sets: args.sets.clone(),
        out: PathBuf::new(),
        pin: true,
        engine: Engine::Local,
        client_arch: None,
        thresholds: Vec::new(),
        suts,
    };
    let logs = sh.create_temp_dir()?;
    let verdicts = check::verify(sh, &opts, logs.path())?;
    let mut refused = 0;
    for v in &verdicts {
        match &v.outcome {
            Ok(0) => println!("not checked {}: the scenario makes no HTTP call", v.sut),
            Ok(n) => println!("ok      {}: {n} distinct call(s) answered right in full", v.sut),
            Err(e) => {
                refused += 1;
                println!("REFUSED {e:#}");
            }
        }
    }
    if refused > 0 {
        let log = std::fs::read_to_string(logs.path().join("server.log")).unwrap_or_default();
        if !log.trim().is_empty() {
            eprintln!("the servers' log:\n{}", tail(&log, 20));
        }
        bail!(
            "{refused} of {} server(s) would not be measured by {}",
            verdicts.len(),
            args.scenario
        );
    }
    Ok(())
}

/// The last `n` lines of `text`.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
