//! The parts of a results document a shaped load adds (issue 43), in `wsbench.results/v1` compatibly (every
//! field optional when reading): what was asked (`params`: the mix, its seed, the arrival process, the stages,
//! the thresholds a run stops on) and what was measured (`operations`, `stages`, `phases`, `aborted`). Each
//! measured part carries its histogram, so documents of several client processes merge exactly.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::ResultsError;
use super::{decode_histogram, encode_histogram, new_histogram, ErrorCounts, LatencySummary};

/// What a shaped run was asked, beside `params`' other fields (all absent in a plain run's document).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShapeParams {
    /// A mix: each operation with its weight (`params.operation` is then `mix`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<MixWeight>,
    /// The seed of the mix's draws and of Poisson arrivals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Open loop: how sends are spaced (absent: even).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<Arrivals>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageParam>,
    /// Thresholds judged on a trailing window while the run goes (`--threshold … --abort-on-fail`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abort: Option<AbortRule>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MixWeight {
    pub operation: String,
    pub weight: f64,
}

/// A stage as asked: for `for_s` seconds, ramp `ramped` linearly to `target`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageParam {
    pub for_s: f64,
    pub ramped: Ramped,
    pub target: f64,
}

/// When a run stops early on a failed threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbortRule {
    pub thresholds: Vec<String>,
    /// Nothing is judged before this many seconds of the measured interval.
    pub grace_s: f64,
    /// Each judgement is on the calls of the last `window_s` seconds.
    pub window_s: f64,
}

/// What a shaped run measured, beside the document's totals (absent parts: not asked).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShapeResults {
    /// A mix: each operation's calls, errors and latency (they add up to the totals).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub operations: Vec<OperationResults>,
    /// Staged runs: each stage's calls, errors and latency, by completion time (they add up to the totals).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageResults>,
    /// Where each call's time went: connecting, waiting for the first byte, reading to the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<Phases>,
    /// The run stopped early because a threshold clearly failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted: Option<Aborted>,
}

/// Calls of one kind (an operation, a stage): counts, the latency summary and its histogram (µs, corrected).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Part {
    pub ok: u64,
    pub errors_total: u64,
    pub errors: ErrorCounts,
    pub latency_us: LatencySummary,
    pub histogram: String,
}

impl Part {
    pub fn new(ok: u64, errors: ErrorCounts, h: &Histogram<u64>) -> Part {
        Part {
            ok,
            errors_total: errors.total(),
            errors,
            latency_us: LatencySummary::from_histogram(h),
            histogram: encode_histogram(h),
        }
    }

    /// Adds `other` in exactly: counts summed, histograms added, the summary recomputed.
    fn add(&mut self, other: &Part) -> Result<(), ResultsError> {
        let mut h = decode_histogram(&self.histogram)?;
        h.add(decode_histogram(&other.histogram)?)?;
        self.errors.add(&other.errors);
        *self = Part::new(self.ok + other.ok, self.errors.clone(), &h);
        Ok(())
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OperationResults {
    pub operation: String,
    /// Its share of the mix's weights (0 … 1).
    pub share: f64,
    #[serde(flatten)]
    pub calls: Part,
    /// HTTP body bytes.
    pub bytes_sent: u64,
    pub bytes_received: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageResults {
    /// Numbered from 1.
    pub stage: u32,
    pub ramped: Ramped,
    /// Where the stage lies, seconds from the start of the measured interval.
    pub from_s: f64,
    pub to_s: f64,
    /// The level (clients, or calls/s offered) at its start and its end.
    pub start: f64,
    pub end: f64,
    #[serde(flatten)]
    pub calls: Part,
}

/// Histograms of a call's phases (µs): `connect`, each connection set up (TCP, plus TLS and the HTTP/2
/// handshake if any); `ttfb`, from the request's first byte sent (after any connect) to the response's first
/// byte read; `transfer`, from that first byte to the last. A response read whole by one read has a transfer
/// of 0 (the client saw its first and last bytes at once).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    pub connect: Phase,
    pub ttfb: Phase,
    pub transfer: Phase,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    pub latency_us: LatencySummary,
    pub histogram: String,
}

impl Phase {
    pub fn of(h: &Histogram<u64>) -> Phase {
        Phase {
            latency_us: LatencySummary::from_histogram(h),
            histogram: encode_histogram(h),
        }
    }

    fn add(&mut self, other: &Phase) -> Result<(), ResultsError> {
        let mut h = decode_histogram(&self.histogram)?;
        h.add(decode_histogram(&other.histogram)?)?;
        *self = Phase::of(&h);
        Ok(())
    }
}

/// Why and when a run stopped early.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Aborted {
    /// When the threshold was judged failed, seconds from the start of the measured interval.
    pub at_s: f64,
    /// The threshold as written (`p99<5ms`).
    pub threshold: String,
    /// What the window measured, in the threshold's unit (ms, %, calls, calls/s).
    pub measured: f64,
    /// The window judged: from `at_s − window_s` to `at_s`, and the calls in it.
    pub window_s: f64,
    pub calls: u64,
}

impl ShapeResults {
    /// Adds `other` (another client process's document) in: operations by name, stages by number (their
    /// places must agree), phases added, the earliest abort kept.
    pub fn merge(&mut self, other: &ShapeResults) -> Result<(), ResultsError> {
        let names =
            |v: &[OperationResults]| v.iter().map(|o| o.operation.clone()).collect::<Vec<_>>();
        if names(&self.operations) != names(&other.operations) {
            return Err(mismatch(
                "operations",
                names(&self.operations).join(","),
                names(&other.operations).join(","),
            ));
        }
        for (a, b) in self.operations.iter_mut().zip(&other.operations) {
            a.calls.add(&b.calls)?;
            a.bytes_sent += b.bytes_sent;
            a.bytes_received += b.bytes_received;
        }
        let places = |v: &[StageResults]| {
            v.iter()
                .map(|s| format!("{}:{}-{}s", s.stage, s.from_s, s.to_s))
                .collect::<Vec<_>>()
                .join(",")
        };
        if places(&self.stages) != places(&other.stages) {
            return Err(mismatch(
                "stages",
                places(&self.stages),
                places(&other.stages),
            ));
        }
        for (a, b) in self.stages.iter_mut().zip(&other.stages) {
            a.calls.add(&b.calls)?;
            a.start += b.start;
            a.end += b.end;
        }
        match (&mut self.phases, &other.phases) {
            (Some(a), Some(b)) => {
                a.connect.add(&b.connect)?;
                a.ttfb.add(&b.ttfb)?;
                a.transfer.add(&b.transfer)?;
            }
            (a, b) => *a = a.take().or_else(|| b.clone()),
        }
        if let Some(b) = &other.aborted {
            if self.aborted.as_ref().map_or(true, |a| b.at_s < a.at_s) {
                self.aborted = Some(b.clone());
            }
        }
        Ok(())
    }
}

fn mismatch(what: &'static str, a: String, b: String) -> ResultsError {
    ResultsError::Mismatch { what, a, b }
}

/// An empty histogram's encoding, for parts that measured nothing.
pub fn empty_histogram() -> String {
    encode_histogram(&new_histogram())
}

/// What a stage ramps: the clients of a closed loop or the rate of an open loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ramped {
    Clients,
    Rate,
}

