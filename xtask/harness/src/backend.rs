//! The `Backend` trait: where a run's servers and clients execute — processes on this machine, containers on
//! one Docker engine, … The one step loop (`pipeline`) drives every backend the same way: start an instance's
//! servers, run each step's clients, stop, and at the end collect what the backend adds to the record.

use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};

use super::faults::{FaultKind, Reach};
use super::provenance::Provenance;
use super::rundoc::{FaultRecord, RunDoc, TierUse};
use super::scenario::{Instance, Plan, Step};
use super::sut::Target;
use wsbench_tools::docker::EngineAddr;
use wsbench_tools::process::ProcessError;

pub mod peers;
pub mod schedule;
pub mod tiers;

/// One server that printed READY, as the clients reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `http://host:port` when HTTP is served.
    pub http: Option<String>,
    /// `host:port` when chat is served.
    pub chat: Option<String>,
    /// Its READY line.
    pub ready: String,
}

/// The servers of one instance, READY.
#[derive(Debug, Clone)]
pub struct Servers {
    pub endpoints: Vec<Endpoint>,
    /// Worker threads in force, from the READY line.
    pub workers: Option<u32>,
    /// Each server's command line, as started.
    pub commands: Vec<Vec<String>>,
}

impl Servers {
    /// An external `--target`: one endpoint that wsbench did not start, reached as `how` says (`None`: from
    /// this machine).
    pub fn external(target: &Target, how: Option<&str>) -> Servers {
        let at = target
            .http
            .as_deref()
            .or(target.chat.as_deref())
            .unwrap_or("?");
        let how = how.map_or(String::new(), |h| format!("; {h}"));
        Servers {
            endpoints: vec![Endpoint {
                http: target.http.clone(),
                chat: target.chat.clone(),
                ready: format!("at {at} (not started by wsbench{how})"),
            }],
            workers: None,
            commands: vec![],
        }
    }

    /// Whether every server serves what `step` needs (chat or HTTP).
    pub fn serve(&self, step: &Step) -> bool {
        !self.endpoints.is_empty()
            && self.endpoints.iter().all(|e| {
                if step.client.operation.is_chat() {
                    e.chat.is_some()
                } else {
                    e.http.is_some()
                }
            })
    }
}

/// What the clients of one step did.
#[derive(Debug, Clone, Default)]
pub struct ClientRun {
    /// The step's exit code: the first non-zero of its clients', `None` when one was killed by a signal.
    pub exit: Option<i32>,
    /// Each client's command line, as run.
    pub commands: Vec<Vec<String>>,
    /// The step's faults, as they happened.
    pub faults: Vec<FaultRecord>,
    /// The step's deadline ([`ClientStep::deadline`](super::scenario::ClientStep::deadline)), when its
    /// clients were still running then and were stopped.
    pub overran: Option<Duration>,
    /// What each tier of an OSS/J portal used, when the backend ran one and can read its processes.
    pub tiers: Vec<TierUse>,
}

impl ClientRun {
    /// The exit code the step is judged by, from every client's (None: killed by a signal).
    pub(crate) fn worst_exit(codes: &[Option<i32>]) -> Option<i32> {
        if codes.iter().any(Option::is_none) {
            return None;
        }
        Some(
            codes
                .iter()
                .flatten()
                .copied()
                .find(|&c| c != 0)
                .unwrap_or(0),
        )
    }
}

/// Where the servers and clients of a run execute.
pub trait Backend {
    /// What it is, for the console (`processes on this machine`, `containers on docker`).
    fn describe(&self) -> String;

    /// Starts `instance`'s servers and waits until every one printed READY.
    fn start(&mut self, plan: &Plan, instance: &Instance) -> Result<Servers>;

    /// Why the servers are no longer there (one exited since `start`), if they are not.
    fn servers_gone(&mut self) -> Option<String>;

    /// What its faults are done to (`[[fault]]`), if it does any: a run with faults it cannot do is refused.
    fn reach(&self) -> Option<Reach> {
        None
    }

    /// Whether it can do faults of `kind` to its servers.
    fn does_fault(&self, kind: FaultKind) -> bool {
        self.reach() == Some(kind.reach())
    }

    /// Runs `step`'s clients against `servers` (doing the step's faults to the servers); their results document is left at `json` (merged exactly
    /// when several clients ran). Err when nothing was run or no document can be had.
    fn run_step(&mut self, step: &Step, servers: &Servers, json: &Path) -> Result<ClientRun>;

    /// Calls `step`'s operation once per request variant on `servers` and checks every answer in full
    /// (bench-client `--verify-only`), before any load: Ok(true) verified, Ok(false) when this backend does
    /// not verify (nothing was called), Err naming the operation, field path, expected and received values.
    fn verify(&mut self, _step: &Step, _servers: &Servers) -> Result<bool> {
        Ok(false)
    }

    /// Sockets in TIME_WAIT where the clients run, when this backend can count them.
    fn time_wait(&self) -> Option<u64>;

    /// Stops the running servers (SIGTERM), appends their logs to `log`; Err when one did not exit cleanly.
    fn stop(&mut self, log: &Path) -> Result<()>;

    /// Once at the end: what this backend adds to run.json (notes) and provenance.json (its own record).
    fn collect(&mut self, run: &mut RunDoc, prov: &mut Provenance);
}

/// [`Backend::verify`] by a bench-client on this machine (`client`: its command, after any runner), for a
/// backend whose servers this machine reaches at their endpoint's URL.
pub(crate) fn verify_with(client: &[String], step: &Step, servers: &Servers) -> Result<bool> {
    verify_by(step, servers, |args| {
        let mut cmd = client.to_vec();
        cmd.extend(args);
        wsbench_tools::process::output(&cmd)
    })
}

/// [`Backend::verify`] by bench-client in a throwaway container (`docker [-H engine] run --rm` with `run`:
/// its network, labels and the client image, bench-client its entry point) where the servers are reached
/// as the step's clients reach them: on the run's network, or the host's for a `--target`.
pub(crate) fn verify_in_container(
    engine: &EngineAddr,
    run: &[String],
    step: &Step,
    servers: &Servers,
) -> Result<bool> {
    verify_by(step, servers, |args| {
        let mut cmd = run.to_vec();
        cmd.extend(args);
        engine.run_once(&cmd)
    })
}

/// Runs `bench-client --verify-only` (its arguments given to `run`) on the first endpoint; the refusal its
/// stderr states as the error.
fn verify_by(
    step: &Step,
    servers: &Servers,
    run: impl FnOnce(Vec<String>) -> Result<std::process::Output, ProcessError>,
) -> Result<bool> {
    let endpoint = servers.endpoints.first().context("no server endpoint")?;
    // A server that does not serve the step's protocol is the step loop's to report.
    let args = match (
        step.client.operation.is_chat(),
        &endpoint.chat,
        &endpoint.http,
    ) {
        (true, Some(addr), _) => super::argv::verify_chat(addr),
        (false, _, Some(url)) => super::argv::verify(&step.client, url),
        _ => return Ok(false),
    };
    let out = match run(args) {
        Ok(_) => return Ok(true),
        Err(ProcessError::Failed { output, .. }) => output,
        Err(e) => return Err(e).context("running bench-client --verify-only"),
    };
    let said = String::from_utf8_lossy(&out.stderr);
    let said: Vec<&str> = said
        .lines()
        .map(|l| l.trim_start_matches("bench-client: "))
        .filter(|l| !l.trim().is_empty())
        .collect();
    bail!("{}", said.join("; "))
}
