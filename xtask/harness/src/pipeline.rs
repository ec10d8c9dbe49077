//! One run of a scenario, whatever the backend: plan → binaries → backend → the one step loop (one status
//! rule) → `run.json` and `provenance.json` beside bench-client's documents. The documents read from them
//! (`summary.md`, the report) are the report crate's, written by the caller above both.

mod resume;

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use xshell::Shell;

use super::artifacts::{self, emulation, Arch};
use super::backend::{Backend, Servers};
use super::docker::{self, DockerOptions};
use super::local::Local;
use super::pinning::Pinning;
use super::provenance::{self, Provenance};
use super::rundoc::{Check, FailedCheck, Problem, RunDoc, Status};
use super::scenario::{Instance, Plan, Scenario, Step};
use super::soak::SoakLimits;
use super::sut::{PeerSut, Sut};
use super::swarm::{Swarm, SwarmOptions};
use super::{atomic, busy, clock, interrupt, limits, paths, results, thresholds};
pub use resume::Resumed;
use wsbench_tools::host;

/// Where a run's servers and clients execute.
#[derive(Debug, Clone)]
pub enum Engine {
    /// Processes on this machine.
    Local,
    /// Containers on this machine's Docker engine.
    Docker(DockerOptions),
    /// Services on the Docker Swarm this machine's engine manages.
    Swarm(SwarmOptions),
}

/// A validated `cargo xtask run` request.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// A scenario name, or the path of a scenario file.
    pub scenario: String,
    pub quick: bool,
    pub sets: Vec<String>,
    /// The results root: the run goes to `<out>/<scenario>/<UTC time>/`.
    pub out: PathBuf,
    /// Pin server and client to separate CPUs when there are two or more.
    pub pin: bool,
    pub engine: Engine,
    /// Run a bench-client built for this architecture (emulated when it is not this machine's).
    pub client_arch: Option<Arch>,
    /// `--threshold` conditions, added to the scenario's `[thresholds]`.
    pub thresholds: Vec<String>,
    /// `--abort-on-fail`: each step stops as soon as a threshold has clearly failed (as the scenario's
    /// `abort_on_fail`).
    pub abort_on_fail: bool,
    /// `--soak`: judge every step as a soak (the scenario's `[soak]` limits, or the defaults).
    pub soak: bool,
    /// `--resume DIR`: continue that run from its first unfinished step (its scenario, `--quick` and
    /// `--set`s are the run's own; `scenario`, `quick` and `sets` are not used).
    pub resume: Option<PathBuf>,
    /// The servers measured, each in turn (`--sut`, `--target`); `[Sut::BenchServer]` by default.
    pub suts: Vec<Sut>,
}

impl RunOptions {
    /// `cargo xtask run <scenario> --out <out>` with no other flag: full length, pinned, processes on this
    /// machine, bench-server measured.
    pub fn new(scenario: impl Into<String>, out: impl Into<PathBuf>) -> RunOptions {
        RunOptions {
            scenario: scenario.into(),
            quick: false,
            sets: Vec::new(),
            out: out.into(),
            pin: true,
            engine: Engine::Local,
            client_arch: None,
            thresholds: Vec::new(),
            abort_on_fail: false,
            soak: false,
            resume: None,
            suts: vec![Sut::BenchServer],
        }
    }
}

/// What a run wrote: its directory and run.json as written.
#[derive(Debug)]
pub struct Outcome {
    pub dir: PathBuf,
    pub run: RunDoc,
}

