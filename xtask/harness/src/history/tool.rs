//! The runs of the tools that leave no run folder of a scenario (`calibrate`, `max-rate`, `gate`), recorded
//! in the store as every `run` is: on this machine, at the tree's commit, with their figures.

use std::path::{Path, PathBuf};

use xshell::Shell;

use super::entry::{Entry, Kind, Machine, Measurement};
use super::store::Store;
use crate::metric::Metric;
use crate::rundoc::Status;
use crate::stats::Estimate;

/// A tool's run now, on this machine, of this tree.
pub fn entry(
    sh: &Shell,
    kind: Kind,
    scenario: &str,
    config: String,
    measurements: Vec<Measurement>,
) -> Entry {
    let git = crate::provenance::git(sh);
    Entry {
        kind,
        scenario: scenario.to_owned(),
        started_at: crate::clock::timestamp(),
        finished_at: None,
        commit: git.as_ref().map(|g| g.commit.clone()),
        dirty: git.as_ref().is_some_and(|g| g.dirty),
        profile: Some("release".to_owned()),
        machine: Machine::this(),
        config,
        sut_config: serde_json::Value::Null,
        status: Status::Ok,
        busy: false,
        emulated: false,
        dir: None,
        measurements,
    }
}

/// A figure of a tool's run: the median of `values` and, with two or more, its 95 % interval.
pub fn measurement(step: &str, sut: &str, metric: Metric, values: &[f64]) -> Option<Measurement> {
    let e = Estimate::of(values)?;
    Some(Measurement {
        step: step.to_owned(),
        sut: sut.to_owned(),
        metric,
        value: e.median,
        interval: (e.n > 1).then_some((e.lo, e.hi)),
        rounds: e.n as u32,
        published: None,
    })
}

/// Records `entries` in the store of the results folder `results`; a store that cannot be written is a
/// warning (the tool's answer stands without it). The store's path when recorded.
pub fn record(results: &Path, entries: &[Entry]) -> Option<PathBuf> {
    let path = Store::in_folder(results);
    let recorded = Store::open(&path)
        .and_then(|mut store| entries.iter().try_for_each(|e| store.record(e).map(|_| ())));
    match recorded {
        Ok(()) => {
            println!("history: recorded in {}", path.display());
            Some(path)
        }
        Err(e) => {
            eprintln!("warning: could not record in the results store: {e}");
            None
        }
    }
}
