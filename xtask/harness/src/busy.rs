//! Is the machine busy as a run starts? The load average against the CPUs, and other processes using CPU
//! time (read from /proc with `procfs`), so a summary says when its figures were measured beside other work.

use std::time::Duration;

use wsbench_tools::load;

/// How long processes are watched for CPU use.
const WINDOW: Duration = Duration::from_millis(500);
/// A process using more than this share of one CPU over the window counts as competing.
const BUSY_SHARE: f64 = 0.10;

/// Signs of a busy machine, in words; empty when it looks idle. `cpus`: the CPUs the run will use
/// (empty: all). This process and its children are left out.
pub fn check(cpus: &[usize]) -> Vec<String> {
    let mut out = vec![];
    let online = std::thread::available_parallelism().map_or(1, |n| n.get());
    if let Some(load) = load::average() {
        if load.one > 0.5 * online as f64 {
            out.push(format!(
                "load average {:.2} (1 min) on {online} CPUs when the run started",
                load.one
            ));
        }
    }
    let competing = load::competing(cpus, WINDOW, BUSY_SHARE);
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
