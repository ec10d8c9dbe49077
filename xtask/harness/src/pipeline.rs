//! One run of a scenario, whatever the backend: plan → binaries → backend → the one step loop (one status
//! rule) → `run.json` and `provenance.json` beside bench-client's documents. The documents read from them
//! (`summary.md`, the report) are the report crate's, written by the caller above both.

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
use super::rundoc::{RunDoc, Status};
use super::scenario::{Instance, Plan, Scenario, Step};
use super::sut::{Peer, Sut};
use super::swarm::{Swarm, SwarmOptions};
use super::{busy, clock, interrupt, paths, results, thresholds};
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
    /// The servers measured, each in turn (`--sut`, `--target`); `[Sut::BenchServer]` by default.
    pub suts: Vec<Sut>,
}

/// What a run wrote: its directory and run.json as written.
#[derive(Debug)]
pub struct Outcome {
    pub dir: PathBuf,
    pub run: RunDoc,
}

/// Runs a scenario and writes its results directory; Err only when nothing could be measured at all.
pub fn execute(sh: &Shell, opts: &RunOptions) -> Result<Outcome> {
    let root = paths::project_root();
    let scenario = Scenario::load(&root, &opts.scenario)?;
    let mut plan = scenario
        .plan(opts.quick, &opts.sets)?
        .for_suts(&opts.suts)?;
    plan.thresholds
        .extend(thresholds::collect(&toml::Table::new(), &opts.thresholds)?);
    // Several server instances (a scale-out scenario) exist only as containers.
    let engine = match &opts.engine {
        Engine::Local if plan.needs_containers() => Engine::Docker(DockerOptions::default()),
        e => e.clone(),
    };
    if opts.suts != [Sut::BenchServer] && !matches!(engine, Engine::Local) {
        anyhow::bail!(
            "--sut and --target run as processes on this machine; with --containers or --swarm only \
             bench-server is measured so far"
        );
    }
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
    let pinning = Pinning::plan(&host::cpus_allowed(), opts.pin, taskset);
    let started_at = clock::timestamp();
    let mut bins = match engine {
        Engine::Local => artifacts::build_release(sh)?,
        Engine::Docker(_) | Engine::Swarm(_) => docker::binaries(sh)?,
    };
    let peers = artifacts::peers::build_all(sh, &root, &peers_of(&opts.suts))?;
    let dir = create_run_dir(
        &sh.current_dir().join(&opts.out).join(&plan.scenario.name),
        &started_at,
    )?;
    let nofile = provenance::RlimitNofile {
        before: nofile_before,
        in_force: nofile,
    };
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
    let cpus: Vec<usize> = if pinning.enabled {
        let mut c = [pinning.server_cpus.clone(), pinning.client_cpus.clone()].concat();
        c.sort_unstable();
        c.dedup();
        c
    } else {
        vec![]
    };
    run.busy = busy::check(&cpus);
    for b in &run.busy {
        println!("warning: busy machine: {b}");
    }
    if let Some(arch) = opts.client_arch {
        let client = emulation::client(sh, arch)?;
        bins.client = client.binary.clone();
        bins.client_runner = client.runner.clone();
        record_client(&client, &mut run, &mut prov);
    }
    println!("wsbench: {} → {}", plan.scenario.name, dir.display());
    let mut backend: Box<dyn Backend> = match &engine {
        Engine::Local => Box::new(Local::new(bins, pinning, peers, &dir)?),
        Engine::Docker(o) => match docker::Docker::start(sh, o) {
            Ok(d) => Box::new(d),
            Err(e) => {
                run.problems.push(format!("{e:#}"));
                return finish(&dir, run, prov);
            }
        },
        Engine::Swarm(o) => match Swarm::start(sh, o) {
            Ok(s) => Box::new(s),
            Err(e) => {
                run.problems.push(format!("{e:#}"));
                return finish(&dir, run, prov);
            }
        },
    };
    measure(&plan, backend.as_mut(), &dir, run, prov)
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
    run_steps(plan, backend, dir, &mut run, &mut prov);
    backend.collect(&mut run, &mut prov);
    finish(dir, run, prov)
}

