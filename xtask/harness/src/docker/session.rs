//! One container run: images, a private network, server containers (pinned, tuned, waited for until READY),
//! client containers per step with their results merged exactly. Dropping the session removes every container
//! and network it created, also when the run failed or was interrupted.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context as _};
use xshell::Shell;

use super::{faults, shaping, DockerOptions};

mod portal;
use crate::argv::{self, Listen};
use crate::artifacts::emulation::ClientArch;
use crate::artifacts::images::{self, Image};
use crate::artifacts::{self, emulation, Arch, Dist};
use crate::backend::schedule;
use crate::containers::{self, append, clients, session_id, tuning};
use crate::interrupt;
use crate::pinning::{self, CpuSets};
use crate::provenance::containers::{
    ClientRunRecord, ContainersRecord, History, Limits, Network, ServerEndpoint,
};
use crate::provenance::Provenance;
use crate::ready::{self, NotReady};
use crate::rundoc::{FaultRecord, RunDoc};
use crate::scenario::{ServerSpec, Step};
use crate::sut::{Sampler, Target};
use bench_proto::results::AGENT_TOKEN_ENV as TOKEN_ENV;
use wsbench_tools::{docker, process};

const HTTP_PORT: u16 = 8080;
const CHAT_PORT: u16 = 8081;
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// Seconds a client container gets to write what it measured after SIGTERM at its step's deadline.
const CLIENT_STOP_GRACE_S: u32 = 10;
/// How often the step's client containers are looked at while they run.
const CLIENT_POLL: Duration = Duration::from_millis(50);
/// Where client containers write their results (a host directory is mounted there).
const OUT: &str = "/out";

/// Everything created for one `cargo xtask run … --containers`; Drop removes it.
#[derive(Debug)]
pub(super) struct Session {
    sh: Shell,
    id: String,
    network: String,
    out_dir: PathBuf,
    /// This machine's binaries (`bench-client merge` runs natively).
    dist: Dist,
    server: Side,
    client: Side,
    ncpu: usize,
    clients_containers: usize,
    link: Option<shaping::Rate>,
    pinning: Option<CpuSets>,
    servers: Vec<ServerEndpoint>,
    /// A server wsbench did not start (`--target`), driven instead of any server container.
    external: Option<Target>,
    started: usize,
    history: Vec<History>,
    /// The OSS/J portal's tiers around the application instances, when a portal runs.
    portal: portal::Tiers,
}

impl Session {
    /// Builds the static binaries and images, creates the private network.
    pub(super) fn start(sh: &Shell, args: &DockerOptions) -> anyhow::Result<Session> {
        interrupt::install()?;
        ensure!(
            args.clients_containers >= 1,
            "--clients-containers must be ≥ 1"
        );
        if !artifacts::toolchain::docker_answers(sh) {
            bail!(
                "--containers needs a running Docker daemon and `docker info` failed: install Docker \
                 (`apt-get install docker.io`) and start it"
            );
        }
        let link = args.link.as_deref().map(shaping::parse_rate).transpose()?;
        if link.is_some() {
            shaping::preflight(sh)?;
        }
        let arch =
            Arch::host().context("container runs need an x86_64 or ppc64le Linux Docker host")?;
        let dist = artifacts::ensure(sh, arch)?;
        let server = Side::prepare(sh, args.server_arch.unwrap_or(arch), images::SERVER)?;
        let client = Side::prepare(sh, args.client_arch.unwrap_or(arch), images::CLIENT)?;
        interrupt::check()?;
        let id = session_id();
        let out_dir = std::env::temp_dir().join(format!("wsbench-{id}"));
        let session = Session {
            sh: Shell::new()?,
            network: format!("wsbench-{id}"),
            id,
            out_dir,
            dist,
            server,
            client,
            ncpu: docker::ncpu(sh)?,
            clients_containers: args.clients_containers,
            link,
            pinning: None,
            servers: Vec::new(),
            external: None,
            started: 0,
            history: Vec::new(),
            portal: portal::Tiers::default(),
        };
        create_out_dir(&session.out_dir)?;
        docker::create_network(sh, &session.network, &containers::label(&session.id))?;
        Ok(session)
    }

