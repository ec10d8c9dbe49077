//! Facts about this machine that runs depend on: CPU, memory, kernel, TCP tunables, RLIMIT_NOFILE, the
//! effective user, binfmt_misc. Read from /proc and /sys (Linux); shared by `doctor`, `run` and provenance.
//! What runs on the machine (load, processes, sockets) is [`crate::load`]'s.

use std::{collections::BTreeMap, path::Path};

use anyhow::{bail, Context as _, Result};
use nix::sys::resource::{getrlimit, setrlimit, Resource, RLIM_INFINITY};
use serde::{Deserialize, Serialize};

/// The kernel tunables that matter for connection-heavy benchmarks (the OSS/J seed tuned their Solaris analogues).
pub(crate) const TUNABLES: &[&str] = &[
    "net.core.somaxconn",
    "net.ipv4.tcp_max_syn_backlog",
    "net.ipv4.tcp_tw_reuse",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_fin_timeout",
    "net.core.netdev_max_backlog",
    "fs.file-max",
    "fs.nr_open",
];

/// A sysctl's value as the kernel prints it (whitespace collapsed), or None when it cannot be read.
pub fn sysctl(name: &str) -> Option<String> {
    let path = Path::new("/proc/sys").join(name.replace('.', "/"));
    let text = std::fs::read_to_string(path).ok()?;
    Some(text.split_whitespace().collect::<Vec<_>>().join(" "))
}

pub fn tunables() -> BTreeMap<String, Option<String>> {
    TUNABLES
        .iter()
        .map(|&n| (n.to_owned(), sysctl(n)))
        .collect()
}

/// The ephemeral port range (low, high) clients connect from.
pub fn ephemeral_ports() -> Option<(u32, u32)> {
    let v = sysctl("net.ipv4.ip_local_port_range")?;
    let mut it = v.split_whitespace().map(str::parse::<u32>);
    Some((it.next()?.ok()?, it.next()?.ok()?))
}

/// The CPU model name from /proc/cpuinfo (`model name` on x86, `cpu` on POWER).
pub fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        matches!(k.trim(), "model name" | "cpu" | "Model").then(|| v.trim().to_owned())
    })
}

/// CPUs online in the machine.
pub fn cpus_online() -> usize {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| parse_cpu_list(s.trim()).ok())
        .map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get()),
            |c| c.len(),
        )
}

/// The CPUs this process may run on (its affinity), the set pinning splits between server and client.
pub fn cpus_allowed() -> Vec<usize> {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .and_then(|v| parse_cpu_list(v.trim()).ok())
        })
        .unwrap_or_else(|| (0..cpus_online()).collect())
}

pub fn kernel() -> Option<String> {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
    let os = std::fs::read_to_string("/proc/sys/kernel/ostype").unwrap_or_else(|_| "Linux".into());
    Some(format!("{} {}", os.trim(), release.trim()))
}

pub fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_owned())
}

/// Parses a kernel CPU list such as `0-3,6,8-9`.
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse()?, b.parse()?);
                if a > b {
                    bail!("bad CPU range `{part}`");
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.parse().with_context(|| format!("bad CPU `{part}`"))?),
        }
    }
    Ok(cpus)
}

/// Formats CPUs as a list taskset accepts (`0,1,2` — no ranges needed).
pub fn format_cpu_list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Total memory in kB (/proc/meminfo's MemTotal).
pub fn memory_total_kb() -> Option<u64> {
    std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    })
}

/// The mount points at or under `dir` (`/proc/self/mountinfo`), as written there.
pub(crate) fn mounts_under(dir: &Path) -> Vec<String> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    mount_points_under(&info, &dir.display().to_string())
}

/// The mount points (mountinfo's fifth field, `\040` for a space) at or under `dir`.
fn mount_points_under(info: &str, dir: &str) -> Vec<String> {
    let dir = dir.trim_end_matches('/');
    info.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(|p| p.replace("\\040", " "))
        .filter(|p| p == dir || p.strip_prefix(dir).is_some_and(|r| r.starts_with('/')))
        .collect()
}

/// The effective user is root (`/proc/self/status`' second Uid field).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .map(|u| u.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// A path exists on this machine (a device, a library directory) — for `doctor` and preflight checks.
pub fn exists(path: &str) -> bool {
    Path::new(path).exists()
}

/// binfmt_misc's entry `name` (`qemu-ppc64le`), as text; Err saying whether binfmt_misc is mounted at all.
pub(crate) fn binfmt_entry(name: &str) -> Result<String, BinfmtMissing> {
    std::fs::read_to_string(format!("/proc/sys/fs/binfmt_misc/{name}")).map_err(|_| {
        if Path::new("/proc/sys/fs/binfmt_misc/status").exists() {
            BinfmtMissing::Entry
        } else {
            BinfmtMissing::NotMounted
        }
    })
}

/// Why a binfmt_misc entry could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinfmtMissing {
    NotMounted,
    Entry,
}

/// RLIMIT_NOFILE (soft, hard); `None` stands for unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoFile {
    pub soft: Option<u64>,
    pub hard: Option<u64>,
}

fn limit(v: u64) -> Option<u64> {
    (v != RLIM_INFINITY).then_some(v)
}

pub fn nofile() -> Result<NoFile> {
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).context("getrlimit(RLIMIT_NOFILE)")?;
    Ok(NoFile {
        soft: limit(soft),
        hard: limit(hard),
    })
}

/// Raises this process's soft RLIMIT_NOFILE to the hard limit (children inherit it); returns (before, after).
pub fn raise_nofile() -> Result<(NoFile, NoFile)> {
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).context("getrlimit(RLIMIT_NOFILE)")?;
    let before = NoFile {
        soft: limit(soft),
        hard: limit(hard),
    };
    if soft < hard {
        setrlimit(Resource::RLIMIT_NOFILE, hard, hard)
            .context("setrlimit(RLIMIT_NOFILE, hard, hard)")?;
    }
    Ok((before, nofile()?))
}

#[cfg(test)]
mod tests {
    #[test]
    fn mount_points_under_a_directory_and_only_there() {
        let info = "36 25 0:4 net:[4026532] /run/wsbench-swarm/node2/exec/netns/1-abc rw shared:5 - nsfs nsfs rw\n\
                    37 25 0:5 / /run/wsbench-swarm/node2 rw - tmpfs tmpfs rw\n\
                    38 25 0:6 / /run/wsbench-swarm/node20/x rw - tmpfs tmpfs rw\n\
                    39 25 0:7 / /var/lib/a\\040b rw - tmpfs tmpfs rw\n";
        assert_eq!(
            mount_points_under(info, "/run/wsbench-swarm/node2/"),
            [
                "/run/wsbench-swarm/node2/exec/netns/1-abc",
                "/run/wsbench-swarm/node2"
            ]
        );
        assert_eq!(mount_points_under(info, "/var/lib/a b"), ["/var/lib/a b"]);
    }

    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,6,8-9").unwrap(), [0, 1, 2, 3, 6, 8, 9]);
        assert_eq!(parse_cpu_list("0").unwrap(), [0]);
        assert!(parse_cpu_list("3-1").is_err());
        assert_eq!(format_cpu_list(&[0, 2]), "0,2");
    }

    #[test]
    fn reads_this_machine() {
        assert!(cpus_online() >= 1);
        assert!(!cpus_allowed().is_empty());
        let n = nofile().unwrap();
        assert!(n.soft <= n.hard || n.hard.is_none());
    }
}
