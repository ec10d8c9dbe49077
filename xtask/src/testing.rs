//! The named steps of `cargo xtask test`: what a step is, and the end-to-end check of a quick scenario run
//! that several subcommands' steps share.

use std::time::Instant;

use anyhow::{ensure, Result};
use xshell::Shell;

use wsbench_harness::pipeline::{Outcome, RunOptions};
use wsbench_harness::rundoc::{Check, Status};
use wsbench_harness::{results, screenshot};

type StepFn = Box<dyn Fn(&Shell) -> Result<()>>;

/// One named step of the test command.
pub(crate) struct Step {
    pub(crate) name: String,
    pub(crate) run: StepFn,
    /// Runs only when `--only` names it: too slow for the default list on a 2-core CI machine, covered there
    /// by a cheaper step (and run in full by GitHub's workflow).
    pub(crate) opt_in: bool,
}

impl Step {
    pub(crate) fn new(
        name: impl Into<String>,
        run: impl Fn(&Shell) -> Result<()> + 'static,
    ) -> Step {
        Step {
            name: name.into(),
            run: Box::new(run),
            opt_in: false,
        }
    }

    /// A step left out of the default list; `--only <name>` runs it.
    pub(crate) fn opt_in(
        name: impl Into<String>,
        run: impl Fn(&Shell) -> Result<()> + 'static,
    ) -> Step {
        Step {
            opt_in: true,
            ..Step::new(name, run)
        }
    }
}

impl std::fmt::Debug for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Step")
            .field("name", &self.name)
            .field("opt_in", &self.opt_in)
            .finish()
    }
}

/// Runs a scenario with `--quick` into a temporary directory and checks what it wrote: run.json,
/// provenance.json, summary.md, one results document per step, written by bench-client, without errors, and a
/// report that headless Chromium draws (`report.png` beside it).
pub(crate) fn quick_scenario(sh: &Shell, name: &str) -> Result<()> {
    quick_scenario_with(sh, name, |_| {}, |_| Ok(()))
}

/// A scenario with faults (`failover`): [`quick_scenario`], and every fault's recovery measured — each fault
/// done and undone, the calls a kill-server cost counted as errors, the first success after it timed.
pub(crate) fn quick_faults(sh: &Shell, name: &str) -> Result<()> {
    quick_faults_with(sh, name, |_| {}, "kill-server")
}

/// [`quick_faults`] with the run options adjusted; faults of kind `costly` must cost counted calls.
pub(crate) fn quick_faults_with(
    sh: &Shell,
    name: &str,
    adjust: impl FnOnce(&mut RunOptions),
    costly: &str,
) -> Result<()> {
    quick_scenario_with(sh, name, adjust, |outcome| {
        let loaded = results::Run::load(&outcome.dir)?;
        for step in &loaded.steps {
            let id = &step.meta.id;
            let t = step
                .record
                .as_ref()
                .and_then(|r| r.timeline.as_ref())
                .ok_or_else(|| anyhow::anyhow!("{id}: no timeline"))?;
            ensure!(!step.meta.faults.is_empty(), "{id}: no faults were done");
            ensure!(
                step.meta.faults.iter().any(|f| f.kind.name() == costly),
                "{id}: no {costly} was done: {:?}",
                step.meta.faults
            );
            for f in &step.meta.faults {
                ensure!(
                    f.problem.is_none() && f.ended_unix_us.is_some(),
                    "{id}: {f:?}"
                );
                let g = wsbench_report::faults::figures(f, t, (0.0, f64::INFINITY));
                if f.kind.name() == costly {
                    ensure!(
                        g.failed.total() > 0 && g.first_ok_after_s.is_some(),
                        "{id}: {costly} cost no counted call, or no recovery was measured: {g:?}"
                    );
                    println!(
                        "{id}: {costly} for {} s: {} calls failed, first success {:.3} s after it was undone",
                        f.for_s,
                        g.failed.total(),
                        g.first_ok_after_s.unwrap_or_default()
                    );
                }
            }
        }
        Ok(())
    })
}

/// [`quick_scenario`] with its run options adjusted and an extra check of what the run wrote.
/// `oss-scale-out --containers --quick`: every step passed with each of the portal's four tiers measured
/// from its containers (front end, app instances as many as the step's, broker, back ends).
pub(crate) fn portal_containers(sh: &Shell) -> Result<()> {
    use wsbench_harness::docker::DockerOptions;
    use wsbench_harness::pipeline::Engine;
    quick_scenario_with(
        sh,
        "oss-scale-out",
        |o| o.engine = Engine::Docker(DockerOptions::default()),
        |outcome| {
            ensure!(outcome.run.containers, "the run was not in containers");
            for step in &outcome.run.steps {
                let tiers: Vec<_> = step.tiers.iter().map(|t| (t.tier, t.processes)).collect();
                ensure!(tiers.len() == 4, "{}: tiers {tiers:?}", step.id);
                ensure!(
                    step.tiers
                        .iter()
                        .all(|t| t.cpu_s > 0.0 && t.peak_rss_kb > 0),
                    "{}: a tier without figures: {:?}",
                    step.id,
                    step.tiers
                );
            }
            Ok(())
        },
    )
}

