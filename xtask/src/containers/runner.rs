//! `cargo xtask run … --containers`: the scenario's instances and steps as containers, recorded in run.json and
//! provenance.json the same way as a bare-process run (same statuses, same result files).

use std::path::Path;

use anyhow::Context as _;
use xshell::Shell;

use super::{ContainerArgs, Session};
use crate::build::{self, Arch};
use crate::provenance::Provenance;
use crate::run::Binaries;
use crate::rundoc::{RunDoc, Status};
use crate::scenario::Plan;
use crate::{server_proc, summary};

/// The static binaries the images are built from (also what provenance names as the build).
pub(crate) fn binaries(sh: &Shell) -> anyhow::Result<Binaries> {
    let arch = Arch::host().context("container runs need an x86_64 or ppc64le Linux host")?;
    let dist = build::ensure(sh, arch)?;
    Ok(Binaries {
        server: dist.server(),
        client: dist.client(),
        client_runner: Vec::new(),
    })
}

/// Runs every instance of `plan` in containers; problems are recorded in `run`, Err only when nothing can run.
pub(crate) fn execute_steps(
    sh: &Shell,
    plan: &Plan,
    args: &ContainerArgs,
    dir: &Path,
    run: &mut RunDoc,
    prov: &mut Provenance,
) -> anyhow::Result<()> {
    run.containers = true;
    anyhow::ensure!(
        run.client_arch.is_none(),
        "--client-arch cannot be combined with a container run"
    );
    let mut session = Session::start(sh, args)?;
    let outcome = steps(&mut session, plan, dir, run, prov);
    let info = session.build_info();
    prov.build.builder = info.builder.to_owned();
    prov.build.target = Some(info.target.to_owned());
    if let Some(p) = session.pinning() {
        prov.pinning = p;
    }
    prov.containers = Some(session.provenance());
    run.notes.push(format!(
        "Ran in containers FROM scratch on a private Docker network: {} client container(s) per step, server \
         RLIMIT_NOFILE {} and sysctls {} (as the OSS/J seed tuned its hosts); the host tunables below are not the \
         containers'.",
        args.clients_containers.max(1),
        super::tuning::SERVER_NOFILE,
        super::tuning::SERVER_SYSCTLS.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", "),
    ));
    if let Some(link) = &args.link {
        run.notes.push(format!(
            "The server's link was shaped to {link} each way with tc (tbf)."
        ));
    }
    drop(session);
    outcome
}

fn steps(
    session: &mut Session,
    plan: &Plan,
    dir: &Path,
    run: &mut RunDoc,
    prov: &mut Provenance,
) -> anyhow::Result<()> {
    let log = dir.join("server.log");
    let mut index = 0;
    for instance in &plan.instances {
        let first = index;
        index += instance.steps.len();
        let servers = match session.start_servers(
            &plan.server,
            instance.workers,
            instance.servers as usize,
        ) {
            Ok(servers) => servers.to_vec(),
            Err(e) => {
                super::interrupt::check()?;
                run.problems
                    .push(format!("server container did not start: {e:#}"));
                run.steps[first..index]
                    .iter_mut()
                    .for_each(|s| s.status = Status::Failed);
                let _ = session.stop_servers(&log);
                continue;
            }
        };
        prov.commands
            .server
            .extend(servers.iter().map(|s| s.command.clone()));
        let workers = servers
            .first()
            .and_then(|s| server_proc::parse_ready(&s.ready).ok())
            .and_then(|r| r.workers);
        for (i, step) in (first..index).zip(&instance.steps) {
            let entry = &mut run.steps[i];
            entry.workers = workers.or(instance.workers);
            println!("\n── step {} ({}) in containers ──", step.id, step.label);
            let json = dir.join(&entry.result);
            let clients = match session.run_step(step, &json) {
                Ok(c) => c,
                Err(e) => {
                    super::interrupt::check()?;
                    entry.status = Status::Failed;
                    run.problems.push(format!("step {}: {e:#}", step.id));
                    continue;
                }
            };
            for (n, command) in clients.commands.iter().enumerate() {
                let key = if n == 0 {
                    step.id.clone()
                } else {
                    format!("{}#{}", step.id, n + 1)
                };
                prov.commands.client.insert(key, command.clone());
            }
            let exit = clients
                .exit_codes
                .iter()
                .copied()
                .find(|&c| c != 0)
                .unwrap_or(0);
            entry.client_exit = Some(exit);
            entry.status = match summary::read_doc(&json) {
                Ok(doc) if exit == 0 && doc.counts.errors_total == 0 && !doc.partial => Status::Ok,
                Ok(_) if exit <= 1 => Status::Errors,
                Ok(_) => Status::Failed,
                Err(e) => {
                    run.problems
                        .push(format!("step {}: no results: {e}", step.id));
                    Status::Failed
                }
            };
            super::interrupt::check()?;
        }
        if let Err(e) = session.stop_servers(&log) {
            run.problems.push(format!("{e:#}"));
        }
    }
    Ok(())
}