/// The one step loop: per instance, start its servers, run each step's clients, judge the step by
/// [`Status::of_step`], stop; every problem is recorded in `run`, none ends the run early but Ctrl-C.
pub fn run_steps(
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
        if interrupt::interrupted() {
            break;
        }
        let servers = match backend.start(plan, instance) {
            Ok(s) => s,
            Err(e) => {
                run.problems.push(format!("{e:#}"));
                run.steps[first..index]
                    .iter_mut()
                    .for_each(|s| s.status = Status::Failed);
                if let Err(e) = backend.stop(&log) {
                    run.problems.push(format!("{e:#}"));
                }
                continue;
            }
        };
        prov.commands
            .server
            .extend(servers.commands.iter().cloned());
        for e in &servers.endpoints {
            println!("{} {}", instance.sut.name(), e.ready);
        }
        suts::identify(plan, instance, &servers, prov, run);
        match suts::verify(instance, &servers, backend) {
            Ok(0) => {}
            Ok(n) => println!(
                "{}: {n} call(s) verified in full before the load",
                instance.sut
            ),
            Err(e) => {
                run.problems.push(format!(
                    "{} not measured: a call checked before any load was answered wrongly: {e:#}",
                    instance.sut
                ));
                run.steps[first..index]
                    .iter_mut()
                    .for_each(|s| s.status = Status::Failed);
                if let Err(e) = backend.stop(&log) {
                    run.problems.push(format!("{e:#}"));
                }
                continue;
            }
        }
        for (i, step) in (first..index).zip(&instance.steps) {
            if interrupt::interrupted() {
                break;
            }
            if let Some(why) = backend.servers_gone() {
                run.problems.push(format!("{why} before step {}", step.id));
                run.steps[i..index]
                    .iter_mut()
                    .for_each(|s| s.status = Status::Failed);
                break;
            }
            run_step(step, i, &servers, instance, backend, dir, run, prov);
        }
        if let Err(e) = backend.stop(&log) {
            run.problems.push(format!("{e:#}"));
        }
        if interrupt::interrupted() {
            break;
        }
    }
    if interrupt::interrupted() {
        run.problems
            .push("interrupted (Ctrl-C): the remaining steps were not run".to_owned());
    }
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
        run.problems.push(format!(
            "step {}: the server does not serve {}",
            step.id,
            if step.client.operation.is_chat() {
                "chat"
            } else {
                "HTTP"
            }
        ));
        return;
    }
    println!("\n── step {} ({}) ──", step.id, step.label);
    let json = dir.join(&entry.result);
    entry.time_wait_before = backend.time_wait();
    let clients = backend.run_step(step, servers, &json);
    entry.time_wait_after = backend.time_wait();
    let clients = match clients {
        Ok(c) => c,
        Err(e) => {
            entry.status = Status::Failed;
            run.problems.push(format!("step {}: {e:#}", step.id));
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
    let doc = results::read_doc(&json);
    entry.status = Status::of_step(clients.exit, &doc);
    if let Err(e) = &doc {
        run.problems.push(format!(
            "step {}: bench-client exited ({}) without results: {e}",
            step.id,
            clients
                .exit
                .map_or("by a signal".to_owned(), |c| format!("status {c}"))
        ));
    }
}

/// The peers among `suts`.
fn peers_of(suts: &[Sut]) -> Vec<Peer> {
    suts.iter()
        .filter_map(|s| match s {
            Sut::Peer(p) => Some(*p),
            _ => None,
        })
        .collect()
}

/// Settles the run's status and writes run.json and provenance.json.
fn finish(dir: &Path, mut run: RunDoc, mut prov: Provenance) -> Result<Outcome> {
    run.finished_at = Some(clock::timestamp());
    prov.finished_at = run.finished_at.clone();
    run.settle();
    write_json(&dir.join("run.json"), &run)?;
    write_json(&dir.join("provenance.json"), &prov)?;
    Ok(Outcome {
        dir: dir.to_path_buf(),
        run,
    })
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

fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
}

pub mod check;
pub mod suts;
#[cfg(test)]
mod tests;
