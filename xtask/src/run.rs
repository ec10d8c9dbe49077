//! `cargo xtask run <scenario>`: flags → a validated run request → the harness's pipeline, which builds, starts
//! the servers, runs every step, stops them and writes run.json, provenance.json, summary.md and the report.

use std::path::PathBuf;

use anyhow::{bail, Result};
use xshell::Shell;

use crate::harness::artifacts::Arch;
use crate::harness::docker::DockerOptions;
use crate::harness::pipeline::{self, Engine, RunOptions};
use crate::harness::rundoc::Status;
use crate::harness::swarm::SwarmOptions;

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
    /// Run server and clients as containers on a private network (images FROM scratch, built here).
    #[arg(long, conflicts_with = "swarm")]
    pub(crate) containers: bool,
    /// Run server instances and clients as services on the Docker Swarm this machine's engine manages, placed
    /// on nodes labelled wsbench.role=server / wsbench.role=client (see README, On several machines).
    #[arg(long)]
    pub(crate) swarm: bool,
    /// Client tasks per step on the swarm (at least one per server instance): the step's clients, rate and
    /// request count are split across them and their results merged exactly.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "swarm")]
    pub(crate) clients_tasks: usize,
    /// Client containers per step: the step's clients, rate and request count are split across them and their
    /// results merged exactly (histograms added).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "containers")]
    pub(crate) clients_containers: usize,
    /// Shape the server's link in both directions, e.g. `100mbit` (the T2000 seed's crossover cable), with tc
    /// in the server container's network namespace.
    #[arg(long, value_name = "RATE", requires = "containers")]
    pub(crate) link: Option<String>,
    /// Run bench-client built for ARCH; `ppc64le` runs under qemu-ppc64le against the native server (the CXF
    /// seed's IBM client → Intel server pairing), with --containers as ppc64le client containers (binfmt_misc);
    /// emulated figures are labelled so and never compared with native ones. On a swarm a node's arch picks it.
    #[arg(long, value_enum, value_name = "ARCH", conflicts_with = "swarm")]
    pub(crate) client_arch: Option<Arch>,
    /// Run the server container from the ARCH image (`ppc64le`: a POWER server under emulation, binfmt_misc).
    #[arg(long, value_enum, value_name = "ARCH", requires = "containers")]
    pub(crate) server_arch: Option<Arch>,
}

impl Args {
    /// The validated request the pipeline takes.
    pub(crate) fn options(&self) -> Result<RunOptions> {
        if self.clients_containers == 0 {
            bail!("--clients-containers must be ≥ 1");
        }
        if self.clients_tasks == 0 {
            bail!("--clients-tasks must be ≥ 1");
        }
        let engine = if self.swarm {
            Engine::Swarm(SwarmOptions {
                clients_tasks: self.clients_tasks,
            })
        } else if self.containers {
            Engine::Docker(DockerOptions {
                clients_containers: self.clients_containers,
                link: self.link.clone(),
                server_arch: self.server_arch,
                client_arch: self.client_arch,
            })
        } else {
            Engine::Local
        };
        Ok(RunOptions {
            scenario: self.scenario.clone(),
            quick: self.quick,
            sets: self.sets.clone(),
            out: self.out.clone(),
            pin: !self.no_pin,
            engine,
            // In containers the arch picks the client image instead of an emulated client process.
            client_arch: self.client_arch.filter(|_| !self.containers),
        })
    }
}

pub(crate) fn run(sh: &Shell, args: Args) -> Result<()> {
    let outcome = pipeline::execute(sh, &args.options()?)?;
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