    /// Starts `instances` server containers and waits for each one's READY line: bench-server's image, or
    /// `other` (a peer's image tag and its command line, listening on the same port).
    pub(crate) fn start_servers(
        &mut self,
        spec: &ServerSpec,
        workers: Option<u32>,
        instances: usize,
        other: Option<(&str, &[String])>,
    ) -> anyhow::Result<&[ServerEndpoint]> {
        ensure!(
            self.servers.is_empty(),
            "servers are already running: stop them first"
        );
        ensure!(instances >= 1, "at least one server instance is needed");
        let pinning = pinning::for_containers(self.ncpu, instances);
        for cpuset in pinning.servers.clone() {
            interrupt::check()?;
            let (image, command) = match other {
                Some((tag, peer)) => (tag.to_owned(), peer.to_vec()),
                None => (
                    self.server.image.tag.clone(),
                    argv::server(
                        spec,
                        workers,
                        &Listen::on(spec, "0.0.0.0", HTTP_PORT, CHAT_PORT),
                    ),
                ),
            };
            self.started += 1;
            let name = format!("wsbench-{}-server-{}", self.id, self.started);
            self.launch(spec, name, cpuset, &image, &command)?;
        }
        self.pinning = Some(pinning);
        Ok(&self.servers)
    }

    /// `docker run` options every server-side container gets: its name, the run's label and network, its
    /// CPUs, and the seed's fd limit and TCP tunables.
    fn server_args(&self, name: &str, cpuset: Option<&String>) -> Vec<String> {
        let mut args = vec![
            "--name".to_owned(),
            name.to_owned(),
            "--label".into(),
            containers::label(&self.id),
        ];
        args.extend(["--network".into(), self.network.clone()]);
        if let Some(cpus) = cpuset {
            args.extend(["--cpuset-cpus".into(), cpus.clone()]);
        }
        args.extend([
            "--ulimit".into(),
            format!("nofile={}", tuning::SERVER_NOFILE),
        ]);
        for (k, v) in tuning::SERVER_SYSCTLS {
            args.extend(["--sysctl".into(), format!("{k}={v}")]);
        }
        args
    }

    /// Runs one server container `name` (`image` with `command`, on `cpuset`), waits for its READY line
    /// and adds it to the running servers.
    fn launch(
        &mut self,
        spec: &ServerSpec,
        name: String,
        cpuset: Option<String>,
        image: &str,
        command: &[String],
    ) -> anyhow::Result<()> {
        let mut args = self.server_args(&name, cpuset.as_ref());
        args.push(image.to_owned());
        args.extend(command.iter().cloned());
        docker::run_detached(&self.sh, &args)?;
        let ready = wait_ready(&self.sh, &name)?;
        let ip = docker::ip(&self.sh, &name, &self.network)?;
        let host_pid = docker::pid(&self.sh, &name)?;
        let shaped = match &self.link {
            Some(rate) => Some(shaping::apply(&self.sh, host_pid, rate)?),
            None => None,
        };
        eprintln!("server container {name} at {ip}");
        self.servers.push(ServerEndpoint {
            http_url: spec.http().then(|| format!("http://{ip}:{HTTP_PORT}")),
            chat_addr: spec.chat().then(|| format!("{ip}:{CHAT_PORT}")),
            name,
            ip,
            host_pid,
            ready,
            cpuset,
            command: std::iter::once("docker run -d".to_owned())
                .chain(args)
                .collect(),
            shaped,
        });
        Ok(())
    }

    /// Drives `target` from now on instead of server containers (none is started): the client containers join
    /// the host's network namespace (`--network host`), so the target's URL means in them what it means on
    /// this machine — a server on this machine's loopback or on another host alike — and, with `--target-pid`,
    /// the host's PID namespace to sample that process.
    pub(crate) fn use_target(&mut self, target: &Target) -> anyhow::Result<()> {
        ensure!(
            self.servers.is_empty(),
            "servers are already running: stop them first"
        );
        self.external = Some(target.clone());
        self.pinning = None;
        Ok(())
    }

