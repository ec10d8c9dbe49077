//! provenance.json's `host_state`: the host's power and virtualisation state (governor, frequencies,
//! turbo, SMT, C-states, THP, NUMA, the NIC's IRQ affinity, clock source, hypervisor, cgroup quota) when the
//! run began and before and after each step, with the CPU time stolen over each step.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use wsbench_tools::host_state::HostState;
use wsbench_tools::virt;
use xshell::Shell;

/// Steal above this share of a step's CPU time flags the step.
pub const STEAL_FLAG_PCT: f64 = 5.0;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct HostStates {
    /// What `systemd-detect-virt` said (`--vm`, `--container`), asked once.
    #[serde(default)]
    pub detect_virt: Option<(String, String)>,
    pub at_start: HostState,
    /// Step id → its state before and after.
    #[serde(default)]
    pub steps: BTreeMap<String, StepState>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StepState {
    pub before: HostState,
    pub after: HostState,
    /// The share of this machine's CPU time stolen by the hypervisor over the step, %.
    pub steal_pct: Option<f64>,
    /// Times the run's cgroup was throttled over the step.
    pub throttled: Option<u64>,
    /// Settings that changed during the step (`governor: powersave → performance`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
}

impl HostStates {
    /// The state as the run begins.
    pub fn begin(sh: &Shell) -> HostStates {
        let detect_virt = virt::detect(sh);
        HostStates {
            at_start: HostState::read(detect_virt.clone()),
            detect_virt,
            steps: BTreeMap::new(),
        }
    }

    /// This machine now.
    pub fn now(&self) -> HostState {
        HostState::read(self.detect_virt.clone())
    }

    /// Records step `id` between `before` and now.
    pub fn step(&mut self, id: &str, before: HostState) {
        let after = self.now();
        let throttled = after
            .cgroup_throttled
            .zip(before.cgroup_throttled)
            .map(|(a, b)| a.saturating_sub(b));
        let state = StepState {
            steal_pct: after.steal_pct_since(&before),
            throttled,
            changed: after.changes_since(&before),
            before,
            after,
        };
        self.steps.insert(id.to_owned(), state);
    }
}