pub(crate) fn quick_scenario_with(
    sh: &Shell,
    name: &str,
    adjust: impl FnOnce(&mut RunOptions),
    verify: impl FnOnce(&Outcome) -> Result<()>,
) -> Result<()> {
    let tmp = sh.create_temp_dir()?;
    // WSBENCH_KEEP_RESULTS=<dir> keeps the runs (CI uploads them); a temporary directory otherwise.
    let out = std::env::var_os("WSBENCH_KEEP_RESULTS")
        .map(|d| sh.current_dir().join(d))
        .unwrap_or_else(|| tmp.path().to_path_buf());
    // As a user's `cargo xtask run <name> --quick --out <tmp>` gets it.
    let mut opts = RunOptions {
        quick: true,
        ..RunOptions::new(name, out)
    };
    adjust(&mut opts);
    let start = Instant::now();
    let outcome = crate::execute::execute(sh, &opts)?;
    let dir = &outcome.dir;
    for file in ["run.json", "provenance.json", "summary.md", "report.html"] {
        ensure!(dir.join(file).is_file(), "{name}: {file} was not written");
    }
    let summary_text = std::fs::read_to_string(dir.join("summary.md"))?;
    ensure!(
        summary_text.contains("## Measured here vs published"),
        "{name}: summary.md has no published comparison"
    );
    // A step with faults is measured with errors (the calls the faults cost), never without.
    let expected = |s: &wsbench_harness::rundoc::StepEntry| {
        if s.faults.is_empty() {
            Status::Ok
        } else {
            Status::Errors
        }
    };
    let failed: Vec<_> = outcome
        .run
        .steps
        .iter()
        .filter(|s| s.status != expected(s))
        .map(|s| &s.id)
        .collect();
    // A machine shared with other work fails the run's busy check, which says nothing of whether the
    // pipeline works: the smoke run is judged without it (and says so) — and, on a machine found busy,
    // without the speed its thresholds ask (a JIT peer's p99 in a short warm-up); errors are checked below.
    let busy = outcome
        .run
        .failed_checks
        .iter()
        .any(|c| c.check == Check::Busy);
    let busy_only = outcome
        .run
        .failed_checks
        .iter()
        .all(|c| c.check == Check::Busy || (busy && c.check == Check::Threshold));
    if busy_only && !outcome.run.failed_checks.is_empty() {
        println!("{name}: {}", outcome.run.status_words());
    }
    // Steps with faults are expected to count errors (`expected`); any other check failed is not clean.
    let clean = outcome.run.problems.is_empty() && busy_only;
    ensure!(
        clean && failed.is_empty(),
        "{name}: run status {}, steps not ok: {failed:?}, problems: {:?}\n{summary_text}",
        outcome.run.status_words(),
        outcome.run.problems
    );
    let loaded = results::Run::load(dir)?;
    for step in &loaded.steps {
        let doc = step.doc.as_ref().map_err(|e| anyhow::anyhow!("{e}"))?;
        ensure!(
            doc.tool.name == "bench-client",
            "{}: written by {:?}, not bench-client",
            step.meta.result,
            doc.tool.name
        );
        ensure!(
            (doc.counts.errors_total == 0) == step.meta.faults.is_empty() && !doc.partial,
            "{}: errors where none were expected, none counted through its faults, or partial",
            step.meta.result
        );
        let measured =
            doc.counts.ok > 0 || doc.chat.as_ref().is_some_and(|c| c.messages_received > 0);
        ensure!(measured, "{}: nothing was measured", step.meta.result);
    }
    recorded(&opts.out, &outcome)?;
    // The report as a reader sees it: drawn by headless Chromium, the picture kept beside it.
    let png = screenshot::report(sh, &dir.join("report.html"))?;
    verify(&outcome)?;
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{name} --quick: {} steps in {secs:.1} s (including the build check); report drawn: {}",
        outcome.run.steps.len(),
        png.display()
    );
    Ok(())
}

/// The run is in the results store of its results root (`<out>/wsbench.sqlite`), with its figures.
fn recorded(out: &std::path::Path, outcome: &Outcome) -> Result<()> {
    use wsbench_harness::history::{Query, Store};
    let store = Store::open(&Store::in_folder(out))?;
    let q = Query {
        scenario: Some(outcome.run.scenario.clone()),
        ..Query::default()
    };
    let same = |d: &std::path::Path| d.canonicalize().ok() == outcome.dir.canonicalize().ok();
    let runs = store.runs(&q)?;
    ensure!(
        runs.iter()
            .any(|r| r.entry.dir.as_deref().is_some_and(same) && !r.entry.measurements.is_empty()),
        "{}: the run is not in the results store {} with its figures",
        outcome.run.scenario,
        store.path().display()
    );
    Ok(())
}
