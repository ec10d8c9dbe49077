//! doctor's "power and virtualisation" section: each setting that decides whether a CPU second is the same
//! second in two runs, as this machine has it, and the command that would pin it for benchmarking. doctor
//! changes nothing: it says what to run.

use std::time::Duration;

use wsbench_tools::host_state::HostState;
use wsbench_tools::virt;
use xshell::Shell;

use super::{Check, Level};

/// Steal above this share while doctor watches is worth a warning (the run flags steps above it too).
const STEAL_WARN_PCT: f64 = 5.0;

pub(super) fn checks(sh: &Shell) -> Vec<Check> {
    let virt = virt::detect(sh);
    let before = HostState::read(virt.clone());
    std::thread::sleep(Duration::from_millis(500));
    let s = HostState::read(virt);
    let mut checks = vec![
        governor(&s),
        turbo(&s),
        smt(&s),
        cstates(&s),
        thp(&s),
        numa(&s),
        nic(&s),
        clocksource(&s),
    ];
    let steal = s.steal_pct_since(&before);
    let hv = s
        .hypervisor
        .clone()
        .unwrap_or_else(|| "none seen".to_owned());
    let found = match steal {
        Some(p) => format!("{hv}; steal {p:.1} % of the CPU time over the last 0.5 s"),
        None => hv,
    };
    let level = if steal.is_some_and(|p| p > STEAL_WARN_PCT) {
        Level::Warn
    } else {
        Level::Ok
    };
    checks.push(Check::pin(
        "hypervisor and steal",
        level,
        found,
        "a dedicated host, or a VM whose vCPUs are pinned and not overcommitted; every run records the steal \
         of each step and flags a step above 5 %",
    ));
    checks.push(cgroup(&s));
    checks
}

fn governor(s: &HostState) -> Check {
    let pin = "cpupower frequency-set -g performance (apt-get install linux-cpupower)";
    match &s.governor {
        None => Check::pin(
            "CPU frequency governor",
            Level::Ok,
            format!(
                "not exposed (no cpufreq here: the host decides); {}",
                s.freq_range().unwrap_or_else(|| "frequency unknown".into())
            ),
            pin,
        ),
        Some(g) => Check::pin(
            "CPU frequency governor",
            if g == "performance" {
                Level::Ok
            } else {
                Level::Warn
            },
            format!(
                "{g} ({}; {})",
                s.freq_driver.as_deref().unwrap_or("driver ?"),
                s.freq_range().unwrap_or_else(|| "?".into())
            ),
            pin,
        ),
    }
}

fn turbo(s: &HostState) -> Check {
    let pin = "echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo (intel_pstate), or \
               echo 0 > /sys/devices/system/cpu/cpufreq/boost";
    match s.turbo {
        None => Check::pin("turbo / boost", Level::Ok, "not exposed", pin),
        Some(true) => Check::pin(
            "turbo / boost",
            Level::Warn,
            "on: the clock follows temperature and the other cores' load",
            pin,
        ),
        Some(false) => Check::pin("turbo / boost", Level::Ok, "off", pin),
    }
}

fn smt(s: &HostState) -> Check {
    let pin =
        "echo off > /sys/devices/system/cpu/smt/control (or `nosmt` on the kernel command line)";
    let found = match (&s.smt, s.smt_active) {
        (Some(c), Some(a)) => format!("{c}, siblings {}", if a { "active" } else { "inactive" }),
        (Some(c), None) => c.clone(),
        (None, _) => "not exposed".to_owned(),
    };
    let level = if s.smt_active == Some(true) {
        Level::Warn
    } else {
        Level::Ok
    };
    Check::pin("SMT (hyper-threading)", level, found, pin)
}

fn cstates(s: &HostState) -> Check {
    Check::pin(
        "C-states",
        Level::Ok,
        s.cstates.clone().unwrap_or_else(|| "not exposed".into()),
        "cpupower idle-set -D 2 (disables the states slower than 2 µs to leave), or \
         `intel_idle.max_cstate=1 processor.max_cstate=1` on the kernel command line",
    )
}

fn thp(s: &HostState) -> Check {
    let found = match (&s.thp, &s.thp_defrag) {
        (Some(e), Some(d)) => format!("enabled {e}, defrag {d}"),
        (Some(e), None) => e.clone(),
        _ => "not exposed".to_owned(),
    };
    let level = if s.thp.as_deref() == Some("always") {
        Level::Warn
    } else {
        Level::Ok
    };
    Check::pin(
        "transparent huge pages",
        level,
        found,
        "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled (always: khugepaged's work lands \
         inside runs)",
    )
}

fn numa(s: &HostState) -> Check {
    let n = s.numa_nodes.unwrap_or(1);
    Check::pin(
        "NUMA nodes",
        if n > 1 { Level::Warn } else { Level::Ok },
        n.to_string(),
        "numactl --cpunodebind=0 --membind=0 cargo xtask run … (server and client on one node)",
    )
}

fn nic(s: &HostState) -> Check {
    let found = match &s.nic {
        Some(n) if s.nic_irqs.is_empty() => format!("{n}: no IRQ of its own found"),
        Some(n) => format!("{n}: {} (IRQ name → its CPUs)", s.nic_irqs.join(", ")),
        None => "no default route".to_owned(),
    };
    Check::pin(
        "NIC IRQ affinity",
        Level::Ok,
        found,
        "systemctl stop irqbalance; echo CPU > /proc/irq/N/smp_affinity_list for each (the NIC's \
         interrupts kept off the server's and the client's CPUs)",
    )
}

fn clocksource(s: &HostState) -> Check {
    let c = s.clocksource.clone().unwrap_or_else(|| "?".into());
    let level = if c == "tsc" { Level::Ok } else { Level::Warn };
    Check::pin(
        "clock source",
        level,
        c,
        "echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource (when \
         available_clocksource lists it: every clock read is then a few ns)",
    )
}

fn cgroup(s: &HostState) -> Check {
    let q = s
        .cgroup_cpu_quota
        .clone()
        .unwrap_or_else(|| "not exposed".into());
    let throttled = s
        .cgroup_throttled
        .map_or(String::new(), |n| format!(", throttled {n} times so far"));
    let level = if q == "max" || q == "not exposed" {
        Level::Ok
    } else {
        Level::Warn
    };
    Check::pin(
        "cgroup CPU quota",
        level,
        format!("{q}{throttled}"),
        "run outside the quota (no `docker run --cpus`, no systemd CPUQuota=): a throttled period is a \
         pause in the figures",
    )
}