impl Ramped {
    pub fn name(self) -> &'static str {
        match self {
            Ramped::Clients => "clients",
            Ramped::Rate => "rate",
        }
    }
}

/// How an open loop spaces its sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    /// Evenly: the rate's schedule, connections phase-shifted (wrk2's).
    #[default]
    Even,
    /// A Poisson process: independent exponential gaps (seeded), as independent users arrive.
    Poisson,
}

impl Arrivals {
    pub fn name(self) -> &'static str {
        match self {
            Arrivals::Even => "even",
            Arrivals::Poisson => "poisson",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(values: &[u64], io: u64) -> Part {
        let mut h = new_histogram();
        for &v in values {
            h.record(v).unwrap();
        }
        Part::new(
            values.len() as u64,
            ErrorCounts {
                io,
                ..Default::default()
            },
            &h,
        )
    }

    fn shaped(values: &[u64]) -> ShapeResults {
        ShapeResults {
            operations: vec![OperationResults {
                operation: "get".into(),
                share: 1.0,
                calls: part(values, 1),
                bytes_sent: 10,
                bytes_received: 20,
            }],
            stages: vec![StageResults {
                stage: 1,
                ramped: Ramped::Rate,
                from_s: 0.0,
                to_s: 10.0,
                start: 0.0,
                end: 100.0,
                calls: part(values, 0),
            }],
            phases: Some(Phases {
                connect: Phase::of(&new_histogram()),
                ttfb: Phase::of(&decode_histogram(&part(values, 0).histogram).unwrap()),
                transfer: Phase::of(&new_histogram()),
            }),
            aborted: None,
        }
    }

    #[test]
    fn parts_merge_as_one_run() {
        let mut a = shaped(&[100, 200, 300]);
        let b = shaped(&[5000]);
        a.merge(&b).unwrap();
        let whole = shaped(&[100, 200, 300, 5000]);
        let op = &a.operations[0];
        assert_eq!(op.calls.ok, 4);
        assert_eq!(op.calls.errors.io, 2);
        assert_eq!(op.calls.latency_us, whole.operations[0].calls.latency_us);
        assert_eq!((op.bytes_sent, op.bytes_received), (20, 40));
        assert_eq!(
            a.stages[0].calls.latency_us,
            whole.stages[0].calls.latency_us
        );
        // The offered levels of the shares add up (each process ramps its share).
        assert_eq!(a.stages[0].end, 200.0);
        let ttfb = &a.phases.as_ref().unwrap().ttfb.latency_us;
        assert_eq!(ttfb.count, 4);
        assert_eq!(ttfb.max, whole.phases.unwrap().ttfb.latency_us.max);
    }

    #[test]
    fn stages_or_operations_that_differ_are_refused() {
        let mut a = shaped(&[1]);
        let mut b = shaped(&[1]);
        b.stages[0].to_s = 11.0;
        assert!(matches!(
            a.merge(&b),
            Err(ResultsError::Mismatch { what: "stages", .. })
        ));
        let mut c = shaped(&[1]);
        c.operations[0].operation = "add".into();
        assert!(matches!(
            a.merge(&c),
            Err(ResultsError::Mismatch {
                what: "operations",
                ..
            })
        ));
    }

    #[test]
    fn the_earliest_abort_is_kept() {
        let abort = |at_s| Aborted {
            at_s,
            threshold: "p99<5ms".into(),
            measured: 7.0,
            window_s: 10.0,
            calls: 100,
        };
        let mut a = shaped(&[1]);
        let mut b = shaped(&[1]);
        b.aborted = Some(abort(12.0));
        a.merge(&b).unwrap();
        b.aborted = Some(abort(11.0));
        a.merge(&b).unwrap();
        assert_eq!(a.aborted.unwrap().at_s, 11.0);
    }
}
