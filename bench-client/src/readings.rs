//! What /proc says of the machine and of one process, as cumulative counters (a [`Reading`]): the one place
//! bench-client reads them. The monitor (`--monitor-pid`) reads this machine's; the agent (`bench-client
//! agent`) reads its host's, possibly through a /proc mounted elsewhere (`--proc /host/proc` in a
//! container), and sends them to the run. Rates and shares are differences of two readings
//! ([`Reading::since`]), so neither end keeps state between samples.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use bench_proto::proc_stat::{PidStat, TICKS_PER_S};

/// Cumulative counters at one instant.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    /// When it was taken, on the reader's CLOCK_MONOTONIC, µs.
    pub at_us: u64,
    pub host: HostCounters,
    /// The watched process; `None` when it could not be read (it exited, or none is watched).
    pub process: Option<ProcessCounters>,
    /// The watched process's network namespace (the host's without one).
    pub net: Option<NetCounters>,
    /// The reader's own CPU time so far (user + system), s: what sampling costs.
    pub reader_cpu_s: f64,
}

/// /proc/stat: the aggregate `cpu` line (clock ticks), context switches and softirqs since boot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostCounters {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    /// Time a hypervisor ran something else while this machine's virtual CPUs wanted to run.
    pub steal: u64,
    pub ctxt: u64,
    pub softirqs: u64,
}

/// /proc/PID/stat, status and fd.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessCounters {
    pub pid: u32,
    /// User and system CPU, clock ticks, all threads.
    pub utime: u64,
    pub stime: u64,
    pub rss_kb: u64,
    pub fds: Option<u64>,
    pub threads: u64,
}

/// /proc/PID/net/dev (every interface, loopback included) and /proc/PID/net/snmp.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetCounters {
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    /// TCP segments retransmitted (`Tcp: RetransSegs`).
    pub retrans_segs: u64,
}

