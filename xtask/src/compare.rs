//! `cargo xtask compare <A> <B>`: provenance differences in words first, then per step the change in
//! throughput and latency percentiles, with a 95 % interval when either side has repeated runs.

use std::path::PathBuf;

use xshell::Shell;

use wsbench_harness::baseline;
use wsbench_harness::results::{run_dirs, Run};
use wsbench_report::compare;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A (the baseline) then B (the candidate); with `--baseline`, B only. Each is a run directory, several
    /// joined by commas, a directory holding runs (`results/<scenario>` takes every run of it), or `@NAME`,
    /// a baseline saved by `run --save-baseline NAME`.
    #[arg(num_args = 1..=2, required = true, value_name = "RUNS")]
    sides: Vec<String>,
    /// Side A is the saved baseline NAME (critcmp style: `compare --baseline main results/…`).
    #[arg(long, value_name = "NAME")]
    baseline: Option<String>,
    /// The results root that baselines are saved under.
    #[arg(long, value_name = "DIR", default_value = "results")]
    out: PathBuf,
    /// Print the comparison as JSON (one document) instead of Markdown.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(sh: &Shell, args: Args) -> anyhow::Result<()> {
    let (a_spec, b_spec) = match (&args.baseline, args.sides.as_slice()) {
        (Some(name), [b]) => (format!("@{name}"), b.clone()),
        (None, [a, b]) => (a.clone(), b.clone()),
        (Some(_), _) => anyhow::bail!("with --baseline NAME give one run (side B)"),
        (None, _) => anyhow::bail!("give two runs (A and B), or --baseline NAME and one run"),
    };
    let root = sh.current_dir().join(&args.out);
    let a = load_side(sh, &root, &a_spec)?;
    let b = load_side(sh, &root, &b_spec)?;
    compare::check(&a, &b)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&compare::json(&a, &b))?);
    } else {
        print!("{}", compare::markdown(&a, &b));
    }
    Ok(())
}

fn load_side(sh: &Shell, root: &std::path::Path, spec: &str) -> anyhow::Result<Vec<Run>> {
    let mut runs = vec![];
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let dirs = match part.strip_prefix('@') {
            Some(name) => baseline::load(root, name)?,
            None => run_dirs(&sh.current_dir().join(PathBuf::from(part)))?,
        };
        for dir in dirs {
            for d in run_dirs(&dir)? {
                runs.push(Run::load(&d)?);
            }
        }
    }
    anyhow::ensure!(!runs.is_empty(), "no run directories in {spec:?}");
    Ok(runs)
}
