//! What a swarm run records in provenance.json: every node (hostname, arch, CPUs, kernel, role), the images
//! each holds, the overlay network, and every task in order with the node it ran on.

use serde::{Deserialize, Serialize};

use super::images::Placed;
use super::nodes::{Facts, Node};

/// provenance.json's `swarm`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SwarmRecord {
    pub(crate) manager_engine_version: String,
    pub(crate) network: NetworkRecord,
    pub(crate) nodes: Vec<NodeRecord>,
    pub(crate) images: Vec<Placed>,
    pub(crate) client_tasks_per_step: usize,
    /// Server and client tasks, in the order they ran.
    pub(crate) tasks: Vec<TaskRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct NetworkRecord {
    pub(crate) name: String,
    pub(crate) driver: String,
    pub(crate) attachable: bool,
    /// `dnsrr`: clients reach the server tasks' own addresses (`tasks.<service>`), no virtual IP in between.
    pub(crate) endpoint_mode: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct NodeRecord {
    #[serde(flatten)]
    pub(crate) node: Node,
    /// From the node's own engine; None when it could not be asked.
    pub(crate) facts: Option<Facts>,
}

/// One task: a server instance or one client share of a step.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct TaskRecord {
    pub(crate) service: String,
    /// `server` or `client`.
    pub(crate) kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) step: Option<String>,
    pub(crate) task: String,
    pub(crate) node: String,
    pub(crate) hostname: String,
    pub(crate) container: String,
    /// The server's READY line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ready: Option<String>,
    pub(crate) exit_code: Option<i64>,
    pub(crate) command: Vec<String>,
}
