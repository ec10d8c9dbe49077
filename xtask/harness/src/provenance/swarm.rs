//! What a swarm run records in provenance.json: every node (hostname, arch, CPUs, kernel, role), the images
//! each holds, the overlay network, and every task in order with the node it ran on.

use serde::{Deserialize, Serialize};

use crate::artifacts::Arch;
use wsbench_tools::docker::EngineAddr;

/// provenance.json's `swarm`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SwarmRecord {
    pub manager_engine_version: String,
    pub network: NetworkRecord,
    pub nodes: Vec<NodeRecord>,
    pub images: Vec<Placed>,
    pub client_tasks_per_step: usize,
    /// Server and client tasks, in the order they ran.
    pub tasks: Vec<TaskRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NetworkRecord {
    pub name: String,
    pub driver: String,
    pub attachable: bool,
    /// `dnsrr`: clients reach the server tasks' own addresses (`tasks.<service>`), no virtual IP in between.
    pub endpoint_mode: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NodeRecord {
    #[serde(flatten)]
    pub node: Node,
    /// From the node's own engine; None when it could not be asked.
    pub facts: Option<Facts>,
}

/// One task: a server instance or one client share of a step.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskRecord {
    pub service: String,
    /// `server`, `client` or `agent` (the sampling agent on a server node).
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    pub task: String,
    pub node: String,
    pub hostname: String,
    pub container: String,
    /// The server's READY line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<String>,
    pub exit_code: Option<i64>,
    pub command: Vec<String>,
}

/// Where a node's tasks belong, from its `wsbench.role` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Server,
    Client,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Server => "server",
            Role::Client => "client",
        }
    }
}

/// One node of the swarm.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Node {
    pub id: String,
    pub hostname: String,
    /// Its `wsbench.role` label, when it is `server` or `client`.
    pub role: Option<Role>,
    /// `docker node inspect`'s Platform.Architecture (`x86_64`, `ppc64le`, `aarch64`…).
    pub arch: String,
    /// Its `wsbench.arch` label: the architecture of the images it runs, when not its own (emulated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_arch: Option<String>,
    pub os: String,
    pub cpus: f64,
    pub memory_bytes: u64,
    pub engine_version: String,
    /// Ready, down…
    pub state: String,
    /// active, pause, drain.
    pub availability: String,
    pub manager: bool,
    /// The node xtask talks to (`docker node inspect self`).
    pub is_self: bool,
    /// How xtask reaches its engine: the `wsbench.engine` label, or the default engine for the node itself.
    pub engine: Option<EngineAddr>,
}

impl Node {
    /// The architecture of the images this node runs (its `wsbench.arch` label, else its own), if wsbench
    /// builds for it.
    pub(crate) fn wsbench_arch(&self) -> Option<Arch> {
        arch_of(self.image_arch.as_deref().unwrap_or(&self.arch))
    }

    /// Runs another architecture's images than its own, under emulation.
    pub fn emulated(&self) -> bool {
        self.image_arch.is_some() && self.wsbench_arch() != arch_of(&self.arch)
    }

    /// Its architecture as results show it: `x86_64`, or `x86_64 running ppc64le images (emulated)`.
    pub fn arch_shown(&self) -> String {
        match (&self.image_arch, self.emulated()) {
            (Some(a), true) => format!("{} running {a} images (emulated)", self.arch),
            _ => self.arch.clone(),
        }
    }

    /// Takes tasks: Ready and active.
    pub fn usable(&self) -> bool {
        self.state == "ready" && self.availability == "active"
    }
}

fn arch_of(name: &str) -> Option<Arch> {
    match name {
        "x86_64" | "amd64" => Some(Arch::X86_64),
        "ppc64le" => Some(Arch::Ppc64le),
        _ => None,
    }
}

/// What a node's own engine says about its machine.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Facts {
    pub hostname: Option<String>,
    pub kernel: Option<String>,
    pub operating_system: Option<String>,
    pub cpus: Option<u32>,
    /// Known only where the node is this machine (the Docker API does not report it).
    pub cpu_model: Option<String>,
    /// The node's clock minus this machine's, in ms, from `docker info`'s SystemTime (± the round trip).
    pub clock_skew_ms: Option<i64>,
    pub round_trip_ms: Option<i64>,
}

/// One image as a node holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Placed {
    pub node: String,
    pub tag: String,
    /// The local image it came from (the arch-specific tag).
    pub from: String,
    pub id: String,
    /// Sent now (docker save | load) rather than already there.
    pub loaded: bool,
}
