//! A process's control group as the kernel accounts it, from /proc and /sys/fs/cgroup: the CPU time and the
//! memory peak of everything in the group. For a container that is the whole container (every process it
//! ran, those gone included), which a walk of its process tree cannot see. cgroup v1 (`cpuacct`, `memory`
//! controllers) and v2 (the unified hierarchy) alike.

use std::path::{Path, PathBuf};

/// What a control group has used so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroupUse {
    /// CPU time, user + system, in seconds.
    pub cpu_s: f64,
    /// The most memory the group has held at once, in KiB (v1's `max_usage_in_bytes` and v2's `memory.peak`
    /// count the page cache the group caused too; v2 without `memory.peak` gives the current figure).
    pub memory_peak_kb: u64,
}

/// The use of the control group `pid` is in; None when the process is gone or its group cannot be read.
pub fn of_process(pid: u32) -> Option<GroupUse> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    of_groups(Path::new("/sys/fs/cgroup"), &text)
}

/// The use of the groups that `/proc/PID/cgroup`'s `text` names, under the hierarchy mounted at `root`.
fn of_groups(root: &Path, text: &str) -> Option<GroupUse> {
    let v1 = |controller: &str| v1_dir(root, text, controller);
    if let (Some(cpu), Some(mem)) = (v1("cpuacct"), v1("memory")) {
        let ns: f64 = read_number(&cpu.join("cpuacct.usage"))?;
        let peak: u64 = read_number(&mem.join("memory.max_usage_in_bytes"))?;
        return Some(GroupUse {
            cpu_s: ns / 1e9,
            memory_peak_kb: peak / 1024,
        });
    }
    let path = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = root.join(path.trim_start_matches('/'));
    let stat = std::fs::read_to_string(dir.join("cpu.stat")).ok()?;
    let usec: f64 = stat
        .lines()
        .find_map(|l| l.strip_prefix("usage_usec "))?
        .trim()
        .parse()
        .ok()?;
    let peak: u64 = read_number(&dir.join("memory.peak"))
        .or_else(|| read_number(&dir.join("memory.current")))?;
    Some(GroupUse {
        cpu_s: usec / 1e6,
        memory_peak_kb: peak / 1024,
    })
}

/// The v1 directory of `controller` for the group a `/proc/PID/cgroup` text names (`4:cpu,cpuacct:/docker/…`
/// is under `root/cpu,cpuacct/docker/…`).
fn v1_dir(root: &Path, text: &str, controller: &str) -> Option<PathBuf> {
    text.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers
            .split(',')
            .any(|c| c == controller)
            .then(|| root.join(controllers).join(path.trim_start_matches('/')))
    })
}

fn read_number<T: std::str::FromStr>(path: &Path) -> Option<T> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let root =
            std::env::temp_dir().join(format!("wsbench-cgroup-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (path, text) in files {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        root
    }

    #[test]
    fn v1_reads_cpuacct_and_the_memory_peak() {
        let root = tree(
            "v1",
            &[
                ("cpu,cpuacct/docker/abc/cpuacct.usage", "2500000000\n"),
                ("memory/docker/abc/memory.max_usage_in_bytes", "10485760\n"),
            ],
        );
        let text = "9:name=systemd:/docker/abc\n4:memory:/docker/abc\n2:cpu,cpuacct:/docker/abc\n0::/docker/abc\n";
        let got = of_groups(&root, text).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(
            got,
            GroupUse {
                cpu_s: 2.5,
                memory_peak_kb: 10240
            }
        );
    }

    #[test]
    fn v2_reads_cpu_stat_and_falls_back_to_the_current_memory() {
        let root = tree(
            "v2",
            &[
                (
                    "system.slice/x.scope/cpu.stat",
                    "usage_usec 1500000\nuser_usec 1\n",
                ),
                ("system.slice/x.scope/memory.current", "2048\n"),
            ],
        );
        let got = of_groups(&root, "0::/system.slice/x.scope\n").unwrap();
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(
            got,
            GroupUse {
                cpu_s: 1.5,
                memory_peak_kb: 2
            }
        );
    }

    #[test]
    fn a_process_that_is_gone_has_no_group() {
        assert_eq!(of_process(u32::MAX), None);
    }
}
