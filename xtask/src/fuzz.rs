//! `cargo xtask fuzz [--time SECS] [TARGET…]`: coverage-guided fuzzing of bench-proto's SOAP envelope reader,
//! CXF and Customer parsers and chat codec with cargo-fuzz (libFuzzer), on the stable toolchain.
//!
//! cargo-fuzz wants nightly for its sanitizers; without one, `--sanitizer none` and `RUSTC_BOOTSTRAP=1` (for
//! the `-Z` flags cargo-fuzz still passes) build the targets with coverage instrumentation on stable. The
//! targets live in `fuzz/`, a package outside the workspace; their seeds are written by `fuzz/seeds.rs` from
//! the real writers before each run, the corpus grows under `target/fuzz/corpus/`, and a crash is kept
//! in `fuzz/artifacts/<target>/` (to be turned into a regression test).

use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context as _, Result};
use xshell::Shell;

use crate::testing::Step;
use wsbench_harness::paths;
use wsbench_tools::{cargo, process};

mod seeds;

/// Every fuzz target (`fuzz/fuzz_targets/<name>.rs`).
pub(crate) const TARGETS: &[&str] = &["envelope", "cxf", "customer", "chat"];

/// Seconds each target runs in `cargo xtask test` (four steps, so the smoke costs about two minutes).
const SMOKE_SECS: u64 = 25;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Seconds to fuzz each target.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    time: u64,
    /// Targets to fuzz (default: all of envelope, cxf, customer, chat).
    #[arg(value_name = "TARGET")]
    targets: Vec<String>,
}

/// What one target's run did.
#[derive(Debug)]
struct Outcome {
    target: String,
    execs: Option<u64>,
    secs: u64,
    crashes: Vec<PathBuf>,
}

pub(crate) fn run(sh: &Shell, args: Args) -> Result<()> {
    ensure!(args.time > 0, "--time must be at least 1 second");
    let targets: Vec<&str> = if args.targets.is_empty() {
        TARGETS.to_vec()
    } else {
        args.targets
            .iter()
            .map(|t| {
                TARGETS.iter().copied().find(|k| k == t).with_context(|| {
                    format!("no fuzz target {t:?} (one of {})", TARGETS.join(", "))
                })
            })
            .collect::<Result<_>>()?
    };
    let outcomes = fuzz(sh, &targets, args.time)?;
    report(&outcomes)
}

/// The test steps: a short run of each target.
pub(crate) fn test_steps() -> Vec<Step> {
    TARGETS
        .iter()
        .map(|&target| {
            Step::new(format!("fuzz:{target}"), move |sh| {
                report(&fuzz(sh, &[target], SMOKE_SECS)?)
            })
        })
        .collect()
}

/// Prints executions and crashes per target; fails if any target crashed.
fn report(outcomes: &[Outcome]) -> Result<()> {
    println!(
        "\n{:<10} {:>8} {:>14} {:>10}  crashes",
        "target", "seconds", "executions", "per second"
    );
    for o in outcomes {
        let execs = o.execs.map_or("?".to_owned(), |n| n.to_string());
        let rate = o.execs.map_or("?".to_owned(), |n| {
            format!("{:.0}", n as f64 / o.secs.max(1) as f64)
        });
        println!(
            "{:<10} {:>8} {execs:>14} {rate:>10}  {}",
            o.target,
            o.secs,
            o.crashes.len()
        );
        for c in &o.crashes {
            println!("           {}", c.display());
        }
    }
    let crashed: Vec<&str> = outcomes
        .iter()
        .filter(|o| !o.crashes.is_empty())
        .map(|o| o.target.as_str())
        .collect();
    ensure!(
        crashed.is_empty(),
        "fuzzing found crashes in {} (inputs above; make each a regression test)",
        crashed.join(", ")
    );
    Ok(())
}