    /// `docker run` options and image of a throwaway client container on the run's network (labelled, so a
    /// leftover is removed with the run's), for `bench-client --verify-only`.
    pub(super) fn verifier(&self) -> Vec<String> {
        vec![
            "--network".to_owned(),
            self.network.clone(),
            "--label".into(),
            containers::label(&self.id),
            self.client.image.tag.clone(),
        ]
    }

    /// Where share `i`'s client container reaches its server: `(http URL, chat address, docker run options,
    /// the PID bench-client samples)`.
    fn reach(&self, i: usize) -> (Option<String>, Option<String>, Vec<String>, Sampler) {
        if let Some(t) = &self.external {
            // Docker refuses namespaced sysctls in the host's network namespace: the host's own are in force.
            let mut args = vec!["--network".to_owned(), "host".to_owned()];
            if t.pid.is_some() {
                args.extend(["--pid".into(), "host".into()]);
            }
            if t.agent.is_some() {
                // The token from this process's environment, by name: never on a command line.
                args.extend(["--env".into(), TOKEN_ENV.into()]);
            }
            return (t.http.clone(), t.chat.clone(), args, t.sampler());
        }
        let server = &self.servers[i % self.servers.len()];
        let mut args = vec!["--network".to_owned(), self.network.clone()];
        if let Some(cpus) = self.pinning.as_ref().and_then(|p| p.clients.clone()) {
            args.extend(["--cpuset-cpus".into(), cpus]);
        }
        for (k, v) in tuning::CLIENT_SYSCTLS {
            args.extend(["--sysctl".into(), format!("{k}={v}")]);
        }
        // Joining the server's PID namespace makes the server PID 1 for --monitor-pid (RSS sampling).
        args.extend(["--pid".into(), format!("container:{}", server.name)]);
        // The portal's clients reach its front end only.
        let front = self.portal.front.as_ref();
        (
            front
                .map(|f| format!("http://{}:{HTTP_PORT}", f.ip))
                .or_else(|| server.http_url.clone()),
            server.chat_addr.clone(),
            args,
            Sampler::Pid(1),
        )
    }

    /// Runs one step in client containers (at least one per server, spreading the load across them), writes
    /// the step's results document to `json_out` (merged exactly when there are several).
    pub(crate) fn run_step(
        &mut self,
        step: &Step,
        json_out: &Path,
    ) -> anyhow::Result<(ClientRunRecord, Vec<FaultRecord>)> {
        ensure!(
            !self.servers.is_empty() || self.external.is_some(),
            "no server container is running"
        );
        let k = self.clients_containers.max(self.servers.len());
        let shares =
            clients::split(&step.client, k).with_context(|| format!("step {}", step.id))?;
        let mut children = Vec::new();
        let mut commands = Vec::new();
        let mut files = Vec::new();
        let mut names = Vec::new();
        let deadline = Instant::now() + step.client.deadline();
        for (i, share) in shares.iter().enumerate() {
            interrupt::check()?;
            let (http_url, chat_addr, reach, monitor) = self.reach(i);
            let target = clients::target(share, &http_url, &chat_addr, &step.id)?;
            let file = format!("{}.{}.json", step.id, i + 1);
            let name = format!("wsbench-{}-{}-client-{}", self.id, step.id, i + 1);
            names.push(name.clone());
            let mut args = vec![
                "--name".to_owned(),
                name,
                "--label".into(),
                containers::label(&self.id),
            ];
            args.extend(reach);
            args.extend([
                "--volume".into(),
                format!("{}:{OUT}", self.out_dir.display()),
            ]);
            args.push(self.client.image.tag.clone());
            args.extend(argv::client(
                share,
                &target,
                &Path::new(OUT).join(&file),
                &monitor,
                &step.label,
            ));
            let child = docker::run_attached(&args)?;
            children.push(child);
            commands.push(
                std::iter::once("docker run".to_owned())
                    .chain(args)
                    .collect(),
            );
            files.push(self.out_dir.join(file));
        }
        let faults = self.do_faults(step, &files[0], &mut children)?;
        let aborts = step.client.abort.is_some();
        let (exit_codes, overran) =
            self.wait_clients(children, &names, &files, deadline, aborts)?;
        // Interrupted clients still write what they measured (marked partial): keep it, the caller stops after.
        self.remove_containers_matching(&format!("{}-client-", step.id));
        let missing: Vec<_> = files.iter().filter(|f| !f.exists()).collect();
        if !missing.is_empty() {
            bail!(
                "step {}: client containers exited {exit_codes:?} without writing {missing:?}",
                step.id
            );
        }
        if let Some(dir) = json_out.parent() {
            std::fs::create_dir_all(dir)?;
        }
        if files.len() == 1 {
            std::fs::copy(&files[0], json_out)
                .with_context(|| format!("copying results to {}", json_out.display()))?;
        } else {
            let (client, parts) = (self.dist.client(), &files);
            let mut argv = vec![process::arg(&client), "merge".to_owned()];
            argv.extend(parts.iter().map(|p| process::arg(p)));
            argv.extend(["--json".to_owned(), process::arg(json_out)]);
            process::run(&self.sh, &argv)
                .with_context(|| format!("merging the results of step {}", step.id))?;
        }
        for f in &files {
            let _ = std::fs::remove_file(f);
        }
        let run = ClientRunRecord {
            containers: files.len(),
            exit_codes,
            commands,
            overran,
        };
        self.history.push(History::Step {
            step: step.id.clone(),
            clients: run.clone(),
        });
        Ok((run, faults))
    }

