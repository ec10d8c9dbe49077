//! `cargo xtask run <scenario>`: builds the release binaries, starts bench-server, runs bench-client for every
//! step, stops the server cleanly, and writes run.json, provenance.json, summary.md and the report.

use std::{
    fs::{self, OpenOptions},
    io::Write as _,
    path::{Path, PathBuf},
    time::{Duration, SystemTime},
};

use anyhow::{bail, Context as _, Result};
use xshell::{cmd, Shell};

use crate::{
    host,
    pinning::Pinning,
    provenance::{self, Provenance},
    rundoc::{RunDoc, Status},
    scenario::{Plan, Scenario},
    server_proc::ServerProcess,
    summary,
};

/// How long bench-server may take to bind and print READY.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long bench-server may take to drain and exit after SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(20);

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Args {
    /// Scenario name (see `cargo xtask list`) or the path of a scenario .toml file.
    pub(crate) scenario: String,
    /// Shortened durations and sweeps: every scenario finishes in under a minute (a smoke run, not a reproduction).
    #[arg(long)]
    pub(crate) quick: bool,
    /// Override a scenario value, e.g. `duration=28800s`, `clients=1,8,16`, `workers=2`, `server.max_connections=1000`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) sets: Vec<String>,
    /// Results root: the run is written to `DIR/<scenario>/<UTC timestamp>/`.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub(crate) out: PathBuf,
    /// Do not pin server and client to separate CPUs.
    #[arg(long)]
    pub(crate) no_pin: bool,
    #[command(flatten)]
    pub(crate) containers: crate::containers::ContainerArgs,
    /// Run bench-client built for ARCH; `ppc64le` runs under qemu-ppc64le against the native server (the CXF
    /// seed's IBM client → Intel server pairing); emulated figures are labelled so and never compared with native ones.
    #[arg(long, value_enum, value_name = "ARCH", conflicts_with = "containers")]
    pub(crate) client_arch: Option<crate::build::Arch>,
}

pub(crate) fn run(sh: &Shell, args: Args) -> Result<()> {
    let outcome = execute(sh, &args)?;
    match outcome.run.status {
        Status::Ok => Ok(()),
        _ => bail!(
            "{} did not measure cleanly ({:?}); see {}",
            outcome.run.scenario,
            outcome.run.status,
            outcome.dir.join("summary.md").display()
        ),
    }
}

/// What a run wrote: its directory and run.json as written.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub(crate) dir: PathBuf,
    pub(crate) run: RunDoc,
}

/// The release binaries of this workspace.
#[derive(Debug, Clone)]
pub(crate) struct Binaries {
    pub(crate) server: PathBuf,
    pub(crate) client: PathBuf,
    /// Runs the client (`qemu-ppc64le` for an emulated client), empty for a native one.
    pub(crate) client_runner: Vec<String>,
}

