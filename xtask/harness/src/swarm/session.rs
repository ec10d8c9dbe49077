//! One swarm run: the overlay network, server instances as services placed on `wsbench.role=server` nodes
//! (each waited for until READY), each step's clients as services on `wsbench.role=client` nodes, their results
//! documents copied back from the nodes and merged exactly. Dropping the session removes every service,
//! network and config it created and waits until their containers are gone, also after a failure or Ctrl-C.

mod agents;
mod drain;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context as _};
use serde_json::Value;
use xshell::Shell;

use super::images::{self, Placed};
use super::labels::{ENGINE_LABEL, ROLE_LABEL};
use super::nodes::{self, Node, Role};
use crate::argv::{self, Listen};
use crate::artifacts::images::{self as built, CLIENT, SERVER};
use crate::backend::{schedule, verify_in_container, Servers};
use crate::containers::{append, clients, label as session_label, session_id, tuning};
use crate::interrupt;
use crate::provenance::swarm::{NetworkRecord, NodeRecord, SwarmRecord, TaskRecord};
use crate::ready::{self, NotReady};
use crate::rundoc::FaultRecord;
use crate::scenario::{ClientStep, ServerSpec, Step};
use crate::sut::{Sampler, Target};
use wsbench_tools::docker::{self, EngineAddr};
use wsbench_tools::process;

const HTTP_PORT: u16 = 8080;
const CHAT_PORT: u16 = 8081;
/// Scheduling, and pulling nothing: a task is READY within this or something is wrong.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// Where a client task writes its results document, in its own container (copied out with `docker cp`).
const RESULT: &str = "/wsbench-result.json";
/// How long removal may take before the leftovers are reported.
const TEARDOWN: Duration = Duration::from_secs(60);

/// A server instance that printed READY.
#[derive(Debug, Clone)]
pub(crate) struct ServerTask {
    pub service: String,
    pub task: Task,
    pub ready: String,
    pub http_url: Option<String>,
    pub chat_addr: Option<String>,
    pub command: Vec<String>,
    /// The sampling agent on its node (`tasks.<agent>:PORT`) and its pid there; None: not sampled.
    pub sampled: Option<(String, u32)>,
}

/// A task as `docker inspect --type task` shows it.
#[derive(Debug, Clone, Default)]
pub(super) struct Task {
    pub id: String,
    pub node: String,
    pub state: String,
    pub container: String,
    pub exit_code: Option<i64>,
    pub error: String,
    /// Its addresses on the networks it is attached to (`10.0.1.5/24`).
    pub addresses: Vec<String>,
}

impl Task {
    fn ended(&self) -> bool {
        matches!(
            self.state.as_str(),
            "complete" | "shutdown" | "failed" | "rejected" | "orphaned" | "remove"
        )
    }
}

/// What a step's client tasks did.
#[derive(Debug)]
pub(crate) struct StepRun {
    pub exit_codes: Vec<Option<i32>>,
    pub commands: Vec<Vec<String>>,
    /// The step's faults, as they happened.
    pub faults: Vec<FaultRecord>,
    /// The client tasks were still running at the step's deadline: stopped.
    pub overran: bool,
}

/// Everything created for one `cargo xtask run … --swarm`; Drop removes it.
#[derive(Debug)]
pub(super) struct Session {
    sh: Shell,
    id: String,
    network: String,
    nodes: Vec<Node>,
    facts: Vec<Option<nodes::Facts>>,
    placed: Vec<Placed>,
    client_bin: PathBuf,
    clients_per_step: usize,
    servers: Vec<ServerTask>,
    started: usize,
    tasks: Vec<TaskRecord>,
    out_dir: PathBuf,
    /// A server wsbench did not start (`--target`): the client tasks drive it from their nodes' network.
    external: Option<Target>,
    /// Nodes drained by a fault and not yet made active again (teardown makes them active).
    drained: Vec<String>,
    agents: agents::Agents,
}

