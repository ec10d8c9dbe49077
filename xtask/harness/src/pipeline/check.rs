//! `cargo xtask verify`: each server of a run request started (or, `--target`, reached) as the run would, and
//! every call of the scenario's steps made once and checked in full, without any load or results directory.

use std::path::Path;

use anyhow::{Context as _, Result};
use xshell::Shell;

use super::super::artifacts;
use super::super::backend::Backend;
use super::super::local::Local;
use super::super::pinning::Pinning;
use super::super::scenario::Scenario;
use super::super::{interrupt, paths};
use super::{peers_of, suts, RunOptions};
use wsbench_tools::{host, taskset};

/// One server's verdict: how many distinct calls were verified, or the first refusal.
#[derive(Debug)]
pub struct Verdict {
    pub sut: String,
    pub outcome: Result<usize>,
}

/// Verifies every server of `opts` against the scenario's calls (one instance each: the calls are the same
/// in every instance), the servers' logs to `log_dir/server.log`.
pub fn verify(sh: &Shell, opts: &RunOptions, log_dir: &Path) -> Result<Vec<Verdict>> {
    let root = paths::project_root();
    let plan = Scenario::load(&root, &opts.scenario)?
        .plan(opts.quick, &opts.sets)?
        .for_suts(&opts.suts)?;
    interrupt::install()?;
    let bins = artifacts::build_release(sh)?;
    let peers = artifacts::peers::build_all(sh, &root, &peers_of(&opts.suts))?;
    let pinning = Pinning::plan(&host::cpus_allowed(), opts.pin, taskset::version(sh));
    let mut local = Local::new(bins, pinning, peers, log_dir)?;
    let log = log_dir.join("server.log");
    let mut verdicts: Vec<Verdict> = Vec::new();
    for instance in &plan.instances {
        let name = instance.sut.to_string();
        if verdicts.iter().any(|v| v.sut == name) {
            continue;
        }
        let outcome = local
            .start(&plan, instance)
            .and_then(|servers| suts::verify(instance, &servers, &mut local))
            .with_context(|| name.clone());
        let stopped = local.stop(&log);
        verdicts.push(Verdict {
            sut: name,
            outcome: outcome.and_then(|n| stopped.map(|()| n)),
        });
    }
    Ok(verdicts)
}
