//! The host's power and virtualisation state, from /proc and /sys: what decides whether a CPU second is the
//! same second in two runs. The CPU frequency governor, frequencies and turbo/boost; SMT; C-state limits;
//! transparent huge pages; NUMA nodes; the IRQ affinity of the NIC carrying the default route; the clock
//! source; the hypervisor (CPUID's hypervisor bit as /proc/cpuinfo shows it, `systemd-detect-virt`, DMI);
//! the CPU time stolen by it so far; and this process's cgroup CPU quota and throttling. Read before and
//! after every step (provenance), and by `doctor`, which says how each could be pinned for benchmarking.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// One reading of the host's state. `None`: not exposed here (a VM without cpufreq has no governor).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostState {
    /// Each CPU's cpufreq governor, grouped: `performance` or `powersave ×3, performance ×1`.
    pub governor: Option<String>,
    /// The cpufreq driver (`intel_pstate`, `acpi-cpufreq`, …).
    pub freq_driver: Option<String>,
    /// Each online CPU's current frequency, MHz (cpufreq, else /proc/cpuinfo's `cpu MHz`).
    pub freq_mhz: Vec<u32>,
    /// Turbo / boost enabled (intel_pstate `no_turbo` inverted, or cpufreq `boost`).
    pub turbo: Option<bool>,
    /// `/sys/devices/system/cpu/smt/control` (`on`, `off`, `forceoff`, `notsupported`, `notimplemented`)
    /// and whether SMT siblings are active.
    pub smt: Option<String>,
    pub smt_active: Option<bool>,
    /// The cpuidle driver and governor, the idle states disabled, and any limit on the kernel command line
    /// (`processor.max_cstate=`, `intel_idle.max_cstate=`, `idle=`).
    pub cstates: Option<String>,
    /// Transparent huge pages: the mode in brackets of `enabled` (`always`, `madvise`, `never`), and `defrag`.
    pub thp: Option<String>,
    pub thp_defrag: Option<String>,
    pub numa_nodes: Option<u32>,
    /// The interface of the default route and its IRQs' CPU affinity (`38 virtio2-input.0 → 1`).
    pub nic: Option<String>,
    pub nic_irqs: Vec<String>,
    pub clocksource: Option<String>,
    /// The hypervisor: the CPU's hypervisor flag, `systemd-detect-virt --vm`, DMI's vendor and product.
    pub hypervisor: Option<String>,
    /// A container the process runs in (`systemd-detect-virt --container`), if any.
    pub container: Option<String>,
    /// /proc/stat's `cpu` line, ticks since boot: all, and stolen by the hypervisor.
    pub cpu_ticks: Option<u64>,
    pub steal_ticks: Option<u64>,
    /// This process's cgroup CPU quota (`max` or `QUOTA/PERIOD` µs) and throttling so far.
    pub cgroup_cpu_quota: Option<String>,
    pub cgroup_throttled: Option<u64>,
    pub cgroup_throttled_us: Option<u64>,
}

impl HostState {
    /// This machine now. `detect_virt`: what `systemd-detect-virt` says with `--vm` and `--container`
    /// (it is a program: the caller runs it, through its door, or passes `None`).
    pub fn read(detect_virt: Option<(String, String)>) -> HostState {
        let cpu = Path::new("/sys/devices/system/cpu");
        let online = crate::host::cpus_online();
        let per_cpu = |file: &str| -> Vec<String> {
            (0..online)
                .filter_map(|i| read(cpu.join(format!("cpu{i}/cpufreq/{file}"))))
                .collect()
        };
        let (stat_total, stat_steal) = steal_ticks();
        let (vm, container) = detect_virt.unzip();
        let (quota, throttled, throttled_us) = cgroup_cpu();
        let (nic, nic_irqs) = nic_irqs();
        HostState {
            governor: grouped(&per_cpu("scaling_governor")),
            freq_driver: read(cpu.join("cpu0/cpufreq/scaling_driver")),
            freq_mhz: frequencies(&per_cpu("scaling_cur_freq")),
            turbo: turbo(cpu),
            smt: read(cpu.join("smt/control")),
            smt_active: read(cpu.join("smt/active")).map(|a| a == "1"),
            cstates: cstates(cpu),
            thp: read("/sys/kernel/mm/transparent_hugepage/enabled").and_then(|t| bracketed(&t)),
            thp_defrag: read("/sys/kernel/mm/transparent_hugepage/defrag")
                .and_then(|t| bracketed(&t)),
            numa_nodes: read("/sys/devices/system/node/online")
                .and_then(|l| crate::host::parse_cpu_list(&l).ok())
                .map(|n| n.len() as u32),
            nic,
            nic_irqs,
            clocksource: read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
            hypervisor: hypervisor(vm.filter(|v| v != "none")),
            container: container.filter(|c| c != "none"),
            cpu_ticks: stat_total,
            steal_ticks: stat_steal,
            cgroup_cpu_quota: quota,
            cgroup_throttled: throttled,
            cgroup_throttled_us: throttled_us,
        }
    }

