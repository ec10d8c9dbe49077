//! `cargo xtask report <results dir>…`: writes a self-contained `report.html` and `charts/*.svg` into each run directory.

mod charts;
mod html;
pub(crate) mod knee;
pub(crate) mod load;
mod plot;
mod sweep;

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use xshell::Shell;

/// Throughput must rise by more than this fraction somewhere beyond a point for it not to be the knee.
pub(crate) const DEFAULT_KNEE_GAIN: f64 = 0.05;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Run directories (`results/<scenario>/<timestamp>`), or directories holding them (each is reported).
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Knee threshold: the fraction by which throughput must still rise beyond a point (0.05 = 5 %).
    #[arg(long, default_value_t = DEFAULT_KNEE_GAIN)]
    knee_gain: f64,
}

pub(crate) fn run(sh: &Shell, args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.knee_gain >= 0.0, "--knee-gain must not be negative");
    for dir in &args.dirs {
        let dir = sh.current_dir().join(dir);
        for run_dir in load::run_dirs(&dir)? {
            let path = render(&run_dir, args.knee_gain)?;
            println!("report: {}", path.display());
        }
    }
    Ok(())
}

/// Writes `report.html` and `charts/*.svg` for one run directory; returns the report's path.
/// `cargo xtask run` calls this at the end of every run.
pub(crate) fn write_report(dir: &Path) -> anyhow::Result<PathBuf> {
    render(dir, DEFAULT_KNEE_GAIN)
}

/// One summary line per curve of the run saying where its knee is (or that it has none); empty
/// for runs that do not sweep a numeric variable.
pub(crate) fn knee_lines(dir: &Path) -> anyhow::Result<Vec<String>> {
    let run = load::Run::load(dir)?;
    let (axis, curves) = sweep::curves(&run, DEFAULT_KNEE_GAIN);
    Ok(sweep::knee_sentences(axis, &curves, DEFAULT_KNEE_GAIN))
}

fn render(dir: &Path, knee_gain: f64) -> anyhow::Result<PathBuf> {
    let run =
        load::Run::load(dir).with_context(|| format!("loading results from {}", dir.display()))?;
    let (axis, curves) = sweep::curves(&run, knee_gain);
    let sentences = sweep::knee_sentences(axis, &curves, knee_gain);
    let charts = charts::all(&run, axis, &curves)
        .with_context(|| format!("charts for {}", dir.display()))?;
    let chart_dir = dir.join("charts");
    fs::create_dir_all(&chart_dir).with_context(|| format!("creating {}", chart_dir.display()))?;
    for c in &charts {
        let path = chart_dir.join(&c.file);
        fs::write(&path, &c.svg).with_context(|| format!("writing {}", path.display()))?;
    }
    let page = html::Page {
        run: &run,
        axis,
        curves: &curves,
        knee_sentences: &sentences,
        charts: &charts,
    };
    let path = dir.join("report.html");
    fs::write(&path, page.render()).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
pub(crate) mod fixtures;
#[cfg(test)]
mod tests;
