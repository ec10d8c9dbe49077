//! `run.json`: what one `cargo xtask run` asked for, step by step, and the published figures it is compared
//! with (contract: "Results directory"). Written by xtask; step results are bench-client's `steps/*.json`.

use serde::{Deserialize, Serialize};

use crate::scenario::{Plan, Published, Step};

pub(crate) const SCHEMA: &str = "wsbench.run/v1";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RunDoc {
    pub(crate) schema: String,
    pub(crate) scenario: String,
    pub(crate) description: String,
    pub(crate) reproduces: String,
    /// The seed document the published figures come from.
    pub(crate) seed: String,
    pub(crate) scenario_sha256: String,
    pub(crate) quick: bool,
    pub(crate) sets: Vec<String>,
    pub(crate) notes: Vec<String>,
    pub(crate) started_at: String,
    pub(crate) finished_at: Option<String>,
    pub(crate) status: Status,
    /// What went wrong outside the measurements (server crash, client that wrote nothing…).
    pub(crate) problems: Vec<String>,
    pub(crate) steps: Vec<StepEntry>,
    pub(crate) published: Vec<Published>,
    /// Server and clients ran as containers on a private network (`--containers`).
    #[serde(default)]
    pub(crate) containers: bool,
    /// `--client-arch`: the architecture bench-client was built for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) client_arch: Option<String>,
    /// The client ran under an emulator (qemu-user): its figures are never compared with native or published ones.
    #[serde(default)]
    pub(crate) emulated: bool,
}

/// How a run or a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Status {
    /// Measured, without errors.
    Ok,
    /// Measured, and some calls failed (counted in the results, never as throughput).
    Errors,
    /// Could not be measured (no results document, server gone).
    Failed,
    /// Not run (an earlier failure stopped the run).
    NotRun,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct StepEntry {
    pub(crate) id: String,
    pub(crate) label: String,
    pub(crate) name: Option<String>,
    pub(crate) operation: String,
    pub(crate) clients: Option<u32>,
    pub(crate) rate: Option<f64>,
    /// Server worker threads in force (from the READY line, else as asked).
    pub(crate) workers: Option<u32>,
    /// Server instances the load was spread across (scale-out scenarios only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) servers: Option<u32>,
    pub(crate) keepalive: bool,
    pub(crate) duration_s: Option<f64>,
    pub(crate) requests: Option<u64>,
    pub(crate) message_size: Option<String>,
    /// `steps/<id>.json`, relative to the run directory.
    pub(crate) result: String,
    pub(crate) status: Status,
    /// bench-client's exit code (0 ok, 1 errors or failure to start, 2 usage).
    pub(crate) client_exit: Option<i32>,
    /// TCP sockets in TIME_WAIT on the host before and after the step (/proc/net/tcp{,6}).
    pub(crate) time_wait_before: Option<u64>,
    pub(crate) time_wait_after: Option<u64>,
}

impl StepEntry {
    pub(crate) fn planned(step: &Step) -> StepEntry {
        let c = &step.client;
        StepEntry {
            id: step.id.clone(),
            label: step.label.clone(),
            name: step.name.clone(),
            operation: c.operation.name().to_owned(),
            clients: c.clients,
            rate: c.rate,
            workers: step.workers,
            servers: step.servers,
            keepalive: c.keepalive,
            duration_s: match c.length {
                Some(crate::scenario::Length::Duration(d)) => Some(d.0.as_secs_f64()),
                _ => None,
            },
            requests: match c.length {
                Some(crate::scenario::Length::Requests(n)) => Some(n),
                _ => None,
            },
            message_size: c.message_size.as_ref().map(|m| m.text.clone()),
            result: format!("steps/{}.json", step.id),
            status: Status::NotRun,
            client_exit: None,
            time_wait_before: None,
            time_wait_after: None,
        }
    }
}

impl RunDoc {
    pub(crate) fn planned(plan: &Plan, started_at: String) -> RunDoc {
        let f = &plan.scenario.file;
        RunDoc {
            schema: SCHEMA.to_owned(),
            scenario: plan.scenario.name.clone(),
            description: f.description.clone(),
            reproduces: f.reproduces.clone(),
            seed: f.seed.clone(),
            scenario_sha256: plan.scenario.sha256.clone(),
            quick: plan.quick,
            sets: plan.sets.clone(),
            notes: f.notes.clone(),
            started_at,
            finished_at: None,
            status: Status::NotRun,
            problems: Vec::new(),
            steps: plan.steps().map(StepEntry::planned).collect(),
            published: f.published.clone(),
            containers: false,
            client_arch: None,
            emulated: false,
        }
    }

    /// The run's status: the worst of its steps', failed when something outside them went wrong.
    pub(crate) fn settle(&mut self) {
        let worst = |a: Status, b: Status| {
            let rank = |s| match s {
                Status::Ok => 0,
                Status::Errors => 1,
                Status::NotRun => 2,
                Status::Failed => 3,
            };
            if rank(b) > rank(a) {
                b
            } else {
                a
            }
        };
        let mut status = self.steps.iter().map(|s| s.status).fold(Status::Ok, worst);
        if !self.problems.is_empty() {
            status = worst(status, Status::Failed);
        }
        self.status = status;
    }
}

impl Published {
    /// Whether the figure is compared with this step: every selector it gives must match.
    pub(crate) fn matches(&self, step: &StepEntry) -> bool {
        self.clients.map_or(true, |c| step.clients == Some(c))
            && self.operation.map_or(true, |o| step.operation == o.name())
            && self.workers.map_or(true, |w| step.workers == Some(w))
            && self
                .step
                .as_deref()
                .map_or(true, |n| step.name.as_deref() == Some(n))
            && self
                .instances
                .map_or(true, |i| step.servers.unwrap_or(1) == i)
    }
}
