//! The one step loop through a fake backend: statuses, problems and the record, for every shape of failure.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use bench_proto::results::{ChatResults, ResultsDoc};

use super::*;
use crate::backend::{Backend, ClientRun, Endpoint, Servers};
use crate::scenario::{Instance, Step};

#[test]
fn run_dirs_are_utc_stamps_and_never_reused() {
    let base = std::env::temp_dir().join(format!("wsbench-rundir-{}", std::process::id()));
    let a = create_run_dir(&base, "2026-11-29T19:30:00Z").unwrap();
    let b = create_run_dir(&base, "2026-11-29T19:30:00Z").unwrap();
    assert_eq!(a.file_name().unwrap(), "20261129T193000Z");
    assert_eq!(b.file_name().unwrap(), "20261129T193000Z-2");
    assert!(a.join("steps").is_dir());
    fs::remove_dir_all(base).unwrap();
}

/// What the fake does for one step.
#[derive(Debug, Clone)]
enum Script {
    /// Exit with this code after writing this document.
    Writes(Option<i32>, Box<ResultsDoc>),
    /// Exit with this code and write nothing.
    Exits(Option<i32>),
    /// Still running at the step's deadline: stopped (by a signal) after writing this document.
    Overran(Box<ResultsDoc>),
}

/// A backend that starts nothing: it writes the documents it is told to, and records what it was asked.
#[derive(Debug, Default)]
struct Fake {
    /// Instances (by their workers) whose servers fail to start.
    failing_starts: Vec<Option<u32>>,
    /// Step id → what its clients do; unscripted steps write a clean document.
    scripts: BTreeMap<String, Script>,
    /// The server dies after this many steps.
    dies_after: Option<usize>,
    calls: Vec<String>,
    steps_run: usize,
}

fn fixture(path: &str) -> PathBuf {
    paths::project_root()
        .join("xtask/tests/fixtures")
        .join(path)
}

fn fixture_doc(path: &str) -> ResultsDoc {
    serde_json::from_str(&fs::read_to_string(fixture(path)).unwrap()).unwrap()
}

/// A clean document for `step`, its figures made distinct per step (`seed`) so a mix-up would show.
fn clean_doc(step: &Step, seed: usize) -> ResultsDoc {
    let f = 1.0 + seed as f64 / 8.0;
    if step.client.operation.is_chat() {
        let mut d = fixture_doc("results/volano-chat/20260304T100000Z/steps/03-rooms-10.json");
        if let Some(c) = d.chat.as_mut() {
            c.score_msg_per_s *= f;
        }
        return d;
    }
    let mut d = fixture_doc("summary/steps/01-clients-16.json");
    d.params.operation = step.client.operation.name().to_owned();
    d.params.clients = step.client.clients.map_or(1, u64::from);
    d.throughput.total_per_s *= f;
    d.throughput.per_client_per_s *= f;
    d.throughput.sent_mb_per_s *= f;
    d.throughput.received_mb_per_s *= f;
    d.chat = None::<ChatResults>;
    d
}

impl Backend for Fake {
    fn describe(&self) -> String {
        "a fake".to_owned()
    }

    fn start(&mut self, _plan: &Plan, instance: &Instance) -> Result<Servers> {
        self.calls
            .push(format!("start workers={:?}", instance.workers));
        if self.failing_starts.contains(&instance.workers) {
            bail!("bench-server `fake` did not start: it was told not to");
        }
        self.steps_run = 0;
        Ok(Servers {
            endpoints: vec![Endpoint {
                http: Some("http://127.0.0.1:9".into()),
                chat: Some("127.0.0.1:10".into()),
                ready: "READY http=127.0.0.1:9 chat=127.0.0.1:10 workers=3 pid=1".into(),
            }],
            workers: Some(3),
            commands: vec![vec!["fake-server".into()]],
        })
    }

    fn servers_gone(&mut self) -> Option<String> {
        match self.dies_after {
            Some(n) if self.steps_run >= n => Some("bench-server exited (signal 9)".into()),
            _ => None,
        }
    }

