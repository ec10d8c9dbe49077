//! What each tier of an OSS/J portal used over a step, however a backend reads its processes: by their
//! process trees on this machine (`wsbench_tools::load::process_tree_use`), or by their containers' control
//! groups (`wsbench_tools::cgroup`). Read at the step's start and end.

use std::time::Instant;

use crate::portal::Tier;
use crate::rundoc::TierUse;

/// How one process (or the container it is the first process of) is read: CPU seconds so far and its peak
/// memory in KiB; None when it is gone.
pub type Reading = fn(u32) -> Option<(f64, u64)>;

/// Each tier's processes' CPU time at a step's start, to be read again at its end.
#[derive(Debug)]
pub struct Meter {
    pids: Vec<(Tier, u32)>,
    cpu: Vec<f64>,
    started: Instant,
    read: Reading,
}

impl Meter {
    /// Reads the CPU time of every process in `pids` now, by `read`.
    pub fn start(pids: Vec<(Tier, u32)>, read: Reading) -> Meter {
        let cpu = pids
            .iter()
            .map(|&(_, pid)| read(pid).map_or(0.0, |(c, _)| c))
            .collect();
        Meter {
            pids,
            cpu,
            started: Instant::now(),
            read,
        }
    }

    /// What each tier used since [`Meter::start`]: a process gone since (killed by a fault) counts nothing.
    pub fn read(self) -> Vec<TierUse> {
        let wall_s = self.started.elapsed().as_secs_f64();
        let mut out: Vec<TierUse> = Vec::new();
        for (&(tier, pid), before) in self.pids.iter().zip(self.cpu) {
            let (cpu, rss) = (self.read)(pid).unwrap_or((before, 0));
            let at = match out.iter().position(|t| t.tier == tier) {
                Some(i) => i,
                None => {
                    out.push(TierUse {
                        tier,
                        processes: 0,
                        cpu_s: 0.0,
                        wall_s,
                        peak_rss_kb: 0,
                    });
                    out.len() - 1
                }
            };
            let t = &mut out[at];
            t.processes += 1;
            t.cpu_s += (cpu - before).max(0.0);
            t.peak_rss_kb += rss;
        }
        out.sort_by_key(|t| t.tier);
        out
    }
}

/// A container's figures from its control group: the whole container, every process it ran.
pub fn container(host_pid: u32) -> Option<(f64, u64)> {
    wsbench_tools::cgroup::of_process(host_pid).map(|g| (g.cpu_s, g.memory_peak_kb))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(pid: u32) -> Option<(f64, u64)> {
        (pid != 3).then_some((f64::from(pid) * 2.0, 100))
    }

    #[test]
    fn tiers_sum_their_processes_and_a_gone_one_counts_nothing() {
        let m = Meter::start(vec![(Tier::App, 1), (Tier::Front, 2), (Tier::App, 3)], fake);
        let tiers = m.read();
        assert_eq!(tiers.len(), 2);
        assert_eq!(tiers[0].tier, Tier::Front);
        assert_eq!((tiers[1].processes, tiers[1].peak_rss_kb), (2, 100));
        assert_eq!(tiers[1].cpu_s, 0.0);
    }
}
