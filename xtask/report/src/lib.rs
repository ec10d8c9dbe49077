//! wsbench's report layer: pure functions from a results directory, as the harness's one reader
//! (`wsbench_harness::results`) loads it, to `summary.md` ([`summary`]), `report.html` and `charts/*.svg`
//! (self-contained, written at the end of every run and redrawn by `cargo xtask report`), the knee of a sweep in
//! sentences, grouped bars of the servers measured side by side, and `cargo xtask compare`'s text ([`compare`]). Nothing here runs a program or reads a file but
//! [`write_summary`] and [`render`], the writers.

mod charts;
mod chat;
pub mod compare;
mod connections;
pub mod faults;
#[cfg(test)]
pub mod fixtures;
pub mod history;
mod host_state;
mod html;
pub mod knee;
mod plot;
mod ramp;
mod shapes;
pub mod side;
mod side_charts;
pub mod soak;
mod soak_charts;
mod stage_charts;
pub mod summary;
mod sweep;
#[cfg(test)]
mod tests;
mod tiers;
pub(crate) mod usl;

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use wsbench_harness::results;

/// Throughput must rise by more than this fraction somewhere beyond a point for it not to be the knee.
pub const DEFAULT_KNEE_GAIN: f64 = 0.05;

/// Reads a run directory back (the one reader) and writes its `summary.md`; returns the text written.
pub fn write_summary(dir: &Path) -> anyhow::Result<String> {
    let loaded = results::Run::load(dir)?;
    let text = summary::render(&loaded, &knee_lines(&loaded));
    wsbench_harness::atomic::write(&dir.join("summary.md"), text.as_bytes())?;
    Ok(text)
}

/// Writes `report.html` and `charts/*.svg` for one run directory; returns the report's path.
pub fn write_report(dir: &Path) -> anyhow::Result<PathBuf> {
    render(dir, DEFAULT_KNEE_GAIN)
}

/// One summary line per curve of the run saying where its knee is (or that it has none); empty
/// for runs that do not sweep a numeric variable.
pub(crate) fn knee_lines(run: &results::Run) -> Vec<String> {
    let (axis, curves) = sweep::curves(run, DEFAULT_KNEE_GAIN);
    sweep::knee_sentences(axis, &curves, DEFAULT_KNEE_GAIN)
}

/// Renders the report of `dir` with the given knee threshold.
pub fn render(dir: &Path, knee_gain: f64) -> anyhow::Result<PathBuf> {
    let run = results::Run::load(dir)
        .with_context(|| format!("loading results from {}", dir.display()))?;
    let (axis, curves) = sweep::curves(&run, knee_gain);
    let sentences = sweep::knee_sentences(axis, &curves, knee_gain);
    let charts = charts::all(&run, axis, &curves)
        .with_context(|| format!("charts for {}", dir.display()))?;
    let chart_dir = dir.join("charts");
    fs::create_dir_all(&chart_dir).with_context(|| format!("creating {}", chart_dir.display()))?;
    for c in &charts {
        let path = chart_dir.join(&c.file);
        wsbench_harness::atomic::write(&path, c.svg.as_bytes())?;
    }
    let page = html::Page {
        run: &run,
        axis,
        curves: &curves,
        knee_sentences: &sentences,
        charts: &charts,
    };
    let path = dir.join("report.html");
    wsbench_harness::atomic::write(&path, page.render().as_bytes())?;
    Ok(path)
}