impl Session {
    /// Checks the swarm, puts the images on every labelled node (and `peers`, peer image tags, on the server
    /// nodes), creates the overlay network.
    pub(super) fn start(
        sh: &Shell,
        client_bin: PathBuf,
        clients_per_step: usize,
        peers: &[String],
    ) -> anyhow::Result<Session> {
        interrupt::install()?;
        ensure!(clients_per_step >= 1, "--clients-tasks must be ≥ 1");
        if let Err(why) = nodes::manager_state(sh)? {
            bail!("{why}");
        }
        let all = nodes::list(sh)?;
        for role in [Role::Server, Role::Client] {
            ensure!(
                all.iter().any(|n| n.role == Some(role) && n.usable()),
                "no ready node is labelled {}={}: `cargo xtask swarm label NODE {}` (`cargo xtask swarm check` \
                 says what is missing)",
                ROLE_LABEL,
                role.name(),
                role.name()
            );
        }
        let mut placed = images::distribute(sh, &all)?;
        placed.extend(images::distribute_peers(sh, &all, peers)?);
        interrupt::check()?;
        let facts = all.iter().map(|n| nodes::facts(sh, n).ok()).collect();
        let id = session_id();
        let out_dir = std::env::temp_dir().join(format!("wsbench-swarm-{id}"));
        std::fs::create_dir_all(&out_dir)
            .with_context(|| format!("creating {}", out_dir.display()))?;
        let session = Session {
            sh: Shell::new()?,
            network: format!("wsb-{id}"),
            id,
            nodes: all,
            facts,
            placed,
            client_bin,
            clients_per_step,
            servers: Vec::new(),
            started: 0,
            tasks: Vec::new(),
            out_dir,
            external: None,
            drained: Vec::new(),
            agents: agents::Agents::default(),
        };
        let label = session_label(&session.id);
        let net = session.network.clone();
        session.manager().read(
            sh,
            &[
                "network",
                "create",
                "--driver",
                "overlay",
                "--attachable",
                "--label",
                &label,
                &net,
            ],
        )?;
        Ok(session)
    }

    /// The CPUs a server task may use: server services have no CPU limit, so the fewest CPUs of a usable node
    /// labelled `server` (of any usable node when none is), whole; what a peer's per-core worker rule counts.
    pub(crate) fn server_cores(&self) -> u32 {
        let usable = || self.nodes.iter().filter(|n| n.usable());
        let servers = || usable().filter(|n| n.role == Some(Role::Server));
        let pool: Vec<&Node> = if servers().next().is_some() {
            servers().collect()
        } else {
            usable().collect()
        };
        let fewest = pool.iter().map(|n| n.cpus).fold(f64::INFINITY, f64::min);
        if fewest.is_finite() {
            (fewest.floor() as u32).max(1)
        } else {
            1
        }
    }

    fn manager(&self) -> EngineAddr {
        EngineAddr::default()
    }

    fn hostname(&self, node: &str) -> String {
        self.nodes
            .iter()
            .find(|n| n.id == node)
            .map_or_else(|| node.to_owned(), |n| n.hostname.clone())
    }

    fn engine_of(&self, node: &str) -> anyhow::Result<EngineAddr> {
        self.nodes
            .iter()
            .find(|n| n.id == node)
            .and_then(|n| n.engine.clone())
            .with_context(|| {
                format!(
                    "node {} has no engine address (label {})",
                    self.hostname(node),
                    ENGINE_LABEL
                )
            })
    }

