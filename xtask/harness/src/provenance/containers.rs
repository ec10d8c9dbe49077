//! What a container run records in provenance.json: engine, network, images, limits, CPU placement, link
//! shaping, and every server and client container in order. Typed, so container and local runs share one
//! provenance record that readers parse the same way.

use serde::{Deserialize, Serialize};

use crate::artifacts::images::Image;
use crate::artifacts::BuildInfo;
use crate::pinning::CpuSets;
use wsbench_tools::tc::Rate;

/// provenance.json's `containers`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ContainersRecord {
    pub engine: String,
    pub engine_version: String,
    pub network: Network,
    pub images: Vec<Image>,
    pub build: BuildInfo,
    pub host_cpus: usize,
    pub pinning: Option<CpuSets>,
    pub server: Limits,
    pub client: Limits,
    pub link: Option<Rate>,
    pub history: Vec<History>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Network {
    pub name: String,
    pub driver: String,
    pub internal: bool,
}

/// A container's limits and kernel tunables.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Limits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containers_per_step: Option<usize>,
    pub ulimit_nofile: String,
    pub sysctls: Vec<String>,
}

/// One server container or one step's client containers, in the order they ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum History {
    Step {
        step: String,
        clients: ClientRunRecord,
    },
    Server {
        server: ServerEndpoint,
    },
}

/// A server container that printed READY.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerEndpoint {
    pub name: String,
    pub ip: String,
    /// `http://<ip>:8080` when HTTP is served.
    pub http_url: Option<String>,
    /// `<ip>:8081` when chat is served.
    pub chat_addr: Option<String>,
    /// Its main process as the host sees it.
    #[serde(skip)]
    pub host_pid: u32,
    pub ready: String,
    pub cpuset: Option<String>,
    pub command: Vec<String>,
    pub shaped: Option<Shaped>,
}

/// What the client containers of one step did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClientRunRecord {
    pub containers: usize,
    /// Each container's exit code (null: killed by a signal).
    pub exit_codes: Vec<Option<i32>>,
    pub commands: Vec<Vec<String>>,
    /// Still running at the step's deadline: stopped.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub overran: bool,
}

/// Where the link shaping limits were put.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Shaped {
    pub rate: Rate,
    pub burst_bytes: u64,
    /// Server → clients: the container's eth0.
    pub container_if: String,
    /// Clients → server: the host end of its veth pair.
    pub host_if: String,
}
