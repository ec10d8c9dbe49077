//! `cargo xtask bench`: runs the criterion benchmarks (`cargo bench`, the release-like bench profile), saving
//! or comparing against named baselines.

use xshell::Shell;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Save the results as this named baseline (criterion `--save-baseline`).
    #[arg(long, conflicts_with = "baseline")]
    save_baseline: Option<String>,
    /// Compare against this saved baseline, keeping it (criterion `--baseline`).
    #[arg(long)]
    baseline: Option<String>,
    /// Only this package's benchmarks (repeatable).
    #[arg(long, short)]
    package: Vec<String>,
    /// Only this bench target (repeatable), e.g. `soap`, `server`, `icount`.
    #[arg(long)]
    bench: Vec<String>,
    /// Shorter runs: 1 s warm-up and 2 s measurement per benchmark.
    #[arg(long)]
    short: bool,
    /// Only benchmarks whose id matches this regular expression (criterion's filter).
    filter: Option<String>,
}

pub(crate) fn run(sh: &Shell, args: Args) -> anyhow::Result<()> {
    let mut cargo_args = Vec::new();
    for p in &args.package {
        cargo_args.extend(["--package".to_owned(), p.clone()]);
    }
    for b in &args.bench {
        cargo_args.extend(["--bench".to_owned(), b.clone()]);
    }
    let bench_args = criterion_args(&args);
    let mut all: Vec<&str> = vec!["bench"];
    all.extend(cargo_args.iter().map(String::as_str));
    all.push("--");
    all.extend(bench_args.iter().map(String::as_str));
    wsbench_tools::cargo::run(sh, &all)
}

/// What follows `--` for the bench binaries (criterion's command line).
fn criterion_args(args: &Args) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(f) = &args.filter {
        out.push(f.clone());
    }
    if let Some(name) = &args.save_baseline {
        out.extend(["--save-baseline".to_owned(), name.clone()]);
    }
    if let Some(name) = &args.baseline {
        out.extend(["--baseline".to_owned(), name.clone()]);
    }
    if args.short {
        out.extend(["--warm-up-time", "1", "--measurement-time", "2"].map(str::to_owned));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baselines_and_filter_reach_criterion() {
        let args = Args {
            save_baseline: None,
            baseline: Some("main".into()),
            package: vec![],
            bench: vec![],
            short: true,
            filter: Some("cxf/".into()),
        };
        assert_eq!(
            criterion_args(&args),
            [
                "cxf/",
                "--baseline",
                "main",
                "--warm-up-time",
                "1",
                "--measurement-time",
                "2"
            ]
        );
    }
}
