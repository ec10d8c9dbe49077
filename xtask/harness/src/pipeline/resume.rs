//! `cargo xtask run --resume DIR`: a run continued from its first unfinished step. The steps measured to the
//! end are kept; a step cut short (its checkpoint, or the document written as it was stopped) is set aside as
//! `steps/<id>.cut-short.json` and run again, as is every step not run; run.json notes the resume and
//! provenance.json records it (when, the command, the tree, which steps were kept and which run again).

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{ensure, Context as _, Result};
use xshell::Shell;

use crate::provenance::{self, Provenance, Resume};
use crate::results;
use crate::rundoc::{RunDoc, Status};
use crate::scenario::{Plan, Scenario};
use crate::thresholds;
use bench_proto::numbers::num;

/// A results directory about to be continued.
#[derive(Debug)]
pub struct Resumed {
    pub dir: PathBuf,
    pub run: RunDoc,
    pub prov: Provenance,
}

impl Resumed {
    /// Reads `dir`'s run.json and provenance.json (written from a run's start, so even a killed xtask leaves them).
    pub fn load(dir: &Path) -> Result<Resumed> {
        let read = |name: &str| {
            let path = dir.join(name);
            fs::read_to_string(&path).with_context(|| {
                format!(
                    "--resume {}: no {name} (not a results directory of `cargo xtask run`?)",
                    dir.display()
                )
            })
        };
        let run: RunDoc = serde_json::from_str(&read("run.json")?).with_context(|| {
            format!("--resume: {}/run.json is not a run document", dir.display())
        })?;
        let prov: Provenance =
            serde_json::from_str(&read("provenance.json")?).with_context(|| {
                format!(
                    "--resume: {}/provenance.json is not readable",
                    dir.display()
                )
            })?;
        Ok(Resumed {
            dir: dir.to_path_buf(),
            run,
            prov,
        })
    }

    /// The run's own plan: its scenario file (unchanged since, by its hash), `--quick` and `--set`s.
    pub fn plan(&self, root: &Path) -> Result<Plan> {
        let file = root.join(&self.prov.scenario.file);
        let name = if file.is_file() {
            file.display().to_string()
        } else {
            self.run.scenario.clone()
        };
        let scenario = Scenario::load(root, &name)?;
        ensure!(
            scenario.sha256 == self.run.scenario_sha256,
            "--resume: {} has changed since the run began (sha256 {} then, {} now): its steps would not be \
             the same; restore the file or start a new run",
            scenario.path.display(),
            self.run.scenario_sha256,
            scenario.sha256
        );
        let mut plan = scenario.plan(self.run.quick, &self.run.sets)?;
        plan.sets = self.run.sets.clone();
        // The thresholds it was judged by (its `--threshold`s too), and stopped on if it was.
        plan.thresholds = thresholds::collect(&toml::Table::new(), &self.run.thresholds)?;
        if self.run.abort_on_fail {
            plan.arm_abort()?;
        }
        let ids: Vec<&str> = plan.steps().map(|s| s.id.as_str()).collect();
        let recorded: Vec<&str> = self.run.steps.iter().map(|s| s.id.as_str()).collect();
        ensure!(
            ids == recorded,
            "--resume: the plan's steps {ids:?} are not the run's {recorded:?}"
        );
        Ok(plan)
    }

    /// The directory, run.json and provenance.json to go on with: finished steps kept, the others set to
    /// run, the documents of those cut short set aside, the resume recorded.
    pub(crate) fn continue_run(
        self,
        sh: &Shell,
        at: &str,
    ) -> Result<(PathBuf, RunDoc, Provenance)> {
        let Resumed {
            dir,
            mut run,
            mut prov,
        } = self;
        let (mut kept, mut rerun, mut set_aside) = (vec![], vec![], vec![]);
        for entry in &mut run.steps {
            if entry.status.finished() {
                kept.push(entry.id.clone());
                continue;
            }
            let json = dir.join(&entry.result);
            if json.exists() {
                let doc = results::read_doc(&json);
                let aside = aside_path(&dir, &entry.id);
                fs::rename(&json, &aside)
                    .with_context(|| format!("setting {} aside", json.display()))?;
                let rel = aside
                    .strip_prefix(&dir)
                    .unwrap_or(&aside)
                    .display()
                    .to_string();
                let measured = doc.map_or("no readable figures".to_owned(), |d| {
                    format!("{} s measured, {} ok calls", num(d.elapsed_s), d.counts.ok)
                });
                run.notes.push(format!(
                    "step {} was cut short before the resume ({measured}); its document is kept as {rel} \
                     and the step was run again",
                    entry.id
                ));
                set_aside.push(rel);
            }
            entry.status = Status::NotRun;
            entry.client_exit = None;
            rerun.push(entry.id.clone());
        }
        ensure!(
            !rerun.is_empty(),
            "--resume {}: every step was already measured to the end; nothing to resume",
            dir.display()
        );
        for p in std::mem::take(&mut run.problems) {
            run.notes.push(format!("before the resume: {p}"));
        }
        run.notes.push(format!(
            "resumed at {at}: {} step(s) kept as measured, {} run from {} on",
            kept.len(),
            rerun.len(),
            rerun[0]
        ));
        run.finished_at = None;
        run.status = Status::NotRun;
        prov.finished_at = None;
        prov.resumes.push(Resume {
            at: at.to_owned(),
            invocation: std::env::args().skip(1).collect(),
            git: provenance::git(sh),
            kept,
            rerun,
            set_aside,
        });
        println!(
            "resuming {}: from step {}",
            dir.display(),
            prov.resumes.last().map_or("?", |r| r.rerun[0].as_str())
        );
        Ok((dir, run, prov))
    }
}

/// `steps/<id>.cut-short.json`, or `…cut-short-2.json` when one was set aside before.
fn aside_path(dir: &Path, id: &str) -> PathBuf {
    let mut path = dir.join("steps").join(format!("{id}.cut-short.json"));
    let mut n = 1;
    while path.exists() {
        n += 1;
        path = dir.join("steps").join(format!("{id}.cut-short-{n}.json"));
    }
    path
}
