//! What the store keeps of one run: where and on what it ran, how it ended, and its key figures, each a
//! metric of one step with its interval when there were repeats. Typed here; the store turns it into rows.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::metric::Metric;
use crate::provenance::Host;
use crate::rundoc::Status;
use wsbench_tools::host_state::HostState;

/// Which command made the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// `cargo xtask run` (and `history import` of its folders).
    Run,
    Calibrate,
    MaxRate,
    Gate,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::Run, Kind::Calibrate, Kind::MaxRate, Kind::Gate];

    /// Its name in the store and on the command line.
    pub fn key(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Calibrate => "calibrate",
            Kind::MaxRate => "max-rate",
            Kind::Gate => "gate",
        }
    }

    pub(crate) fn from_key(key: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.key() == key)
    }
}

/// The machine a run ran on: what identifies it (CPU model, cores, memory, kernel) and, beside, its state
/// then (the frequency governor; power and virtualisation as provenance records them), which may change
/// between runs of the same machine and is shown, not used to tell machines apart.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub cpu_model: Option<String>,
    pub cores: usize,
    pub memory_kb: Option<u64>,
    pub kernel: Option<String>,
    pub hostname: Option<String>,
    /// Name → value: `governor` and whatever else provenance says of the machine's state.
    pub state: serde_json::Map<String, serde_json::Value>,
}

impl Machine {
    /// The machine as a run's provenance describes it.
    pub fn of(host: &Host) -> Machine {
        Machine {
            cpu_model: host.cpu_model.clone(),
            cores: host.cpus_online,
            memory_kb: host.memory_total_kb,
            kernel: host.kernel.clone(),
            hostname: host.hostname.clone(),
            state: serde_json::Map::new(),
        }
    }

    /// This machine, now, with its state.
    pub fn this() -> Machine {
        Machine::of(&Host::read()).with_state(Some(&HostState::read(None)))
    }

    /// With the state provenance records (`host_state.at_start`): the governor, turbo, SMT, the hypervisor
    /// or container, the cgroup's CPU quota, transparent huge pages — what was set, not what was counted.
    pub(crate) fn with_state(mut self, state: Option<&HostState>) -> Machine {
        const KEPT: [&str; 7] = [
            "governor",
            "turbo",
            "smt_active",
            "hypervisor",
            "container",
            "cgroup_cpu_quota",
            "thp",
        ];
        let Some(serde_json::Value::Object(all)) = state.and_then(|s| serde_json::to_value(s).ok())
        else {
            return self;
        };
        for key in KEPT {
            if let Some(v) = all.get(key).filter(|v| !v.is_null()) {
                self.state.insert(key.to_owned(), v.clone());
            }
        }
        self
    }

    /// 16 hex digits of the SHA-256 of what identifies the machine: the same machine gives the same
    /// fingerprint in every run, whatever its hostname (containers make up their own) or governor.
    pub fn fingerprint(&self) -> String {
        let id = format!(
            "{}\n{}\n{}\n{}",
            self.cpu_model.as_deref().unwrap_or("?"),
            self.cores,
            self.memory_kb.map_or("?".to_owned(), |m| m.to_string()),
            self.kernel.as_deref().unwrap_or("?"),
        );
        let digest = Sha256::digest(id.as_bytes());
        digest[..8].iter().map(|b| format!("{b:02x}")).collect()
    }

    /// `Intel Xeon … · 2 cores · 23.4 GiB · 6.1.0-18-amd64`.
    pub fn describe(&self) -> String {
        let gib = |kb: u64| format!("{:.1} GiB", kb as f64 / 1024.0 / 1024.0);
        [
            self.cpu_model.clone().unwrap_or_else(|| "CPU ?".to_owned()),
            format!("{} cores", self.cores),
            self.memory_kb.map_or_else(|| "memory ?".to_owned(), gib),
            self.kernel.clone().unwrap_or_else(|| "kernel ?".to_owned()),
        ]
        .join(" · ")
    }
}

/// A published figure a step is compared with.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishedFigure {
    pub value: f64,
    /// The upper end of a published range.
    pub max: Option<f64>,
    pub label: String,
}

/// One metric of one step: the median of its rounds and, with repeats, its 95 % interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// The step's id without its round and server (`01-clients-100`), the same in every run of the scenario.
    pub step: String,
    /// The server measured: `bench-server`, a peer, `external`.
    pub sut: String,
    pub metric: Metric,
    pub value: f64,
    /// The 95 % interval (None: one round).
    pub interval: Option<(f64, f64)>,
    pub rounds: u32,
    pub published: Option<PublishedFigure>,
}

/// A run as the store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub kind: Kind,
    pub scenario: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub commit: Option<String>,
    pub dirty: bool,
    pub profile: Option<String>,
    pub machine: Machine,
    /// What else makes runs of a scenario comparable: `quick`, the `--set`s (`duration=6s`); empty: the
    /// scenario as written.
    pub config: String,
    /// The servers measured and their command lines.
    pub sut_config: serde_json::Value,
    pub status: Status,
    /// The machine was busy with other work just before the load (run.json's `busy`).
    pub busy: bool,
    /// An emulated side (qemu-user): never compared with native figures.
    pub emulated: bool,
    /// The run's folder; None: the command left none.
    pub dir: Option<PathBuf>,
    pub measurements: Vec<Measurement>,
}

/// An entry read back from the store, with its row id.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub id: i64,
    /// The machine's fingerprint, as stored.
    pub fingerprint: String,
    pub entry: Entry,
}

/// The metric a key names, if this wsbench knows it.
pub(crate) fn metric_of_key(key: &str) -> Option<Metric> {
    Metric::ALL.into_iter().find(|m| m.key() == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_machine_is_its_hardware_and_kernel_not_its_name_or_state() {
        let a = Machine {
            cpu_model: Some("Xeon".into()),
            cores: 2,
            memory_kb: Some(24 << 20),
            kernel: Some("6.1".into()),
            hostname: Some("a".into()),
            state: serde_json::Map::new(),
        };
        let mut renamed = a.clone();
        renamed.hostname = Some("container-1".into());
        renamed.state.insert("governor".into(), "powersave".into());
        assert_eq!(a.fingerprint(), renamed.fingerprint());
        assert_eq!(a.fingerprint().len(), 16);
        let mut upgraded = a.clone();
        upgraded.kernel = Some("6.12".into());
        assert_ne!(a.fingerprint(), upgraded.fingerprint());
        assert_eq!(a.describe(), "Xeon · 2 cores · 24.0 GiB · 6.1");
        for k in Kind::ALL {
            assert_eq!(Kind::from_key(k.key()), Some(k));
        }
        assert_eq!(metric_of_key("p99_latency_ms"), Some(Metric::P99LatencyMs));
        assert_eq!(metric_of_key("nonsense"), None);
    }
}
