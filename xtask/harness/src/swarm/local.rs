//! `cargo xtask swarm up --local N` / `down`: a real swarm of N nodes on this machine — this machine's engine
//! (manager, `wsbench.role=server`) and N−1 extra engines, each in its own network namespace reached over a
//! veth pair with addresses of its own, joined as workers (`wsbench.role=client`). What was made is written to
//! a state file first, so `down` (or a failed `up`) removes exactly that: services, swarm state, engines,
//! namespaces, veths, directories.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context as _};
use serde::{Deserialize, Serialize};
use xshell::Shell;

use super::labels::{ARCH_LABEL, ENGINE_LABEL, ROLE_LABEL};
use crate::containers::LABEL as SESSION_LABEL;
use crate::interrupt;
use wsbench_tools::docker::EngineAddr;
use wsbench_tools::{dockerd, host, ip, process, tc};

/// Runtime files (sockets, pid files, the state file); the engines' data lives under [`DATA`].
const RUN: &str = "/run/wsbench-swarm";
const DATA: &str = "/var/lib/wsbench-swarm";
/// `10.251.K.0/24` for node K+1: host side .1, node side .2.
const SUBNET: &str = "10.251";
const ENGINE_START: Duration = Duration::from_secs(60);

/// What `up` made, as the state file records it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LocalSwarm {
    /// This machine's engine was put into swarm mode by `up` (and leaves it on `down`).
    pub initialised: bool,
    /// docker_gwbridge existed before (swarm init creates it; `down` removes it only if it did not).
    pub gwbridge_existed: bool,
    pub nodes: Vec<LocalNode>,
}

/// One extra engine in its own network namespace.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LocalNode {
    pub hostname: String,
    pub netns: String,
    pub veth_host: String,
    pub veth_node: String,
    pub host_ip: String,
    pub node_ip: String,
    pub run_dir: PathBuf,
    pub data_dir: PathBuf,
    pub pid: Option<u32>,
}

impl LocalNode {
    fn new(n: usize) -> LocalNode {
        let k = n - 1;
        LocalNode {
            hostname: format!("wsbench-node{n}"),
            netns: format!("wsbench-n{n}"),
            veth_host: format!("wsbh{n}"),
            veth_node: format!("wsbn{n}"),
            host_ip: format!("{SUBNET}.{k}.1"),
            node_ip: format!("{SUBNET}.{k}.2"),
            run_dir: Path::new(RUN).join(format!("node{n}")),
            data_dir: Path::new(DATA).join(format!("node{n}")),
            pid: None,
        }
    }

    pub fn socket(&self) -> String {
        format!("unix://{}", self.run_dir.join("docker.sock").display())
    }

    fn engine(&self) -> EngineAddr {
        EngineAddr::at(&self.socket())
    }
}

fn state_path() -> PathBuf {
    Path::new(RUN).join("state.json")
}

