//! `run.json`: what one `cargo xtask run` asked for, step by step, and the published figures it is compared
//! with (contract: "Results directory"). Written by xtask; step results are bench-client's `steps/*.json`.

use bench_proto::results::ResultsDoc;
use serde::{Deserialize, Serialize};

use super::faults::FaultKind;
use super::portal::Tier;
use super::scenario::{Length, Plan, Published, Step};

mod problem;
pub use problem::Problem;

pub const SCHEMA: &str = "wsbench.run/v1";

/// Readers are tolerant (defaults for absent fields): a report must still render, with the gaps stated, for
/// an interrupted run or one written by an older wsbench.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RunDoc {
    pub schema: String,
    pub scenario: String,
    pub description: String,
    pub reproduces: String,
    /// The seed document the published figures come from.
    pub seed: String,
    pub scenario_sha256: String,
    pub quick: bool,
    pub sets: Vec<String>,
    pub notes: Vec<String>,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub status: Status,
    /// What went wrong outside the measurements (server crash, client that wrote nothing…).
    pub problems: Vec<Problem>,
    pub steps: Vec<StepEntry>,
    pub published: Vec<Published>,
    /// Server and clients ran as containers on a private network (`--containers`).
    #[serde(default)]
    pub containers: bool,
    /// `--client-arch`: the architecture bench-client was built for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_arch: Option<String>,
    /// `--server-arch` (containers): the architecture of the server image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_arch: Option<String>,
    /// The client (or, in containers, either side) ran under an emulator (qemu-user): its figures are never compared with native or published ones.
    #[serde(default)]
    pub emulated: bool,
    /// Rounds of every step (`repeat`); 1 or absent: once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    /// Pass/fail conditions the run is judged by (`[thresholds]`, `--threshold`), as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<String>,
    /// `abort_on_fail`, `--abort-on-fail`: each HTTP step stopped as soon as a threshold clearly failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub abort_on_fail: bool,
    /// Signs of a busy machine just before the load started (other processes using CPU).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub busy: Vec<String>,
    /// `--soak`, `[soak]`: every step is judged as a soak by these limits ([`crate::soak`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soak: Option<crate::soak::SoakLimits>,
    /// The checks beyond its steps' own status that the run failed (a threshold, a busy machine): any one
    /// makes the run's status `failed` ([`RunDoc::settle`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_checks: Vec<FailedCheck>,
}

/// A check the run was judged by and failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedCheck {
    /// What was checked.
    pub check: Check,
    /// What failed, in words: `p99<1ms at 01-clients-16 (3.2 ms)`.
    pub detail: String,
}

/// What a run is judged by beyond its steps' own status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Check {
    #[serde(rename = "threshold")]
    Threshold,
    #[serde(rename = "busy machine")]
    Busy,
    #[serde(rename = "soak")]
    Soak,
}

impl Check {
    /// Its name in words, as run.json also writes it.
    pub fn name(self) -> &'static str {
        match self {
            Check::Threshold => "threshold",
            Check::Busy => "busy machine",
            Check::Soak => "soak",
        }
    }
}

impl std::fmt::Display for FailedCheck {
    /// `threshold p99<1ms at 01-clients-16 (3.2 ms)`, `busy machine: other processes used …` (without the
    /// list of processes, which the busy warning gives).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = self.check.name();
        match self.check {
            Check::Busy => {
                let short = self.detail.split(": ").next().unwrap_or_default();
                write!(f, "{name}: {short}")
            }
            Check::Threshold | Check::Soak => write!(f, "{name} {}", self.detail),
        }
    }
}

/// How a run or a step ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Measured, without errors.
    Ok,
    /// Measured, and some calls failed (counted in the results, never as throughput).
    Errors,
    /// Measured in part: the step was cut short (the client or xtask killed, Ctrl-C, a results write that
    /// failed), and its document holds what was measured up to then (bench-client's last checkpoint, or the
    /// document it wrote as it stopped). Its figures are shown as measured over that shorter time.
    CutShort,
    /// Could not be measured (no results document, server gone, a chat run the server did not let
    /// complete); for a run, also: failed a check.
    Failed,
    /// Not run (an earlier failure stopped the run).
    #[default]
    NotRun,
}