/// Runs a scenario and writes its results; Err only when nothing could be measured at all.
pub(crate) fn execute(sh: &Shell, args: &Args) -> Result<Outcome> {
    let root = crate::project_root();
    let scenario = Scenario::load(&root, &args.scenario)?;
    let plan = scenario.plan(args.quick, &args.sets)?;
    // Several server instances (a scale-out scenario) exist only as containers.
    let containers = crate::containers::ContainerArgs {
        containers: args.containers.containers || plan.needs_containers(),
        ..args.containers.clone()
    };
    let mut bins = if containers.containers {
        crate::containers::binaries(sh)?
    } else {
        build_release(sh)?
    };
    if plan.needs_chat_client() {
        check_chat_support(sh, &bins, &plan)?;
    }
    // The first Ctrl-C only raises a flag: the children get it too and end their step (the client writes
    // partial results), and the run directory is still completed with what was measured.
    crate::containers::interrupt::install()?;
    let (nofile_before, nofile) = host::raise_nofile()?;
    let taskset = cmd!(sh, "taskset --version")
        .quiet()
        .ignore_stderr()
        .read()
        .ok();
    let pinning = Pinning::plan(&host::cpus_allowed(), !args.no_pin, taskset);
    let started_at = timestamp();
    let dir = create_run_dir(
        &sh.current_dir().join(&args.out).join(&plan.scenario.name),
        &started_at,
    )?;
    let (rustc, target) = provenance::rustc(sh);
    let mut prov = Provenance {
        schema: provenance::SCHEMA.to_owned(),
        started_at: started_at.clone(),
        finished_at: None,
        invocation: std::env::args().skip(1).collect(),
        scenario: provenance::ScenarioRef {
            name: plan.scenario.name.clone(),
            file: plan
                .scenario
                .path
                .strip_prefix(&root)
                .unwrap_or(&plan.scenario.path)
                .display()
                .to_string(),
            sha256: plan.scenario.sha256.clone(),
            quick: plan.quick,
            sets: plan.sets.clone(),
        },
        git: provenance::git(sh),
        build: provenance::Build {
            builder: "cargo".to_owned(),
            profile: "release".to_owned(),
            profile_settings: provenance::profile_settings(&root, "release"),
            target,
            rustc,
            cargo: provenance::cargo_version(sh),
            server_binary: bins.server.display().to_string(),
            client_binary: bins.client.display().to_string(),
        },
        host: provenance::Host::read(),
        tunables: host::tunables(),
        rlimit_nofile: provenance::RlimitNofile {
            before: nofile_before,
            in_force: nofile,
        },
        pinning,
        commands: provenance::Commands::default(),
        containers: None,
        client_arch: None,
    };
    let mut run = RunDoc::planned(&plan, started_at);
    crate::build::apply_client_arch(sh, args, &mut bins, &mut run, &mut prov)?;
    println!("wsbench: {} → {}", plan.scenario.name, dir.display());
    let measured = if containers.containers {
        crate::containers::execute_steps(sh, &plan, &containers, &dir, &mut run, &mut prov)
    } else {
        execute_steps(&plan, &bins, &dir, &mut run, &mut prov)
    };
    if let Err(e) = measured {
        run.problems.push(format!("{e:#}"));
    }
    run.finished_at = Some(timestamp());
    prov.finished_at = run.finished_at.clone();
    run.settle();
    write_json(&dir.join("run.json"), &run)?;
    write_json(&dir.join("provenance.json"), &prov)?;
    let docs: Vec<summary::StepDoc> = run
        .steps
        .iter()
        .map(|e| summary::read_doc(&dir.join(&e.result)))
        .collect();
    let knee = crate::report::knee_lines(&dir)
        .unwrap_or_else(|e| vec![format!("(knee not computed: {e:#})")]);
    let text = summary::render(&run, &prov, &docs, &knee);
    fs::write(dir.join("summary.md"), &text).context("writing summary.md")?;
    print_headline(&text);
    match crate::report::write_report(&dir) {
        Ok(path) => println!("report: {}", path.display()),
        Err(e) => eprintln!("warning: the report could not be written: {e:#}"),
    }
    println!("summary: {}", dir.join("summary.md").display());
    Ok(Outcome { dir, run })
}

/// Starts one server per instance of the plan and runs its steps; problems are recorded in `run`.
fn execute_steps(
    plan: &Plan,
    bins: &Binaries,
    dir: &Path,
    run: &mut RunDoc,
    prov: &mut Provenance,
) -> Result<()> {
    let log_path = dir.join("server.log");
    let mut log = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .context("opening server.log")?;
    let pin = prov.pinning.clone();
    let mut index = 0;
    for instance in &plan.instances {
        let first = index;
        index += instance.steps.len();
        let mut argv = pin.prefix(&pin.server_cpus);
        argv.push(bins.server.display().to_string());
        let http = if plan.server.http() {
            "127.0.0.1:0"
        } else {
            "off"
        };
        argv.extend(["--http".to_owned(), http.to_owned()]);
        if plan.server.chat() {
            argv.extend(["--chat".to_owned(), "127.0.0.1:0".to_owned()]);
        }
        let workers = instance
            .workers
            .or(pin.enabled.then_some(pin.server_cpus.len() as u32));
        if let Some(w) = workers {
            argv.extend(["--workers".to_owned(), w.to_string()]);
        }
        argv.extend(plan.server.extra_args());
        writeln!(log, "==== wsbench {}: {}", timestamp(), argv.join(" "))?;
        prov.commands.server.push(argv.clone());
        let mut server =
            match ServerProcess::start(command(&argv)?, log.try_clone()?, READY_TIMEOUT) {
                Ok(s) => s,
                Err(e) => {
                    run.problems.push(format!(
                        "bench-server `{}` did not start: {e:#}",
                        argv.join(" ")
                    ));
                    run.steps[first..index]
                        .iter_mut()
                        .for_each(|s| s.status = Status::Failed);
                    continue;
                }
            };
        let ready = server.ready.clone();
        println!(
            "bench-server ready: pid {} http {:?} chat {:?} workers {:?}",
            ready.pid, ready.http, ready.chat, ready.workers
        );
        for (i, step) in (first..index).zip(&instance.steps) {
            let entry = &mut run.steps[i];
            if crate::containers::interrupt::interrupted() {
                break;
            }
            if let Some(status) = server.exited() {
                run.problems.push(format!(
                    "bench-server exited ({status}) before step {}",
                    step.id
                ));
                break;
            }
            entry.workers = ready.workers.or(workers);
            let target = if step.client.operation.is_chat() {
                ready.chat.map(|a| a.to_string())
            } else {
                ready.http.map(|a| format!("http://{a}"))
            };
            let Some(target) = target else {
                entry.status = Status::Failed;
                run.problems.push(format!(
                    "bench-server's READY line has no address for step {}",
                    step.id
                ));
                continue;
            };
            let json = dir.join(&entry.result);
            let mut argv = pin.prefix(&pin.client_cpus);
            argv.extend(bins.client_runner.iter().cloned());
            argv.push(bins.client.display().to_string());
            argv.extend(step.client.args(&target, &json, ready.pid, &step.label));
            prov.commands.client.insert(step.id.clone(), argv.clone());
            println!("\n── step {} ({}) ──", step.id, step.label);
            entry.time_wait_before = Some(host::time_wait());
            let status = command(&argv)?.status().context("running bench-client")?;
            entry.time_wait_after = Some(host::time_wait());
            entry.client_exit = status.code();
            entry.status = match summary::read_doc(&json) {
                Ok(doc) if status.success() && doc.counts.errors_total == 0 && !doc.partial => {
                    Status::Ok
                }
                Ok(_) if status.code() == Some(1) || status.success() => Status::Errors,
                Ok(_) => Status::Failed,
                Err(e) => {
                    run.problems.push(format!(
                        "step {}: bench-client exited ({status}) without results: {e}",
                        step.id
                    ));
                    Status::Failed
                }
            };
        }
        match server.stop(STOP_GRACE) {
            Ok(status) if status.success() => {}
            Ok(status) => run.problems.push(format!(
                "bench-server exited with {status} on SIGTERM (see server.log)"
            )),
            Err(e) => run.problems.push(format!("stopping bench-server: {e:#}")),
        }
        if crate::containers::interrupt::interrupted() {
            run.problems
                .push("interrupted (Ctrl-C): the remaining steps were not run".to_owned());
            break;
        }
    }
    Ok(())
}

