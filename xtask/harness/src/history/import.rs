//! Results folders into the store: one as a run ends (`record_folder`), or every folder under a results root
//! (`cargo xtask history import results/`), which is how runs made before the store existed get into it.
//! Recording a folder again replaces its run, so importing twice changes nothing.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::of_run;
use super::store::Store;
use crate::results::{self, Run};

/// The store of the results root a run folder (`<root>/<scenario>/<time>`) was written under.
pub(crate) fn store_of_folder(dir: &Path) -> Option<PathBuf> {
    dir.parent()?.parent().map(Store::in_folder)
}

/// Records the run in `dir` in the store of its results root; the store's path.
pub fn record_folder(dir: &Path) -> anyhow::Result<PathBuf> {
    let path = store_of_folder(dir).context("a run folder is <results>/<scenario>/<time>")?;
    let run = Run::load(dir)?;
    let mut store = Store::open(&path)?;
    store.record(&of_run::entry(&run))?;
    Ok(path)
}

/// What an import did.
#[derive(Debug, Default)]
pub struct Imported {
    /// Folders recorded.
    pub recorded: Vec<PathBuf>,
    /// Folders that could not be read, and why.
    pub skipped: Vec<(PathBuf, String)>,
}

/// Records every run folder under `root` (`<root>/<scenario>/<time>/run.json`) in `store`, oldest first.
pub fn import(root: &Path, store: &mut Store) -> anyhow::Result<Imported> {
    let mut found = Vec::new();
    let scenarios =
        std::fs::read_dir(root).with_context(|| format!("reading {}", root.display()))?;
    for scenario in scenarios.flatten().filter(|e| e.path().is_dir()) {
        if let Ok(dirs) = results::run_dirs(&scenario.path()) {
            found.extend(dirs);
        }
    }
    // Oldest first: run folders are named by their UTC start.
    found.sort_by(|a, b| a.file_name().cmp(&b.file_name()).then(a.cmp(b)));
    let mut out = Imported::default();
    for dir in found {
        let loaded = Run::load(&dir).map(|run| of_run::entry(&run));
        match loaded.and_then(|e| store.record(&e).map_err(anyhow::Error::from)) {
            Ok(_) => out.recorded.push(dir),
            Err(e) => out.skipped.push((dir, format!("{e:#}"))),
        }
    }
    Ok(out)
}