impl Status {
    /// The one rule for a step, whatever ran it: bench-client's exit code (None: killed by a signal) and the
    /// results document it left. Ok needs exit 0, a complete document and no failed call; exit 1 with a
    /// document is a measurement with errors; a partial document (a checkpoint left by a killed client, or
    /// one written as it stopped early or as its results could no longer be written: exit 3) is a step cut
    /// short; anything else — no document, a usage error, a crash, a document of a step in which no call
    /// completed, or of a chat run the server did not let complete ([`RunEnd::failed`]) — could not be
    /// measured. Exit 4 (a `--threshold` bench-client judged failed) is a measurement like exit 0 or 1: the
    /// threshold is the run's failed check, not the step's; a step that stopped on one (`--abort-on-fail`)
    /// is measured as far as it went.
    ///
    /// [`RunEnd::failed`]: bench_proto::results::RunEnd::failed
    pub fn of_step(exit: Option<i32>, doc: &Result<ResultsDoc, String>) -> Status {
        let Ok(d) = doc else {
            return Status::Failed;
        };
        let measured = d.counts.ok > 0 || d.chat.as_ref().is_some_and(|c| c.messages_received > 0);
        let clean = d.counts.errors_total == 0;
        // A chat run the server did not let complete (a user failed, the run's deadline) is VolanoMark
        // without a score: what it measured is kept to be read, never compared.
        let chat_failed = d
            .chat
            .as_ref()
            .is_some_and(|c| c.runs.iter().any(|r| r.end.failed()));
        match exit {
            _ if !measured || chat_failed => Status::Failed,
            Some(4) if d.shape.aborted.is_some() && clean => Status::Ok,
            Some(4) if d.shape.aborted.is_some() => Status::Errors,
            None | Some(0 | 1 | 3 | 4) if d.partial => Status::CutShort,
            Some(0 | 4) if clean => Status::Ok,
            Some(0 | 1 | 4) => Status::Errors,
            _ => Status::Failed,
        }
    }

    /// The status in the words the summary's tables, report.html's status line and the console use: `ok`,
    /// `ERRORS`, `CUT SHORT`, `FAILED`, `not run`.
    pub fn word(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Errors => "ERRORS",
            Status::CutShort => "CUT SHORT",
            Status::Failed => "FAILED",
            Status::NotRun => "not run",
        }
    }

    /// Its name in run.json, in the history store and in report.html's `data-status` (`ok`, `cut_short`).
    pub fn key(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Errors => "errors",
            Status::CutShort => "cut_short",
            Status::Failed => "failed",
            Status::NotRun => "not_run",
        }
    }

    /// The status a name gives back (an unknown one: not run).
    pub fn of_key(key: &str) -> Status {
        [Status::Ok, Status::Errors, Status::CutShort, Status::Failed]
            .into_iter()
            .find(|s| s.key() == key)
            .unwrap_or_default()
    }

    /// Measured to the end (with or without errors): a resumed run keeps it.
    pub fn finished(self) -> bool {
        matches!(self, Status::Ok | Status::Errors)
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct StepEntry {
    pub id: String,
    pub label: String,
    pub name: Option<String>,
    pub operation: String,
    pub clients: Option<u32>,
    pub rate: Option<f64>,
    /// Server worker threads in force (from the READY line, else as asked).
    pub workers: Option<u32>,
    /// Server instances the load was spread across (scale-out scenarios only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers: Option<u32>,
    /// The round of a repeated step (ids end `-r<round>`); None when steps run once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// The server it measured (`bench-server`, `jaxws`, `gsoap`, `external`) when the run named one
    /// (`--sut`, `--target`); absent: bench-server alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sut: Option<String>,
    pub keepalive: bool,
    pub duration_s: Option<f64>,
    pub requests: Option<u64>,
    pub message_size: Option<String>,
    /// `steps/<id>.json`, relative to the run directory.
    pub result: String,
    pub status: Status,
    /// bench-client's exit code (0 ok, 1 errors or failure to start, 2 usage).
    pub client_exit: Option<i32>,
    /// TCP sockets in TIME_WAIT on the host before and after the step (/proc/net/tcp{,6}).
    pub time_wait_before: Option<u64>,
    pub time_wait_after: Option<u64>,
    /// The faults done to the server during the step, as they happened.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<FaultRecord>,
    /// What each tier of the OSS/J portal used during the step (its processes on this machine, or its
    /// containers' control groups), front end first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tiers: Vec<TierUse>,
}

/// What one tier's processes used during a step, read by the harness at its start and end (from /proc, or
/// from its containers' control groups).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TierUse {
    pub tier: Tier,
    /// Its processes (a tier of several instances counted whole).
    pub processes: u32,
    /// CPU seconds (user + system) over the step, warm-up included.
    pub cpu_s: f64,
    /// The step's wall-clock seconds those were used in: `cpu_s / wall_s` is its CPUs' worth.
    pub wall_s: f64,
    /// Their peak resident sets summed (VmHWM at the step's end; a container's control group's memory
    /// peak, page cache included), KiB.
    pub peak_rss_kb: u64,
}

