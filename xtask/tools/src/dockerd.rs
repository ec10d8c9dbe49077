//! dockerd: a second Docker engine inside a network namespace (`nsenter --net`, its own UTS namespace by
//! `unshare`), one node of the local multi-engine swarm, and the programs that needs.

use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::Context as _;
use xshell::{cmd, Shell};

use crate::Program;

/// What a local swarm node needs beside `ip` and `nsenter`.
pub const PROGRAMS: [Program; 4] = [
    Program {
        name: "dockerd",
        version_args: &["--version"],
        install: "apt-get install docker.io",
        used_for: "the local swarm (swarm up --local)",
    },
    Program {
        name: "unshare",
        version_args: &["--version"],
        install: "apt-get install util-linux",
        used_for: "the local swarm (swarm up --local)",
    },
    Program {
        name: "fuse-overlayfs",
        version_args: &["--version"],
        install: "apt-get install fuse-overlayfs",
        used_for: "the local swarm's storage driver",
    },
    Program {
        name: "umount",
        version_args: &["--version"],
        install: "apt-get install mount",
        used_for: "the local swarm's teardown (the engines' leftover netns and overlay mounts)",
    },
];

/// Unmounts every mount point under `dirs` (the deepest first; lazily, the engine that made them being
/// gone): the network namespaces dockerd bind-mounts under its exec root and its storage driver's mounts,
/// which a killed engine leaves and which keep its directories from being removed. Returns those that stay.
pub fn unmount_under(sh: &Shell, dirs: &[&Path]) -> Vec<String> {
    let mut points: Vec<String> = dirs
        .iter()
        .flat_map(|d| crate::host::mounts_under(d))
        .collect();
    points.sort_by_key(|p| std::cmp::Reverse(p.len()));
    points.dedup();
    for p in &points {
        let _ = cmd!(sh, "umount --lazy {p}").quiet().ignore_stderr().run();
    }
    dirs.iter()
        .flat_map(|d| crate::host::mounts_under(d))
        .collect()
}

/// Where one node's engine keeps its state, and how it is reached.
#[derive(Debug)]
pub struct Node<'a> {
    pub netns: &'a str,
    pub data_dir: &'a Path,
    pub run_dir: &'a Path,
    /// `unix:///…/docker.sock`.
    pub socket: &'a str,
}

/// Starts dockerd in `node.netns` (its own process group: Ctrl-C in the terminal is for xtask, which then
/// takes the engine down); its log goes to `run_dir/dockerd.log`. Returns its pid.
pub fn start(node: &Node<'_>) -> anyhow::Result<u32> {
    let r = node.run_dir;
    let config = r.join("daemon.json");
    std::fs::write(&config, "{}\n")?;
    let log = std::fs::File::create(r.join("dockerd.log"))?;
    // nsenter --net, not `ip netns exec`: that remounts /sys and hides the cgroups from dockerd. Its own UTS
    // namespace gives the node its own hostname, so provenance tells the nodes apart.
    let child = Command::new("nsenter")
        .arg(format!("--net=/var/run/netns/{}", node.netns))
        .args(["unshare", "--uts", "--", "dockerd"])
        .arg("--data-root")
        .arg(node.data_dir)
        .arg("--exec-root")
        .arg(r.join("exec"))
        .arg("--pidfile")
        .arg(r.join("dockerd.pid"))
        .args(["-H", node.socket, "--config-file"])
        .arg(&config)
        .args([
            "--storage-driver",
            "fuse-overlayfs",
            "--iptables=false",
            "--bridge=none",
        ])
        // Without it a node tries the registry for every task's image first (~20 s to fail here, and a
        // registry image of the same name would win); with it a node runs the image `docker load` put there.
        .env("DOCKER_SERVICE_PREFER_OFFLINE_IMAGE", "1")
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .process_group(0)
        .spawn()
        .context("starting dockerd in the namespace (nsenter)")?;
    Ok(child.id())
}

/// Sets the hostname in the UTS namespace of process `pid`.
pub fn set_hostname(sh: &Shell, pid: u32, name: &str) -> anyhow::Result<()> {
    let p = pid.to_string();
    cmd!(sh, "nsenter --target {p} --uts hostname {name}")
        .quiet()
        .run()?;
    Ok(())
}
