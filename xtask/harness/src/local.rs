//! The local backend: the server under test (bench-server, a peer server, or an external target it does not
//! start) and bench-client as processes on this machine, on loopback, pinned to separate CPUs with taskset
//! when there are two or more; the server's answers verified before each instance's load.

mod faults;
mod portal;
pub mod process;

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};

use super::argv::{self, Listen, PeerPlace};
use super::artifacts::peers::PeerBuilds;
use super::artifacts::Binaries;
use super::backend::{tiers, Backend, ClientRun, Endpoint, Servers};
use super::clock;
use super::faults::Reach;
use super::pinning::Pinning;
use super::provenance::Provenance;
use super::rundoc::RunDoc;
use super::scenario::{Instance, Plan, Step};
use super::sut::{Sampler, Sut};
use process::ServerProcess;
use wsbench_tools::process::{self as programs, Waited};
use wsbench_tools::{load, setpriv};

/// How long a server may take to bind and print READY (jaxws: 4–9 s on a busy machine, publishing its
/// endpoints; more when the machine is loaded).
pub(crate) const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long bench-client may take to write what it measured and exit after SIGTERM, at its step's deadline.
pub(crate) const CLIENT_STOP_GRACE: Duration = Duration::from_secs(10);
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
    /// The peer servers' builds (`target/peers/<name>-<hash>`), for the plan's `--sut` peers.
    peers: PeerBuilds,
    server: Option<ServerProcess>,
    /// The running server's command line on the addresses it bound: how a kill-server fault restarts it.
    restart: Vec<String>,
    /// The process bench-client samples for the server's CPU and RSS: the started server's, `--target-pid`'s,
    /// or none (an external target without one).
    monitor: Sampler,
    /// The running instance is an external target.
    external: bool,
    /// The run's directory: the portal's generated files and the broker's data go under it.
    dir: PathBuf,
    /// The OSS/J portal's broker, from the first instance that needs it to the end of the run.
    broker: Option<portal::Listener>,
    /// How long the broker took to listen, each time it was started.
    broker_started: Vec<Duration>,
    /// The portal's other tiers of the running instance (front end, app instances 2 …, back ends).
    tiers: portal::Tiers,
}

impl Local {
    /// Servers log their stderr to `dir/server.log`.
    pub fn new(bins: Binaries, pinning: Pinning, peers: PeerBuilds, dir: &Path) -> Result<Local> {
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("server.log"))
            .context("opening server.log")?;
        Ok(Local {
            bins,
            pinning,
            log,
            peers,
            server: None,
            restart: Vec::new(),
            monitor: Sampler::None,
            external: false,
            dir: dir.to_path_buf(),
            broker: None,
            broker_started: Vec::new(),
            tiers: portal::Tiers::default(),
        })
    }
}

impl Backend for Local {
    fn describe(&self) -> String {
        format!("processes on this machine: {}", self.pinning.words())
    }

    fn start(&mut self, plan: &Plan, instance: &Instance) -> Result<Servers> {
        if let (Some(portal), Sut::BenchServer) = (plan.portal, &instance.sut) {
            return self.start_portal(plan, instance, portal);
        }
        if instance.servers > 1 {
            bail!(
                "{} server instances need a container run (--containers)",
                instance.servers
            );
        }
        let target = match &instance.sut {
            Sut::External(t) => t,
            sut => return self.start_process(plan, instance, sut),
        };
        self.monitor = target.sampler();
        self.external = true;
        Ok(Servers::external(target, None))
    }

    fn servers_gone(&mut self) -> Option<String> {
        // The portal's fixed tiers first: the broker, the front end and the back ends.
        let broker = self.broker.as_mut().and_then(portal::Listener::gone);
        if let Some(why) = broker.or_else(|| self.tiers.gone()) {
            return Some(why);
        }
        match self.server.as_mut() {
            // An external target is not watched: its failures show as the step's errors.
            None if self.external => None,
            None => Some("the server is not running".to_owned()),
            Some(s) => s
                .exited()
                .map(|status| format!("the server exited ({status})")),
        }
    }

