//! `--monitor-pid`: system CPU user/sys/idle from /proc/stat and a process's RSS from /proc/PID/status,
//! sampled about once a second by a task of its own (never on the load path), and once more when it stops,
//! so the samples cover the whole measured interval however short it was; a process's CPU time
//! (/proc/PID/stat), its RSS and open file descriptors at each interval's end, and the client's own RSS,
//! read where they are wanted.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bench_proto::results::SystemSample;
use tokio::sync::oneshot;
use tokio::time::{Instant, MissedTickBehavior};

/// Jiffies of the aggregate `cpu` line of /proc/stat.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuJiffies {
    pub user: u64,
    pub sys: u64,
    pub idle: u64,
    pub total: u64,
}

/// Parses the first (`cpu `) line of /proc/stat: user nice system idle iowait irq softirq steal …
/// user+nice count as user, system+irq+softirq as sys, idle+iowait as idle; steal only in the total.
pub fn parse_proc_stat(text: &str) -> Option<CpuJiffies> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    let f = |i: usize| v.get(i).copied().unwrap_or(0);
    if v.len() < 4 {
        return None;
    }
    Some(CpuJiffies {
        user: f(0) + f(1),
        sys: f(2) + f(5) + f(6),
        idle: f(3) + f(4),
        // guest and guest_nice (8, 9) are already included in user and nice.
        total: (0..8).map(f).sum(),
    })
}

/// `VmRSS:    10240 kB` from /proc/PID/status.
pub fn parse_vm_rss_kb(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Percentages of CPU time between two readings; `None` when no clock tick passed between them (nothing
/// to divide: not an idle machine).
pub fn percentages(a: CpuJiffies, b: CpuJiffies) -> Option<(f64, f64, f64)> {
    let total = b.total.saturating_sub(a.total);
    if total == 0 {
        return None;
    }
    let pct = |x: u64, y: u64| 100.0 * y.saturating_sub(x) as f64 / total as f64;
    Some((pct(a.user, b.user), pct(a.sys, b.sys), pct(a.idle, b.idle)))
}

/// `utime` and `stime` of /proc/PID/stat, in clock ticks (fields 14 and 15, counted after the `(comm)`
/// field, which may hold spaces and parentheses).
pub fn parse_stat_cpu_ticks(text: &str) -> Option<(u64, u64)> {
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    Some((fields.next()?.parse().ok()?, fields.next()?.parse().ok()?))
}

/// /proc's clock tick (USER_HZ), which Linux fixes at 100 for user space on every architecture wsbench
/// builds for.
const TICKS_PER_S: f64 = 100.0;

/// A process's user and system CPU seconds so far; `None` when it cannot be read (it exited).
pub fn process_cpu_s(pid: u32) -> Option<(f64, f64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (user, sys) = parse_stat_cpu_ticks(&text)?;
    Some((user as f64 / TICKS_PER_S, sys as f64 / TICKS_PER_S))
}

/// This process's resident memory, kB.
pub fn own_rss_kb() -> Option<u64> {
    parse_vm_rss_kb(&std::fs::read_to_string("/proc/self/status").ok()?)
}

fn read_cpu() -> Option<CpuJiffies> {
    parse_proc_stat(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// A process's resident memory, kB; `None` when it cannot be read (it exited).
pub fn read_rss(pid: u32) -> Option<u64> {
    parse_vm_rss_kb(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?)
}

/// A process's open file descriptors (the entries of /proc/PID/fd); `None` when they cannot be listed
/// (it exited, or belongs to another user).
pub fn open_fds(pid: u32) -> Option<u64> {
    let dir = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    Some(dir.filter(Result::is_ok).count() as u64)
}

/// A running sampler; [`Monitor::finish`] stops it and returns the samples.
#[derive(Debug)]
pub struct Monitor {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
    samples: Arc<Mutex<Vec<SystemSample>>>,
}

impl Monitor {
    /// Starts sampling on the current runtime; `t_s` of each sample counts from `measure_start`.
    pub fn start(pid: u32, measure_start: Instant) -> Monitor {
        let (stop, mut stopped) = oneshot::channel();
        let samples = Arc::new(Mutex::new(Vec::new()));
        let out = samples.clone();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval_at(measure_start, Duration::from_secs(1));
            tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
            let mut last = None;
            loop {
                let (now, stopping) = tokio::select! {
                    _ = &mut stopped => (Instant::now(), true),
                    now = tick.tick() => (now, false),
                };
                let cpu = read_cpu();
                if let Some(split) = last.zip(cpu).and_then(|(a, b)| percentages(a, b)) {
                    let (user_pct, sys_pct, idle_pct) = split;
                    let sample = SystemSample {
                        t_s: now.saturating_duration_since(measure_start).as_secs_f64(),
                        user_pct,
                        sys_pct,
                        idle_pct,
                        server_rss_kb: read_rss(pid),
                    };
                    out.lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(sample);
                    last = cpu;
                } else if last.is_none() {
                    last = cpu;
                }
                if stopping {
                    break;
                }
            }
        });
        Monitor {
            stop,
            task,
            samples,
        }
    }

    /// The samples so far (for a checkpoint).
    pub fn snapshot(&self) -> Vec<SystemSample> {
        self.samples
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub async fn finish(self) -> Vec<SystemSample> {
        let _ = self.stop.send(());
        let _ = self.task.await;
        std::mem::take(&mut *self.samples.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat() {
        let text = "cpu  100 10 50 800 40 5 5 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\nintr 1\n";
        let j = parse_proc_stat(text).unwrap();
        assert_eq!(
            j,
            CpuJiffies {
                user: 110,
                sys: 60,
                idle: 840,
                total: 1010
            }
        );
        assert!(parse_proc_stat("intr 1 2 3\n").is_none());
        let later = CpuJiffies {
            user: 140,
            sys: 80,
            idle: 890,
            total: 1110,
        };
        assert_eq!(percentages(j, later), Some((30.0, 20.0, 50.0)));
        assert_eq!(percentages(j, j), None, "no tick passed: nothing measured");
    }

    #[test]
    fn vm_rss() {
        let text = "Name:\tbench-server\nVmPeak:\t  20000 kB\nVmRSS:\t   10240 kB\nThreads:\t3\n";
        assert_eq!(parse_vm_rss_kb(text), Some(10240));
        assert_eq!(parse_vm_rss_kb("Name:\tzombie\n"), None);
    }

    #[test]
    fn stat_cpu_ticks_after_a_command_name_with_spaces_and_parentheses() {
        let text =
            "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 1000 0 0 0 731 95 0 0 20 0 3 0 100 0 0\n";
        assert_eq!(parse_stat_cpu_ticks(text), Some((731, 95)));
        assert_eq!(parse_stat_cpu_ticks("4242 (x) S 1"), None);
    }

    #[test]
    fn this_machine_and_this_process_can_be_read() {
        assert!(read_cpu().is_some_and(|c| c.total > 0));
        assert!(read_rss(std::process::id()).is_some_and(|kb| kb > 0));
        assert!(own_rss_kb().is_some_and(|kb| kb > 0));
        let before = open_fds(std::process::id()).unwrap();
        let file = std::fs::File::open("/proc/self/status").unwrap();
        assert!(open_fds(std::process::id()).is_some_and(|n| n > before));
        drop(file);
        assert_eq!(open_fds(u32::MAX), None, "no such process");
        assert!(process_cpu_s(std::process::id()).is_some());
    }
}