    fn run_step(&mut self, step: &Step, _servers: &Servers, json: &Path) -> Result<ClientRun> {
        self.calls.push(format!("step {}", step.id));
        self.steps_run += 1;
        let seed = self.calls.len();
        let script = self
            .scripts
            .get(&step.id)
            .cloned()
            .unwrap_or_else(|| Script::Writes(Some(0), Box::new(clean_doc(step, seed))));
        let (exit, overran) = match script {
            Script::Writes(exit, doc) => {
                fs::write(json, serde_json::to_string(&doc)?)?;
                (exit, None)
            }
            Script::Exits(exit) => (exit, None),
            Script::Overran(doc) => {
                fs::write(json, serde_json::to_string(&doc)?)?;
                (None, Some(step.client.deadline()))
            }
        };
        Ok(ClientRun {
            exit,
            commands: vec![vec!["fake-client".into(), step.id.clone()]],
            faults: Vec::new(),
            overran,
            tiers: Vec::new(),
        })
    }

    fn time_wait(&self) -> Option<u64> {
        Some(7)
    }

    fn stop(&mut self, _log: &Path) -> Result<()> {
        self.calls.push("stop".into());
        Ok(())
    }

    fn collect(&mut self, run: &mut RunDoc, _prov: &mut Provenance) {
        self.calls.push("collect".into());
        run.notes.push("collected by the fake".into());
    }
}

/// A real run's provenance.json, its commands cleared (the loop records its own).
fn provenance() -> Provenance {
    let text = fs::read_to_string(fixture("summary/provenance.json")).unwrap();
    let mut p: Provenance = serde_json::from_str(&text).unwrap();
    p.commands = Default::default();
    p.finished_at = None;
    p
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wsbench-pipeline-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("steps")).unwrap();
    dir
}

const MATRIX: &str = r#"
    description = "d"
    reproduces = "r"
    seed = "000_x.txt"
    matrix = { workers = [1, 2, 4] }
    [defaults]
    operation = "echoComplexTypeDoc"
    clients = 4
    duration = "1s"
    [[step]]
    name = "a"
    [[step]]
    name = "b"
    [[published]]
    metric = "total_per_s"
    value = 1000
    unit = "calls/s"
    label = "ref"
    conditions = "c"
    source = "s"
    workers = 2
    step = "a"
"#;

