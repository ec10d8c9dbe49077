//! `cargo xtask swarm up --local N` / `down`: a real swarm of N nodes on this machine — this machine's engine
//! (manager, `wsbench.role=server`) and N−1 extra engines, each in its own network namespace reached over a
//! veth pair with addresses of its own, joined as workers (`wsbench.role=client`). What was made is written to
//! a state file first, so `down` (or a failed `up`) removes exactly that: services, swarm state, engines,
//! namespaces, veths, directories.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context as _};
use serde::{Deserialize, Serialize};
use xshell::{cmd, Shell};

use super::labels::{ARCH_LABEL, ENGINE_LABEL, ROLE_LABEL};
use crate::containers::LABEL as SESSION_LABEL;
use crate::interrupt;
use wsbench_tools::docker::EngineAddr;

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
pub fn read_state() -> anyhow::Result<Option<LocalSwarm>> {
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
    if !cmd!(sh, "id -u")
        .quiet()
        .read()
        .is_ok_and(|u| u.trim() == "0")
    {
        missing.push("root (network namespaces and a second dockerd need it)".to_owned());
    }
    for (tool, package) in [
        ("ip", "iproute2"),
        ("nsenter", "util-linux"),
        ("unshare", "util-linux"),
        ("dockerd", "docker.io"),
        ("fuse-overlayfs", "fuse-overlayfs"),
    ] {
        if cmd!(sh, "which {tool}")
            .quiet()
            .ignore_stdout()
            .run()
            .is_err()
        {
            missing.push(format!("{tool} (Debian package {package})"));
        }
    }
    if !Path::new("/dev/fuse").exists() {
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
    cmd!(sh, "ip netns add {netns}").quiet().run()?;
    cmd!(
        sh,
        "ip link add {veth_host} type veth peer name {veth_node}"
    )
    .quiet()
    .run()?;
    cmd!(sh, "ip link set {veth_node} netns {netns}")
        .quiet()
        .run()?;
    cmd!(sh, "ip addr add {host_cidr} dev {veth_host}")
        .quiet()
        .run()?;
    cmd!(sh, "ip link set {veth_host} up").quiet().run()?;
    cmd!(sh, "ip -n {netns} addr add {node_cidr} dev {veth_node}")
        .quiet()
        .run()?;
    cmd!(sh, "ip -n {netns} link set {veth_node} up")
        .quiet()
        .run()?;
    cmd!(sh, "ip -n {netns} link set lo up").quiet().run()?;
    cmd!(sh, "ip -n {netns} route add default via {host_ip}")
        .quiet()
        .run()?;
    std::fs::create_dir_all(&node.run_dir)?;
    std::fs::create_dir_all(&node.data_dir)?;
    let config = node.run_dir.join("daemon.json");
    std::fs::write(&config, "{}\n")?;
    let log = std::fs::File::create(node.run_dir.join("dockerd.log"))?;
    let r = &node.run_dir;
    // nsenter --net, not `ip netns exec`: that remounts /sys and hides the cgroups from dockerd. Its own UTS
    // namespace gives the node its own hostname, so provenance tells the nodes apart.
    let child = Command::new("nsenter")
        .arg(format!("--net=/var/run/netns/{netns}"))
        .args(["unshare", "--uts", "--", "dockerd"])
        .arg("--data-root")
        .arg(&node.data_dir)
        .arg("--exec-root")
        .arg(r.join("exec"))
        .arg("--pidfile")
        .arg(r.join("dockerd.pid"))
        .args(["-H", &node.socket(), "--config-file"])
        .arg(&config)
        .args([
            "--storage-driver",
            "fuse-overlayfs",
            "--iptables=false",
            "--bridge=none",
        ])
        // Without it a node tries the registry for every task's image first (~20 s to fail here, and a registry
        // image of the same name would win); with it a node runs the image `docker load` put there.
        .env("DOCKER_SERVICE_PREFER_OFFLINE_IMAGE", "1")
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        // Its own process group: Ctrl-C in the terminal is for xtask, which then takes the engine down.
        .process_group(0)
        .spawn()
        .context("starting dockerd in the namespace (nsenter)")?;
    let pid = child.id();
    let deadline = Instant::now() + ENGINE_START;
    while !node.engine().answers(sh) {
        if !alive(pid) {
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
    let p = pid.to_string();
    let name = &node.hostname;
    cmd!(sh, "nsenter --target {p} --uts hostname {name}")
        .quiet()
        .run()?;
    eprintln!(
        "engine {name} up: {} in netns {netns} at {node_ip}",
        node.socket()
    );
    Ok(pid)
}

/// Whether `pid` is a live process (not gone, not a zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X'))
    })
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
        let _ = cmd!(sh, "ip netns del {netns}")
            .quiet()
            .ignore_stderr()
            .run();
        let veth = &node.veth_host;
        let veth_exists = || {
            cmd!(sh, "ip link show {veth}")
                .quiet()
                .ignore_stdout()
                .ignore_stderr()
                .run()
                .is_ok()
        };
        // The pair goes with the namespace; delete the host end in case something still held it.
        if veth_exists() {
            let _ = cmd!(sh, "ip link del {veth}").quiet().ignore_stderr().run();
        }
        if Path::new(&format!("/var/run/netns/{netns}")).exists() {
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
fn stop_pid(sh: &Shell, pid: u32) -> anyhow::Result<()> {
    if !alive(pid) {
        return Ok(());
    }
    let p = pid.to_string();
    cmd!(sh, "kill -TERM {p}").quiet().ignore_stderr().run()?;
    let deadline = Instant::now() + Duration::from_secs(20);
    while alive(pid) {
        if Instant::now() > deadline {
            cmd!(sh, "kill -KILL {p}").quiet().ignore_stderr().run()?;
            std::thread::sleep(Duration::from_millis(500));
            ensure!(!alive(pid), "still running after SIGKILL");
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
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
        assert!(!alive(u32::MAX));
        assert!(alive(std::process::id()));
    }
}