    /// Does `step`'s faults to the server containers while `clients` run (the first writing `json`).
    fn do_faults(
        &mut self,
        step: &Step,
        json: &Path,
        clients: &mut [std::process::Child],
    ) -> anyhow::Result<Vec<FaultRecord>> {
        if step.faults.is_empty() {
            return Ok(Vec::new());
        }
        let mut net = faults::Net {
            sh: &self.sh,
            network: &self.network,
            servers: &mut self.servers,
            link: self.link.as_ref(),
            clients,
        };
        schedule::run(&step.faults, json, &mut net)
    }

    /// Waits for a step's client containers (`docker run` in the foreground, named `names`, writing `files`)
    /// by `deadline`; past it, stops every one of them (SIGTERM: each writes what it measured; SIGKILL after
    /// the grace). With `aborts` (abort_on_fail), a part that stopped on a clearly failed threshold stops the
    /// others too: the step has failed, and the merged result is then what was measured until it stopped, not
    /// the other parts' load after it. Their exit codes, and whether the deadline passed.
    fn wait_clients(
        &self,
        mut children: Vec<std::process::Child>,
        names: &[String],
        files: &[PathBuf],
        deadline: Instant,
        aborts: bool,
    ) -> anyhow::Result<(Vec<Option<i32>>, bool)> {
        let mut ended: Vec<Option<Option<i32>>> = vec![None; children.len()];
        let (mut stopping, mut overran) = (false, false);
        loop {
            for (i, child) in children.iter_mut().enumerate() {
                if ended[i].is_some() {
                    continue;
                }
                let Some(status) = child.try_wait().context("waiting for a client container")?
                else {
                    continue;
                };
                ended[i] = Some(status.code());
                if aborts && !stopping && clients::stopped_on_threshold(status.code(), &files[i]) {
                    stopping = true;
                    self.stop_clients(names, &ended);
                }
            }
            if ended.iter().all(Option::is_some) {
                return Ok((ended.into_iter().flatten().collect(), overran));
            }
            if !stopping && Instant::now() >= deadline {
                (stopping, overran) = (true, true);
                self.stop_clients(names, &ended);
            }
            std::thread::sleep(CLIENT_POLL);
        }
    }

    /// Stops the client containers that have not ended (SIGTERM: each writes what it measured).
    fn stop_clients(&self, names: &[String], ended: &[Option<Option<i32>>]) {
        for (name, _) in names.iter().zip(ended).filter(|(_, e)| e.is_none()) {
            let _ = docker::stop(&self.sh, name, CLIENT_STOP_GRACE_S);
        }
    }

