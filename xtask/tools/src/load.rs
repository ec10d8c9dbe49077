//! What runs on this machine, from /proc: the load average (read here only), the CPU time of processes (one,
//! this process's finished children, what every other one uses now), and the TCP sockets per state.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// `/proc/loadavg`'s 1-, 5- and 15-minute averages.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadAverage {
    pub one: f64,
    pub five: f64,
    pub fifteen: f64,
}

impl std::fmt::Display for LoadAverage {
    /// As the kernel writes them: `0.20 1.41 1.46`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.2} {:.2} {:.2}", self.one, self.five, self.fifteen)
    }
}

/// The load average now, None where /proc cannot tell.
pub fn average() -> Option<LoadAverage> {
    parse_loadavg(&std::fs::read_to_string("/proc/loadavg").ok()?)
}

fn parse_loadavg(text: &str) -> Option<LoadAverage> {
    let mut it = text.split_whitespace().map(str::parse::<f64>);
    Some(LoadAverage {
        one: it.next()?.ok()?,
        five: it.next()?.ok()?,
        fifteen: it.next()?.ok()?,
    })
}

/// A process's CPU time so far (user + system, all its threads), in seconds.
pub fn process_cpu_s(pid: u32) -> Option<f64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (user, sys) = bench_proto::proc_stat::PidStat::parse(&text)?.cpu_s();
    Some(user + sys)
}

/// A process's and its direct children's CPU time so far (user + system, all threads), in seconds, and
/// their peak resident sets summed (VmHWM), in KiB: a program that forks its workers (Apache httpd) counted
/// whole. None when the process is gone.
pub fn process_tree_use(pid: u32) -> Option<(f64, u64)> {
    let me = procfs::process::Process::new(i32::try_from(pid).ok()?).ok()?;
    let mut pids = vec![pid];
    for task in me.tasks().ok()?.flatten() {
        pids.extend(task.children().unwrap_or_default());
    }
    let (mut cpu, mut rss) = (0.0, 0);
    for p in pids {
        cpu += process_cpu_s(p).unwrap_or(0.0);
        rss += procfs::process::Process::new(i32::try_from(p).ok()?)
            .and_then(|p| p.status())
            .ok()
            .and_then(|s| s.vmhwm)
            .unwrap_or(0);
    }
    Some((cpu, rss))
}

/// CPU seconds (user + system) used by this process's finished children so far.
pub fn children_cpu_s() -> f64 {
    use nix::sys::resource::{getrusage, UsageWho};
    let s = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
    getrusage(UsageWho::RUSAGE_CHILDREN).map_or(0.0, |u| s(u.user_time()) + s(u.system_time()))
}

/// What processes other than this one and its children used of some CPUs over a window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Others {
    /// CPUs' worth of time they used, all together: the busy time of the CPUs (/proc/stat, which counts
    /// processes that came and went within the window too, and the time a hypervisor stole), less this
    /// process's and its children's.
    pub used: f64,
    /// Of `used`, the CPUs' worth of time the hypervisor stole (ran other guests while ours wanted to run).
    pub steal: f64,
    /// `(pid, name, share of one CPU)` of each that used any, busiest first.
    pub processes: Vec<(i32, String, f64)>,
}

