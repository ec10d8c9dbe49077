//! What runs on this machine, from /proc: the load average (read here only), the CPU time of processes (one,
//! this process's finished children, every other one), and the TCP sockets per state.

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
    let stat = procfs::process::Process::new(i32::try_from(pid).ok()?)
        .ok()?
        .stat()
        .ok()?;
    Some((stat.utime + stat.stime) as f64 / procfs::ticks_per_second() as f64)
}

/// CPU seconds (user + system) used by this process's finished children so far.
pub fn children_cpu_s() -> f64 {
    use nix::sys::resource::{getrusage, UsageWho};
    let s = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
    getrusage(UsageWho::RUSAGE_CHILDREN).map_or(0.0, |u| s(u.user_time()) + s(u.system_time()))
}

/// `(name, share of one CPU)` of the processes other than this one and its children that used more than
/// `threshold` of a CPU over `window`, on one of `cpus` (empty: anywhere); busiest first.
pub fn competing(cpus: &[usize], window: Duration, threshold: f64) -> Vec<(String, f64)> {
    let own = std::process::id() as i32;
    let ticks = procfs::ticks_per_second() as f64;
    let sample = || -> HashMap<i32, (String, u64, i32)> {
        let Ok(all) = procfs::process::all_processes() else {
            return HashMap::new();
        };
        all.filter_map(Result::ok)
            .filter_map(|p| p.stat().ok())
            .filter(|s| s.pid != own && s.ppid != own)
            .map(|s| {
                (
                    s.pid,
                    (s.comm.clone(), s.utime + s.stime, s.processor.unwrap_or(-1)),
                )
            })
            .collect()
    };
    let before = sample();
    std::thread::sleep(window);
    let after = sample();
    let mut out: Vec<(String, f64)> = after
        .into_iter()
        .filter_map(|(pid, (name, t1, cpu))| {
            let (_, t0, _) = before.get(&pid)?;
            let share = t1.saturating_sub(*t0) as f64 / ticks / window.as_secs_f64();
            let on_ours = cpus.is_empty() || usize::try_from(cpu).is_ok_and(|c| cpus.contains(&c));
            (share > threshold && on_ours).then_some((name, share))
        })
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out
}

/// Whether /proc/net/tcp can be read here (TIME_WAIT counts), or why not.
pub fn tcp_readable() -> Result<(), String> {
    std::fs::read_to_string("/proc/net/tcp")
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Sockets per TCP state name across /proc/net/tcp and tcp6 (the kernel's view of every socket on the host).
pub fn tcp_states() -> BTreeMap<&'static str, u64> {
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

    #[test]
    fn load_averages_read_as_the_kernel_writes_them() {
        let l = parse_loadavg("0.20 1.41 1.46 3/412 9000\n").unwrap();
        assert_eq!((l.one, l.fifteen), (0.2, 1.46));
        assert_eq!(l.to_string(), "0.20 1.41 1.46");
        assert!(parse_loadavg("").is_none());
        assert!(average().is_some());
    }
}
