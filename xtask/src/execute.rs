//! A scenario run end to end, as `run` and the test steps both make it: the harness's pipeline writes run.json
//! and provenance.json beside bench-client's documents, then the report crate reads the directory back and
//! writes summary.md and report.html. Composed here because the harness lies below the report crate.

use anyhow::Result;
use xshell::Shell;

use wsbench_harness::pipeline::{self, Outcome, RunOptions};

/// Runs the scenario, writes its documents and prints the summary's headline; Err only when nothing could be
/// measured at all.
pub(crate) fn execute(sh: &Shell, opts: &RunOptions) -> Result<Outcome> {
    let outcome = pipeline::execute(sh, opts)?;
    let summary = wsbench_report::write_summary(&outcome.dir)?;
    print_headline(&summary);
    match wsbench_report::write_report(&outcome.dir) {
        Ok(path) => println!("report: {}", path.display()),
        Err(e) => eprintln!("warning: the report could not be written: {e:#}"),
    }
    println!("summary: {}", outcome.dir.join("summary.md").display());
    record(&outcome.dir);
    Ok(outcome)
}

/// Prints the status lines and the measured-vs-published table of a summary to the terminal.
fn print_headline(summary: &str) {
    println!();
    for line in summary.lines().take_while(|l| !l.starts_with("## Steps")) {
        println!("{line}");
    }
}

/// Records the run in the results store of its results root; a store that cannot be written is a warning,
/// never a lost run (the folder holds everything the store would).
pub(crate) fn record(dir: &std::path::Path) {
    match wsbench_harness::history::import::record_folder(dir) {
        Ok(store) => println!("history: recorded in {}", store.display()),
        Err(e) => eprintln!("warning: the run could not be recorded in the results store: {e:#}"),
    }
}
