//! The local backend: bench-server and bench-client as processes on this machine, on loopback, pinned to
//! separate CPUs with taskset when there are two or more.

mod faults;
pub mod process;

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

use super::argv::{self, Listen};
use super::artifacts::Binaries;
use super::backend::{Backend, ClientRun, Endpoint, Servers};
use super::clock;
use super::pinning::Pinning;
use super::provenance::Provenance;
use super::rundoc::RunDoc;
use super::scenario::{Instance, Plan, Step};
use process::ServerProcess;
use wsbench_tools::process as programs;
use wsbench_tools::{load, setpriv};

/// How long bench-server may take to bind and print READY.
pub(crate) const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long bench-server may take to drain and exit after SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(20);

/// `cmd` with its `--http`/`--chat` addresses replaced by those `ready` says it bound (port 0 → its port).
fn on_bound_addresses(cmd: &[String], ready: &crate::ready::Ready) -> Vec<String> {
    let mut out = cmd.to_vec();
    for i in 1..out.len() {
        let bound = match out[i - 1].as_str() {
            "--http" => ready.http,
            "--chat" => ready.chat,
            _ => None,
        };
        if let Some(addr) = bound {
            out[i] = addr.to_string();
        }
    }
    out
}

/// Processes on this machine.
#[derive(Debug)]
pub struct Local {
    bins: Binaries,
    pinning: Pinning,
    log: File,
    server: Option<ServerProcess>,
    /// The running server's command line on the addresses it bound: how a kill-server fault restarts it.
    restart: Vec<String>,
}

impl Local {
    /// Servers log their stderr to `dir/server.log`.
    pub fn new(bins: Binaries, pinning: Pinning, dir: &Path) -> Result<Local> {
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("server.log"))
            .context("opening server.log")?;
        Ok(Local {
            bins,
            pinning,
            log,
            server: None,
            restart: Vec::new(),
        })
    }
}

impl Backend for Local {
    fn describe(&self) -> String {
        if self.pinning.enabled {
            format!(
                "processes on this machine, server on CPU {} and client on CPU {}",
                super::pinning::format_cpu_list(&self.pinning.server_cpus),
                super::pinning::format_cpu_list(&self.pinning.client_cpus)
            )
        } else {
            "processes on this machine, unpinned".to_owned()
        }
    }

    fn start(&mut self, plan: &Plan, instance: &Instance) -> Result<Servers> {
        if instance.servers > 1 {
            bail!(
                "{} server instances need a container run (--containers)",
                instance.servers
            );
        }
        let pin = &self.pinning;
        let workers = instance
            .workers
            .or(pin.enabled.then_some(pin.server_cpus.len() as u32));
        let mut cmd = setpriv::tied_to_parent();
        cmd.extend(pin.prefix(&pin.server_cpus));
        cmd.push(self.bins.server.display().to_string());
        cmd.extend(argv::server(
            &plan.server,
            workers,
            &Listen::on(&plan.server, "127.0.0.1", 0, 0),
        ));
        writeln!(
            self.log,
            "==== wsbench {}: {}",
            clock::timestamp(),
            cmd.join(" ")
        )?;
        let server = ServerProcess::start(&cmd, self.log.try_clone()?, READY_TIMEOUT)
            .with_context(|| format!("bench-server `{}` did not start", cmd.join(" ")))?;
        let ready = server.ready.clone();
        self.restart = on_bound_addresses(&cmd, &ready);
        self.server = Some(server);
        Ok(Servers {
            endpoints: vec![Endpoint {
                http: ready.http.map(|a| format!("http://{a}")),
                chat: ready.chat.map(|a| a.to_string()),
                ready: ready.line(),
            }],
            workers: ready.workers.or(workers),
            commands: vec![cmd],
        })
    }

    fn servers_gone(&mut self) -> Option<String> {
        match self.server.as_mut() {
            None => Some("bench-server is not running".to_owned()),
            Some(s) => s
                .exited()
                .map(|status| format!("bench-server exited ({status})")),
        }
    }

    fn run_step(&mut self, step: &Step, servers: &Servers, json: &Path) -> Result<ClientRun> {
        let server = self.server.as_ref().context("no bench-server is running")?;
        let endpoint = servers.endpoints.first().context("no server endpoint")?;
        let target = if step.client.operation.is_chat() {
            endpoint.chat.clone()
        } else {
            endpoint.http.clone()
        }
        .context("the server does not serve this step's protocol")?;
        let pin = &self.pinning;
        let mut cmd = setpriv::tied_to_parent();
        cmd.extend(pin.prefix(&pin.client_cpus));
        cmd.extend(self.bins.client_runner.iter().cloned());
        cmd.push(self.bins.client.display().to_string());
        cmd.extend(argv::client(
            &step.client,
            &target,
            json,
            server.ready.pid,
            &step.label,
        ));
        if step.faults.is_empty() {
            let status = programs::status(&cmd).context("running bench-client")?;
            return Ok(ClientRun {
                exit: status.code(),
                commands: vec![cmd],
                faults: Vec::new(),
            });
        }
        let client = programs::spawn(&cmd).context("running bench-client")?;
        let mut target = faults::Target {
            server: &mut self.server,
            restart: self.restart.clone(),
            log: &self.log,
        };
        let (status, faults) = faults::run(&step.faults, json, client, &mut target)?;
        Ok(ClientRun {
            exit: status.code(),
            commands: vec![cmd],
            faults,
        })
    }

    fn does_faults(&self) -> bool {
        true
    }

    fn time_wait(&self) -> Option<u64> {
        Some(load::time_wait())
    }

    fn stop(&mut self, _log: &Path) -> Result<()> {
        let Some(server) = self.server.take() else {
            return Ok(());
        };
        let status = server.stop(STOP_GRACE).context("stopping bench-server")?;
        if !status.success() {
            bail!("bench-server exited with {status} on SIGTERM (see server.log)");
        }
        Ok(())
    }

    fn collect(&mut self, _run: &mut RunDoc, prov: &mut Provenance) {
        prov.pinning = self.pinning.clone();
    }
}
