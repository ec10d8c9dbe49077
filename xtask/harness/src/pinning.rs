//! CPU pinning of server and client to separate cores (taskset), so neither steals the other's CPU time.

use serde::{Deserialize, Serialize};

pub use wsbench_tools::host::{format_cpu_list, parse_cpu_list};

/// How the server and client processes of a run are placed on CPUs (recorded in provenance).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pinning {
    pub enabled: bool,
    /// Why pinning is off (`--no-pin`, one CPU, no taskset).
    pub reason: Option<String>,
    pub server_cpus: Vec<usize>,
    pub client_cpus: Vec<usize>,
    pub tool: Option<String>,
    /// The server measured is a `--target` wsbench did not start: nothing pinned it (its CPUs are its own).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub external_server: bool,
}

impl Pinning {
    /// Splits the allowed CPUs: the first half (rounded up) to the server, the rest to the client.
    pub fn plan(allowed: &[usize], wanted: bool, taskset: Option<String>) -> Pinning {
        let off = |reason: String| Pinning {
            enabled: false,
            reason: Some(reason),
            server_cpus: allowed.to_vec(),
            client_cpus: allowed.to_vec(),
            tool: None,
            external_server: false,
        };
        if !wanted {
            return off("--no-pin".into());
        }
        if allowed.len() < 2 {
            return off(format!("only {} CPU available", allowed.len()));
        }
        let Some(tool) = taskset else {
            return off("taskset not found (util-linux)".into());
        };
        let (server, client) = allowed.split_at(allowed.len().div_ceil(2));
        Pinning {
            enabled: true,
            reason: None,
            server_cpus: server.to_vec(),
            client_cpus: client.to_vec(),
            tool: Some(tool),
            external_server: false,
        }
    }

    /// Where the processes ran, in words: `server on CPU 0, client on CPU 1 (taskset)`, `server not started
    /// by wsbench, not pinned; client on CPU 1 (taskset)`, or `off (--no-pin)`.
    pub fn words(&self) -> String {
        let tool = self
            .tool
            .as_deref()
            .filter(|t| t.starts_with("docker"))
            .unwrap_or("taskset");
        match (self.enabled, self.external_server) {
            (false, false) => format!("off ({})", self.reason.as_deref().unwrap_or("?")),
            (false, true) => format!(
                "server not started by wsbench, not pinned; client not pinned ({})",
                self.reason.as_deref().unwrap_or("?")
            ),
            (true, false) => format!(
                "server on CPU {}, client on CPU {} ({tool})",
                format_cpu_list(&self.server_cpus),
                format_cpu_list(&self.client_cpus)
            ),
            (true, true) => format!(
                "server not started by wsbench, not pinned; client on CPU {} ({tool})",
                format_cpu_list(&self.client_cpus)
            ),
        }
    }

    /// The `taskset -c LIST` prefix for a command, empty when not pinning.
    pub fn prefix(&self, cpus: &[usize]) -> Vec<String> {
        if self.enabled {
            vec!["taskset".into(), "-c".into(), format_cpu_list(cpus)]
        } else {
            Vec::new()
        }
    }

    /// The CPUs the run is pinned to (the server's and the client's), empty when not pinning.
    pub fn cpus(&self) -> Vec<usize> {
        if !self.enabled {
            return Vec::new();
        }
        let mut c = [self.server_cpus.clone(), self.client_cpus.clone()].concat();
        c.sort_unstable();
        c.dedup();
        c
    }
}

/// Which host CPUs (`--cpuset-cpus`) each server instance and the clients get.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuSets {
    pub servers: Vec<Option<String>>,
    pub clients: Option<String>,
}

/// Servers and clients on separate CPUs when there are at least two: each server instance gets its own CPU
/// while there are enough (keeping at least one for the clients), they share CPUs `0..n-1` otherwise, and the
/// clients get the CPUs left. One CPU: no pinning.
pub(crate) fn for_containers(ncpu: usize, servers: usize) -> CpuSets {
    if ncpu < 2 {
        return CpuSets {
            servers: vec![None; servers],
            clients: None,
        };
    }
    let range = |from: usize, to: usize| {
        if from == to {
            from.to_string()
        } else {
            format!("{from}-{to}")
        }
    };
    let (servers, used) = if servers < ncpu {
        (
            (0..servers).map(|i| Some(i.to_string())).collect(),
            servers.max(1),
        )
    } else {
        (vec![Some(range(0, ncpu - 2)); servers], ncpu - 1)
    };
    CpuSets {
        servers,
        clients: Some(range(used, ncpu - 1)),
    }
}

impl CpuSets {
    /// The placement in provenance's terms (`ncpu`: the Docker host's CPUs).
    pub(crate) fn as_pinning(&self, ncpu: usize) -> Pinning {
        let cpus = |list: Option<&String>| {
            list.and_then(|l| parse_cpu_list(l).ok())
                .unwrap_or_default()
        };
        let mut server_cpus: Vec<usize> =
            self.servers.iter().flat_map(|s| cpus(s.as_ref())).collect();
        server_cpus.sort_unstable();
        server_cpus.dedup();
        let enabled = self.clients.is_some();
        Pinning {
            enabled,
            reason: (!enabled).then(|| format!("only {ncpu} CPU on the Docker host")),
            server_cpus,
            client_cpus: cpus(self.clients.as_ref()),
            tool: enabled.then(|| "docker run --cpuset-cpus".to_owned()),
            external_server: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_between_server_and_client() {
        let ts = Some("taskset from util-linux 2.38".to_owned());
        let p = Pinning::plan(&[0, 1], true, ts.clone());
        assert!(p.enabled);
        assert_eq!(
            (p.server_cpus.as_slice(), p.client_cpus.as_slice()),
            (&[0][..], &[1][..])
        );
        assert_eq!(p.prefix(&p.client_cpus), ["taskset", "-c", "1"]);
        let p = Pinning::plan(&[0, 1, 2, 3, 4], true, ts.clone());
        assert_eq!((p.server_cpus.len(), p.client_cpus.len()), (3, 2));
        let p = Pinning::plan(&[0], true, ts.clone());
        assert!(!p.enabled && p.reason.unwrap().contains("only 1 CPU"));
        assert!(!Pinning::plan(&[0, 1], false, ts).enabled);
        let p = Pinning::plan(&[0, 1], true, None);
        assert!(!p.enabled && p.prefix(&[0]).is_empty());
    }
    #[test]
    fn two_cpus_put_servers_on_0_and_clients_on_1() {
        let p = for_containers(2, 3);
        assert_eq!(p.servers, vec![Some("0".to_owned()); 3]);
        assert_eq!(p.clients.as_deref(), Some("1"));
    }

    #[test]
    fn enough_cpus_give_each_server_its_own() {
        let p = for_containers(8, 3);
        assert_eq!(
            p.servers,
            vec![Some("0".into()), Some("1".into()), Some("2".into())]
        );
        assert_eq!(p.clients.as_deref(), Some("3-7"));
        let crowded = for_containers(4, 5);
        assert_eq!(crowded.servers[4].as_deref(), Some("0-2"));
        assert_eq!(crowded.clients.as_deref(), Some("3"));
    }

    #[test]
    fn one_cpu_pins_nothing() {
        assert_eq!(
            for_containers(1, 2),
            CpuSets {
                servers: vec![None, None],
                clients: None
            }
        );
    }
}