/// What happened between two readings.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Delta {
    pub secs: f64,
    /// Shares of all CPUs' time, %: user (+ nice), sys (+ irq + softirq), idle (+ iowait), steal; `None`
    /// when no clock tick passed (nothing to divide: not an idle machine).
    pub cpu: Option<CpuShares>,
    pub ctxt_per_s: Option<f64>,
    pub softirqs_per_s: Option<f64>,
    /// The process's CPU seconds, user and system.
    pub process_cpu_s: Option<(f64, f64)>,
    pub net: Option<NetRates>,
    pub reader_cpu_s: f64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuShares {
    pub user_pct: f64,
    pub sys_pct: f64,
    pub idle_pct: f64,
    pub steal_pct: f64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NetRates {
    pub rx_bytes_per_s: f64,
    pub tx_bytes_per_s: f64,
    pub retrans_per_s: f64,
}

impl HostCounters {
    fn total(&self) -> u64 {
        // guest and guest_nice are already included in user and nice.
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }

    /// CPU shares between `earlier` and `self`.
    pub(crate) fn shares_since(&self, earlier: &HostCounters) -> Option<CpuShares> {
        let total = self.total().saturating_sub(earlier.total());
        if total == 0 {
            return None;
        }
        let pct = |a: u64, b: u64| 100.0 * a.saturating_sub(b) as f64 / total as f64;
        let (e, n) = (earlier, self);
        Some(CpuShares {
            user_pct: pct(n.user + n.nice, e.user + e.nice),
            sys_pct: pct(n.system + n.irq + n.softirq, e.system + e.irq + e.softirq),
            idle_pct: pct(n.idle + n.iowait, e.idle + e.iowait),
            steal_pct: pct(n.steal, e.steal),
        })
    }
}

impl Reading {
    /// What happened from `earlier` to `self` (the same reader, the same process for its figures).
    pub fn since(&self, earlier: &Reading) -> Delta {
        let secs = self.at_us.saturating_sub(earlier.at_us) as f64 / 1e6;
        let per_s = |a: u64, b: u64| (secs > 0.0).then(|| a.saturating_sub(b) as f64 / secs);
        let process_cpu_s = match (&self.process, &earlier.process) {
            (Some(p), Some(q)) if p.pid == q.pid => Some((
                p.utime.saturating_sub(q.utime) as f64 / TICKS_PER_S,
                p.stime.saturating_sub(q.stime) as f64 / TICKS_PER_S,
            )),
            _ => None,
        };
        let net = self.net.zip(earlier.net).and_then(|(n, e)| {
            Some(NetRates {
                rx_bytes_per_s: per_s(n.rx_bytes, e.rx_bytes)?,
                tx_bytes_per_s: per_s(n.tx_bytes, e.tx_bytes)?,
                retrans_per_s: per_s(n.retrans_segs, e.retrans_segs)?,
            })
        });
        Delta {
            secs,
            cpu: self.host.shares_since(&earlier.host),
            ctxt_per_s: per_s(self.host.ctxt, earlier.host.ctxt),
            softirqs_per_s: per_s(self.host.softirqs, earlier.host.softirqs),
            process_cpu_s,
            net,
            reader_cpu_s: (self.reader_cpu_s - earlier.reader_cpu_s).max(0.0),
        }
    }
}

/// A reader of one /proc (`/proc`, or the host's mounted elsewhere) for one process, if any.
#[derive(Debug, Clone)]
pub struct Proc {
    root: PathBuf,
}

impl Default for Proc {
    fn default() -> Proc {
        Proc::at("/proc")
    }
}

impl Proc {
    pub fn at(root: impl Into<PathBuf>) -> Proc {
        Proc { root: root.into() }
    }

    fn read(&self, rel: impl AsRef<Path>) -> Option<String> {
        std::fs::read_to_string(self.root.join(rel)).ok()
    }

    /// Everything at once; `pid`'s figures are `None` when it cannot be read. `reader_cpu_s` is the
    /// caller's (it knows what it counts as its own).
    pub fn reading(&self, pid: Option<u32>, reader_cpu_s: f64) -> Reading {
        let process = pid.and_then(|pid| self.process(pid));
        let net_of = pid.map_or_else(|| "self".to_owned(), |p| p.to_string());
        Reading {
            at_us: monotonic_us(),
            host: self
                .read("stat")
                .and_then(|t| parse_stat(&t))
                .unwrap_or_default(),
            process,
            net: self.net(&net_of),
            reader_cpu_s,
        }
    }

    pub fn host(&self) -> Option<HostCounters> {
        parse_stat(&self.read("stat")?)
    }

    pub fn process(&self, pid: u32) -> Option<ProcessCounters> {
        let PidStat {
            utime,
            stime,
            threads,
        } = PidStat::parse(&self.read(format!("{pid}/stat"))?)?;
        let rss_kb = parse_vm_rss_kb(&self.read(format!("{pid}/status"))?)?;
        Some(ProcessCounters {
            pid,
            utime,
            stime,
            rss_kb,
            fds: self.open_fds(pid),
            threads,
        })
    }

    /// A process's resident memory, kB; `None` when it cannot be read (it exited).
    pub fn rss_kb(&self, pid: u32) -> Option<u64> {
        parse_vm_rss_kb(&self.read(format!("{pid}/status"))?)
    }

    /// A process's open file descriptors (the entries of /proc/PID/fd); `None` when they cannot be listed
    /// (it exited, or belongs to another user).
    pub(crate) fn open_fds(&self, pid: u32) -> Option<u64> {
        let dir = std::fs::read_dir(self.root.join(format!("{pid}/fd"))).ok()?;
        Some(dir.filter(Result::is_ok).count() as u64)
    }

    /// A process's user and system CPU seconds so far.
    pub fn cpu_s(&self, pid: u32) -> Option<(f64, f64)> {
        Some(PidStat::parse(&self.read(format!("{pid}/stat"))?)?.cpu_s())
    }

    /// The network namespace of `of` (a pid, or `self`).
    fn net(&self, of: &str) -> Option<NetCounters> {
        let (rx_bytes, tx_bytes) = parse_net_dev(&self.read(format!("{of}/net/dev"))?)?;
        let retrans_segs = self
            .read(format!("{of}/net/snmp"))
            .and_then(|t| parse_retrans(&t))
            .unwrap_or(0);
        Some(NetCounters {
            rx_bytes,
            tx_bytes,
            retrans_segs,
        })
    }

    /// The process holding a listening TCP socket on `port` in this reader's network namespace (the
    /// lowest pid, when several share it).
    pub fn listener(&self, port: u16) -> Option<u32> {
        let inodes: Vec<u64> = ["net/tcp", "net/tcp6"]
            .iter()
            .filter_map(|f| self.read(f))
            .flat_map(|t| listening_inodes(&t, port))
            .collect();
        if inodes.is_empty() {
            return None;
        }
        let mut pids: Vec<u32> = std::fs::read_dir(&self.root)
            .ok()?
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect();
        pids.sort_unstable();
        pids.into_iter().find(|pid| {
            let Ok(fds) = std::fs::read_dir(self.root.join(format!("{pid}/fd"))) else {
                return false;
            };
            fds.filter_map(Result::ok).any(|fd| {
                std::fs::read_link(fd.path()).is_ok_and(|l| {
                    let l = l.to_string_lossy();
                    l.strip_prefix("socket:[")
                        .and_then(|r| r.strip_suffix(']'))
                        .and_then(|n| n.parse::<u64>().ok())
                        .is_some_and(|n| inodes.contains(&n))
                })
            })
        })
    }

    /// A kernel setting under `sys/` (`kernel/hostname`), trimmed.
    pub fn sys(&self, rel: &str) -> Option<String> {
        Some(self.read(format!("sys/{rel}"))?.trim().to_owned())
    }

    /// The CPUs the kernel counts in /proc/stat (`cpuN` lines): the host's, whatever this process may use.
    pub fn cpus(&self) -> Option<u32> {
        let text = self.read("stat")?;
        let n = text
            .lines()
            .filter(|l| {
                l.strip_prefix("cpu")
                    .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
            })
            .count();
        u32::try_from(n).ok().filter(|n| *n > 0)
    }

    /// A process's command name (`comm`).
    pub fn comm(&self, pid: u32) -> Option<String> {
        Some(self.read(format!("{pid}/comm"))?.trim().to_owned())
    }
}

/// The server's memory and open fds as each interval closes: read now from this machine's /proc, or the
/// latest an agent sent (at most a second old).
#[derive(Debug, Clone)]
pub enum Gauge {
    Local { proc: Proc, pid: u32 },
    Remote(Arc<Mutex<Option<ProcessCounters>>>),
}

impl Gauge {
    /// RSS (kB) and open fds; `None` each when not known (the process exited, nothing read yet).
    pub fn now(&self) -> (Option<u64>, Option<u64>) {
        match self {
            Gauge::Local { proc, pid } => (proc.rss_kb(*pid), proc.open_fds(*pid)),
            Gauge::Remote(latest) => {
                let p = *latest.lock().unwrap_or_else(PoisonError::into_inner);
                (p.map(|p| p.rss_kb), p.and_then(|p| p.fds))
            }
        }
    }

    /// For a remote gauge: the latest reading's process.
    pub fn set(&self, p: Option<ProcessCounters>) {
        if let Gauge::Remote(latest) = self {
            *latest.lock().unwrap_or_else(PoisonError::into_inner) = p;
        }
    }
}

/// This process's resident memory, kB.
pub(crate) fn own_rss_kb() -> Option<u64> {
    Proc::default().rss_kb(std::process::id())
}

/// CLOCK_MONOTONIC now, µs (the clock the timeline's `start_monotonic_us` is on).
pub(crate) fn monotonic_us() -> u64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).map_or(0, |t| {
        t.tv_sec() as u64 * 1_000_000 + t.tv_nsec() as u64 / 1_000
    })
}