/// Runs a scenario (or continues one, `resume`) and writes its results directory; Err only when nothing could
/// be measured at all, or the results directory cannot be written.
pub fn execute(sh: &Shell, opts: &RunOptions) -> Result<Outcome> {
    let root = paths::project_root();
    let resumed = opts.resume.as_deref().map(Resumed::load).transpose()?;
    let plan = match &resumed {
        Some(r) => r.plan(&root)?,
        None => Scenario::load(&root, &opts.scenario)?.plan(opts.quick, &opts.sets)?,
    };
    let mut plan = plan.for_suts(&opts.suts)?;
    for t in thresholds::collect(&toml::Table::new(), &opts.thresholds)? {
        if !plan.thresholds.contains(&t) {
            plan.thresholds.push(t);
        }
    }
    if opts.abort_on_fail || plan.scenario.file.abort_on_fail || plan.aborts() {
        plan.arm_abort()?;
    }
    if opts.soak && plan.soak.is_none() {
        plan.soak = Some(SoakLimits::default());
    }
    // Several server instances (a scale-out scenario) exist only as containers.
    let engine = match &opts.engine {
        Engine::Local if plan.needs_containers() => Engine::Docker(DockerOptions::default()),
        e => e.clone(),
    };
    refuse_suts(&opts.suts, &engine)?;
    refuse_portal(&plan, &engine)?;
    if opts.client_arch.is_some() && !matches!(engine, Engine::Local) {
        anyhow::bail!(
            "--client-arch runs an emulated client process: it cannot be combined with containers"
        );
    }
    // The first Ctrl-C only raises a flag: the children get it too and end their step (the client writes
    // partial results), and the run directory is still completed with what was measured.
    interrupt::install()?;
    let (nofile_before, nofile) = host::raise_nofile()?;
    let taskset = wsbench_tools::taskset::version(sh);
    let mut pinning = Pinning::plan(&host::cpus_allowed(), opts.pin, taskset);
    pinning.external_server = opts.suts.iter().all(|s| matches!(s, Sut::External(_)));
    let started_at = clock::timestamp();
    let mut bins = match engine {
        Engine::Local => artifacts::build_release(sh)?,
        Engine::Docker(_) | Engine::Swarm(_) => docker::binaries(sh)?,
    };
    let peers = artifacts::peers::build_all(sh, &root, &peers_of(&opts.suts))?;
    let nofile = provenance::RlimitNofile {
        before: nofile_before,
        in_force: nofile,
    };
    let (dir, mut run, mut prov) = match resumed {
        Some(r) => r.continue_run(sh, &started_at)?,
        None => {
            let dir = create_run_dir(
                &sh.current_dir().join(&opts.out).join(&plan.scenario.name),
                &started_at,
            )?;
            let mut prov = Provenance::begin(
                sh,
                &root,
                &plan,
                &started_at,
                &bins,
                pinning.clone(),
                nofile,
            );
            let mut run = RunDoc::planned(&plan, started_at);
            suts::begin(&plan, &opts.suts, &peers, &mut run, &mut prov);
            (dir, run, prov)
        }
    };
    for short in limits::short_for(limits::most_connections(&plan)) {
        println!("warning: limit too low: {}", short.line());
        run.notes.push(format!("limit too low: {}", short.line()));
    }
    let cpus = pinning.cpus();
    if let Some(arch) = opts.client_arch {
        let client = emulation::client(sh, arch)?;
        bins.client = client.binary.clone();
        bins.client_runner = client.runner.clone();
        record_client(&client, &mut run, &mut prov);
    }
    println!("wsbench: {} → {}", plan.scenario.name, dir.display());
    // run.json and provenance.json exist from the start: a run whose xtask is killed can be read and resumed.
    save(&dir, &run, &prov)?;
    let mut backend: Box<dyn Backend> =
        match start_backend(sh, &engine, &opts.suts, bins, pinning, peers, &dir) {
            Ok(b) => b,
            Err(e) => {
                run.problems.push(Problem::BackendUnavailable {
                    error: format!("{e:#}"),
                });
                return finish(&dir, run, prov);
            }
        };
    // Judged now, the build done and nothing started yet: what other processes use as the load begins.
    run.busy = busy::check(&cpus);
    for b in &run.busy {
        println!("warning: busy machine: {b}");
    }
    measure(&plan, backend.as_mut(), &dir, run, prov)
}

/// The OSS/J portal's tiers run as processes on this machine or as containers on one engine; not yet on a
/// swarm.
fn refuse_portal(plan: &Plan, engine: &Engine) -> Result<()> {
    if plan.portal.is_some() && matches!(engine, Engine::Swarm(_)) {
        anyhow::bail!(
            "{}: the OSS/J portal runs as processes on this machine or as containers (--containers); its \
             swarm service is not built yet (issue 40): run it without --swarm",
            plan.scenario.name
        );
    }
    Ok(())
}

