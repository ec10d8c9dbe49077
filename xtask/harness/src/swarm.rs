//! The Docker Swarm backend (`cargo xtask run … --swarm`): server instances and client tasks as services on
//! an attachable overlay network of an existing swarm, placed by the node labels `wsbench.role=server|client`,
//! the servers addressed directly (`tasks.<service>`, endpoint mode dnsrr: no virtual IP in the path). And
//! what `cargo xtask swarm` needs: the nodes and their check, labels, and a swarm of local engines.

pub mod check;
pub mod images;
pub mod labels;
pub mod local;
pub mod nodes;
mod session;

use std::path::Path;

use anyhow::Context as _;
use xshell::Shell;

use super::artifacts::peer_images::PeerImage;
use super::artifacts::peers::PeerBuilds;
use super::artifacts::{self, Arch};
use super::backend::peers::{peer_command, peer_images};
use super::backend::{Backend, ClientRun, Endpoint, Servers};
use super::faults::Reach;
use super::provenance::Provenance;
use super::ready;
use super::rundoc::RunDoc;
use super::scenario::{Instance, Plan, Step};
use super::sut::{Sut, Target};
use nodes::Role;
use session::Session;

/// How a swarm run is laid out.
#[derive(Debug, Clone)]
pub struct SwarmOptions {
    /// Client tasks per step (at least one per server instance): the step's load is split across them and
    /// their results merged exactly.
    pub clients_tasks: usize,
}

impl Default for SwarmOptions {
    fn default() -> Self {
        SwarmOptions { clients_tasks: 1 }
    }
}

/// Services on the swarm this machine's engine manages.
#[derive(Debug)]
pub struct Swarm {
    session: Session,
    opts: SwarmOptions,
    /// The images of the run's peers, on every server node.
    peers: Vec<PeerImage>,
    /// Whether an external target was driven (from the client nodes' network).
    external: bool,
}

impl Swarm {
    /// Checks the swarm, builds and distributes the images (`peers`' own to the server nodes), creates the
    /// overlay network.
    pub fn start(
        sh: &Shell,
        opts: &SwarmOptions,
        suts: &[Sut],
        peers: &PeerBuilds,
    ) -> anyhow::Result<Swarm> {
        let arch = Arch::host().context("swarm runs need an x86_64 or ppc64le Linux manager")?;
        let dist = artifacts::ensure(sh, arch)?;
        // This machine's architecture's images; nodes of the other one get `<tag>-<arch>` (see `images`).
        artifacts::images::build_all(sh, &dist)?;
        let peers = peer_images(sh, suts, peers)?;
        let tags: Vec<String> = peers.iter().map(|p| p.tag.clone()).collect();
        Ok(Swarm {
            session: Session::start(sh, dist.client(), opts.clients_tasks, &tags)?,
            opts: opts.clone(),
            peers,
            external: false,
        })
    }

    /// An external target (`--target`): no server service; the client tasks reach it from their nodes.
    fn drive(&mut self, target: &Target) -> anyhow::Result<Servers> {
        self.session.use_target(target)?;
        self.external = true;
        Ok(Servers::external(
            target,
            Some("client tasks on their nodes' network"),
        ))
    }
}

impl Backend for Swarm {
    fn describe(&self) -> String {
        let r = self.session.record();
        let nodes: Vec<String> = r
            .nodes
            .iter()
            .map(|n| {
                format!(
                    "{} ({}, {})",
                    n.node.hostname,
                    n.node.arch,
                    n.node.role.map_or("unlabelled", |r| r.name())
                )
            })
            .collect();
        format!(
            "Docker Swarm services on {} node(s): {}; {} client task(s) per step",
            nodes.len(),
            nodes.join(", "),
            self.opts.clients_tasks
        )
    }

    fn start(&mut self, plan: &Plan, instance: &Instance) -> anyhow::Result<Servers> {
        let peer = match &instance.sut {
            Sut::BenchServer => None,
            Sut::External(target) => return self.drive(target),
            Sut::Peer(p) => Some(peer_command(
                &self.peers,
                p,
                plan,
                instance,
                self.session.server_cores(),
            )?),
        };
        let drained = instance
            .steps
            .iter()
            .flat_map(|s| &s.faults)
            .any(|f| f.kind.reach() == Reach::Nodes);
        let servers = self.session.start_servers(
            &plan.server,
            instance.workers,
            instance.servers as usize,
            peer.as_ref().map(|(t, c)| (t.as_str(), c.as_slice())),
            drained,
        )?;
        let workers = servers
            .first()
            .and_then(|s| ready::parse_ready(&s.ready).ok())
            .and_then(|r| r.workers);
        Ok(Servers {
            endpoints: servers
                .iter()
                .map(|s| Endpoint {
                    http: s.http_url.clone(),
                    chat: s.chat_addr.clone(),
                    ready: format!("{} in {} (task {})", s.ready, s.service, s.task.id),
                })
                .collect(),
            workers,
            commands: servers.iter().map(|s| s.command.clone()).collect(),
        })
    }

