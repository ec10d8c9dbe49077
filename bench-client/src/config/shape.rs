//! The shape of a run's load, validated: the operations a call draws from (one, or a weighted mix), the seed of
//! every draw, how an open loop spaces its sends, the stages a step ramps through, and the thresholds judged
//! while it runs.

use std::time::Duration;

use bench_proto::operation::{Operation, Service};
use bench_proto::shape::{Arrivals, Mix, Ramped, Stages};
use bench_proto::thresholds::Threshold;

use crate::flags::{usage_error, RunArgs};

/// Thresholds judged while the run goes, and when.
#[derive(Debug, Clone, PartialEq)]
pub struct AbortRule {
    /// Nothing is judged before this much of the measured interval.
    pub grace: Duration,
    /// Each judgement is on the calls completed in the last `window`.
    pub window: Duration,
}

/// Everything about a run's load beyond one operation at one fixed level.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// More than one operation, each call drawing its own (`None`: every call is `RunConfig::operation`).
    pub mix: Option<Mix>,
    pub seed: u64,
    pub arrivals: Arrivals,
    pub stages: Option<Stages>,
    pub thresholds: Vec<Threshold>,
    /// `--abort-on-fail`: stop as soon as a threshold has clearly failed.
    pub abort: Option<AbortRule>,
}

impl Shape {
    /// The operations of the run, in the mix's order (the one operation otherwise).
    pub fn operations(&self, single: Operation) -> Vec<Operation> {
        match &self.mix {
            Some(m) => m.operations().collect(),
            None => vec![single],
        }
    }

    /// Whether the stages ramp clients (a closed loop whose connections come and go).
    pub fn ramps_clients(&self) -> bool {
        self.stages
            .as_ref()
            .is_some_and(|s| s.ramped() == Ramped::Clients)
    }

    /// Whether the stages ramp an open loop's rate.
    pub(crate) fn ramps_rate(&self) -> bool {
        self.stages
            .as_ref()
            .is_some_and(|s| s.ramped() == Ramped::Rate)
    }
}

/// The shape `a` asks for, checked against the rest of its flags; `path_given`: the URL has a path of its own.
pub(super) fn of(a: &RunArgs, path_given: bool) -> anyhow::Result<Shape> {
    let mix = match &a.mix {
        Some(m) => Some(mix(a, m, path_given)?),
        None => None,
    };
    let stages = match a.stages.is_empty() {
        true => None,
        false => Some(stages(a)?),
    };
    let open_loop = a.rate.is_some() || stages.as_ref().is_some_and(|s| s.ramped() == Ramped::Rate);
    if a.arrivals == Some(Arrivals::Poisson) && !open_loop {
        return Err(usage_error(
            "--arrivals poisson spaces an open loop's sends: give --rate (or FOR:rate=R stages)",
        ));
    }
    let thresholds = a
        .thresholds
        .iter()
        .map(|t| Threshold::parse(t).map_err(|e| usage_error(format!("--threshold: {e}"))))
        .collect::<anyhow::Result<Vec<_>>>()?;
    if a.abort_on_fail && (a.abort_window.is_zero() || a.abort_window < Duration::from_millis(10)) {
        return Err(usage_error("--abort-window must be at least 10ms"));
    }
    Ok(Shape {
        mix,
        seed: a.seed,
        arrivals: a.arrivals.unwrap_or_default(),
        stages,
        thresholds,
        abort: a.abort_on_fail.then_some(AbortRule {
            grace: a.abort_grace,
            window: a.abort_window,
        }),
    })
}

/// A mix's operations must share one path: a URL's own, or their service's.
fn mix(a: &RunArgs, m: &Mix, path_given: bool) -> anyhow::Result<Mix> {
    let services: Vec<Service> = m.operations().map(Operation::service).collect();
    if path_given && services.iter().any(|s| *s != services[0]) {
        return Err(usage_error(format!(
            "--mix {m}: its operations belong to two services, but the URL names one path; give the URL \
             without a path (each operation then posts to its service's)"
        )));
    }
    if a.message_size.is_some() && m.operations().all(|op| !op.takes_message_size()) {
        return Err(usage_error(format!(
            "--mix {m}: none of its operations takes --message-size"
        )));
    }
    Ok(m.clone())
}

fn stages(a: &RunArgs) -> anyhow::Result<Stages> {
    let stages: Stages = a
        .stages
        .join(",")
        .parse()
        .map_err(|e| usage_error(format!("--stage: {e}")))?;
    if !a.warmup.is_zero() {
        return Err(usage_error(
            "--stage and --warmup: the stages start from 0; make the warm-up a first stage",
        ));
    }
    if stages.ramped() == Ramped::Clients && !a.think_time.is_zero() && a.rate.is_some() {
        return Err(usage_error("--think-time is for a closed loop"));
    }
    Ok(stages)
}