/// A fault as it happened: what, when it was planned, and when it began and ended on the UTC clock (µs since
/// the Unix epoch: the results document's `timeline.start_unix_us` places them on the step's timeline).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FaultRecord {
    pub kind: FaultKind,
    /// Planned: seconds from the start of the measured interval, and for how long.
    pub at_s: f64,
    pub for_s: f64,
    /// When it was done (SIGKILL, SIGSTOP sent).
    pub began_unix_us: u64,
    /// When it was undone: the restarted server printed READY, SIGCONT sent. None: it could not be.
    pub ended_unix_us: Option<u64>,
    /// What went wrong doing or undoing it, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

impl StepEntry {
    /// The step's id without its round: the same for every round of a repeated step.
    pub fn group(&self) -> &str {
        match self.round {
            Some(r) => self.id.strip_suffix(&format!("-r{r}")).unwrap_or(&self.id),
            None => &self.id,
        }
    }

    pub fn planned(step: &Step) -> StepEntry {
        let c = &step.client;
        StepEntry {
            id: step.id.clone(),
            label: step.label.clone(),
            name: step.name.clone(),
            operation: c.operation.name().to_owned(),
            clients: c.clients,
            rate: c.rate,
            workers: step.workers,
            servers: step.servers,
            round: step.round,
            sut: step.sut.clone(),
            keepalive: c.keepalive,
            duration_s: match c.length {
                Some(Length::Duration(d)) => Some(d.0.as_secs_f64()),
                _ => None,
            },
            requests: match c.length {
                Some(Length::Requests(n)) => Some(n),
                _ => None,
            },
            message_size: c.message_size.as_ref().map(|m| m.text.clone()),
            result: format!("steps/{}.json", step.id),
            status: Status::NotRun,
            client_exit: None,
            time_wait_before: None,
            time_wait_after: None,
            faults: Vec::new(),
            tiers: Vec::new(),
        }
    }
}

impl RunDoc {
    pub fn planned(plan: &Plan, started_at: String) -> RunDoc {
        let f = &plan.scenario.file;
        RunDoc {
            schema: SCHEMA.to_owned(),
            scenario: plan.scenario.name.clone(),
            description: f.description.clone(),
            reproduces: f.reproduces.clone(),
            seed: f.seed.clone(),
            scenario_sha256: plan.scenario.sha256.clone(),
            quick: plan.quick,
            sets: plan.sets.clone(),
            notes: f.notes.clone(),
            started_at,
            finished_at: None,
            status: Status::NotRun,
            problems: Vec::new(),
            steps: plan.steps().map(StepEntry::planned).collect(),
            published: f.published.clone(),
            containers: false,
            client_arch: None,
            server_arch: None,
            emulated: false,
            repeat: (plan.repeat > 1).then_some(plan.repeat),
            thresholds: plan.thresholds.iter().map(|t| t.text.clone()).collect(),
            abort_on_fail: plan.aborts(),
            busy: Vec::new(),
            soak: plan.soak.clone(),
            failed_checks: Vec::new(),
        }
    }