/// /proc/stat: the `cpu ` line, `ctxt` and `softirq`.
pub(crate) fn parse_stat(text: &str) -> Option<HostCounters> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    if v.len() < 4 {
        return None;
    }
    let f = |i: usize| v.get(i).copied().unwrap_or(0);
    let first = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|r| r.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    Some(HostCounters {
        user: f(0),
        nice: f(1),
        system: f(2),
        idle: f(3),
        iowait: f(4),
        irq: f(5),
        softirq: f(6),
        steal: f(7),
        ctxt: first("ctxt "),
        softirqs: first("softirq "),
    })
}

/// `VmRSS:    10240 kB` from /proc/PID/status.
pub(crate) fn parse_vm_rss_kb(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Received and sent bytes over every interface of a /proc/PID/net/dev table.
fn parse_net_dev(text: &str) -> Option<(u64, u64)> {
    let mut sum = None;
    for line in text.lines().skip(2) {
        let Some((_, counters)) = line.split_once(':') else {
            continue;
        };
        let v: Vec<u64> = counters
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        if v.len() >= 9 {
            let (rx, tx) = sum.unwrap_or((0, 0));
            sum = Some((rx + v[0], tx + v[8]));
        }
    }
    sum
}

/// `Tcp: … RetransSegs …` of /proc/PID/net/snmp (a header line of names, then one of values).
fn parse_retrans(text: &str) -> Option<u64> {
    let mut tcp = text.lines().filter(|l| l.starts_with("Tcp:"));
    let (names, values) = (tcp.next()?, tcp.next()?);
    let at = names.split_whitespace().position(|n| n == "RetransSegs")?;
    values.split_whitespace().nth(at)?.parse().ok()
}

/// The inodes of the sockets listening (state 0A) on `port` in a /proc/net/tcp table.
fn listening_inodes(table: &str, port: u16) -> Vec<u64> {
    table
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let local_port = f.get(1)?.rsplit_once(':')?.1;
            let listening = *f.get(3)? == "0A";
            (listening && u16::from_str_radix(local_port, 16).ok()? == port)
                .then(|| f.get(9)?.parse().ok())
                .flatten()
        })
        .collect()
}

#[cfg(test)]
mod tests;