/// What processes other than this one and its children (wsbench's own: xtask, the servers it started)
/// used of `cpus` (empty: all) over `window`, measured now — not an average over the past minute.
pub fn others(cpus: &[usize], window: Duration) -> Others {
    use procfs::CurrentSI as _;
    let own = std::process::id() as i32;
    let ticks = procfs::ticks_per_second() as f64;
    let on_ours =
        |cpu: i32| cpus.is_empty() || usize::try_from(cpu).is_ok_and(|c| cpus.contains(&c));
    let busy = || -> Option<(u64, u64)> {
        let stats = procfs::KernelStats::current().ok()?;
        let busy = |t: &procfs::CpuTime| {
            t.user
                + t.nice
                + t.system
                + t.irq.unwrap_or(0)
                + t.softirq.unwrap_or(0)
                + t.steal.unwrap_or(0)
        };
        let ours = stats
            .cpu_time
            .iter()
            .enumerate()
            .filter(|(i, _)| cpus.is_empty() || cpus.contains(i))
            .map(|(_, t)| t);
        Some(ours.fold((0, 0), |(b, s), t| (b + busy(t), s + t.steal.unwrap_or(0))))
    };
    // pid → (name, CPU ticks so far, CPU it last ran on, one of ours).
    let sample = || -> HashMap<i32, (String, u64, i32, bool)> {
        let Ok(all) = procfs::process::all_processes() else {
            return HashMap::new();
        };
        all.filter_map(Result::ok)
            .filter_map(|p| p.stat().ok())
            .map(|s| {
                let ours = s.pid == own || s.ppid == own;
                let cpu = s.processor.unwrap_or(-1);
                (s.pid, (s.comm.clone(), s.utime + s.stime, cpu, ours))
            })
            .collect()
    };
    let (busy0, before) = (busy(), sample());
    std::thread::sleep(window);
    let (busy1, after) = (busy(), sample());
    let secs = window.as_secs_f64();
    let mut own_ticks = 0;
    let mut processes = vec![];
    for (pid, (name, t1, cpu, ours)) in after {
        let Some((_, t0, _, _)) = before.get(&pid) else {
            continue;
        };
        let used = t1.saturating_sub(*t0);
        if ours {
            own_ticks += used;
        } else if used > 0 && on_ours(cpu) {
            processes.push((pid, name, used as f64 / ticks / secs));
        }
    }
    processes.sort_by(|a, b| b.2.total_cmp(&a.2));
    let (used, steal) = match (busy0, busy1) {
        (Some((b0, s0)), Some((b1, s1))) => (
            b1.saturating_sub(b0).saturating_sub(own_ticks) as f64 / ticks / secs,
            s1.saturating_sub(s0) as f64 / ticks / secs,
        ),
        // Without /proc/stat: the processes seen at both ends.
        _ => (processes.iter().map(|p| p.2).sum(), 0.0),
    };
    Others {
        used,
        steal,
        processes,
    }
}

/// Whether /proc/net/tcp can be read here (TIME_WAIT counts), or why not.
pub fn tcp_readable() -> Result<(), String> {
    std::fs::read_to_string("/proc/net/tcp")
        .map(|_| ())
        .map_err(|e| e.to_string())
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

pub fn time_wait() -> u64 {
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

    /// Burns CPU in a process of its own, detached from this one (not its child), until killed.
    fn spinner() -> i32 {
        let out = std::process::Command::new("sh")
            .args([
                "-c",
                "sh -c 'while :; do :; done' >/dev/null 2>&1 & echo $!",
            ])
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    /// Issue 27, item 2: a process that competes for the CPUs right now is seen, with its share.
    #[test]
    fn a_competing_process_is_seen_with_its_share() {
        let pid = spinner();
        // Let it get going before the window opens.
        let seen = others(&[], Duration::from_millis(800));
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        )
        .unwrap();
        // Alone it takes a whole CPU; on a machine shared with builds, at least its fair part of one.
        let share = seen.processes.iter().find(|p| p.0 == pid).map(|p| p.2);
        assert!(share.is_some_and(|s| s > 0.05), "{seen:?}");
        assert!(seen.used >= share.unwrap() * 0.8, "{seen:?}");
    }

    /// Issue 27, item 2: a CPU burst that ended (a build just before the run) counts for nothing, though it
    /// raises the load average; and this process's own work is never counted as another's.
    #[test]
    fn a_burst_that_ended_and_own_work_are_not_counted() {
        let status = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
            .status()
            .unwrap();
        assert!(status.success());
        let burn = std::thread::spawn(|| {
            let t = std::time::Instant::now();
            let mut x = 0u64;
            while t.elapsed() < Duration::from_millis(600) {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
            }
            x
        });
        let seen = others(&[], Duration::from_millis(500));
        burn.join().unwrap();
        let own = std::process::id() as i32;
        assert!(seen.processes.iter().all(|p| p.0 != own), "{seen:?}");
    }

    #[test]
    fn load_averages_read_as_the_kernel_writes_them() {
        let l = parse_loadavg("0.20 1.41 1.46 3/412 9000\n").unwrap();
        assert_eq!((l.one, l.fifteen), (0.2, 1.46));
        assert_eq!(l.to_string(), "0.20 1.41 1.46");
        assert!(parse_loadavg("").is_none());
        assert!(average().is_some());
    }
}