    /// The run's status, the one rule: the worst of its steps', failed when something outside them went wrong
    /// (a problem) or when it failed a check (a threshold, a busy machine).
    pub fn settle(&mut self) {
        let worst = |a: Status, b: Status| {
            let rank = |s| match s {
                Status::Ok => 0,
                Status::Errors => 1,
                Status::CutShort => 2,
                Status::NotRun => 3,
                Status::Failed => 4,
            };
            if rank(b) > rank(a) {
                b
            } else {
                a
            }
        };
        let mut status = self.steps.iter().map(|s| s.status).fold(Status::Ok, worst);
        if !self.problems.is_empty() || !self.failed_checks.is_empty() {
            status = worst(status, Status::Failed);
        }
        self.status = status;
    }

    /// The run's status in words, as summary.md, report.html and the console give it: what failed first
    /// (each failed check named), then the steps, counted as steps × rounds when repeated.
    pub fn status_words(&self) -> String {
        let count = |s: Status| self.steps.iter().filter(|e| e.status == s).count();
        let groups: std::collections::BTreeSet<&str> =
            self.steps.iter().map(StepEntry::group).collect();
        let n = groups.len();
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        let steps = match self.repeat.filter(|&r| r > 1) {
            Some(r) => format!("{} × {r} rounds", plural(n, "step")),
            None => plural(n, "step"),
        };
        if self.status == Status::Ok {
            let checks = match self.thresholds.len() {
                0 => String::new(),
                t => format!(", {} passed", plural(t, "threshold")),
            };
            return format!("ok: {steps} measured without errors{checks}");
        }
        let mut parts: Vec<String> = self.failed_checks.iter().map(|c| c.to_string()).collect();
        if !self.problems.is_empty() {
            parts.push(plural(self.problems.len(), "problem"));
        }
        let (ok, errors) = (count(Status::Ok), count(Status::Errors));
        let (failed, not_run) = (count(Status::Failed), count(Status::NotRun));
        let cut = count(Status::CutShort);
        if ok < self.steps.len() {
            let cut = if cut > 0 {
                format!("{cut} cut short, ")
            } else {
                String::new()
            };
            parts.push(format!(
                "steps: {ok} ok, {errors} with errors, {cut}{failed} failed, {not_run} not run (of {steps})"
            ));
        } else {
            parts.push(format!("all {steps} measured without errors"));
        }
        let word = match self.status {
            Status::Errors | Status::CutShort => self.status.word(),
            _ => Status::Failed.word(),
        };
        format!("{word}: {}", parts.join("; "))
    }
}

impl Published {
    /// Whether the figure is compared with this step: every selector it gives must match.
    pub fn matches(&self, step: &StepEntry) -> bool {
        self.clients.map_or(true, |c| step.clients == Some(c))
            && self.operation.map_or(true, |o| step.operation == o.name())
            && self.workers.map_or(true, |w| step.workers == Some(w))
            && self
                .step
                .as_deref()
                .map_or(true, |n| step.name.as_deref() == Some(n))
            && self
                .instances
                .map_or(true, |i| step.servers.unwrap_or(1) == i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A status's key is its name in run.json (serde's), and reads back as itself.
    #[test]
    fn status_keys_are_run_json_names() {
        for s in [
            Status::Ok,
            Status::Errors,
            Status::CutShort,
            Status::Failed,
            Status::NotRun,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.key());
            assert_eq!(Status::of_key(s.key()), s);
        }
        assert_eq!(Status::of_key("nonsense"), Status::NotRun);
    }
    use crate::paths::project_root;
    use crate::scenario::{self, Scenario};

    /// Every published figure of every scenario is compared with some step of the full run (a figure for
    /// several server instances needs a scale-out run, which the scenario may leave to `--set servers=…`).
    #[test]
    fn every_published_figure_matches_a_step() {
        let root = project_root();
        for name in scenario::names(&root).unwrap() {
            let plan = Scenario::load(&root, &name)
                .unwrap()
                .plan(false, &[])
                .unwrap();
            for p in &plan.scenario.file.published {
                let matched = plan.steps().any(|st| p.matches(&StepEntry::planned(st)));
                assert!(
                    matched || p.instances.is_some_and(|i| i > 1),
                    "{name}: `{}` matches no step",
                    p.label
                );
            }
        }
    }