    /// The share of CPU time stolen between `earlier` and `self`, %; `None` when not measured.
    pub fn steal_pct_since(&self, earlier: &HostState) -> Option<f64> {
        let total = self.cpu_ticks?.checked_sub(earlier.cpu_ticks?)?;
        let steal = self.steal_ticks?.checked_sub(earlier.steal_ticks?)?;
        (total > 0).then(|| 100.0 * steal as f64 / total as f64)
    }

    /// The settings that differ from `earlier` (`governor: powersave → performance`), frequencies and
    /// counters aside (they move by themselves).
    pub fn changes_since(&self, earlier: &HostState) -> Vec<String> {
        let (a, b) = (earlier.settings(), self.settings());
        b.iter()
            .filter(|(k, v)| a.get(*k) != Some(v))
            .map(|(k, v)| {
                let was = a.get(k).map_or("–", String::as_str);
                format!("{k}: {was} → {v}")
            })
            .collect()
    }

    /// Each setting in words, by name (what `changes_since` compares and `doctor` shows).
    pub fn settings(&self) -> BTreeMap<&'static str, String> {
        let or = |v: &Option<String>| v.clone().unwrap_or_else(|| "not exposed".to_owned());
        let mut m = BTreeMap::new();
        m.insert("governor", or(&self.governor));
        m.insert(
            "turbo",
            self.turbo.map_or("not exposed".into(), |t| {
                if t { "on" } else { "off" }.into()
            }),
        );
        m.insert("smt", or(&self.smt));
        m.insert("c-states", or(&self.cstates));
        m.insert("thp", or(&self.thp));
        m.insert(
            "numa nodes",
            self.numa_nodes
                .map_or("not exposed".into(), |n| n.to_string()),
        );
        m.insert(
            "nic irqs",
            if self.nic_irqs.is_empty() {
                "none found".to_owned()
            } else {
                self.nic_irqs.join(", ")
            },
        );
        m.insert("clocksource", or(&self.clocksource));
        m.insert(
            "hypervisor",
            self.hypervisor
                .clone()
                .unwrap_or_else(|| "none seen".into()),
        );
        m.insert("cgroup cpu quota", or(&self.cgroup_cpu_quota));
        m
    }

    /// The frequencies in one phrase: `2596 MHz` or `800–3400 MHz`.
    pub fn freq_range(&self) -> Option<String> {
        let (lo, hi) = (self.freq_mhz.iter().min()?, self.freq_mhz.iter().max()?);
        Some(if lo == hi {
            format!("{lo} MHz")
        } else {
            format!("{lo}–{hi} MHz")
        })
    }
}

fn read(path: impl AsRef<Path>) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(text.trim().to_owned()).filter(|t| !t.is_empty())
}

/// `performance` when all agree, else each value with its count.
fn grouped(values: &[String]) -> Option<String> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for v in values {
        *counts.entry(v).or_default() += 1;
    }
    match counts.len() {
        0 => None,
        1 => counts.keys().next().map(|k| (*k).to_owned()),
        _ => Some(
            counts
                .iter()
                .map(|(k, n)| format!("{k} ×{n}"))
                .collect::<Vec<_>>()
                .join(", "),
        ),
    }
}

/// cpufreq's kHz, else /proc/cpuinfo's `cpu MHz` lines.
fn frequencies(khz: &[String]) -> Vec<u32> {
    if !khz.is_empty() {
        return khz
            .iter()
            .filter_map(|k| k.parse::<u64>().ok())
            .map(|k| (k / 1000) as u32)
            .collect();
    }
    read("/proc/cpuinfo").map_or_else(Vec::new, |info| cpuinfo_mhz(&info))
}

fn cpuinfo_mhz(info: &str) -> Vec<u32> {
    info.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == "cpu MHz")
                .then(|| v.trim().parse::<f64>().ok().map(|m| m.round() as u32))?
        })
        .collect()
}

fn turbo(cpu: &Path) -> Option<bool> {
    if let Some(no) = read(cpu.join("intel_pstate/no_turbo")) {
        return Some(no == "0");
    }
    read(cpu.join("cpufreq/boost")).map(|b| b == "1")
}