    /// Stops the servers gracefully (SIGTERM), appends their stderr (and shaping statistics) to `log`, removes
    /// them; fails if one did not exit cleanly.
    pub(crate) fn stop_servers(&mut self, log: &Path) -> anyhow::Result<()> {
        self.external = None;
        let mut text = String::new();
        let mut failures = Vec::new();
        self.stop_portal(&mut text, &mut failures);
        for server in std::mem::take(&mut self.servers) {
            if let Some(shaped) = &server.shaped {
                text.push_str(&format!("== {}: link shaping ==\n", server.name));
                text.push_str(&shaping::stats(&self.sh, server.host_pid, shaped));
            }
            let stopped = docker::stop(&self.sh, &server.name, 10);
            let code = docker::exit_code(&self.sh, &server.name);
            let (_, stderr) = docker::logs(&server.name).unwrap_or_default();
            text.push_str(&format!(
                "== {} ({}) ==\n{stderr}",
                server.name, server.ready
            ));
            match (stopped, code) {
                (Ok(()), Ok(0)) => {}
                (Err(e), _) => failures.push(format!("{}: {e:#}", server.name)),
                (_, Ok(c)) => failures.push(format!(
                    "{} exited with status {c}, not a clean shutdown",
                    server.name
                )),
                (_, Err(e)) => failures.push(format!("{}: {e:#}", server.name)),
            }
            let _ = docker::remove(&self.sh, std::slice::from_ref(&server.name));
            self.history.push(History::Server { server });
        }
        append(log, &text)?;
        if !failures.is_empty() {
            bail!("server containers: {}", failures.join("; "));
        }
        Ok(())
    }

    /// This machine's bench-client (the static build the client image holds).
    pub(crate) fn native_client(&self) -> PathBuf {
        self.dist.client()
    }

    /// How the binaries in the images were built.
    pub(crate) fn build_info(&self) -> &artifacts::BuildInfo {
        &self.dist.info
    }

    /// The CPUs each of `instances` server containers will be given (its cpuset; the engine's all when there
    /// is no pinning), before they start: what a peer's per-core worker rule counts.
    pub(crate) fn server_cores(&self, instances: usize) -> u32 {
        let sets = pinning::for_containers(self.ncpu, instances);
        let cpus = sets
            .servers
            .first()
            .and_then(|s| s.as_deref())
            .and_then(|l| pinning::parse_cpu_list(l).ok())
            .map_or(self.ncpu, |c| c.len());
        cpus.max(1) as u32
    }

    /// The last placement of servers and clients on CPUs, in provenance's terms.
    pub(super) fn pinning(&self) -> Option<pinning::Pinning> {
        self.pinning.as_ref().map(|p| p.as_pinning(self.ncpu))
    }

    /// Why a server container is no longer running, if one is not.
    pub(super) fn gone(&self) -> Option<String> {
        self.servers
            .iter()
            .find(|s| !docker::running(&self.sh, &s.name))
            .map(|s| format!("server container {} stopped", s.name))
            .or_else(|| self.portal_gone())
    }

    /// How the containers were built, placed and tuned, for provenance.json.
    pub(super) fn record(&self) -> ContainersRecord {
        ContainersRecord {
            engine: "docker".to_owned(),
            engine_version: docker::server_version(&self.sh),
            network: Network {
                name: self.network.clone(),
                driver: "bridge".to_owned(),
                internal: true,
            },
            images: vec![self.server.image.clone(), self.client.image.clone()],
            build: self.dist.info.clone(),
            host_cpus: self.ncpu,
            pinning: self.pinning.clone(),
            server: Limits {
                containers_per_step: None,
                ulimit_nofile: tuning::SERVER_NOFILE.to_owned(),
                sysctls: tuning::SERVER_SYSCTLS
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect(),
            },
            client: Limits {
                containers_per_step: Some(self.clients_containers),
                ulimit_nofile: "the Docker daemon's default".to_owned(),
                sysctls: tuning::CLIENT_SYSCTLS
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect(),
            },
            link: self.link.clone(),
            history: self.history.clone(),
        }
    }

