//! The sampling agents of a swarm run: `bench-client agent` as a service on each node that holds a server
//! task (one per node, started when the first server task lands there), reading the node's /proc, mounted
//! read-only into it. Each client task asks the agent on its server's node for that server's figures (its pid
//! on the node, from the node's engine): CPU, RSS, fds and threads, and the node's CPU (steal too) and network.
//!
//! The token that keeps other tasks on the overlay from reading or driving an agent is made here for the
//! session and kept as a swarm secret: only the agent and client tasks are given it (as a file), it is on no
//! command line, and the session's teardown removes it with the services.

use anyhow::Context as _;

use super::{Session, Task};
use crate::artifacts::images::CLIENT;
use crate::containers::label as session_label;
use crate::provenance::swarm::TaskRecord;
use crate::swarm::images;
use crate::swarm::nodes::Role;

/// Where an agent listens, on the overlay network.
const AGENT_PORT: u16 = 7171;
/// The token's file in an agent's or client's task (`/run/secrets/<target>`).
const SECRET_TARGET: &str = "wsbench-agent-token";
/// Where the node's /proc is mounted in the agent's task.
const HOST_PROC: &str = "/host/proc";

/// The session's agents and their token.
#[derive(Debug, Default)]
pub(super) struct Agents {
    /// The secret holding the token, once made.
    secret: Option<String>,
    /// Each node with an agent, and the agent's service.
    on: Vec<(String, String)>,
}

impl Session {
    /// The address client tasks reach the agent on `node` at, the agent started (and waited for until READY)
    /// if none is there yet.
    pub(super) fn agent_on(&mut self, node: &str) -> anyhow::Result<String> {
        if let Some((_, service)) = self.agents.on.iter().find(|(n, _)| n == node) {
            return Ok(address(service));
        }
        let secret = self.agent_secret()?;
        let name = format!("wsb-{}-a{}", self.id, self.agents.on.len() + 1);
        let extra: Vec<String> = [
            "--constraint".to_owned(),
            format!("node.id=={node}"),
            "--mount".to_owned(),
            format!("type=bind,source=/proc,target={HOST_PROC},readonly"),
            "--secret".to_owned(),
            format!("source={secret},target={SECRET_TARGET}"),
            // Root, and allowed to read other processes' fd tables (/proc/PID/fd) as `ps` would.
            "--user".to_owned(),
            "0:0".to_owned(),
            "--cap-add".to_owned(),
            "SYS_PTRACE".to_owned(),
        ]
        .to_vec();
        let command: Vec<String> = [
            "agent".to_owned(),
            "--listen".to_owned(),
            format!("0.0.0.0:{AGENT_PORT}"),
            "--proc".to_owned(),
            HOST_PROC.to_owned(),
            "--token-file".to_owned(),
            token_file(),
        ]
        .to_vec();
        let network = self.network.clone();
        let tag = images::service_tag(CLIENT);
        let argv = self.create_service(&name, Role::Server, &network, &extra, &tag, &command)?;
        let (task, ready) = self
            .wait_ready(&name)
            .with_context(|| format!("the sampling agent on node {}", self.hostname(node)))?;
        eprintln!(
            "sampling agent {name} READY on node {}",
            self.hostname(&task.node)
        );
        self.tasks.push(TaskRecord {
            service: name.clone(),
            kind: "agent".into(),
            step: None,
            task: task.id.clone(),
            node: task.node.clone(),
            hostname: self.hostname(&task.node),
            container: task.container.clone(),
            ready: Some(ready),
            exit_code: None,
            command: argv,
        });
        self.agents.on.push((node.to_owned(), name.clone()));
        Ok(address(&name))
    }

    /// The session's token secret, made the first time it is needed: 32 random bytes as 64 hex digits, as
    /// `bench-client agent` reads a token.
    fn agent_secret(&mut self) -> anyhow::Result<String> {
        if let Some(s) = &self.agents.secret {
            return Ok(s.clone());
        }
        let mut bytes = [0u8; 32];
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
            .map_err(|_| anyhow::anyhow!("the system's random source failed"))?;
        let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let name = format!("wsb-{}-token", self.id);
        self.manager()
            .create_secret(&self.sh, &name, &session_label(&self.id), &token)?;
        self.agents.secret = Some(name.clone());
        Ok(name)
    }

    /// The arguments that give a client task the token's file (none before an agent was started).
    pub(super) fn agent_secret_args(&self) -> Vec<String> {
        self.agents
            .secret
            .iter()
            .flat_map(|s| {
                [
                    "--secret".to_owned(),
                    format!("source={s},target={SECRET_TARGET}"),
                ]
            })
            .collect()
    }

    /// The pid of `task`'s container's first process on its node (the server: the process a container
    /// backend samples as PID 1), as the node's engine sees it.
    pub(super) fn host_pid(&self, task: &Task) -> anyhow::Result<u32> {
        let engine = self.engine_of(&task.node)?;
        let pid = engine.read(
            &self.sh,
            &["inspect", "--format", "{{.State.Pid}}", &task.container],
        )?;
        pid.parse::<u32>()
            .ok()
            .filter(|p| *p > 0)
            .with_context(|| format!("container {} has no pid ({pid:?})", task.container))
    }
}

/// An agent's address on the overlay network, from a client task.
fn address(service: &str) -> String {
    format!("tasks.{service}:{AGENT_PORT}")
}

/// The token's file in a task given the secret.
pub(super) fn token_file() -> String {
    format!("/run/secrets/{SECRET_TARGET}")
}
