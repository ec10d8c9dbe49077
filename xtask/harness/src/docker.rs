//! The Docker backend (`cargo xtask run … --containers`): server and client containers `FROM scratch` on a
//! private network, standing in for separate hosts; everything created is removed again, also on failure or
//! Ctrl-C. An external `--target` gets no server container: client containers on the host's network drive it.

mod faults;
mod session;
pub mod shaping;

use std::path::Path;

use anyhow::Context as _;
use xshell::Shell;

use super::artifacts::peer_images::PeerImage;
use super::artifacts::peers::PeerBuilds;
use super::artifacts::{self, Arch, Binaries};
use super::backend::peers::{peer_command, peer_images};
use super::backend::{tiers, Backend, ClientRun, Endpoint, Servers};
use super::backend::{verify_in_container, verify_with};
use super::containers::tuning;
use super::faults::Reach;
use super::portal::Portal;
use super::provenance::Provenance;
use super::ready;
use super::rundoc::RunDoc;
use super::scenario::{Instance, Plan, Step};
use super::sut::{Sut, Target};
use session::Session;
use wsbench_tools::docker::EngineAddr;

/// How a container run is laid out.
#[derive(Debug, Clone)]
pub struct DockerOptions {
    /// Client containers per step: the step's clients, rate and request count are split across them and their
    /// results merged exactly.
    pub clients_containers: usize,
    /// Shape the server's link in both directions (`100mbit`), with tc in its network namespace.
    pub link: Option<String>,
    /// The arch of the server image (None: this machine's); another arch runs under emulation (binfmt_misc).
    pub server_arch: Option<Arch>,
    /// The arch of the client image, likewise.
    pub client_arch: Option<Arch>,
}

impl Default for DockerOptions {
    fn default() -> Self {
        DockerOptions {
            clients_containers: 1,
            link: None,
            server_arch: None,
            client_arch: None,
        }
    }
}

/// The static binaries the images are built from (also what provenance names as the build).
pub fn binaries(sh: &Shell) -> anyhow::Result<Binaries> {
    let arch = Arch::host().context("container runs need an x86_64 or ppc64le Linux host")?;
    let dist = artifacts::ensure(sh, arch)?;
    Ok(Binaries {
        server: dist.server(),
        client: dist.client(),
        client_runner: Vec::new(),
    })
}

/// Containers on this machine's Docker engine.
#[derive(Debug)]
pub struct Docker {
    session: Session,
    opts: DockerOptions,
    /// Whether an external target was driven (its client containers on the host's network).
    external: bool,
    /// The images of the run's peers.
    peers: Vec<PeerImage>,
    /// Where the servers' logs went last (the portal's broker, kept across steps, adds its own at the end).
    log: Option<std::path::PathBuf>,
}

impl Docker {
    /// Builds the images (bench-server's, and `peers`' own) and creates the private network.
    pub fn start(
        sh: &Shell,
        opts: &DockerOptions,
        suts: &[Sut],
        peers: &PeerBuilds,
    ) -> anyhow::Result<Docker> {
        Ok(Docker {
            peers: peer_images(sh, suts, peers)?,
            session: Session::start(sh, opts)?,
            opts: opts.clone(),
            external: false,
            log: None,
        })
    }

    /// The OSS/J portal's containers for `instance`; the clients' one endpoint is its front end.
    fn start_portal(
        &mut self,
        plan: &Plan,
        instance: &Instance,
        portal: Portal,
    ) -> anyhow::Result<Servers> {
        let workers = instance.workers.or(Some(1));
        let apps = instance.servers as usize;
        let (url, commands) = self
            .session
            .start_portal(&plan.server, workers, portal, apps)?;
        Ok(Servers {
            endpoints: vec![Endpoint {
                http: Some(url.clone()),
                chat: None,
                ready: format!(
                    "portal at {url}: {} over {apps} app container(s), a broker container, {} back-end \
                     container(s)",
                    portal.front, portal.backends
                ),
            }],
            workers,
            commands,
        })
    }