    /// `docker service create` with the session's labels on `network`, placed by `role`, running `tag`;
    /// returns the argv used.
    fn create_service(
        &self,
        name: &str,
        role: Role,
        network: &str,
        extra: &[String],
        tag: &str,
        command: &[String],
    ) -> anyhow::Result<Vec<String>> {
        let label = session_label(&self.id);
        let mut args: Vec<String> = [
            "service",
            "create",
            "--detach",
            "--quiet",
            "--no-resolve-image",
            "--name",
            name,
            "--label",
            &label,
            "--container-label",
            &label,
            "--network",
            network,
            "--constraint",
            &nodes::constraint(role),
        ]
        .map(str::to_owned)
        .to_vec();
        // A restart condition in `extra` (a drained server's task must come back) wins; none by default.
        if !extra.iter().any(|a| a == "--restart-condition") {
            args.extend(["--restart-condition".to_owned(), "none".to_owned()]);
        }
        args.extend(extra.iter().cloned());
        args.push(tag.to_owned());
        args.extend(command.iter().cloned());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        self.manager().read(&self.sh, &refs)?;
        Ok(std::iter::once("docker".to_owned()).chain(args).collect())
    }

    /// The (only) task of `service`, once it has one.
    fn task(&self, service: &str) -> anyhow::Result<Option<Task>> {
        let ids = self.manager().read(
            &self.sh,
            &["service", "ps", "--quiet", "--no-trunc", service],
        )?;
        let Some(id) = ids.split_whitespace().next() else {
            return Ok(None);
        };
        let json = self
            .manager()
            .read(&self.sh, &["inspect", "--type", "task", id])?;
        let v: Value = serde_json::from_str(&json).context("parsing docker inspect of a task")?;
        let t = v.get(0).context("docker inspect returned no task")?;
        let s = |p: &str| {
            t.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        Ok(Some(Task {
            id: s("/ID"),
            node: s("/NodeID"),
            state: s("/Status/State"),
            container: s("/Status/ContainerStatus/ContainerID"),
            exit_code: t
                .pointer("/Status/ContainerStatus/ExitCode")
                .and_then(Value::as_i64),
            error: s("/Status/Err"),
            addresses: t
                .pointer("/NetworksAttachments")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|n| n.get("Addresses").and_then(Value::as_array))
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        }))
    }

    /// Starts `instances` server services, one task each, and waits until every one printed READY:
    /// bench-server's image, or `other` (a peer's image tag and its arguments, serving the same port). With
    /// `come_back` the task is restarted when it did not exit cleanly (on-failure, at once): a task shut down
    /// because its node was drained is scheduled again when the node is active.
    pub(crate) fn start_servers(
        &mut self,
        spec: &ServerSpec,
        workers: Option<u32>,
        instances: usize,
        other: Option<(&str, &[String])>,
        come_back: bool,
    ) -> anyhow::Result<&[ServerTask]> {
        ensure!(
            self.servers.is_empty(),
            "servers are already running: stop them first"
        );
        ensure!(instances >= 1, "at least one server instance is needed");
        let mut extra = vec!["--endpoint-mode".to_owned(), "dnsrr".to_owned()];
        for (k, v) in tuning::SERVER_SYSCTLS {
            extra.extend(["--sysctl".into(), format!("{k}={v}")]);
        }
        if come_back {
            extra.extend(
                ["--restart-condition", "on-failure", "--restart-delay", "0s"].map(str::to_owned),
            );
        }
        let (tag, command) = match other {
            Some((tag, args)) => (tag.to_owned(), args.to_vec()),
            None => (
                images::service_tag(SERVER),
                argv::server(
                    spec,
                    workers,
                    &Listen::on(spec, "0.0.0.0", HTTP_PORT, CHAT_PORT),
                ),
            ),
        };
        // All created first, so the instances are scheduled in parallel; then each is waited for.
        let mut created = Vec::new();
        for _ in 0..instances {
            interrupt::check()?;
            self.started += 1;
            let name = format!("wsb-{}-s{}", self.id, self.started);
            let network = self.network.clone();
            let argv =
                self.create_service(&name, Role::Server, &network, &extra, &tag, &command)?;
            created.push((name, argv));
        }
        for (name, argv) in created {
            let (task, ready) = self.wait_ready(&name)?;
            let host = self.hostname(&task.node);
            eprintln!("server task {name} READY on node {host}");
            self.tasks.push(TaskRecord {
                service: name.clone(),
                kind: "server".into(),
                step: None,
                task: task.id.clone(),
                node: task.node.clone(),
                hostname: host,
                container: task.container.clone(),
                ready: Some(ready.clone()),
                exit_code: None,
                command: argv.clone(),
            });
            // A task whose node a fault drains comes back as another process: its figures would stop
            // at the drain, so it is not sampled.
            let sampled = if come_back { None } else { self.sampled(&task) };
            self.servers.push(ServerTask {
                sampled,
                http_url: spec
                    .http()
                    .then(|| format!("http://tasks.{name}:{HTTP_PORT}")),
                chat_addr: spec.chat().then(|| format!("tasks.{name}:{CHAT_PORT}")),
                service: name,
                task,
                ready,
                command: argv,
            });
        }
        Ok(&self.servers)
    }