/// The backend of `engine`, ready to start servers.
fn start_backend(
    sh: &Shell,
    engine: &Engine,
    suts: &[Sut],
    bins: artifacts::Binaries,
    pinning: Pinning,
    peers: artifacts::peers::PeerBuilds,
    dir: &Path,
) -> Result<Box<dyn Backend>> {
    Ok(match engine {
        Engine::Local => Box::new(Local::new(bins, pinning, peers, dir)?),
        Engine::Docker(o) => Box::new(docker::Docker::start(sh, o, suts, &peers)?),
        Engine::Swarm(o) => Box::new(Swarm::start(sh, o, suts, &peers)?),
    })
}

/// Runs every step of `plan` on `backend` and writes the results directory `dir`.
pub fn measure(
    plan: &Plan,
    backend: &mut dyn Backend,
    dir: &Path,
    mut run: RunDoc,
    mut prov: Provenance,
) -> Result<Outcome> {
    println!("on {}", backend.describe());
    let undoable = plan
        .steps()
        .flat_map(|s| &s.faults)
        .find(|f| !backend.does_fault(f.kind));
    if let Some(f) = undoable {
        run.problems.push(Problem::FaultNotDone {
            backend: backend.describe(),
            fault: f.kind,
        });
        return finish(dir, run, prov);
    }
    let external = plan
        .instances
        .iter()
        .any(|i| matches!(i.sut, Sut::External(_)) && i.steps.iter().any(|s| !s.faults.is_empty()));
    if external {
        run.problems.push(Problem::FaultOnExternal);
        return finish(dir, run, prov);
    }
    run_steps(plan, backend, dir, &mut run, &mut prov);
    backend.collect(&mut run, &mut prov);
    finish(dir, run, prov)
}

/// The one step loop: per instance, start its servers, run each step's clients, judge the step by
/// [`Status::of_step`], stop; every problem is recorded in `run`, none ends the run early but Ctrl-C.
pub(crate) fn run_steps(
    plan: &Plan,
    backend: &mut dyn Backend,
    dir: &Path,
    run: &mut RunDoc,
    prov: &mut Provenance,
) {
    let log = dir.join("server.log");
    let mut index = 0;
    for instance in &plan.instances {
        let first = index;
        index += instance.steps.len();
        if interrupt::interrupted() || stopped(run) {
            break;
        }
        // A resumed run keeps what was measured to the end; an instance with nothing left is not started.
        if run.steps[first..index].iter().all(|s| s.status.finished()) {
            continue;
        }
        let servers = match backend.start(plan, instance) {
            Ok(s) => s,
            Err(e) => {
                let problem = Problem::ServersNotStarted {
                    error: format!("{e:#}"),
                };
                abandon(run, first..index, problem, backend, &log);
                continue;
            }
        };
        prov.commands
            .server
            .extend(servers.commands.iter().cloned());
        for e in &servers.endpoints {
            println!("{} {}", instance.sut.name(), e.ready);
            prov.commands.ready.push(e.ready.clone());
        }
        suts::identify(plan, instance, &servers, prov, run);
        match suts::verify(instance, &servers, backend) {
            Ok(n) => suts::say_verified(instance, n),
            Err(e) => {
                let problem = Problem::Refused {
                    sut: instance.sut.to_string(),
                    error: format!("{e:#}"),
                };
                abandon(run, first..index, problem, backend, &log);
                continue;
            }
        }
        for (i, step) in (first..index).zip(&instance.steps) {
            if interrupt::interrupted() || stopped(run) {
                break;
            }
            if run.steps[i].status.finished() {
                continue;
            }
            if let Some(why) = backend.servers_gone() {
                run.problems.push(Problem::ServersGone {
                    why,
                    step: step.id.clone(),
                });
                run.steps[i..index]
                    .iter_mut()
                    .for_each(|s| s.status = Status::Failed);
                break;
            }
            run_step(step, i, &servers, instance, backend, dir, run, prov);
            if let Err(e) = save(dir, run, prov) {
                run.problems.push(Problem::RunUnwritable {
                    error: format!("{e:#}"),
                });
            }
        }
        if let Err(e) = backend.stop(&log) {
            run.problems.push(Problem::ServersStop {
                error: format!("{e:#}"),
            });
        }
        if interrupt::interrupted() {
            break;
        }
    }
    if interrupt::interrupted() {
        run.problems.push(Problem::Interrupted);
    }
}

/// Whether a results write failed: nothing more is run into a directory that cannot hold it.
fn stopped(run: &RunDoc) -> bool {
    run.problems.iter().any(Problem::stops_run)
}

