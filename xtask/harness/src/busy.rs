//! Is the machine busy as the load starts? What OTHER processes use of the run's CPUs over a short window,
//! measured just before the first step (/proc, read by the tools crate): not the 1-minute load average,
//! which still counts wsbench's own build for a minute after it finished.

use std::time::Duration;

use wsbench_tools::load::{self, Others};

/// How long the CPUs are watched.
const WINDOW: Duration = Duration::from_millis(500);
/// Other processes using more than this share of the run's CPUs, all together, make the machine busy: one
/// process spinning on a CPU of two, a build beside the run; not a browser's background ticks.
const BUSY_SHARE: f64 = 0.25;
/// A process is named in the warning when it used more than this share of one CPU.
const NAMED_SHARE: f64 = 0.05;

/// Signs of a busy machine, in words; empty when it looks idle. `cpus`: the CPUs the run will use
/// (empty: all). This process and its children (the servers it started) are wsbench's own, left out.
pub fn check(cpus: &[usize]) -> Vec<String> {
    let capacity = if cpus.is_empty() {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        cpus.len()
    };
    let on = if cpus.is_empty() {
        "this machine".to_owned()
    } else {
        format!("the run's CPUs {}", super::pinning::format_cpu_list(cpus))
    };
    judge(&load::others(cpus, WINDOW), capacity, &on)
}

/// The verdict on what others used of `capacity` CPUs (`on` names them), in words: busy when together they
/// used more than a quarter of them (`BUSY_SHARE`).
pub fn judge(others: &Others, capacity: usize, on: &str) -> Vec<String> {
    if others.used <= BUSY_SHARE * capacity as f64 {
        return vec![];
    }
    let named: Vec<String> = others
        .processes
        .iter()
        .filter(|p| p.2 > NAMED_SHARE)
        .take(6)
        .map(|(pid, name, share)| format!("{name} (pid {pid}) {:.0} %", share * 100.0))
        .collect();
    let mut who = named;
    // Time the hypervisor gave other guests is the CPUs' too: counted, and named.
    if others.steal > 0.005 {
        who.push(format!(
            "the hypervisor's steal (other guests) {:.0} %",
            others.steal * 100.0
        ));
    }
    let who = if who.is_empty() {
        "short-lived processes".to_owned()
    } else {
        who.join(", ")
    };
    vec![format!(
        "other processes used {:.2} CPUs of {capacity} ({on}) just before the load started: {who}",
        others.used
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn others(used: f64, processes: &[(i32, &str, f64)]) -> Others {
        Others {
            used,
            steal: 0.0,
            processes: processes
                .iter()
                .map(|p| (p.0, p.1.to_owned(), p.2))
                .collect(),
        }
    }

    /// Issue 27, item 2: the verdict is on what others use now. After a build (its CPU burst over, the load
    /// average still 1.58), the CPUs are idle: no flag. A process spinning beside the run: flagged, by name.
    #[test]
    fn only_what_others_use_now_makes_the_machine_busy() {
        assert!(judge(&others(0.03, &[(7, "sshd", 0.01)]), 2, "this machine").is_empty());
        assert!(
            judge(&others(0.2, &[(9, "firefox", 0.2)]), 2, "this machine").is_empty(),
            "a tenth of the machine is not busy"
        );
        let busy = judge(
            &others(1.02, &[(4242, "spin", 1.0), (7, "sshd", 0.01)]),
            2,
            "this machine",
        );
        assert_eq!(
            busy,
            ["other processes used 1.02 CPUs of 2 (this machine) just before the load started: spin (pid 4242) 100 %"]
        );
        assert!(
            !judge(&others(0.6, &[]), 2, "x")[0].contains("load average"),
            "not the load average"
        );
    }

    /// Issue 44, item 2: steal counts as others' use of the CPUs, and is named.
    #[test]
    fn steal_makes_a_machine_busy_and_is_named() {
        let stolen = Others {
            used: 0.6,
            steal: 0.6,
            processes: vec![],
        };
        assert_eq!(
            judge(&stolen, 2, "this machine"),
            ["other processes used 0.60 CPUs of 2 (this machine) just before the load started: the hypervisor's steal (other guests) 60 %"]
        );
    }

    /// The live check leaves this process out: its own work (here, this test's) is never another's.
    #[test]
    fn the_live_check_leaves_wsbench_out() {
        let own = format!("(pid {})", std::process::id());
        assert!(check(&[]).iter().all(|b| !b.contains(&own)));
    }
}