    fn servers_gone(&mut self) -> Option<String> {
        self.session.gone()
    }

    fn run_step(
        &mut self,
        step: &Step,
        _servers: &Servers,
        json: &Path,
    ) -> anyhow::Result<ClientRun> {
        let run = self.session.run_step(step, json)?;
        Ok(ClientRun {
            exit: ClientRun::worst_exit(&run.exit_codes),
            commands: run.commands,
            faults: run.faults,
            overran: run.overran.then(|| step.client.deadline()),
            tiers: Vec::new(),
        })
    }

    fn reach(&self) -> Option<Reach> {
        Some(Reach::Nodes)
    }

    fn verify(&mut self, step: &Step, servers: &Servers) -> anyhow::Result<bool> {
        self.session.verify(step, servers)
    }

    fn time_wait(&self) -> Option<u64> {
        None
    }

    fn stop(&mut self, log: &Path) -> anyhow::Result<()> {
        self.session.stop_servers(log)
    }

    fn collect(&mut self, run: &mut RunDoc, prov: &mut Provenance) {
        run.containers = true;
        let record = self.session.record();
        let hosts: Vec<String> = record
            .nodes
            .iter()
            .filter(|n| n.node.role.is_some())
            .map(|n| {
                format!(
                    "{} ({} {})",
                    n.node.hostname,
                    n.node.role.map_or("", |r| r.name()),
                    n.node.arch_shown()
                )
            })
            .collect();
        let emulated: Vec<&str> = record
            .nodes
            .iter()
            .filter(|n| n.node.role.is_some() && n.node.emulated())
            .map(|n| n.node.hostname.as_str())
            .collect();
        if !emulated.is_empty() {
            run.emulated = true;
            let arch_of = |role: Role| {
                record
                    .nodes
                    .iter()
                    .find(|n| n.node.role == Some(role))
                    .and_then(|n| n.node.wsbench_arch())
                    .map(|a| a.name().to_owned())
            };
            run.client_arch = arch_of(Role::Client);
            run.server_arch = arch_of(Role::Server);
            run.notes.push(format!(
                "EMULATED: node(s) {} ran another architecture's images under qemu-user (binfmt_misc, the \
                 node's wsbench.arch label); the figures measure the emulator and are never compared with \
                 published ones.",
                emulated.join(", ")
            ));
        }
        run.notes.push(format!(
            "Ran on Docker Swarm: {} labelled node(s) [{}], server instances as services reached directly \
             (tasks.<service>, endpoint mode dnsrr) over the overlay network {}, {} client task(s) per step; \
             the host tunables below are the manager's, each node's kernel and CPUs are in provenance.json `swarm.nodes`.",
            hosts.len(),
            hosts.join(", "),
            record.network.name,
            self.opts.clients_tasks,
        ));
        let agents: Vec<&str> = record
            .tasks
            .iter()
            .filter(|t| t.kind == "agent")
            .map(|t| t.hostname.as_str())
            .collect();
        if !agents.is_empty() {
            run.notes.push(format!(
                "Each server task's CPU, RSS, fds and threads, and its node's CPU (steal too) and network, were \
                 sampled on its own node by `bench-client agent` (a service on {}, reading the node's /proc; its \
                 token a swarm secret given to the agent and client tasks only).",
                agents.join(", ")
            ));
        }
        if self.external {
            run.notes.push(
                "The external target was driven by client tasks on their nodes' own network (`docker service \
                 create --network host`): its URL reached from them what it reaches from those nodes; no server \
                 service was started, and its CPU and RSS were not sampled."
                    .to_owned(),
            );
        }
        prov.pinning = crate::pinning::Pinning {
            enabled: false,
            reason: Some("swarm tasks are placed by node labels, not pinned to CPUs".to_owned()),
            server_cpus: Vec::new(),
            client_cpus: Vec::new(),
            tool: None,
            external_server: self.external,
        };
        prov.swarm = Some(record);
    }
}