/// One step of a running instance: its clients, their command lines into the record, and its status by the
/// one rule ([`Status::of_step`]).
#[allow(clippy::too_many_arguments)]
fn run_step(
    step: &Step,
    i: usize,
    servers: &Servers,
    instance: &Instance,
    backend: &mut dyn Backend,
    dir: &Path,
    run: &mut RunDoc,
    prov: &mut Provenance,
) {
    let entry = &mut run.steps[i];
    entry.workers = servers.workers.or(instance.workers);
    if !servers.serve(step) {
        entry.status = Status::Failed;
        run.problems.push(Problem::NotServed {
            step: step.id.clone(),
            chat: step.client.operation.is_chat(),
        });
        return;
    }
    println!("\n── step {} ({}) ──", step.id, step.label);
    let json = dir.join(&entry.result);
    entry.time_wait_before = backend.time_wait();
    let host_before = prov.host_state.as_ref().map(|h| h.now());
    let clients = backend.run_step(step, servers, &json);
    if let (Some(h), Some(before)) = (prov.host_state.as_mut(), host_before) {
        h.step(&step.id, before);
    }
    entry.time_wait_after = backend.time_wait();
    let clients = match clients {
        Ok(c) => c,
        Err(e) => {
            entry.status = Status::Failed;
            run.problems.push(Problem::ClientsNotRun {
                step: step.id.clone(),
                error: format!("{e:#}"),
            });
            return;
        }
    };
    for (n, command) in clients.commands.iter().enumerate() {
        let key = match n {
            0 => step.id.clone(),
            n => format!("{}#{}", step.id, n + 1),
        };
        prov.commands.client.insert(key, command.clone());
    }
    entry.client_exit = clients.exit;
    for f in &clients.faults {
        if let Some(p) = &f.problem {
            run.problems.push(Problem::FaultFailed {
                step: step.id.clone(),
                fault: f.kind,
                at_s: f.at_s,
                error: p.clone(),
            });
        }
    }
    entry.faults = clients.faults;
    entry.tiers = clients.tiers;
    let doc = results::read_doc(&json);
    entry.status = Status::of_step(clients.exit, &doc);
    if let Some(limit) = clients.overran {
        entry.status = Status::Failed;
        let problem = Problem::StepDeadline {
            step: step.id.clone(),
            limit_s: limit.as_secs_f64(),
        };
        println!("{problem}");
        run.problems.push(problem);
    }
    if clients.exit == Some(EXIT_RESULTS_UNWRITABLE) {
        run.problems.push(Problem::ClientUnwritable {
            path: json.display().to_string(),
        });
        return;
    }
    if let Err(e) = &doc {
        run.problems.push(Problem::NoResults {
            step: step.id.clone(),
            exit: clients.exit,
            why: e.clone(),
        });
    }
}

/// An instance that cannot be measured (its server did not start, or answered wrongly before the load): its
/// steps failed, the problem recorded, whatever was started stopped.
fn abandon(
    run: &mut RunDoc,
    steps: std::ops::Range<usize>,
    problem: Problem,
    backend: &mut dyn Backend,
    log: &Path,
) {
    run.problems.push(problem);
    run.steps[steps]
        .iter_mut()
        .for_each(|s| s.status = Status::Failed);
    if let Err(e) = backend.stop(log) {
        run.problems.push(Problem::ServersStop {
            error: format!("{e:#}"),
        });
    }
}

/// bench-client's exit status when its results could not be written.
const EXIT_RESULTS_UNWRITABLE: i32 = 3;

/// Writes run.json and provenance.json as they stand (each whole or not at all).
fn save(dir: &Path, run: &RunDoc, prov: &Provenance) -> Result<()> {
    atomic::write_json(&dir.join("run.json"), run)
        .and_then(|()| atomic::write_json(&dir.join("provenance.json"), prov))
        .with_context(|| {
            format!(
                "the results directory {} can no longer be written (disk full, or the folder deleted?)",
                dir.display()
            )
        })
}