    /// The broker's log and start-up times, once the run is over.
    fn collect_portal(&mut self, run: &mut RunDoc) {
        let started = self.session.broker_started().to_vec();
        if started.is_empty() {
            return;
        }
        if let Some(log) = &self.log {
            if let Err(e) = self.session.stop_broker(log) {
                run.notes.push(format!("the portal's broker: {e:#}"));
            }
        }
        let images = self
            .session
            .portal_images()
            .map_or(String::new(), |(b, f)| {
                format!(" (images: broker {b}, front end {f})")
            });
        let times: Vec<String> = started
            .iter()
            .map(|d| format!("{:.1} s", d.as_secs_f64()))
            .collect();
        run.notes.push(format!(
            "The OSS/J portal ran as containers, each tier its own (front end, app instances, broker, back \
             ends) on the run's private network{images}; the clients reached the front end only. The \
             broker (Debian's ActiveMQ) took {} to listen (started once per run). Each tier's CPU and memory \
             are its containers' control groups' (the memory figure is the group's peak, page cache \
             included).",
            times.join(", ")
        ));
    }

    /// An external target (`--target`): no server container; the clients reach it from the host's network.
    fn drive(&mut self, target: &Target) -> anyhow::Result<Servers> {
        self.session.use_target(target)?;
        self.external = true;
        Ok(Servers::external(
            target,
            Some("client containers on the host's network"),
        ))
    }
}

impl Backend for Docker {
    fn describe(&self) -> String {
        format!(
            "containers on this machine's Docker engine, {} client container(s) per step",
            self.opts.clients_containers.max(1)
        )
    }

    fn start(&mut self, plan: &Plan, instance: &Instance) -> anyhow::Result<Servers> {
        if let (Some(portal), Sut::BenchServer) = (plan.portal, &instance.sut) {
            return self.start_portal(plan, instance, portal);
        }
        let peer = match &instance.sut {
            Sut::BenchServer => None,
            Sut::External(target) => return self.drive(target),
            Sut::Peer(p) => Some(peer_command(
                &self.peers,
                p,
                plan,
                instance,
                self.session.server_cores(instance.servers as usize),
            )?),
        };
        let servers = self.session.start_servers(
            &plan.server,
            instance.workers,
            instance.servers as usize,
            peer.as_ref().map(|(t, c)| (t.as_str(), c.as_slice())),
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
                    ready: format!("{} in {}", s.ready, s.name),
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
        let meter = tiers::Meter::start(self.session.portal_pids(), tiers::container);
        let (run, faults) = self.session.run_step(step, json)?;
        Ok(ClientRun {
            exit: ClientRun::worst_exit(&run.exit_codes),
            commands: run.commands,
            faults,
            overran: run.overran.then(|| step.client.deadline()),
            tiers: meter.read(),
        })
    }

    fn reach(&self) -> Option<Reach> {
        Some(Reach::Containers)
    }

    fn time_wait(&self) -> Option<u64> {
        None
    }

    fn verify(&mut self, step: &Step, servers: &Servers) -> anyhow::Result<bool> {
        // An external target is reached from this machine as from the client containers (the host's network);
        // a server container on the run's private network, from a throwaway client container on it.
        if self.external {
            let client = [self.session.native_client().display().to_string()];
            return verify_with(&client, step, servers);
        }
        verify_in_container(
            &EngineAddr::default(),
            &self.session.verifier(),
            step,
            servers,
        )
    }

    fn stop(&mut self, log: &Path) -> anyhow::Result<()> {
        self.log = Some(log.to_path_buf());
        self.session.stop_servers(log)
    }

    fn collect(&mut self, run: &mut RunDoc, prov: &mut Provenance) {
        run.containers = true;
        self.collect_portal(run);
        let info = self.session.build_info();
        prov.build.builder = info.builder.clone();
        prov.build.target = Some(info.target.clone());
        if let Some(p) = self.session.pinning() {
            prov.pinning = p;
        }
        prov.containers = Some(self.session.record());
        run.notes.push(format!(
            "Ran in containers FROM scratch on a private Docker network: {} client container(s) per step, server \
             RLIMIT_NOFILE {} and sysctls {} (as the OSS/J seed tuned its hosts); the host tunables below are not \
             the containers'.",
            self.opts.clients_containers.max(1),
            tuning::SERVER_NOFILE,
            tuning::SERVER_SYSCTLS
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", "),
        ));
        if self.external {
            run.notes.push(
                "The external target was driven by client containers on the host's network (`docker run \
                 --network host`): its URL reached from them what it reaches from this machine; no server \
                 container was started, and the clients ran unpinned with the host's sysctls."
                    .to_owned(),
            );
        }
        if let Some(link) = &self.opts.link {
            run.notes.push(format!(
                "The server's link was shaped to {link} each way with tc (tbf)."
            ));
        }
        self.session.record_arches(run, prov);
    }
}
