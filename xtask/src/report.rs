//! `cargo xtask report <results dir>…`: redraws `report.html` and `charts/*.svg` in each run directory.

use std::path::PathBuf;

use xshell::Shell;

use wsbench_harness::results;
use wsbench_report as report;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Run directories (`results/<scenario>/<timestamp>`), or directories holding them (each is reported).
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Knee threshold: the fraction by which throughput must still rise beyond a point (0.05 = 5 %).
    #[arg(long, default_value_t = report::DEFAULT_KNEE_GAIN)]
    knee_gain: f64,
}

pub(crate) fn run(sh: &Shell, args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.knee_gain >= 0.0, "--knee-gain must not be negative");
    for dir in &args.dirs {
        let dir = sh.current_dir().join(dir);
        for run_dir in results::run_dirs(&dir)? {
            let path = report::render(&run_dir, args.knee_gain)?;
            println!("report: {}", path.display());
        }
    }
    Ok(())
}