#[test]
fn one_loop_judges_every_step_and_keeps_going() {
    let plan = Scenario::from_text(MATRIX).plan(false, &[]).unwrap();
    let ids: Vec<String> = plan.steps().map(|s| s.id.clone()).collect();
    assert_eq!(
        ids,
        [
            "01-a-workers-1-clients-4",
            "02-b-workers-1-clients-4",
            "03-a-workers-2-clients-4",
            "04-b-workers-2-clients-4",
            "05-a-workers-4-clients-4",
            "06-b-workers-4-clients-4"
        ]
    );
    let step3 = plan.steps().nth(2).unwrap().clone();
    let step4 = plan.steps().nth(3).unwrap().clone();
    let mut errors = clean_doc(&step4, 1);
    errors.counts.errors_total = 2;
    errors.counts.errors.timeout = 2;
    let mut fake = Fake {
        failing_starts: vec![Some(1)],
        dies_after: None,
        ..Fake::default()
    };
    fake.scripts.insert(
        step3.id.clone(),
        Script::Writes(Some(0), Box::new(clean_doc(&step3, 5))),
    );
    fake.scripts
        .insert(step4.id.clone(), Script::Writes(Some(1), Box::new(errors)));
    fake.scripts
        .insert("06-b-workers-4-clients-4".into(), Script::Exits(Some(2)));
    let dir = temp_dir("loop");
    let run = RunDoc::planned(&plan, "2026-12-01T00:00:00Z".into());
    let outcome = measure(&plan, &mut fake, &dir, run, provenance()).unwrap();
    let statuses: Vec<Status> = outcome.run.steps.iter().map(|s| s.status).collect();
    assert_eq!(
        statuses,
        [
            Status::Failed,
            Status::Failed,
            Status::Ok,
            Status::Errors,
            Status::Ok,
            Status::Failed
        ]
    );
    assert_eq!(outcome.run.status, Status::Failed);
    assert_eq!(
        fake.calls,
        [
            "start workers=Some(1)",
            "stop",
            "start workers=Some(2)",
            "step 03-a-workers-2-clients-4",
            "step 04-b-workers-2-clients-4",
            "stop",
            "start workers=Some(4)",
            "step 05-a-workers-4-clients-4",
            "step 06-b-workers-4-clients-4",
            "stop",
            "collect",
        ]
    );
    let problems = &outcome.run.problems;
    assert!(
        matches!(&problems[0], Problem::ServersNotStarted { error } if error.contains("it was told not to")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(
            |p| matches!(p, Problem::NoResults { step, exit: Some(2), .. }
            if step == "06-b-workers-4-clients-4")
        ),
        "{problems:?}"
    );
    let words: Vec<String> = problems.iter().map(Problem::to_string).collect();
    assert!(
        words.iter().any(|w| w.starts_with(
            "step 06-b-workers-4-clients-4: bench-client exited (status 2) without results: "
        )),
        "{words:?}"
    );
    // The record: run.json and provenance.json as written, read back by the one reader.
    let loaded = results::Run::load(&dir).unwrap();
    assert_eq!(loaded.manifest.steps[3].client_exit, Some(1));
    assert_eq!(
        loaded.manifest.steps[2].workers,
        Some(3),
        "workers from READY"
    );
    assert_eq!(loaded.manifest.steps[2].time_wait_before, Some(7));
    assert!(loaded
        .manifest
        .notes
        .iter()
        .any(|n| n == "collected by the fake"));
    let prov = loaded.provenance.as_ref().unwrap();
    assert_eq!(prov.commands.server.len(), 2, "two servers started");
    assert_eq!(
        prov.commands.client["04-b-workers-2-clients-4"],
        ["fake-client", "04-b-workers-2-clients-4"]
    );
    assert!(prov.finished_at.is_some());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_server_that_dies_fails_the_rest_of_its_instance() {
    let plan = Scenario::from_text(MATRIX)
        .plan(false, &["workers=1,2".into()])
        .unwrap();
    let mut fake = Fake {
        dies_after: Some(1),
        ..Fake::default()
    };
    let dir = temp_dir("dies");
    let run = RunDoc::planned(&plan, "2026-12-01T00:00:00Z".into());
    let outcome = measure(&plan, &mut fake, &dir, run, provenance()).unwrap();
    let statuses: Vec<Status> = outcome.run.steps.iter().map(|s| s.status).collect();
    assert_eq!(
        statuses,
        [Status::Ok, Status::Failed, Status::Ok, Status::Failed]
    );
    assert_eq!(
        outcome.run.problems[0],
        Problem::ServersGone {
            why: "bench-server exited (signal 9)".into(),
            step: "02-b-workers-1-clients-4".into()
        }
    );
    assert_eq!(
        outcome.run.problems[0].to_string(),
        "bench-server exited (signal 9) before step 02-b-workers-1-clients-4"
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// Issue 27, item 1: a run whose every step measured cleanly but which failed a threshold, or ran on a busy
/// machine, is failed — in run.json and in the status words summary.md and report.html print — naming the
/// check; repeated steps are counted as steps × rounds.
#[test]
fn a_failed_threshold_or_a_busy_machine_fails_the_run_by_name() {
    let plan = Scenario::from_text(MATRIX)
        .plan(false, &["workers=1".into(), "repeat=2".into()])
        .unwrap();
    let judged = |thresholds: &[&str], busy: &[&str], name: &str| {
        let dir = temp_dir(name);
        let mut run = RunDoc::planned(&plan, "2026-12-01T00:00:00Z".into());
        run.thresholds = thresholds.iter().map(|t| t.to_string()).collect();
        run.busy = busy.iter().map(|b| b.to_string()).collect();
        let outcome = measure(&plan, &mut Fake::default(), &dir, run, provenance()).unwrap();
        assert!(outcome.run.steps.iter().all(|s| s.status == Status::Ok));
        let written = results::Run::load(&dir).unwrap().manifest;
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!(written.status, outcome.run.status, "run.json as settled");
        assert_eq!(written.failed_checks, outcome.run.failed_checks);
        written
    };
    let passed = judged(&["errors==0", "p99<10s"], &[], "checks-pass");
    assert_eq!(passed.status, Status::Ok);
    assert_eq!(
        passed.status_words(),
        "ok: 2 steps × 2 rounds measured without errors, 2 thresholds passed"
    );
    let failed = judged(&["errors==0", "p99<1us"], &[], "checks-threshold");
    assert_eq!(failed.status, Status::Failed);
    assert_eq!(failed.failed_checks.len(), 2, "one per step");
    assert_eq!(failed.failed_checks[0].check, Check::Threshold);
    let words = failed.status_words();
    assert!(
        words.starts_with("FAILED: threshold p99<1us at 01-a-workers-1-clients-4 ("),
        "{words}"
    );
    assert!(
        words.ends_with("all 2 steps × 2 rounds measured without errors"),
        "{words}"
    );
    let busy = judged(
        &[],
        &["other processes used 1.02 CPUs of 2 (this machine) just before the load started: yes 100 %"],
        "checks-busy",
    );
    assert_eq!(busy.status, Status::Failed);
    assert!(
        busy.status_words()
            .starts_with("FAILED: busy machine: other processes used 1.02 CPUs of 2 (this machine) just before the load started; all 2 steps"),
        "{}",
        busy.status_words()
    );
}

/// A step cut short (a checkpoint left by a killed client) is judged so, and `--resume` runs it again and
/// what follows, keeping what was measured to the end and setting the checkpoint aside.
#[test]
fn a_cut_short_step_is_resumed_and_measured_steps_are_kept() {
    let plan = Scenario::from_text(MATRIX)
        .plan(false, &["workers=1,2".into()])
        .unwrap();
    let step2 = plan.steps().nth(1).unwrap().clone();
    let mut checkpoint = clean_doc(&step2, 2);
    checkpoint.partial = true;
    checkpoint.elapsed_s = 0.4;
    let mut fake = Fake::default();
    fake.scripts
        .insert(step2.id.clone(), Script::Writes(None, Box::new(checkpoint)));
    // The client was killed: the run goes on, as a killed xtask would not; the resume re-runs from step 2.
    let dir = temp_dir("resume");
    let run = RunDoc::planned(&plan, "2026-12-01T00:00:00Z".into());
    let first = measure(&plan, &mut fake, &dir, run, provenance()).unwrap();
    let statuses: Vec<Status> = first.run.steps.iter().map(|s| s.status).collect();
    assert_eq!(
        statuses,
        [Status::Ok, Status::CutShort, Status::Ok, Status::Ok]
    );
    let sh = Shell::new().unwrap();
    let (dir2, run, prov) = Resumed::load(&dir)
        .unwrap()
        .continue_run(&sh, "2026-12-01T01:00:00Z")
        .unwrap();
    assert!(dir
        .join(format!("steps/{}.cut-short.json", step2.id))
        .is_file());
    let mut again = Fake::default();
    let second = measure(&plan, &mut again, &dir2, run, prov).unwrap();
    assert_eq!(
        again.calls,
        [
            "start workers=Some(1)",
            "step 02-b-workers-1-clients-4",
            "stop",
            "collect"
        ],
        "only the step cut short is run again; the instance with nothing left is not started"
    );
    assert_eq!(second.run.status, Status::Ok);
    let loaded = results::Run::load(&dir).unwrap();
    let resumes = &loaded.provenance.as_ref().unwrap().resumes;
    assert_eq!(resumes.len(), 1);
    assert_eq!(resumes[0].rerun, vec![step2.id.clone()]);
    assert_eq!(resumes[0].kept.len(), 3);
    assert!(Resumed::load(&dir)
        .unwrap()
        .continue_run(&sh, "later")
        .is_err_and(|e| e.to_string().contains("nothing to resume")));
    fs::remove_dir_all(&dir).unwrap();
}

/// Faults a backend cannot do are refused before anything runs, naming why; the scenario's faults are
/// validated (within the step, not overlapping) and `--fault` adds to them.
#[test]
fn faults_are_validated_and_refused_where_they_cannot_be_done() {
    let text =
        format!("{MATRIX}\n[[fault]]\nkind = \"kill-server\"\nat = \"0.2s\"\nfor = \"0.3s\"\n");
    let s = Scenario::from_text(&text);
    let plan = s
        .plan(false, &["fault+=pause-server,at=0.6s,for=0.2s".into()])
        .unwrap();
    let kinds: Vec<_> = plan
        .steps()
        .next()
        .unwrap()
        .faults
        .iter()
        .map(|f| f.kind)
        .collect();
    assert_eq!(kinds.len(), 2);
    let err = |set: &str| format!("{:#}", s.plan(false, &[set.to_owned()]).unwrap_err());
    assert!(err("fault+=pause-server,at=0.3s,for=0.1s").contains("overlaps"));
    assert!(err("fault+=pause-server,at=0.9s,for=0.5s").contains("does not end within"));
    assert!(err("fault+=unplug,at=0.1s,for=0.1s").contains("unknown variant"));
    assert!(err("fault+=kill-server,at=0.1s,for=0.1s,colour=red").contains("unknown field"));
    assert!(err("fault+=link,at=0.3s,for=0.1s").contains("give rate=R"));
    assert!(err("fault+=link,at=0.6s,for=0.1s,loss=2").contains("not a percentage"));
    assert!(err("fault+=link,at=0.6s,for=0.1s,rate=fast").contains("rate `fast`"));
    assert!(err("fault+=pause-server,at=0.6s,for=0.1s,delay=5ms").contains("a link fault's"));
    let net = s
        .plan(false, &["fault=disconnect-server,at=0.6s,for=0.2s".into()])
        .unwrap();
    let run = RunDoc::planned(&net, "2026-12-01T00:00:00Z".into());
    let dir = temp_dir("net-faults");
    let outcome = measure(&net, &mut Fake::default(), &dir, run, provenance()).unwrap();
    assert!(
        outcome.run.problems[0]
            .to_string()
            .contains("cannot do the scenario's fault disconnect-server"),
        "{:?}",
        outcome.run.problems
    );
    fs::remove_dir_all(&dir).unwrap();
    // A swarm's fault, refused by name by a backend that does not do it, saying which does.
    let drain = s
        .plan(false, &["fault=drain-server-node,at=0.6s,for=0.2s".into()])
        .unwrap();
    let run = RunDoc::planned(&drain, "2026-12-01T00:00:00Z".into());
    let dir = temp_dir("drain-faults");
    let outcome = measure(&drain, &mut Fake::default(), &dir, run, provenance()).unwrap();
    let said = &outcome.run.problems[0].to_string();
    assert!(
        said.contains("cannot do the scenario's fault drain-server-node")
            && said.contains("drain-server-node to a swarm node (--swarm)"),
        "{said}"
    );
    fs::remove_dir_all(&dir).unwrap();
    let mut fake = Fake::default();
    let dir = temp_dir("faults");
    let run = RunDoc::planned(&plan, "2026-12-01T00:00:00Z".into());
    let outcome = measure(&plan, &mut fake, &dir, run, provenance()).unwrap();
    assert!(fake.calls.is_empty(), "{:?}", fake.calls);
    assert_eq!(outcome.run.status, Status::Failed);
    assert!(matches!(
        &outcome.run.problems[0],
        Problem::FaultNotDone { fault, .. } if fault.name() == "kill-server"
    ));
    fs::remove_dir_all(&dir).unwrap();
}

/// A step whose clients were still running at its deadline is failed with the reason, whatever its document
/// says, and the run goes on to the next step.
#[test]
fn a_step_past_its_deadline_fails_and_the_run_goes_on() {
    let plan = Scenario::from_text(MATRIX).plan(false, &[]).unwrap();
    let first = plan.steps().next().unwrap().clone();
    let mut partial = clean_doc(&first, 1);
    partial.partial = true;
    let mut fake = Fake::default();
    fake.scripts
        .insert(first.id.clone(), Script::Overran(Box::new(partial)));
    let dir = temp_dir("deadline");
    let run = RunDoc::planned(&plan, "2026-12-01T00:00:00Z".into());
    let outcome = measure(&plan, &mut fake, &dir, run, provenance()).unwrap();
    let statuses: Vec<Status> = outcome.run.steps.iter().map(|s| s.status).collect();
    assert_eq!(statuses[0], Status::Failed);
    assert!(
        statuses[1..].iter().all(|&s| s == Status::Ok),
        "{statuses:?}"
    );
    let problem = outcome
        .run
        .problems
        .iter()
        .find(|p| matches!(p, Problem::StepDeadline { .. }))
        .expect("the deadline is the step's problem");
    // 1 s of load, no warm-up: 1 s + 120 s + 1/20 s.
    assert_eq!(
        problem.to_string(),
        "step 01-a-workers-1-clients-4: its clients were still running at the step's deadline (2 m 1 s: its \
         duration, warm-up and a grace period): stopped, the step failed, the run went on"
    );
    let json = serde_json::to_value(problem).unwrap();
    assert_eq!(json["kind"], "step_deadline");
    fs::remove_dir_all(dir).unwrap();
}

/// The portal runs as processes and as containers; on a swarm it is refused by name, not half-run.
#[test]
fn the_portal_runs_locally_and_in_containers_but_not_yet_on_a_swarm() {
    let root = paths::project_root();
    let plan = Scenario::load(&root, "oss-scale-out")
        .unwrap()
        .plan(true, &[])
        .unwrap();
    assert!(plan.portal.is_some());
    refuse_portal(&plan, &Engine::Local).unwrap();
    refuse_portal(&plan, &Engine::Docker(DockerOptions::default())).unwrap();
    let err = refuse_portal(&plan, &Engine::Swarm(SwarmOptions::default())).unwrap_err();
    assert!(err.to_string().contains("without --swarm"), "{err}");
}
