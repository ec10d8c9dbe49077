//! `provenance.json`: everything needed to tell whether two runs are comparable and to repeat one —
//! git state, toolchain, build profile, machine, tunables, limits, pinning, exact command lines.

pub mod containers;
pub mod host_state;
pub mod swarm;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use xshell::Shell;

use super::artifacts::emulation::ClientArch;
use super::artifacts::Binaries;
use super::pinning::Pinning;
use super::scenario::Plan;
use containers::ContainersRecord;
use host_state::HostStates;
use swarm::SwarmRecord;
use wsbench_tools::{cargo, git, host, load};

pub const SCHEMA: &str = "wsbench.provenance/v1";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Provenance {
    pub schema: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// The xtask command line, as typed (after `cargo xtask`).
    pub invocation: Vec<String>,
    pub scenario: ScenarioRef,
    pub git: Option<Git>,
    pub build: Build,
    pub host: Host,
    /// sysctl name → value (None: not readable here).
    pub tunables: BTreeMap<String, Option<String>>,
    pub rlimit_nofile: RlimitNofile,
    pub pinning: Pinning,
    pub commands: Commands,
    /// `--containers`: images, network, pinning, limits, sysctls, link shaping, per-step containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containers: Option<ContainersRecord>,
    /// `--client-arch`: the client's architecture, build (build.json) and emulator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_arch: Option<ClientArch>,
    /// `--swarm`: every node (hostname, arch, CPUs, kernel, role), the images on each, every task and its node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swarm: Option<SwarmRecord>,
    /// `--server-arch` (containers): the server image's architecture, build and emulator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_arch: Option<ClientArch>,
    /// Each server measured (`--sut`, `--target`), as it identified itself; absent: bench-server alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sut: Vec<SutRecord>,
    /// `run --resume`: each time the run was continued, and which steps were (re)run then.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumes: Vec<Resume>,
    /// This machine's power and virtualisation state at the start and around each step (issue 44).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_state: Option<HostStates>,
}

/// What was measured: one server under test, as it identified itself.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SutRecord {
    /// `bench-server`, `jaxws`, `gsoap`, `external`.
    pub name: String,
    /// false: a server wsbench did not start (`--target`), which it neither pinned nor stopped.
    pub started_by_wsbench: bool,
    /// Where the clients reached it.
    pub url: Option<String>,
    /// Its `Server` header (GET of the URL), if it sent one.
    pub server_header: Option<String>,
    /// Service path → SHA-256 of the WSDL it served at `?wsdl` (SOAP scenarios).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub wsdl_sha256: BTreeMap<String, String>,
    /// The process sampled for the server's CPU and RSS; None: not sampled.
    pub sampled_pid: Option<u32>,
    /// `--agent`: the agent on the server's host that sampled it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled_by_agent: Option<String>,
    /// A peer's build directory (`target/peers/<name>-<build>-<hash>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// A peer's configuration, in words (its peer.toml: stack, configuration, what differs, label).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<String>,
    /// The configuration's short name (`defaults`, `seed`, `events`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_name: Option<String>,
    /// What tables call the configuration (peer.toml's `title`, else its name): `Metro 4.0.5`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_title: Option<String>,
    /// The warm-up load its peer.toml says it needs before its figures settle (a JIT), seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_needed_s: Option<f64>,
    /// What could not be found out, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One `cargo xtask run --resume DIR`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Resume {
    pub at: String,
    /// The xtask command line, as typed.
    pub invocation: Vec<String>,
    /// The tree it was resumed from (it may differ from the one the run began with).
    pub git: Option<Git>,
    /// The steps kept, measured before.
    pub kept: Vec<String>,
    /// The steps run again or for the first time.
    pub rerun: Vec<String>,
    /// Documents of steps cut short before, moved aside (`steps/<id>.cut-short.json`).
    pub set_aside: Vec<String>,
}