/// `cargo build --release -p bench-server -p bench-client`, and where cargo put the binaries.
pub(crate) fn build_release(sh: &Shell) -> Result<Binaries> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    cmd!(
        sh,
        "{cargo} build --release -p bench-server -p bench-client"
    )
    .run()
    .context("building release binaries")?;
    let meta = cmd!(sh, "{cargo} metadata --format-version 1 --no-deps")
        .quiet()
        .read()?;
    let meta: serde_json::Value = serde_json::from_str(&meta).context("parsing cargo metadata")?;
    let target = meta["target_directory"]
        .as_str()
        .context("cargo metadata has no target_directory")?;
    let release = Path::new(target).join("release");
    let bins = Binaries {
        server: release.join("bench-server"),
        client: release.join("bench-client"),
        client_runner: Vec::new(),
    };
    for b in [&bins.server, &bins.client] {
        anyhow::ensure!(b.is_file(), "{} was not built", b.display());
    }
    Ok(bins)
}

/// Says plainly, before measuring anything, when this build cannot run a chat scenario.
fn check_chat_support(sh: &Shell, bins: &Binaries, plan: &Plan) -> Result<()> {
    let (server, client) = (&bins.server, &bins.client);
    let client_ok = cmd!(sh, "{client} chat --help")
        .quiet()
        .ignore_stdout()
        .ignore_stderr()
        .run()
        .is_ok();
    let server_help = cmd!(sh, "{server} --help")
        .quiet()
        .ignore_stderr()
        .read()
        .unwrap_or_default();
    let mut missing = Vec::new();
    if !client_ok {
        missing.push("the VOLANO chat load generator (`bench-client chat`)");
    }
    if !server_help.contains("--chat") {
        missing.push("the chat server (`bench-server --chat`)");
    }
    if !missing.is_empty() {
        bail!(
            "{} needs {}, which this build does not have yet: nothing was measured, no results were written",
            plan.scenario.name,
            missing.join(" and ")
        );
    }
    Ok(())
}

fn command(argv: &[String]) -> Result<std::process::Command> {
    let (program, args) = argv.split_first().context("empty command line")?;
    let mut cmd = std::process::Command::new(program);
    cmd.args(args);
    Ok(cmd)
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

/// Now, RFC 3339 UTC to the second (`2026-11-29T19:30:00Z`).
pub(crate) fn timestamp() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
}

/// Prints the status lines and the measured-vs-published table of a summary to the terminal.
fn print_headline(summary: &str) {
    println!();
    for line in summary.lines().take_while(|l| !l.starts_with("## Steps")) {
        println!("{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
