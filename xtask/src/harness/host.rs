//! Facts about this machine that runs depend on: CPU, kernel, TCP tunables, RLIMIT_NOFILE, TIME_WAIT sockets.
//! Read from /proc and /sys (Linux); shared by `doctor`, `run` and provenance.

use std::{collections::BTreeMap, path::Path};

use anyhow::{Context as _, Result};
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
pub(crate) fn sysctl(name: &str) -> Option<String> {
    let path = Path::new("/proc/sys").join(name.replace('.', "/"));
    let text = std::fs::read_to_string(path).ok()?;
    Some(text.split_whitespace().collect::<Vec<_>>().join(" "))
}

pub(crate) fn tunables() -> BTreeMap<String, Option<String>> {
    TUNABLES
        .iter()
        .map(|&n| (n.to_owned(), sysctl(n)))
        .collect()
}

/// The ephemeral port range (low, high) clients connect from.
pub(crate) fn ephemeral_ports() -> Option<(u32, u32)> {
    let v = sysctl("net.ipv4.ip_local_port_range")?;
    let mut it = v.split_whitespace().map(str::parse::<u32>);
    Some((it.next()?.ok()?, it.next()?.ok()?))
}

/// The CPU model name from /proc/cpuinfo (`model name` on x86, `cpu` on POWER).
pub(crate) fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        matches!(k.trim(), "model name" | "cpu" | "Model").then(|| v.trim().to_owned())
    })
}

/// CPUs online in the machine.
pub(crate) fn cpus_online() -> usize {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| crate::harness::pinning::parse_cpu_list(s.trim()).ok())
        .map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get()),
            |c| c.len(),
        )
}

/// The CPUs this process may run on (its affinity), the set pinning splits between server and client.
pub(crate) fn cpus_allowed() -> Vec<usize> {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .and_then(|v| crate::harness::pinning::parse_cpu_list(v.trim()).ok())
        })
        .unwrap_or_else(|| (0..cpus_online()).collect())
}

pub(crate) fn kernel() -> Option<String> {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
    let os = std::fs::read_to_string("/proc/sys/kernel/ostype").unwrap_or_else(|_| "Linux".into());
    Some(format!("{} {}", os.trim(), release.trim()))
}

pub(crate) fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_owned())
}

/// RLIMIT_NOFILE (soft, hard); `None` stands for unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct NoFile {
    pub(crate) soft: Option<u64>,
    pub(crate) hard: Option<u64>,
}

fn limit(v: u64) -> Option<u64> {
    (v != RLIM_INFINITY).then_some(v)
}

pub(crate) fn nofile() -> Result<NoFile> {
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).context("getrlimit(RLIMIT_NOFILE)")?;
    Ok(NoFile {
        soft: limit(soft),
        hard: limit(hard),
    })
}

/// Raises this process's soft RLIMIT_NOFILE to the hard limit (children inherit it); returns (before, after).
pub(crate) fn raise_nofile() -> Result<(NoFile, NoFile)> {
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

/// Sockets per TCP state name across /proc/net/tcp and tcp6 (the kernel's view of every socket on the host).
pub(crate) fn tcp_states() -> BTreeMap<&'static str, u64> {
    let mut counts = BTreeMap::new();
    for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
        if let Ok(text) = std::fs::read_to_string(file) {
            for (state, n) in count_states(&text) {
                *counts.entry(state).or_default() += n;
            }
        }
    }
    counts
}

pub(crate) fn time_wait() -> u64 {
    tcp_states().get("TIME_WAIT").copied().unwrap_or(0)
}

/// Counts the `st` column of a /proc/net/tcp table.
fn count_states(table: &str) -> BTreeMap<&'static str, u64> {
    const NAMES: [&str; 12] = [
        "ESTABLISHED",
        "SYN_SENT",
        "SYN_RECV",
        "FIN_WAIT1",
        "FIN_WAIT2",
        "TIME_WAIT",
        "CLOSE",
        "CLOSE_WAIT",
        "LAST_ACK",
        "LISTEN",
        "CLOSING",
        "NEW_SYN_RECV",
    ];
    let mut counts = BTreeMap::new();
    for line in table.lines().skip(1) {
        let Some(st) = line.split_whitespace().nth(3) else {
            continue;
        };
        if let Ok(code) = u8::from_str_radix(st, 16) {
            if let Some(name) = (code as usize).checked_sub(1).and_then(|i| NAMES.get(i)) {
                *counts.entry(*name).or_default() += 1;
            }
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_proc_net_tcp_states() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
   1: 0100007F:9C40 0100007F:1F90 06 00000000:00000000 03:00000F9B 00000000     0        0 0 3 0
   2: 0100007F:9C41 0100007F:1F90 06 00000000:00000000 03:00000F9B 00000000     0        0 0 3 0
   3: 0100007F:9C42 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 2 1 0 20 4 30 10 -1
";
        let c = count_states(table);
        assert_eq!(c.get("TIME_WAIT"), Some(&2));
        assert_eq!(c.get("LISTEN"), Some(&1));
        assert_eq!(c.get("ESTABLISHED"), Some(&1));
    }

    #[test]
    fn reads_this_machine() {
        assert!(cpus_online() >= 1);
        assert!(!cpus_allowed().is_empty());
        let n = nofile().unwrap();
        assert!(n.soft <= n.hard || n.hard.is_none());
    }
}
