//! Scaling efficiency of a scale-out run: the throughput of n server instances over n times that of one
//! instance under the same step (same name, operation, clients and workers); 1.0 is perfect scale-out.

use crate::rundoc::{RunDoc, StepEntry};
use crate::summary::StepDoc;

/// `total(n) / (n × total(1))` for `entry`, None when it is not a scale-out step or a baseline is missing.
pub(crate) fn scaling_efficiency(run: &RunDoc, docs: &[StepDoc], entry: &StepEntry) -> Option<f64> {
    let n = entry.servers?;
    let total = |e: &StepEntry| {
        let i = run.steps.iter().position(|s| std::ptr::eq(s, e))?;
        docs.get(i)?.as_ref().ok().map(|d| d.throughput.total_per_s)
    };
    let baseline = run.steps.iter().find(|s| {
        s.servers == Some(1)
            && s.name == entry.name
            && s.operation == entry.operation
            && s.clients == entry.clients
            && s.workers == entry.workers
    })?;
    let (one, many) = (total(baseline)?, total(entry)?);
    (one > 0.0).then(|| many / (f64::from(n) * one))
}