/// What a backend cannot measure: on a swarm the clients run on other nodes, so a `--target-pid` (a process
/// on this machine) cannot be sampled by them.
fn refuse_suts(suts: &[Sut], engine: &Engine) -> Result<()> {
    let sampled = suts
        .iter()
        .any(|s| matches!(s, Sut::External(t) if t.pid.is_some()));
    let agent = suts
        .iter()
        .any(|s| matches!(s, Sut::External(t) if t.agent.is_some()));
    match engine {
        Engine::Swarm(_) if agent => anyhow::bail!(
            "--agent with --target is for client processes or containers on this machine (the token stays \
             in this machine's environment): run without --swarm"
        ),
        Engine::Swarm(_) if sampled => anyhow::bail!(
            "--target-pid samples a process on this machine, and on a swarm the client tasks run on other \
             nodes: drop --target-pid (the target's CPU and RSS are then not sampled), or run with \
             --containers or as processes"
        ),
        _ => Ok(()),
    }
}

/// The peers among `suts`.
fn peers_of(suts: &[Sut]) -> Vec<PeerSut> {
    suts.iter()
        .filter_map(|s| match s {
            Sut::Peer(p) => Some(p.clone()),
            _ => None,
        })
        .collect()
}

/// Judges the run's checks, settles its status and writes run.json and provenance.json.
fn finish(dir: &Path, mut run: RunDoc, mut prov: Provenance) -> Result<Outcome> {
    run.finished_at = Some(clock::timestamp());
    prov.finished_at = run.finished_at.clone();
    // The thresholds are judged by the one reader, on the directory as written.
    save(dir, &run, &prov)?;
    run.failed_checks = failed_checks(dir, &run);
    run.settle();
    save(dir, &run, &prov)?;
    Ok(Outcome {
        dir: dir.to_path_buf(),
        run,
    })
}

/// The checks the run failed beyond its steps' status: each threshold not met at a step (as
/// [`results::Run::verdicts`] judges them), each soak limit exceeded ([`results::Run::soak_verdicts`]) and
/// each sign of a busy machine.
fn failed_checks(dir: &Path, run: &RunDoc) -> Vec<FailedCheck> {
    let loaded = results::Run::load(dir);
    let thresholds = match &loaded {
        _ if run.thresholds.is_empty() => vec![],
        Ok(loaded) => loaded
            .verdicts()
            .into_iter()
            .filter(|v| !v.pass)
            .map(|v| v.describe())
            .collect(),
        Err(e) => vec![format!("not judged: {e:#}")],
    };
    let soak = match &loaded {
        _ if run.soak.is_none() => vec![],
        Ok(loaded) => loaded
            .soak_verdicts()
            .iter()
            .flat_map(|v| v.failures())
            .collect(),
        Err(e) => vec![format!("not judged: {e:#}")],
    };
    let soak = soak.into_iter().map(|detail| FailedCheck {
        check: Check::Soak,
        detail,
    });
    let thresholds = thresholds.into_iter().map(|detail| FailedCheck {
        check: Check::Threshold,
        detail,
    });
    let busy = run.busy.iter().map(|b| FailedCheck {
        check: Check::Busy,
        detail: b.clone(),
    });
    thresholds.chain(soak).chain(busy).collect()
}

/// Labels the run with its `--client-arch` client (and says so in every summary when it is emulated).
fn record_client(client: &emulation::Client, run: &mut RunDoc, prov: &mut Provenance) {
    prov.build.client_binary = client.binary.display().to_string();
    run.client_arch = Some(client.record.arch.clone());
    run.emulated = client.record.emulated;
    if client.record.emulated {
        run.notes.push(format!(
            "EMULATED: bench-client ran as {} under {} (user-mode emulation) against the native server; its \
             figures measure the emulator, are labelled emulated in run.json and provenance.json, and are \
             never compared with native or published figures.",
            client.record.arch,
            client.runner.join(" ")
        ));
    }
    prov.client_arch = Some(client.record.clone());
}

/// `results/<scenario>/<yyyymmddThhmmssZ>/steps`, with a suffix if two runs start in the same second.
fn create_run_dir(base: &Path, started_at: &str) -> Result<PathBuf> {
    let stamp: String = started_at
        .chars()
        .filter(|c| !matches!(c, '-' | ':'))
        .collect();
    let mut dir = base.join(&stamp);
    let mut n = 1;
    while dir.exists() {
        n += 1;
        dir = base.join(format!("{stamp}-{n}"));
    }
    fs::create_dir_all(dir.join("steps")).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

pub mod check;
pub mod suts;
#[cfg(test)]
mod tests;