fn fuzz(sh: &Shell, targets: &[&str], secs: u64) -> Result<Vec<Outcome>> {
    let root = paths::project_root();
    let fuzz_dir = root.join("fuzz");
    let work = root.join("target/fuzz");
    let cargo_fuzz = cargo::cargo_fuzz(sh)?;
    let _cwd = sh.push_dir(&fuzz_dir);
    let _bootstrap = sh.push_env("RUSTC_BOOTSTRAP", "1");
    // Seeds from the real writers, fresh every run.
    let seeds = work.join("seeds");
    let _ = std::fs::remove_dir_all(&seeds);
    seeds::write_seeds(&seeds).context("writing the seed corpus")?;
    let mut outcomes = Vec::new();
    for &target in targets {
        let corpus = work.join("corpus").join(target);
        std::fs::create_dir_all(&corpus)?;
        let seed_dir = seeds.join(target);
        let artifacts = fuzz_dir.join("artifacts").join(target);
        let before = files(&artifacts);
        let max_time = format!("-max_total_time={secs}");
        println!("fuzz: {target} for {secs} s");
        let argv: Vec<String> = [
            process::arg(&cargo_fuzz),
            "fuzz".into(),
            "run".into(),
            "--sanitizer".into(),
            "none".into(),
            target.into(),
            process::arg(&corpus),
            process::arg(&seed_dir),
            "--".into(),
            max_time,
            "-print_final_stats=1".into(),
            "-max_len=65536".into(),
        ]
        .to_vec();
        let out = match process::output_env(sh, &argv, &[]) {
            Ok(out) | Err(process::ProcessError::Failed { output: out, .. }) => out,
            Err(e) => return Err(e).with_context(|| format!("running cargo fuzz on {target}")),
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        let crashes: Vec<PathBuf> = files(&artifacts)
            .into_iter()
            .filter(|f| !before.contains(f))
            .collect();
        if !out.status.success() && crashes.is_empty() {
            let tail: Vec<&str> = stderr.lines().rev().take(30).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            bail!(
                "cargo fuzz run {target} failed ({}) without a crash input:\n{}",
                out.status,
                tail.join("\n")
            );
        }
        outcomes.push(Outcome {
            target: target.to_owned(),
            execs: executions(&stderr),
            secs,
            crashes,
        });
    }
    Ok(outcomes)
}

/// libFuzzer's `-print_final_stats` line `stat::number_of_executed_units: N`.
fn executions(stderr: &str) -> Option<u64> {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("stat::number_of_executed_units:"))
        .and_then(|n| n.trim().parse().ok())
}

fn files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn final_stats_give_the_executions() {
        let stderr = "#1024 DONE cov: 1 ft: 2\nstat::number_of_executed_units: 123456\nstat::peak_rss_mb: 40\n";
        assert_eq!(executions(stderr), Some(123_456));
        assert_eq!(executions("no stats\n"), None);
    }

    #[test]
    fn every_target_has_a_source_file() {
        let dir = paths::project_root().join("fuzz/fuzz_targets");
        for t in TARGETS {
            assert!(dir.join(format!("{t}.rs")).is_file(), "{t}");
        }
        let toml = std::fs::read_to_string(paths::project_root().join("fuzz/Cargo.toml")).unwrap();
        for t in TARGETS {
            assert!(
                toml.contains(&format!("name = \"{t}\"")),
                "{t} is not a [[bin]] of fuzz/"
            );
        }
    }

    #[test]
    fn a_crash_fails_the_report() {
        let ok = Outcome {
            target: "cxf".into(),
            execs: Some(10),
            secs: 1,
            crashes: vec![],
        };
        assert!(report(&[ok]).is_ok());
        let crashed = Outcome {
            target: "chat".into(),
            execs: None,
            secs: 1,
            crashes: vec![PathBuf::from("fuzz/artifacts/chat/crash-1")],
        };
        assert!(report(&[crashed]).is_err());
    }
}