    fn run_step(&mut self, step: &Step, servers: &Servers, json: &Path) -> Result<ClientRun> {
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
            &self.monitor,
            &step.label,
        ));
        let limit = step.client.deadline();
        let deadline = Instant::now() + limit;
        let meter = tiers::Meter::start(self.portal_pids(), load::process_tree_use);
        let client = programs::Process::inherit(&cmd).context("running bench-client")?;
        let (waited, faults) = if step.faults.is_empty() {
            (client.wait_until(deadline, CLIENT_STOP_GRACE)?, Vec::new())
        } else {
            let mut target = faults::Restartable {
                server: &mut self.server,
                restart: self.restart.clone(),
                log: &self.log,
                broker: self.broker.as_ref().map(|b| b.pid),
                backends: &mut self.tiers.backends,
                backend_commands: &self.tiers.backend_commands,
            };
            faults::run(&step.faults, json, client, &mut target, deadline)?
        };
        Ok(ClientRun {
            exit: waited.status().code(),
            commands: vec![cmd],
            faults,
            overran: matches!(waited, Waited::Stopped(_)).then_some(limit),
            tiers: meter.read(),
        })
    }

    fn reach(&self) -> Option<Reach> {
        Some(Reach::Process)
    }

    fn time_wait(&self) -> Option<u64> {
        Some(load::time_wait())
    }

    fn verify(&mut self, step: &Step, servers: &Servers) -> Result<bool> {
        let mut client = self.bins.client_runner.clone();
        client.push(self.bins.client.display().to_string());
        super::backend::verify_with(&client, step, servers)
    }

    fn stop(&mut self, _log: &Path) -> Result<()> {
        self.monitor = Sampler::None;
        // The front end first (no new requests), app instance 1 with the others.
        let tiers = self.tiers.stop();
        let Some(server) = self.server.take() else {
            return tiers;
        };
        tiers?;
        let status = server.stop(STOP_GRACE).context("stopping the server")?;
        if !status.success() {
            bail!("the server exited with {status} on SIGTERM (see server.log)");
        }
        Ok(())
    }

    fn collect(&mut self, run: &mut RunDoc, prov: &mut Provenance) {
        prov.pinning = self.pinning.clone();
        if let Some(broker) = self.broker.take() {
            if let Err(e) = broker.stop() {
                run.notes.push(format!("{e:#}"));
            }
        }
        for t in &self.broker_started {
            run.notes.push(format!(
                "the portal's broker (Debian's ActiveMQ) took {:.1} s to listen (started once per run)",
                t.as_secs_f64()
            ));
        }
    }
}

impl Local {
    /// Starts bench-server or a peer as a pinned child process and waits for its READY line.
    fn start_process(&mut self, plan: &Plan, instance: &Instance, sut: &Sut) -> Result<Servers> {
        let pin = &self.pinning;
        let workers = instance
            .workers
            .or(pin.enabled.then_some(pin.server_cpus.len() as u32));
        // The CPUs the server may run on: its pinned ones, else this process's (its affinity mask).
        let cores = if pin.enabled {
            pin.server_cpus.len() as u32
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
        };
        let mut cmd = setpriv::tied_to_parent();
        cmd.extend(pin.prefix(&pin.server_cpus));
        let listen = Listen::on(&plan.server, "127.0.0.1", 0, 0);
        match sut {
            Sut::Peer(peer) => {
                let build = self.peers.get(peer)?;
                cmd.extend(argv::peer(
                    peer,
                    PeerPlace::Process(build),
                    &plan.server,
                    instance,
                    (workers, cores),
                    "127.0.0.1:0",
                )?);
            }
            _ => {
                cmd.push(self.bins.server.display().to_string());
                cmd.extend(argv::server(&plan.server, workers, &listen));
            }
        }
        writeln!(
            self.log,
            "==== wsbench {}: {}",
            clock::timestamp(),
            cmd.join(" ")
        )?;
        let server = ServerProcess::start(&cmd, self.log.try_clone()?, READY_TIMEOUT)
            .with_context(|| format!("{sut} `{}` did not start", cmd.join(" ")))?;
        let ready = server.ready.clone();
        self.restart = on_bound_addresses(&cmd, &ready);
        self.monitor = Sampler::Pid(server.pid);
        self.external = false;
        self.server = Some(server);
        Ok(Servers {
            endpoints: vec![Endpoint {
                http: ready.http.map(|a| format!("http://{a}")),
                chat: ready.chat.map(|a| a.to_string()),
                ready: ready.to_string(),
            }],
            workers: ready.workers.or(workers),
            commands: vec![cmd],
        })
    }
}
