//! What a container run records in provenance.json: engine, network, images, limits, CPU placement, link
//! shaping, and every server and client container in order. Typed, so container and local runs share one
//! provenance record that readers parse the same way.

use serde::{Deserialize, Serialize};

use super::shaping::{Rate, Shaped};
use crate::harness::artifacts::images::Image;
use crate::harness::artifacts::BuildInfo;
use crate::harness::pinning::CpuSets;

/// provenance.json's `containers`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ContainersRecord {
    pub(crate) engine: String,
    pub(crate) engine_version: String,
    pub(crate) network: Network,
    pub(crate) images: Vec<Image>,
    pub(crate) build: BuildInfo,
    pub(crate) host_cpus: usize,
    pub(crate) pinning: Option<CpuSets>,
    pub(crate) server: Limits,
    pub(crate) client: Limits,
    pub(crate) link: Option<Rate>,
    pub(crate) history: Vec<History>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Network {
    pub(crate) name: String,
    pub(crate) driver: String,
    pub(crate) internal: bool,
}

/// A container's limits and kernel tunables.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Limits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) containers_per_step: Option<usize>,
    pub(crate) ulimit_nofile: String,
    pub(crate) sysctls: Vec<String>,
}

/// One server container or one step's client containers, in the order they ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum History {
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
pub(crate) struct ServerEndpoint {
    pub(crate) name: String,
    pub(crate) ip: String,
    /// `http://<ip>:8080` when HTTP is served.
    pub(crate) http_url: Option<String>,
    /// `<ip>:8081` when chat is served.
    pub(crate) chat_addr: Option<String>,
    /// Its main process as the host sees it.
    #[serde(skip)]
    pub(crate) host_pid: u32,
    pub(crate) ready: String,
    pub(crate) cpuset: Option<String>,
    pub(crate) command: Vec<String>,
    pub(crate) shaped: Option<Shaped>,
}

/// What the client containers of one step did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ClientRunRecord {
    pub(crate) containers: usize,
    /// Each container's exit code (null: killed by a signal).
    pub(crate) exit_codes: Vec<Option<i32>>,
    pub(crate) commands: Vec<Vec<String>>,
}