    /// Labels a run with an emulated side as emulated, in run.json, its notes and provenance.json.
    pub(crate) fn record_arches(&self, run: &mut RunDoc, prov: &mut Provenance) {
        let sides = [("server", &self.server), ("client", &self.client)];
        let emulated: Vec<String> = sides
            .iter()
            .filter_map(|(name, side)| {
                let interpreter = side.interpreter.as_ref()?;
                Some(format!(
                    "the {name} containers ran {} binaries under {interpreter} (qemu-user through binfmt_misc)",
                    side.arch.name()
                ))
            })
            .collect();
        if emulated.is_empty() {
            return;
        }
        run.emulated = true;
        run.client_arch = Some(self.client.arch.name().to_owned());
        run.server_arch = Some(self.server.arch.name().to_owned());
        prov.client_arch = Some(self.client.record(&self.sh));
        prov.server_arch = Some(self.server.record(&self.sh));
        run.notes.push(format!(
            "EMULATED: {}; the figures measure the emulator, are labelled emulated in run.json and \
             provenance.json, and are never compared with native or published figures.",
            emulated.join("; ")
        ));
    }

    fn remove_containers_matching(&self, part: &str) {
        let filter = format!("name=wsbench-{}-{part}", self.id);
        let _ = docker::remove(&self.sh, &docker::containers(&self.sh, &filter));
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let failures = docker::remove_labelled(&self.sh, &containers::label(&self.id));
        let _ = std::fs::remove_dir_all(&self.out_dir);
        if !failures.is_empty() {
            eprintln!(
                "could not remove {}; by hand: docker rm -f $(docker ps -aq --filter label={}) && \
                 docker network rm {}",
                failures.join(", "),
                containers::label(&self.id),
                self.network
            );
        }
    }
}

/// The image one side (servers or clients) runs, and the emulation it needs.
#[derive(Debug)]
struct Side {
    arch: Arch,
    image: Image,
    build: artifacts::BuildInfo,
    /// The binfmt_misc interpreter, when `arch` is not this machine's.
    interpreter: Option<String>,
}

impl Side {
    /// Checks the emulation a foreign arch needs, then builds its binaries and `image` for it.
    fn prepare(sh: &Shell, arch: Arch, image: &str) -> anyhow::Result<Side> {
        let interpreter = if Arch::host() == Some(arch) {
            None
        } else {
            Some(emulation::binfmt(arch)?)
        };
        let dist = artifacts::ensure(sh, arch)?;
        Ok(Side {
            arch,
            image: images::build_image(sh, &dist, image)?,
            build: dist.info,
            interpreter,
        })
    }

    fn record(&self, sh: &Shell) -> ClientArch {
        ClientArch {
            arch: self.arch.name().to_owned(),
            emulated: self.interpreter.is_some(),
            runner: self
                .interpreter
                .iter()
                .map(|i| format!("binfmt_misc: {i}"))
                .collect(),
            runner_version: self
                .interpreter
                .as_ref()
                .and_then(|_| emulation::static_qemu_version(sh, self.arch)),
            build: self.build.clone(),
        }
    }
}

/// Follows the container's stdout until its READY line (contract: exactly one line, flushed).
fn wait_ready(sh: &Shell, name: &str) -> anyhow::Result<String> {
    let (logs, stdout) = docker::Follow::container(name)?;
    let outcome = match ready::wait(&ready::lines(stdout), READY_TIMEOUT) {
        Ok(ready) => Ok(ready.to_string()),
        Err(NotReady::Ended) => {
            let code =
                docker::exit_code(sh, name).map_or_else(|e| e.to_string(), |c| c.to_string());
            let (_, stderr) = docker::logs(name).unwrap_or_default();
            Err(anyhow::anyhow!(
                "{name} exited (status {code}) before READY:\n{}",
                tail(&stderr, 20)
            ))
        }
        Err(why) => Err(anyhow::anyhow!("{name} {why}")),
    };
    drop(logs);
    if outcome.is_ok() && !docker::running(sh, name) {
        bail!("{name} stopped right after READY");
    }
    outcome
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The mounted results directory: client containers run as a non-root user of their own, so anyone may write.
fn create_out_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_docker_name_safe() {
        let id = session_id();
        assert!(
            !id.is_empty() && id.chars().all(|c| c.is_ascii_hexdigit()),
            "{id}"
        );
    }
}