/// The state file, if a local swarm is up.
pub(crate) fn read_state() -> anyhow::Result<Option<LocalSwarm>> {
    match std::fs::read_to_string(state_path()) {
        Ok(text) => Ok(Some(
            serde_json::from_str(&text).context("parsing the local swarm state")?,
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).context("reading the local swarm state"),
    }
}

fn write_state(s: &LocalSwarm) -> anyhow::Result<()> {
    std::fs::create_dir_all(RUN)?;
    std::fs::write(state_path(), serde_json::to_string_pretty(s)? + "\n")
        .context("writing the local swarm state")
}

/// What `up --local` needs from this machine, each missing piece named.
pub fn preflight(sh: &Shell) -> anyhow::Result<()> {
    let mut missing = Vec::new();
    if !host::is_root() {
        missing.push("root (network namespaces and a second dockerd need it)".to_owned());
    }
    let _ = sh;
    for p in [ip::IP, tc::NSENTER].iter().chain(&dockerd::PROGRAMS) {
        if p.path().is_none() {
            missing.push(format!("{} ({})", p.name, p.install));
        }
    }
    if !host::exists("/dev/fuse") {
        missing.push(
            "/dev/fuse (fuse-overlayfs, the extra engines' storage driver, needs it)".to_owned(),
        );
    }
    ensure!(
        missing.is_empty(),
        "swarm up --local needs: {}",
        missing.join(", ")
    );
    Ok(())
}

/// Brings up a swarm of `n` nodes on this machine; on any failure (or Ctrl-C) takes down what it made.
pub fn up(sh: &Shell, n: usize) -> anyhow::Result<LocalSwarm> {
    ensure!(
        (2..=8).contains(&n),
        "--local takes 2 to 8 nodes (this machine's engine and n−1 more)"
    );
    interrupt::install()?;
    preflight(sh)?;
    if read_state()?.is_some() {
        bail!("a local swarm is already up: `cargo xtask swarm down` first");
    }
    let me = EngineAddr::default();
    let state = me.read(sh, &["info", "--format", "{{.Swarm.LocalNodeState}}"])?;
    ensure!(
        state == "inactive",
        "this machine's engine is already in a swarm (state {state}) that wsbench did not make: leave it \
         (`docker swarm leave`) or run on it as it is (`cargo xtask swarm check`)"
    );
    let mut s = LocalSwarm {
        initialised: false,
        gwbridge_existed: me
            .read(
                sh,
                &[
                    "network",
                    "inspect",
                    "--format",
                    "{{.Name}}",
                    "docker_gwbridge",
                ],
            )
            .is_ok(),
        nodes: Vec::new(),
    };
    write_state(&s)?;
    match build(sh, n, &mut s) {
        Ok(()) => Ok(s),
        Err(e) => {
            eprintln!("swarm up failed: taking down what it made");
            let left = down_state(sh, &s);
            if !left.is_empty() {
                eprintln!("could not remove: {}", left.join("; "));
            }
            Err(e)
        }
    }
}

fn build(sh: &Shell, n: usize, s: &mut LocalSwarm) -> anyhow::Result<()> {
    for i in 2..=n {
        interrupt::check()?;
        let node = LocalNode::new(i);
        s.nodes.push(node.clone());
        write_state(s)?;
        let pid = start_node(sh, &node)?;
        s.nodes.last_mut().expect("just pushed").pid = Some(pid);
        write_state(s)?;
    }
    interrupt::check()?;
    let me = EngineAddr::default();
    let first = s.nodes.first().context("no extra node")?.clone();
    let listen = format!("{}:2377", first.host_ip);
    s.initialised = true;
    write_state(s)?;
    me.read(
        sh,
        &[
            "swarm",
            "init",
            "--advertise-addr",
            &first.host_ip,
            "--listen-addr",
            &listen,
        ],
    )?;
    let token = me.read(sh, &["swarm", "join-token", "--quiet", "worker"])?;
    let self_id = me.read(sh, &["info", "--format", "{{.Swarm.NodeID}}"])?;
    label(sh, &self_id, "server", None, None)?;
    for node in &s.nodes {
        interrupt::check()?;
        node.engine().read(
            sh,
            &[
                "swarm",
                "join",
                "--token",
                &token,
                "--advertise-addr",
                &node.node_ip,
                &listen,
            ],
        )?;
        let id = node
            .engine()
            .read(sh, &["info", "--format", "{{.Swarm.NodeID}}"])?;
        label(sh, &id, "client", Some(&node.socket()), None)?;
    }
    Ok(())
}

/// `docker node update --label-add wsbench.role=ROLE [--label-add wsbench.engine=ADDR] NODE`.
pub fn label(
    sh: &Shell,
    node: &str,
    role: &str,
    engine: Option<&str>,
    image_arch: Option<&str>,
) -> anyhow::Result<()> {
    let mut args = vec![
        "node".to_owned(),
        "update".into(),
        "--label-add".into(),
        format!("{ROLE_LABEL}={role}"),
    ];
    if let Some(e) = engine {
        args.extend(["--label-add".into(), format!("{ENGINE_LABEL}={e}")]);
    }
    if let Some(a) = image_arch {
        args.extend(["--label-add".into(), format!("{ARCH_LABEL}={a}")]);
    }
    args.push(node.to_owned());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    EngineAddr::default().read(sh, &refs).map(|_| ())
}

/// The namespace, the veth pair with its addresses, and a dockerd inside; returns dockerd's pid.
fn start_node(sh: &Shell, node: &LocalNode) -> anyhow::Result<u32> {
    let LocalNode {
        netns,
        veth_host,
        veth_node,
        host_ip,
        node_ip,
        ..
    } = node;
    let (host_cidr, node_cidr) = (format!("{host_ip}/24"), format!("{node_ip}/24"));
    for args in [
        vec!["netns", "add", netns],
        vec![
            "link", "add", veth_host, "type", "veth", "peer", "name", veth_node,
        ],
        vec!["link", "set", veth_node, "netns", netns],
        vec!["addr", "add", &host_cidr, "dev", veth_host],
        vec!["link", "set", veth_host, "up"],
        vec!["-n", netns, "addr", "add", &node_cidr, "dev", veth_node],
        vec!["-n", netns, "link", "set", veth_node, "up"],
        vec!["-n", netns, "link", "set", "lo", "up"],
        vec!["-n", netns, "route", "add", "default", "via", host_ip],
    ] {
        ip::run(sh, &args)?;
    }
    std::fs::create_dir_all(&node.run_dir)?;
    std::fs::create_dir_all(&node.data_dir)?;
    let socket = node.socket();
    let pid = dockerd::start(&dockerd::Node {
        netns,
        data_dir: &node.data_dir,
        run_dir: &node.run_dir,
        socket: &socket,
    })?;
    let deadline = Instant::now() + ENGINE_START;
    while !node.engine().answers(sh) {
        if !process::alive(pid) {
            bail!(
                "dockerd of {} exited; its log: {}",
                node.hostname,
                node.run_dir.join("dockerd.log").display()
            );
        }
        ensure!(
            Instant::now() < deadline,
            "dockerd of {} did not answer within {} s",
            node.hostname,
            ENGINE_START.as_secs()
        );
        interrupt::check()?;
        std::thread::sleep(Duration::from_millis(200));
    }
    let name = &node.hostname;
    dockerd::set_hostname(sh, pid, name)?;
    eprintln!(
        "engine {name} up: {} in netns {netns} at {node_ip}",
        node.socket()
    );
    Ok(pid)
}

/// Takes the local swarm down; returns what could not be removed (empty: nothing is left).
pub fn down(sh: &Shell) -> anyhow::Result<Vec<String>> {
    let Some(s) = read_state()? else {
        return Ok(Vec::new());
    };
    Ok(down_state(sh, &s))
}

fn down_state(sh: &Shell, s: &LocalSwarm) -> Vec<String> {
    let mut left = Vec::new();
    let me = EngineAddr::default();
    if s.initialised {
        // Services of an interrupted run first, so no task is left on any node.
        let filter = format!("label={SESSION_LABEL}");
        if let Ok(ids) = me.read(sh, &["service", "ls", "--quiet", "--filter", &filter]) {
            let ids: Vec<&str> = ids.split_whitespace().collect();
            if !ids.is_empty() {
                let mut args = vec!["service", "rm"];
                args.extend(ids);
                let _ = me.read(sh, &args);
            }
        }
    }
    for node in &s.nodes {
        let engine = node.engine();
        let _ = engine.read(sh, &["swarm", "leave", "--force"]);
        if let Some(pid) = node.pid.or_else(|| {
            std::fs::read_to_string(node.run_dir.join("dockerd.pid"))
                .ok()
                .and_then(|p| p.trim().parse().ok())
        }) {
            if let Err(e) = stop_pid(sh, pid) {
                left.push(format!("dockerd {pid} of {}: {e:#}", node.hostname));
            }
        }
        let netns = &node.netns;
        let _ = ip::try_run(sh, &["netns", "del", netns]);
        let veth = &node.veth_host;
        let veth_exists = || ip::try_run(sh, &["link", "show", veth]);
        // The pair goes with the namespace; delete the host end in case something still held it.
        if veth_exists() {
            let _ = ip::try_run(sh, &["link", "del", veth]);
        }
        // What the engine mounted and left (its sandboxes' namespaces, its storage driver's layers) keeps
        // the directories from being removed; the namespace's own mount too, if `netns del` could not.
        let ns_file = PathBuf::from(format!("/run/netns/{netns}"));
        for stays in dockerd::unmount_under(sh, &[&node.run_dir, &node.data_dir, &ns_file]) {
            left.push(format!("mount {stays} (umount --lazy {stays})"));
        }
        let _ = std::fs::remove_file(&ns_file);
        if ns_file.exists() {
            left.push(format!("network namespace {netns}"));
        }
        if veth_exists() {
            left.push(format!("veth {veth}"));
        }
        for dir in [&node.data_dir, &node.run_dir] {
            if dir.exists() {
                if let Err(e) = std::fs::remove_dir_all(dir) {
                    left.push(format!("{}: {e}", dir.display()));
                }
            }
        }
    }
    if s.initialised {
        if me.read(sh, &["swarm", "leave", "--force"]).is_err()
            && me
                .read(sh, &["info", "--format", "{{.Swarm.LocalNodeState}}"])
                .is_ok_and(|st| st != "inactive")
        {
            left.push("this machine's swarm state (docker swarm leave --force)".to_owned());
        }
        if !s.gwbridge_existed {
            // Swarm mode made it; containers still attached would keep it (then say so).
            let _ = me.read(sh, &["network", "rm", "docker_gwbridge"]);
            if me
                .read(sh, &["network", "inspect", "docker_gwbridge"])
                .is_ok()
            {
                left.push("network docker_gwbridge".to_owned());
            }
        }
    }
    let _ = std::fs::remove_file(state_path());
    for d in [DATA, RUN] {
        let _ = std::fs::remove_dir(d);
    }
    left
}

/// SIGTERM, then SIGKILL after 20 s; Ok once the process is gone.
fn stop_pid(_sh: &Shell, pid: u32) -> anyhow::Result<()> {
    process::terminate(pid, Duration::from_secs(20))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_get_names_and_addresses_of_their_own() {
        let (a, b) = (LocalNode::new(2), LocalNode::new(3));
        assert_eq!(
            (a.host_ip.as_str(), a.node_ip.as_str()),
            ("10.251.1.1", "10.251.1.2")
        );
        assert_ne!(a.netns, b.netns);
        assert_ne!(a.veth_host, b.veth_host);
        assert!(
            a.veth_host.len() <= 15 && a.veth_node.len() <= 15,
            "IFNAMSIZ"
        );
        assert!(a.socket().len() < 100, "sun_path");
        assert!(!process::alive(u32::MAX));
        assert!(process::alive(std::process::id()));
    }
}
