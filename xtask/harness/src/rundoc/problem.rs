//! What went wrong outside a run's measurements, as run.json records it: a kind and its data, put into words
//! only where people read it (summary.md, report.html, the console).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::faults::FaultKind;

/// One problem of a run. In run.json: `{"kind": "servers_gone", "why": …, "step": …}`; a run.json written
/// before problems were typed holds their words, read back as [`Problem::Said`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Problem {
    /// The backend could not be set up (no docker engine, no swarm, a build that failed…).
    BackendUnavailable { error: String },
    /// The backend does not do one of the scenario's faults: nothing was run.
    FaultNotDone { backend: String, fault: FaultKind },
    /// The scenario has faults and a server is an external `--target`: nothing was run.
    FaultOnExternal,
    /// An instance's servers did not start: its steps failed.
    ServersNotStarted { error: String },
    /// A call checked in full before the load was answered wrongly: the server's steps were not measured.
    Refused { sut: String, error: String },
    /// The servers were gone (one exited) before a step: the instance's remaining steps failed.
    ServersGone { why: String, step: String },
    /// A server did not stop cleanly.
    ServersStop { error: String },
    /// A step's server does not serve its protocol.
    NotServed { step: String, chat: bool },
    /// A step's clients could not be run.
    ClientsNotRun { step: String, error: String },
    /// A fault could not be done or undone.
    FaultFailed {
        step: String,
        fault: FaultKind,
        at_s: f64,
        error: String,
    },
    /// A step's clients were still running at its deadline (its duration, warm-up and a grace period):
    /// stopped, the step failed, the run gone on.
    StepDeadline { step: String, limit_s: f64 },
    /// bench-client wrote no results document (`exit`: its status, None when killed by a signal).
    NoResults {
        step: String,
        exit: Option<i32>,
        why: String,
    },
    /// run.json or provenance.json could not be written: the run stops.
    RunUnwritable { error: String },
    /// bench-client could not write its results (its exit 3): the run stops.
    ClientUnwritable { path: String },
    /// Ctrl-C: the remaining steps were not run.
    Interrupted,
    /// A problem as an older wsbench worded it.
    #[serde(untagged)]
    Said(String),
}

impl Problem {
    /// Whether the run stops at it: nothing more is run into a directory that cannot hold it.
    pub(crate) fn stops_run(&self) -> bool {
        matches!(
            self,
            Problem::RunUnwritable { .. } | Problem::ClientUnwritable { .. }
        )
    }
}

/// The start of the words of a problem that stops the run.
const STOPS: &str = "the results could not be written; the run stops";

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::BackendUnavailable { error }
            | Problem::ServersNotStarted { error }
            | Problem::ServersStop { error } => f.write_str(error),
            Problem::FaultNotDone { backend, fault } => write!(
                f,
                "{backend} cannot do the scenario's fault {fault}: {}",
                FaultKind::who_does_which()
            ),
            Problem::FaultOnExternal => f.write_str(
                "faults are done to a server wsbench started; a --target it did not start is not its to kill, \
                 pause or disconnect",
            ),
            Problem::Refused { sut, error } => write!(
                f,
                "{sut} not measured: a call checked before any load was answered wrongly: {error}"
            ),
            Problem::ServersGone { why, step } => write!(f, "{why} before step {step}"),
            Problem::NotServed { step, chat } => write!(
                f,
                "step {step}: the server does not serve {}",
                if *chat { "chat" } else { "HTTP" }
            ),
            Problem::ClientsNotRun { step, error } => write!(f, "step {step}: {error}"),
            Problem::FaultFailed {
                step,
                fault,
                at_s,
                error,
            } => write!(f, "step {step}: {} at {at_s} s: {error}", fault.name()),
            Problem::StepDeadline { step, limit_s } => write!(
                f,
                "step {step}: its clients were still running at the step's deadline ({}: its duration, warm-up \
                 and a grace period): stopped, the step failed, the run went on",
                bench_proto::numbers::span(*limit_s)
            ),
            Problem::NoResults { step, exit, why } => write!(
                f,
                "step {step}: bench-client exited ({}) without results: {why}",
                exit.map_or("by a signal".to_owned(), |c| format!("status {c}"))
            ),
            Problem::RunUnwritable { error } => write!(f, "{STOPS}: {error}"),
            Problem::ClientUnwritable { path } => write!(
                f,
                "{STOPS}: bench-client could not write {path} (exit 3: disk full, or the results folder gone); \
                 it keeps its last whole checkpoint"
            ),
            Problem::Interrupted => f.write_str(
                "interrupted (Ctrl-C): the remaining steps were not run (`cargo xtask run --resume DIR` \
                 continues)",
            ),
            Problem::Said(words) => f.write_str(words),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// run.json holds the kind and its data; a run.json of an older wsbench, the words.
    #[test]
    fn problems_are_kinds_with_data_and_old_words_are_read() {
        let p = Problem::ServersGone {
            why: "bench-server exited (signal 9)".into(),
            step: "02-b".into(),
        };
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(
            json,
            r#"{"kind":"servers_gone","why":"bench-server exited (signal 9)","step":"02-b"}"#
        );
        assert_eq!(serde_json::from_str::<Problem>(&json).unwrap(), p);
        assert_eq!(
            p.to_string(),
            "bench-server exited (signal 9) before step 02-b"
        );
        let old: Vec<Problem> = serde_json::from_str(r#"["the server fell over"]"#).unwrap();
        assert_eq!(old, [Problem::Said("the server fell over".into())]);
        assert_eq!(old[0].to_string(), "the server fell over");
        assert_eq!(
            serde_json::to_string(&Problem::Interrupted).unwrap(),
            r#"{"kind":"interrupted"}"#
        );
    }

    #[test]
    fn only_unwritable_results_stop_a_run() {
        assert!(Problem::RunUnwritable {
            error: "disk full".into()
        }
        .stops_run());
        assert!(Problem::ClientUnwritable { path: "x".into() }.stops_run());
        assert!(!Problem::Interrupted.stops_run());
        // Words that look like it are not it: the type decides.
        assert!(!Problem::Said(format!("{STOPS}: disk full")).stops_run());
    }
}