    fn doc(ok: u64, errors: u64, partial: bool) -> Result<ResultsDoc, String> {
        let text = std::fs::read_to_string(
            project_root().join("xtask/tests/fixtures/summary/steps/01-clients-16.json"),
        )
        .unwrap();
        let mut d: ResultsDoc = serde_json::from_str(&text).unwrap();
        d.counts.ok = ok;
        d.counts.errors_total = errors;
        d.partial = partial;
        Ok(d)
    }

    /// The one status rule: what every backend's steps are judged by.
    #[test]
    fn a_step_is_judged_by_its_exit_code_and_its_document() {
        assert_eq!(Status::of_step(Some(0), &doc(10, 0, false)), Status::Ok);
        assert_eq!(Status::of_step(Some(1), &doc(10, 3, false)), Status::Errors);
        assert_eq!(
            Status::of_step(Some(0), &doc(10, 0, true)),
            Status::CutShort,
            "partial: stopped early"
        );
        assert_eq!(
            Status::of_step(None, &doc(10, 0, true)),
            Status::CutShort,
            "a checkpoint left by a killed client"
        );
        assert_eq!(
            Status::of_step(Some(3), &doc(10, 2, true)),
            Status::CutShort,
            "its results could no longer be written"
        );
        assert_eq!(
            Status::of_step(Some(1), &doc(0, 10, false)),
            Status::Failed,
            "nothing measured"
        );
        assert_eq!(
            Status::of_step(Some(0), &doc(0, 0, false)),
            Status::Failed,
            "nothing measured"
        );
        assert_eq!(
            Status::of_step(Some(2), &doc(10, 0, false)),
            Status::Failed,
            "usage error"
        );
        assert_eq!(
            Status::of_step(None, &doc(10, 0, false)),
            Status::Failed,
            "killed by a signal"
        );
        assert_eq!(
            Status::of_step(Some(0), &Err("missing".into())),
            Status::Failed
        );
        assert_eq!(
            Status::of_step(Some(4), &doc(10, 0, false)),
            Status::Ok,
            "a threshold failed at the end: the run's check, not the step's"
        );
        let mut aborted = doc(10, 0, true);
        if let Ok(d) = &mut aborted {
            d.shape.aborted = Some(bench_proto::results::Aborted {
                at_s: 12.0,
                threshold: "p99<1ms".into(),
                measured: 3.5,
                window_s: 10.0,
                calls: 1000,
            });
        }
        assert_eq!(
            Status::of_step(Some(4), &aborted),
            Status::Ok,
            "stopped on a failed threshold: measured as far as it went"
        );
    }

    /// A chat run the server did not let complete fails the step, whatever it measured until then; one cut
    /// short by a signal is a step cut short.
    #[test]
    fn a_chat_run_the_server_did_not_let_complete_fails_the_step() {
        use bench_proto::results::{ChatResults, ChatRun, RunEnd};
        let chat = |end: RunEnd| {
            let mut d = doc(190, 1, end.cut_short()).unwrap();
            d.chat = Some(ChatResults {
                messages_received: 190,
                runs: vec![ChatRun {
                    run: 1,
                    messages_received: 190,
                    end,
                    ..ChatRun::default()
                }],
                ..ChatResults::default()
            });
            Ok(d)
        };
        for end in [RunEnd::Failed, RunEnd::Deadline, RunEnd::NotStarted] {
            assert_eq!(
                Status::of_step(Some(1), &chat(end)),
                Status::Failed,
                "{end}"
            );
        }
        assert_eq!(
            Status::of_step(Some(0), &chat(RunEnd::Interrupted)),
            Status::CutShort
        );
        assert_eq!(
            Status::of_step(Some(1), &chat(RunEnd::Completed)),
            Status::Errors
        );
    }
}