fn cstates(cpu: &Path) -> Option<String> {
    let driver = read(cpu.join("cpuidle/current_driver"));
    let governor = read(cpu.join("cpuidle/current_governor_ro"))
        .or_else(|| read(cpu.join("cpuidle/current_governor")));
    let states = cpu.join("cpu0/cpuidle");
    let disabled: Vec<String> = (0..16)
        .map(|i| states.join(format!("state{i}")))
        .take_while(|s| s.exists())
        .filter(|s| read(s.join("disable")).is_some_and(|d| d != "0"))
        .filter_map(|s| read(s.join("name")))
        .collect();
    let cmdline = read("/proc/cmdline").unwrap_or_default();
    let limits: Vec<&str> = cmdline
        .split_whitespace()
        .filter(|w| {
            w.starts_with("processor.max_cstate=")
                || w.starts_with("intel_idle.max_cstate=")
                || w.starts_with("idle=")
        })
        .collect();
    if driver.is_none() && limits.is_empty() {
        return None;
    }
    let mut parts = vec![format!(
        "cpuidle {}{}",
        driver.as_deref().unwrap_or("none"),
        governor.map_or(String::new(), |g| format!(" ({g})"))
    )];
    parts.push(if disabled.is_empty() {
        "no state disabled".to_owned()
    } else {
        format!("disabled: {}", disabled.join(", "))
    });
    parts.extend(limits.iter().map(|l| (*l).to_owned()));
    Some(parts.join("; "))
}

/// The word in brackets: `always [madvise] never` → `madvise`.
fn bracketed(text: &str) -> Option<String> {
    let start = text.find('[')? + 1;
    let end = start + text[start..].find(']')?;
    Some(text[start..end].to_owned())
}

/// The default route's interface, and each of its IRQs (`/proc/interrupts` lines naming the interface
/// or its device, e.g. `virtio2-input.0`) with the CPUs it may run on.
fn nic_irqs() -> (Option<String>, Vec<String>) {
    let Some(nic) = read("/proc/net/route").and_then(|r| default_route(&r)) else {
        return (None, Vec::new());
    };
    let device = std::fs::read_link(format!("/sys/class/net/{nic}/device"))
        .ok()
        .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()));
    let interrupts = read("/proc/interrupts").unwrap_or_default();
    let irqs = irqs_of(&interrupts, &nic, device.as_deref())
        .into_iter()
        .map(|(irq, name)| {
            let cpus = read(format!("/proc/irq/{irq}/smp_affinity_list"))
                .unwrap_or_else(|| "?".to_owned());
            format!("{irq} {name} → {cpus}")
        })
        .collect();
    (Some(nic), irqs)
}

fn default_route(table: &str) -> Option<String> {
    table.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(1) == Some(&"00000000") && f.get(7) == Some(&"00000000")).then(|| f[0].to_owned())
    })
}

fn irqs_of(interrupts: &str, nic: &str, device: Option<&str>) -> Vec<(u32, String)> {
    interrupts
        .lines()
        .filter_map(|l| {
            let (irq, rest) = l.trim_start().split_once(':')?;
            let irq: u32 = irq.parse().ok()?;
            let name = rest.split_whitespace().last()?;
            let ours =
                name.starts_with(nic) || device.is_some_and(|d| name.starts_with(&format!("{d}-")));
            (ours && !name.ends_with("-config")).then(|| (irq, name.to_owned()))
        })
        .collect()
}

fn hypervisor(vm: Option<String>) -> Option<String> {
    let flag = read("/proc/cpuinfo").is_some_and(|i| {
        i.lines()
            .any(|l| l.starts_with("flags") && l.split_whitespace().any(|f| f == "hypervisor"))
    });
    let dmi: Vec<String> = ["sys_vendor", "product_name"]
        .iter()
        .filter_map(|f| read(format!("/sys/class/dmi/id/{f}")))
        .collect();
    let mut parts = Vec::new();
    if let Some(vm) = vm {
        parts.push(vm);
    }
    if !dmi.is_empty() {
        parts.push(dmi.join(" "));
    }
    match (flag, parts.is_empty()) {
        (false, true) => None,
        (true, true) => Some("a hypervisor (CPUID flag), unnamed".to_owned()),
        (_, false) => Some(parts.join(", ")),
    }
}

/// /proc/stat's `cpu` line: every tick and the stolen ones.
fn steal_ticks() -> (Option<u64>, Option<u64>) {
    let Some(stat) = read("/proc/stat") else {
        return (None, None);
    };
    let Some(line) = stat.lines().find(|l| l.starts_with("cpu ")) else {
        return (None, None);
    };
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    // guest and guest_nice (8, 9) are already in user and nice.
    (Some(v.iter().take(8).sum()), v.get(7).copied())
}

