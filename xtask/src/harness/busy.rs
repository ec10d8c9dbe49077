//! Is the machine busy as a run starts? The load average against the CPUs, and other processes using CPU
//! time (read from /proc with `procfs`), so a summary says when its figures were measured beside other work.

use std::collections::HashMap;
use std::time::Duration;

use procfs::Current as _;

/// How long processes are watched for CPU use.
const WINDOW: Duration = Duration::from_millis(500);
/// A process using more than this share of one CPU over the window counts as competing.
const BUSY_SHARE: f64 = 0.10;

/// Signs of a busy machine, in words; empty when it looks idle. `cpus`: the CPUs the run will use
/// (empty: all). This process and its children are left out.
pub(crate) fn check(cpus: &[usize]) -> Vec<String> {
    let mut out = vec![];
    let online = std::thread::available_parallelism().map_or(1, |n| n.get());
    if let Ok(load) = procfs::LoadAverage::current() {
        if f64::from(load.one) > 0.5 * online as f64 {
            out.push(format!(
                "load average {:.2} (1 min) on {online} CPUs when the run started",
                load.one
            ));
        }
    }
    let competing = competing(cpus);
    if !competing.is_empty() {
        let on = if cpus.is_empty() {
            "this machine".to_owned()
        } else {
            format!("the run's CPUs {}", super::pinning::format_cpu_list(cpus))
        };
        out.push(format!(
            "{} other process(es) used CPU on {on} just before the run: {}",
            competing.len(),
            competing
                .iter()
                .take(8)
                .map(|(name, share)| format!("{name} {:.0} %", share * 100.0))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out
}

/// `(name, share of one CPU)` of other processes that ran on `cpus` (or anywhere) during [`WINDOW`].
fn competing(cpus: &[usize]) -> Vec<(String, f64)> {
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
    std::thread::sleep(WINDOW);
    let after = sample();
    let mut out: Vec<(String, f64)> = after
        .into_iter()
        .filter_map(|(pid, (name, t1, cpu))| {
            let (_, t0, _) = before.get(&pid)?;
            let share = t1.saturating_sub(*t0) as f64 / ticks / WINDOW.as_secs_f64();
            let on_ours = cpus.is_empty() || usize::try_from(cpu).is_ok_and(|c| cpus.contains(&c));
            (share > BUSY_SHARE && on_ours).then_some((name, share))
        })
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out
}