    /// The agent on `task`'s node and the task's pid there; None (and why, on stderr) when either is not to
    /// be had: the run goes on, that server unsampled.
    fn sampled(&mut self, task: &Task) -> Option<(String, u32)> {
        let got = self
            .host_pid(task)
            .and_then(|pid| Ok((self.agent_on(&task.node)?, pid)));
        match got {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!(
                    "warning: the server task {} on node {} is not sampled: {e:#}",
                    task.id,
                    self.hostname(&task.node)
                );
                None
            }
        }
    }

    /// Follows the service's logs until its READY line; fails as soon as its task ended without one.
    fn wait_ready(&self, service: &str) -> anyhow::Result<(Task, String)> {
        let (logs, stdout) = docker::Follow::service(service)?;
        let rx = ready::lines(stdout);
        let deadline = Instant::now() + READY_TIMEOUT;
        let outcome = loop {
            match ready::wait(&rx, Duration::from_millis(500)) {
                Ok(r) => break Ok(r.to_string()),
                Err(NotReady::Timeout(_)) => {}
                Err(NotReady::Ended) => {
                    break Err(anyhow::anyhow!("the logs of {service} ended before READY"))
                }
                Err(why) => break Err(anyhow::anyhow!("{service} {why}")),
            }
            if let Some(t) = self.task(service)?.filter(Task::ended) {
                break Err(anyhow::anyhow!(
                    "server task of {service} ended ({}{}) before READY on node {}",
                    t.state,
                    if t.error.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", t.error)
                    },
                    self.hostname(&t.node)
                ));
            }
            if Instant::now() > deadline {
                break Err(anyhow::anyhow!(
                    "{service} printed no READY line within {} s (`docker service ps {service}` says why)",
                    READY_TIMEOUT.as_secs()
                ));
            }
        };
        drop(logs);
        let ready = outcome?;
        // The manager may still say `starting` when the container already printed READY: wait for `running`.
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            match self.task(service)? {
                Some(t) if t.state == "running" => return Ok((t, ready)),
                Some(t) if t.ended() => bail!("{service} stopped right after READY ({})", t.state),
                _ if Instant::now() > deadline => {
                    bail!("{service} printed READY but its task is not running")
                }
                _ => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    }

    /// Drives `target` from now on instead of server services (none is started): the client tasks join their
    /// node's network (`--network host`), so the target's URL means in them what it means on that node.
    pub(crate) fn use_target(&mut self, target: &Target) -> anyhow::Result<()> {
        ensure!(
            self.servers.is_empty(),
            "servers are already running: stop them first"
        );
        self.external = Some(target.clone());
        Ok(())
    }

    /// Checks each call of `step` once on `servers` before the load (bench-client `--verify-only` in a
    /// throwaway container reaching them as the client tasks do): on this machine's engine attached to the
    /// run's overlay network, or, for a `--target`, on a client node's network.
    pub(super) fn verify(&self, step: &Step, servers: &Servers) -> anyhow::Result<bool> {
        let label = session_label(&self.id);
        let (engine, network, image) = match &self.external {
            None => (self.manager(), self.network.clone(), built::tag(CLIENT)),
            Some(_) => {
                let node = self
                    .nodes
                    .iter()
                    .find(|n| n.role == Some(Role::Client) && n.usable())
                    .context("no client node to reach the target from")?;
                (
                    self.engine_of(&node.id)?,
                    "host".to_owned(),
                    images::service_tag(CLIENT),
                )
            }
        };
        let run = [
            "--network",
            &network,
            "--label",
            &label,
            "--user",
            "0:0",
            &image,
        ]
        .map(str::to_owned);
        verify_in_container(&engine, &run, step, servers)
    }

    /// Why a server instance is gone, if one is.
    pub(super) fn gone(&self) -> Option<String> {
        if self.external.is_some() {
            return None;
        }
        for s in &self.servers {
            match self.task(&s.service) {
                Ok(Some(t)) if t.state == "running" => {}
                Ok(Some(t)) => {
                    return Some(format!(
                        "server task {} is {} on node {}{}",
                        s.service,
                        t.state,
                        self.hostname(&t.node),
                        if t.error.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", t.error)
                        }
                    ))
                }
                Ok(None) => return Some(format!("server service {} has no task", s.service)),
                Err(e) => return Some(format!("{e:#}")),
            }
        }
        None
    }

    /// A client task's bench-client arguments: the server runs on another node, sampled (when it is) by the
    /// agent on that node.
    fn client_command(
        share: &ClientStep,
        target: &str,
        server: Option<&ServerTask>,
        label: &str,
    ) -> Vec<String> {
        let sampler = match server.and_then(|s| s.sampled.clone()) {
            Some((addr, pid)) => Sampler::Agent {
                addr,
                pid: Some(pid),
                token_file: Some(agents::token_file()),
            },
            None => Sampler::None,
        };
        argv::client(share, target, Path::new(RESULT), &sampler, label)
    }

    /// Runs one step as client services (at least one per server instance), copies each results document
    /// back from its node and leaves the step's document at `json_out` (merged exactly when several).
    pub(crate) fn run_step(&mut self, step: &Step, json_out: &Path) -> anyhow::Result<StepRun> {
        ensure!(
            !self.servers.is_empty() || self.external.is_some(),
            "no server instance is running"
        );
        let k = self.clients_per_step.max(self.servers.len());
        let shares =
            clients::split(&step.client, k).with_context(|| format!("step {}", step.id))?;
        let mut services = Vec::new();
        let mut commands = Vec::new();
        for (i, share) in shares.iter().enumerate() {
            interrupt::check()?;
            let (http, chat, network, server) = match &self.external {
                Some(t) => (&t.http, &t.chat, "host".to_owned(), None),
                None => {
                    let server = &self.servers[i % self.servers.len()];
                    let net = self.network.clone();
                    (&server.http_url, &server.chat_addr, net, Some(server))
                }
            };
            let target = clients::target(share, http, chat, &step.id)?;
            let command = Session::client_command(share, &target, server, &step.label);
            let name = format!("wsb-{}-{}-c{}", self.id, short(&step.id), i + 1);
            // Root inside its own container: the scratch image has no directory a non-root user may write to.
            let mut extra: Vec<String> = ["--user", "0:0"].map(str::to_owned).to_vec();
            if server.is_some_and(|s| s.sampled.is_some()) {
                extra.extend(self.agent_secret_args());
            }
            let tag = images::service_tag(CLIENT);
            let argv =
                self.create_service(&name, Role::Client, &network, &extra, &tag, &command)?;
            services.push(name);
            commands.push(argv);
        }
        let faults = self.do_faults(step, &services)?;
        let (tasks, overran) = self.wait_clients(step, &services)?;
        // Each client's console report, as a client container's would be shown (its stdout, from the node).
        for service in &services {
            if let Ok((out, _)) = docker::service_logs(service) {
                print!("{out}");
            }
        }
        let mut exit_codes = Vec::new();
        let mut files = Vec::new();
        let mut missing = Vec::new();
        for (i, ((service, task), argv)) in services.iter().zip(&tasks).zip(&commands).enumerate() {
            exit_codes.push(task.exit_code.and_then(|c| i32::try_from(c).ok()));
            match self.copy_result(step, i, task) {
                Ok(file) => files.push(file),
                Err(e) => {
                    missing.push(format!("{service} on {}: {e:#}", self.hostname(&task.node)))
                }
            }
            self.tasks.push(TaskRecord {
                service: service.clone(),
                kind: "client".into(),
                step: Some(step.id.clone()),
                task: task.id.clone(),
                node: task.node.clone(),
                hostname: self.hostname(&task.node),
                container: task.container.clone(),
                ready: None,
                exit_code: task.exit_code,
                command: argv.clone(),
            });
        }
        self.remove_services(&services);
        if !missing.is_empty() {
            bail!(
                "step {}: client tasks exited {exit_codes:?} without results: {}",
                step.id,
                missing.join("; ")
            );
        }
        self.leave_results(step, &files, json_out)?;
        Ok(StepRun {
            exit_codes,
            commands,
            faults,
            overran,
        })
    }

    /// Leaves the step's one results document at `json_out`: the client task's own, or the tasks' documents
    /// merged exactly by `bench-client merge`.
    fn leave_results(&self, step: &Step, files: &[PathBuf], json_out: &Path) -> anyhow::Result<()> {
        if let Some(dir) = json_out.parent() {
            std::fs::create_dir_all(dir)?;
        }
        if let [file] = files {
            std::fs::copy(file, json_out)
                .with_context(|| format!("copying results to {}", json_out.display()))?;
            return Ok(());
        }
        let mut argv = vec![process::arg(&self.client_bin), "merge".to_owned()];
        argv.extend(files.iter().map(|p| process::arg(p)));
        argv.extend(["--json".to_owned(), process::arg(json_out)]);
        process::run(&self.sh, &argv)
            .with_context(|| format!("merging the client results of step {}", step.id))?;
        Ok(())
    }

    /// Does `step`'s faults while its client `services` run (the first one's checkpoints copied from its node
    /// give the client's t = 0).
    fn do_faults(&mut self, step: &Step, services: &[String]) -> anyhow::Result<Vec<FaultRecord>> {
        if step.faults.is_empty() {
            return Ok(Vec::new());
        }
        let json = self.out_dir.join(format!("{}.checkpoint.json", step.id));
        let mut drain = drain::Drain::new(self, services);
        let done = schedule::run(&step.faults, &json, &mut drain);
        let _ = std::fs::remove_file(&json);
        done
    }

    /// Waits until every client task ended; on Ctrl-C, or at the step's deadline, sends them SIGINT (they
    /// write partial results) first. Whether the deadline passed.
    fn wait_clients(&self, step: &Step, services: &[String]) -> anyhow::Result<(Vec<Task>, bool)> {
        let deadline = Instant::now() + step.client.deadline();
        let mut signalled = false;
        let mut overran = false;
        let mut failed_queries = 0;
        // abort_on_fail: a part that stopped on a clearly failed threshold ends the step for the others too.
        let aborts = step.client.abort.is_some();
        let mut looked_at = vec![false; services.len()];
        loop {
            let tasks: Vec<Option<Task>> = match services.iter().map(|s| self.task(s)).collect() {
                Ok(t) => t,
                // Ctrl-C reaches the docker CLI in flight too (same process group): ask again.
                Err(_) if interrupt::interrupted() && failed_queries < 5 => {
                    failed_queries += 1;
                    std::thread::sleep(Duration::from_millis(250));
                    continue;
                }
                Err(e) => return Err(e),
            };
            if tasks.iter().all(|t| t.as_ref().is_some_and(Task::ended)) {
                return Ok((tasks.into_iter().flatten().collect(), overran));
            }
            if aborts && !signalled && self.one_stopped_on_threshold(step, &tasks, &mut looked_at) {
                signalled = true;
                self.interrupt_tasks(&tasks);
            }
            if (interrupt::interrupted() || Instant::now() > deadline) && !signalled {
                signalled = true;
                overran = !interrupt::interrupted();
                self.interrupt_tasks(&tasks);
            } else if signalled && Instant::now() > deadline + Duration::from_secs(30) {
                bail!("step {}: client tasks did not end after SIGINT", step.id);
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// SIGINT to every client task of the step (each writes what it measured and ends).
    fn interrupt_tasks(&self, tasks: &[Option<Task>]) {
        for t in tasks.iter().flatten().filter(|t| !t.container.is_empty()) {
            if let Ok(engine) = self.engine_of(&t.node) {
                let _ = engine.read(&self.sh, &["kill", "--signal", "INT", &t.container]);
            }
        }
    }

    /// Whether a task that has just ended stopped on a clearly failed threshold (its results, copied from its
    /// node, record the abort). Each ended task is looked at once.
    fn one_stopped_on_threshold(
        &self,
        step: &Step,
        tasks: &[Option<Task>],
        looked_at: &mut [bool],
    ) -> bool {
        tasks.iter().enumerate().any(|(i, t)| {
            let Some(t) = t.as_ref().filter(|t| t.ended() && !looked_at[i]) else {
                return false;
            };
            looked_at[i] = true;
            t.exit_code == Some(4)
                && self
                    .copy_result(step, i, t)
                    .is_ok_and(|file| clients::stopped_on_threshold(Some(4), &file))
        })
    }

    /// Copies client part `i`'s results document out of its task's container, to the run's folder.
    fn copy_result(&self, step: &Step, i: usize, task: &Task) -> anyhow::Result<PathBuf> {
        let file = self.out_dir.join(format!("{}.{}.json", step.id, i + 1));
        let engine = self.engine_of(&task.node)?;
        let from = format!("{}:{RESULT}", task.container);
        engine.read(&self.sh, &["cp", &from, &file.display().to_string()])?;
        Ok(file)
    }

    /// Stops the server instances (`docker stop` on their node: SIGTERM, SIGKILL after 10 s; with restart
    /// condition none the task then stays ended), appends their logs to `log`; Err when one did not exit
    /// cleanly.
    pub(crate) fn stop_servers(&mut self, log: &Path) -> anyhow::Result<()> {
        let servers = std::mem::take(&mut self.servers);
        let mut unclean = Vec::new();
        for s in &servers {
            let code = self.engine_of(&s.task.node).and_then(|engine| {
                let cid = &s.task.container;
                engine.read(&self.sh, &["stop", "--time", "10", cid])?;
                engine
                    .read(
                        &self.sh,
                        &["inspect", "--format", "{{.State.ExitCode}}", cid],
                    )?
                    .parse::<i64>()
                    .context("exit code")
            });
            if let Ok((out, err)) = docker::service_logs(&s.service) {
                let text = format!("── {} ──\n{out}{err}", s.service);
                append(log, &text)?;
            }
            if let Some(r) = self.tasks.iter_mut().rev().find(|r| r.service == s.service) {
                r.exit_code = code.as_ref().ok().copied();
            }
            match code {
                Ok(0) => {}
                Ok(c) => unclean.push(format!("{} (exit status {c})", s.service)),
                Err(e) => unclean.push(format!("{} ({e:#})", s.service)),
            }
        }
        let names: Vec<String> = servers.iter().map(|s| s.service.clone()).collect();
        self.remove_services(&names);
        if !unclean.is_empty() {
            bail!(
                "server instances did not exit cleanly: {}",
                unclean.join(", ")
            );
        }
        Ok(())
    }

    fn remove_services(&self, names: &[String]) {
        if names.is_empty() {
            return;
        }
        let mut args = vec!["service", "rm"];
        args.extend(names.iter().map(String::as_str));
        let _ = self.manager().read(&self.sh, &args);
    }

    /// The nodes, images, network and tasks, for provenance.json.
    pub(super) fn record(&self) -> SwarmRecord {
        SwarmRecord {
            manager_engine_version: self
                .manager()
                .read(&self.sh, &["version", "--format", "{{.Server.Version}}"])
                .unwrap_or_default(),
            network: NetworkRecord {
                name: self.network.clone(),
                driver: "overlay".into(),
                attachable: true,
                endpoint_mode: "dnsrr".into(),
            },
            nodes: self
                .nodes
                .iter()
                .zip(&self.facts)
                .map(|(n, f)| NodeRecord {
                    node: n.clone(),
                    facts: f.clone(),
                })
                .collect(),
            images: self.placed.clone(),
            client_tasks_per_step: self.clients_per_step,
            tasks: self.tasks.clone(),
        }
    }

    /// Removes every service, config and network of the session and waits until their containers are gone
    /// from every node it can reach; returns what is still there.
    fn teardown(&self) -> Vec<String> {
        let m = self.manager();
        for node in &self.drained {
            let _ = m.read(
                &self.sh,
                &["node", "update", "--availability", "active", node],
            );
        }
        let filter = format!("label={}", session_label(&self.id));
        let ids = |what: &str| -> Vec<String> {
            m.read(&self.sh, &[what, "ls", "--quiet", "--filter", &filter])
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_owned)
                .collect()
        };
        self.remove_services(&ids("service"));
        for c in ids("config") {
            let _ = m.read(&self.sh, &["config", "rm", &c]);
        }

        let engines: Vec<EngineAddr> = self.nodes.iter().filter_map(|n| n.engine.clone()).collect();
        let deadline = Instant::now() + TEARDOWN;
        let mut left = Vec::new();
        loop {
            left.clear();
            for e in &engines {
                let found = e
                    .read(&self.sh, &["ps", "-aq", "--filter", &filter])
                    .unwrap_or_default();
                if !found.is_empty() {
                    left.push(format!("containers on {}", e.describe()));
                }
            }
            let nets = ids("network");
            for n in &nets {
                let _ = m.read(&self.sh, &["network", "rm", n]);
            }
            if !ids("network").is_empty() {
                left.push(format!("network {}", self.network));
            }
            // The agents' token: removable once no task that was given it is left.
            for c in ids("secret") {
                let _ = m.read(&self.sh, &["secret", "rm", &c]);
            }
            if !ids("secret").is_empty() {
                left.push("the agents' token secret".to_owned());
            }
            if left.is_empty() || Instant::now() > deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        left
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let left = self.teardown();
        let _ = std::fs::remove_dir_all(&self.out_dir);
        if !left.is_empty() {
            eprintln!(
                "could not remove {}; by hand: docker service rm $(docker service ls -q --filter label={}) and \
                 docker network rm {}",
                left.join(", "),
                session_label(&self.id),
                self.network
            );
        }
    }
}

/// Service names stay under Docker's 63 characters: the step id's leading number is enough with the session.
fn short(step_id: &str) -> String {
    let s: String = step_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(24)
        .collect();
    s.trim_end_matches('-').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_names_are_short_and_dns_safe() {
        let name = format!(
            "wsb-{}-{}-c12",
            session_id(),
            short("03-clients-100_and_more_words_here")
        );
        assert!(name.len() <= 63, "{name}");
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
            "{name}"
        );
    }
}