/// This process's cgroup: its CPU quota (`max`, or `QUOTA/PERIOD` µs) and how often and how long it was
/// throttled (cgroup v2 `cpu.max`/`cpu.stat`, else v1 `cpu.cfs_quota_us`/`cpu.stat`).
fn cgroup_cpu() -> (Option<String>, Option<u64>, Option<u64>) {
    let groups = read("/proc/self/cgroup").unwrap_or_default();
    let v2 = groups.lines().find_map(|l| l.strip_prefix("0::"));
    let v1 = groups.lines().find_map(|l| {
        let (_, rest) = l.split_once(':')?;
        let (ctrls, path) = rest.split_once(':')?;
        ctrls.split(',').any(|c| c == "cpu").then_some(path)
    });
    let stat_of = |dir: &Path, us_key: &str, scale: u64| {
        let stat = read(dir.join("cpu.stat")).unwrap_or_default();
        let get = |k: &str| {
            stat.lines()
                .find_map(|l| l.strip_prefix(k)?.trim().parse::<u64>().ok())
        };
        (get("nr_throttled "), get(us_key).map(|t| t / scale))
    };
    if let Some(path) = v1 {
        let dir = Path::new("/sys/fs/cgroup/cpu").join(path.trim_start_matches('/'));
        if let Some(quota) = read(dir.join("cpu.cfs_quota_us")) {
            let period = read(dir.join("cpu.cfs_period_us")).unwrap_or_default();
            let quota = if quota == "-1" {
                "max".to_owned()
            } else {
                format!("{quota}/{period} µs")
            };
            let (n, us) = stat_of(&dir, "throttled_time ", 1000);
            return (Some(quota), n, us);
        }
    }
    if let Some(path) = v2 {
        let dir = Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
        if let Some(max) = read(dir.join("cpu.max")) {
            let quota = match max.split_once(' ') {
                Some(("max", _)) => "max".to_owned(),
                Some((q, p)) => format!("{q}/{p} µs"),
                None => max,
            };
            let (n, us) = stat_of(&dir, "throttled_usec ", 1);
            return (Some(quota), n, us);
        }
    }
    (None, None, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_of_the_files_as_the_kernel_writes_them() {
        assert_eq!(bracketed("always [madvise] never"), Some("madvise".into()));
        assert_eq!(
            grouped(&["performance".into(), "performance".into()]),
            Some("performance".into())
        );
        assert_eq!(
            grouped(&["powersave".into(), "performance".into(), "powersave".into()]),
            Some("performance ×1, powersave ×2".into())
        );
        assert_eq!(grouped(&[]), None);
        assert_eq!(
            cpuinfo_mhz(
                "processor\t: 0\ncpu MHz\t\t: 2596.132\nprocessor\t: 1\ncpu MHz\t\t: 3400.4\n"
            ),
            vec![2596, 3400]
        );
        let route = "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\n\
                     docker0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\n\
                     eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\n";
        assert_eq!(default_route(route), Some("eth0".into()));
        let interrupts = "           CPU0       CPU1\n 37:  0 0 PCI-MSIX-0000:00:03.0   0-edge      virtio2-config\n \
                          38:  0 14878 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\n \
                          41:  5675 0 PCI-MSIX-0000:00:04.0   1-edge      virtio3-rx\nLOC: 1 2 Local timer interrupts\n";
        assert_eq!(
            irqs_of(interrupts, "eth0", Some("virtio2")),
            vec![(38, "virtio2-input.0".to_owned())]
        );
    }

    #[test]
    fn steal_is_a_share_of_the_ticks_between_two_readings() {
        let at = |total, steal| HostState {
            cpu_ticks: Some(total),
            steal_ticks: Some(steal),
            ..HostState::default()
        };
        assert_eq!(at(1200, 30).steal_pct_since(&at(1000, 20)), Some(5.0));
        assert_eq!(at(1000, 20).steal_pct_since(&at(1000, 20)), None, "no tick");
        assert_eq!(HostState::default().steal_pct_since(&at(1, 0)), None);
    }

    #[test]
    fn a_changed_setting_is_named_with_both_values() {
        let before = HostState {
            governor: Some("powersave".into()),
            freq_mhz: vec![800],
            ..HostState::default()
        };
        let after = HostState {
            governor: Some("performance".into()),
            freq_mhz: vec![3400],
            ..HostState::default()
        };
        assert_eq!(
            after.changes_since(&before),
            ["governor: powersave → performance"]
        );
    }

    #[test]
    fn this_machine_reads() {
        let s = HostState::read(None);
        assert!(s.cpu_ticks.is_some_and(|t| t > 0));
        assert!(!s.freq_mhz.is_empty() || s.governor.is_none());
        assert!(s.settings().contains_key("thp"));
    }
}