impl Provenance {
    /// The record of a run about to start: everything known before its first step.
    pub fn begin(
        sh: &Shell,
        root: &std::path::Path,
        plan: &Plan,
        started_at: &str,
        bins: &Binaries,
        pinning: Pinning,
        rlimit_nofile: RlimitNofile,
    ) -> Provenance {
        let (rustc, target) = cargo::rustc(sh);
        Provenance {
            schema: SCHEMA.to_owned(),
            started_at: started_at.to_owned(),
            finished_at: None,
            invocation: std::env::args().skip(1).collect(),
            scenario: ScenarioRef {
                name: plan.scenario.name.clone(),
                file: plan
                    .scenario
                    .path
                    .strip_prefix(root)
                    .unwrap_or(&plan.scenario.path)
                    .display()
                    .to_string(),
                sha256: plan.scenario.sha256.clone(),
                quick: plan.quick,
                sets: plan.sets.clone(),
            },
            git: git(sh),
            build: Build {
                builder: "cargo".to_owned(),
                profile: "release".to_owned(),
                profile_settings: profile_settings(root, "release"),
                target,
                rustc,
                cargo: cargo::version(sh),
                server_binary: bins.server.display().to_string(),
                client_binary: bins.client.display().to_string(),
            },
            host: Host::read(),
            tunables: host::tunables(),
            rlimit_nofile,
            pinning,
            commands: Commands::default(),
            containers: None,
            client_arch: None,
            swarm: None,
            server_arch: None,
            resumes: Vec::new(),
            sut: Vec::new(),
            host_state: Some(HostStates::begin(sh)),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScenarioRef {
    pub name: String,
    pub file: String,
    pub sha256: String,
    pub quick: bool,
    pub sets: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Git {
    pub commit: String,
    /// Uncommitted changes to tracked or untracked (not ignored) files.
    pub dirty: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Build {
    /// `cargo` (bare processes); other builders (cross, containers) name themselves.
    pub builder: String,
    pub profile: String,
    /// `[profile.<profile>]` of the workspace manifest.
    pub profile_settings: BTreeMap<String, String>,
    pub target: Option<String>,
    pub rustc: Option<String>,
    pub cargo: Option<String>,
    pub server_binary: String,
    pub client_binary: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Host {
    pub hostname: Option<String>,
    pub cpu_model: Option<String>,
    pub cpus_online: usize,
    pub cpus_allowed: Vec<usize>,
    pub kernel: Option<String>,
    pub memory_total_kb: Option<u64>,
    /// /proc/loadavg when the run started: other work on the machine skews every figure.
    pub load_average: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RlimitNofile {
    /// Before xtask raised the soft limit to the hard one.
    pub before: host::NoFile,
    /// In force for the server and client (inherited from xtask).
    pub in_force: host::NoFile,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Commands {
    /// One argv per server instance started, in order.
    pub server: Vec<Vec<String>>,
    /// Step id → the bench-client argv.
    pub client: BTreeMap<String, Vec<String>>,
    /// Each server instance's READY line as it was understood, in order: its addresses and workers, and
    /// for chat the fan-out (`fanout=uring|writes`) and whether io_uring was allowed (`io_uring=ok`, or
    /// `EPERM` as under Docker's default seccomp profile).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ready: Vec<String>,
}

impl Host {
    pub fn read() -> Host {
        Host {
            hostname: host::hostname(),
            cpu_model: host::cpu_model(),
            cpus_online: host::cpus_online(),
            cpus_allowed: host::cpus_allowed(),
            kernel: host::kernel(),
            memory_total_kb: host::memory_total_kb(),
            load_average: load::average().map(|l| l.to_string()),
        }
    }
}

/// The commit and dirty flag, or None outside a git checkout.
pub fn git(sh: &Shell) -> Option<Git> {
    git::head(sh).map(|(commit, dirty)| Git { commit, dirty })
}

/// `[profile.<name>]` of the workspace `Cargo.toml`, values as TOML text.
pub fn profile_settings(root: &std::path::Path, name: &str) -> BTreeMap<String, String> {
    let Ok(text) = std::fs::read_to_string(root.join("Cargo.toml")) else {
        return BTreeMap::new();
    };
    let Ok(manifest) = text.parse::<toml::Table>() else {
        return BTreeMap::new();
    };
    manifest
        .get("profile")
        .and_then(|p| p.get(name))
        .and_then(|p| p.as_table())
        .map(|t| t.iter().map(|(k, v)| (k.clone(), v.to_string())).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_release_profile() {
        let s = profile_settings(&crate::paths::project_root(), "release");
        assert_eq!(s.get("codegen-units").map(String::as_str), Some("1"));
    }
}
