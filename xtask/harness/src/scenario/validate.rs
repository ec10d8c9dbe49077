//! Validation: a step spec becomes one validated bench-client invocation ([`ClientStep`]) or an error naming
//! the field; the published figures and the swept counts are checked before the plan is expanded.

use std::time::Duration;

use anyhow::{bail, ensure, Context as _, Result};

use bench_proto::shape::{Arrivals, Mix, Ramped, Stages};
use bench_proto::units::DurationArg;

use super::file::{Operation, OperationSpec, Published, ServerSpec, Size, StageSpec, StepSpec};
use crate::faults::FaultSpec;

/// How long one step runs: a fixed duration or a number of requests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Length {
    Duration(DurationArg),
    Requests(u64),
}

/// The VOLANO chat parameters of a chat step.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatStep {
    pub rooms: u32,
    pub users: u32,
    pub count: u32,
    pub pause: Option<DurationArg>,
    pub runs: Option<u32>,
    /// Check that every member sees the room's messages in one order (`--check-room-order`): set by the
    /// plan for bench-server, which keeps it; the protocol promises only each sender's order.
    pub room_order: bool,
}

/// `--abort-on-fail`: the thresholds bench-client judges on a trailing window, and when.
#[derive(Debug, Clone, PartialEq)]
pub struct AbortArgs {
    /// In the one grammar, bench-proto's, that both the harness and bench-client read.
    pub thresholds: Vec<bench_proto::thresholds::Threshold>,
    pub grace: Option<DurationArg>,
    pub window: Option<DurationArg>,
}

/// One validated bench-client invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientStep {
    /// The operation, or a mix's first.
    pub operation: Operation,
    /// A weighted mix of operations, each call drawing its own (bench-client's `--mix`).
    pub mix: Option<Mix>,
    /// bench-client's `--seed` (a mix's draws, Poisson arrivals), when set.
    pub random_seed: Option<u64>,
    /// Open loop: how sends are spaced (`None`: bench-client's default, even).
    pub arrivals: Option<Arrivals>,
    /// Ramping stages (the step's length is theirs).
    pub stages: Option<Stages>,
    /// Thresholds bench-client judges while the step runs, stopping it on a clear failure (`abort_on_fail`).
    pub abort: Option<AbortArgs>,
    pub clients: Option<u32>,
    pub threads: Option<u32>,
    pub rate: Option<f64>,
    pub length: Option<Length>,
    pub warmup: Option<DurationArg>,
    pub think_time: Option<DurationArg>,
    pub timeout: Option<DurationArg>,
    pub connect_timeout: Option<DurationArg>,
    pub keepalive: bool,
    pub packet_size: Option<u32>,
    pub message_size: Option<Size>,
    pub validate_first: Option<u64>,
    pub validate_every: Option<u64>,
    /// `--interval`: the timeline's resolution and how often the document is checkpointed (None: chat steps,
    /// which have no timeline).
    pub interval: Option<DurationArg>,
    pub chat: Option<ChatStep>,
}

/// bench-client's checkpoint interval when a scenario sets none (its own default).
pub(crate) const DEFAULT_INTERVAL: Duration = Duration::from_secs(10);
/// The interval of `--quick` runs: a smoke run of seconds still has a timeline and loses at most a second.
pub(crate) const QUICK_INTERVAL: Duration = Duration::from_secs(1);

impl ClientStep {
    pub(super) fn validate(s: &StepSpec, server: &ServerSpec) -> Result<ClientStep> {
        let Some(spec) = &s.operation else {
            bail!("no operation")
        };
        let operation = spec.first();
        let chat = match operation.is_chat() {
            true => Some(chat_step(s, server)?),
            false => {
                ensure!(
                    [s.rooms, s.users, s.count, s.runs]
                        .iter()
                        .all(Option::is_none)
                        && s.pause.is_none(),
                    "rooms/users/count/pause/runs belong to chat steps"
                );
                None
            }
        };
        let shape = Shape::of(s, spec)?;
        let length = match &shape.stages {
            Some(st) => Some(Length::Duration(DurationArg(st.duration()))),
            None => length(s)?,
        };
        // A clients ramp has as many connections as its peak.
        let clients = match &shape.stages {
            Some(st) if st.ramped() == Ramped::Clients => Some(st.peak() as u32),
            _ => s.clients,
        };
        if !operation.is_chat() {
            let clients = clients.context("no clients (set clients or a [sweep])")?;
            ensure!(clients > 0, "clients must be ≥ 1");
            ensure!(length.is_some(), "no duration or requests");
        }
        limits(s, &spec.all())?;
        Ok(ClientStep {
            operation,
            mix: shape.mix,
            random_seed: s.random_seed,
            arrivals: s.arrivals,
            // Stages are drawn second by second.
            interval: (!operation.is_chat()).then(|| {
                let default = match shape.stages.is_some() {
                    true => QUICK_INTERVAL,
                    false => DEFAULT_INTERVAL,
                };
                s.interval.unwrap_or(DurationArg(default))
            }),
            stages: shape.stages,
            abort: None,
            clients: if operation.is_chat() { None } else { clients },
            threads: s.threads,
            rate: s.rate,
            length,
            warmup: s.warmup,
            think_time: s.think_time,
            timeout: s.timeout,
            connect_timeout: s.connect_timeout,
            keepalive: s.keepalive.unwrap_or(true),
            packet_size: s.packet_size,
            message_size: s.message_size.clone(),
            validate_first: s.validate_first,
            validate_every: s.validate_every,
            chat,
        })
    }

    /// Seconds this step takes when that is known before running it (warm-up + duration).
    pub fn planned_seconds(&self) -> Option<f64> {
        match self.length {
            Some(Length::Duration(d)) => {
                Some(d.0.as_secs_f64() + self.warmup.map_or(0.0, |w| w.0.as_secs_f64()))
            }
            _ => None,
        }
    }
}

/// A step's shape beyond one operation at one level: a mix, stages, the arrival process.
struct Shape {
    mix: Option<Mix>,
    stages: Option<Stages>,
}

impl Shape {
    fn of(s: &StepSpec, spec: &OperationSpec) -> Result<Shape> {
        let mix = match spec {
            OperationSpec::Mix(m) => Some(m.clone()),
            OperationSpec::One(_) => None,
        };
        let stages = match &s.stages {
            Some(list) => Some(stages(s, list)?),
            None => None,
        };
        if spec.first().is_chat() {
            ensure!(
                s.stages.is_none() && s.arrivals.is_none() && s.random_seed.is_none(),
                "chat steps take no stages, arrivals or random_seed"
            );
        }
        let open_loop =
            s.rate.is_some() || stages.as_ref().is_some_and(|s| s.ramped() == Ramped::Rate);
        ensure!(
            s.arrivals != Some(Arrivals::Poisson) || open_loop,
            "arrivals = \"poisson\" spaces an open loop's sends: give a rate (or rate stages)"
        );
        Ok(Shape { mix, stages })
    }
}

/// A chat step's VOLANO parameters, and none of an HTTP step's.
fn chat_step(s: &StepSpec, server: &ServerSpec) -> Result<ChatStep> {
    ensure!(server.chat(), "chat steps need [server] chat = true");
    let loadgen = [
        s.rate.is_some(),
        s.duration.is_some(),
        s.requests.is_some(),
        s.keepalive.is_some(),
    ];
    ensure!(
        !loadgen.iter().any(|&b| b) && s.packet_size.is_none() && s.message_size.is_none(),
        "chat steps take rooms, users, count, pause and runs, not rate/duration/requests/keepalive/sizes"
    );
    ensure!(
        s.interval.is_none(),
        "chat steps have no timeline: interval belongs to HTTP steps"
    );
    let (Some(rooms), Some(users), Some(count)) = (s.rooms, s.users, s.count) else {
        bail!("chat steps need rooms, users and count")
    };
    ensure!(
        rooms > 0 && users > 0 && count > 0,
        "rooms, users and count must be ≥ 1"
    );
    ensure!(s.runs.map_or(true, |r| r > 0), "runs must be ≥ 1");
    Ok(ChatStep {
        rooms,
        users,
        count,
        pause: s.pause,
        runs: s.runs,
        room_order: false,
    })
}

/// Threads, interval and rate in range; sizes only for the operations (`ops`: the one, or a mix's) that
/// take them.
fn limits(s: &StepSpec, ops: &[Operation]) -> Result<()> {
    ensure!(s.threads.map_or(true, |t| t > 0), "threads must be ≥ 1");
    ensure!(
        s.interval
            .map_or(true, |i| i.0 >= Duration::from_millis(10)),
        "interval must be at least 10ms"
    );
    ensure!(
        s.rate.map_or(true, |r| r.is_finite() && r > 0.0),
        "rate must be > 0 requests/s"
    );
    if s.packet_size.is_some() {
        ensure!(
            ops.contains(&Operation::EchoComplexTypeDoc),
            "packet_size belongs to echoComplexTypeDoc"
        );
    }
    if s.message_size.is_some() {
        let names: Vec<&str> = ops.iter().map(|o| o.name()).collect();
        ensure!(
            ops.iter().any(|o| o.takes_message_size()),
            "{} takes no message_size",
            names.join(", ")
        );
    }
    Ok(())
}

/// A step's stages: valid, and alone in setting the step's length, its start and (for a rate ramp) its rate.
/// A `duration` given with them compresses or stretches them to last it (`--quick`, `--set duration=…`).
fn stages(s: &StepSpec, list: &[StageSpec]) -> Result<Stages> {
    let mut st = StageSpec::stages(list).map_err(|e| anyhow::anyhow!("stages: {e}"))?;
    if let Some(d) = s.duration {
        st = st
            .scaled_to(d.0)
            .map_err(|e| anyhow::anyhow!("stages scaled to duration = {d}: {e}"))?;
    }
    ensure!(
        s.warmup.map_or(true, |w| w.0.is_zero()),
        "stages start from 0: a step with stages takes no warmup (make it a first stage)"
    );
    ensure!(
        s.requests.is_none(),
        "stages set the step's length: drop `requests`"
    );
    match st.ramped() {
        Ramped::Rate => ensure!(
            s.rate.is_none(),
            "rate stages set the step's rate: drop `rate` (the clients are its connections)"
        ),
        Ramped::Clients => ensure!(
            s.rate.is_none(),
            "clients stages ramp a closed loop: drop `rate` (or ramp the rate instead)"
        ),
    }
    Ok(st)
}

/// The faults of a step, in order of `at`: each within the step's measured interval, none overlapping another
/// (a server cannot be paused while it is down), and only for HTTP steps of a set duration.
pub(super) fn faults(faults: &[FaultSpec], step: &ClientStep) -> Result<Vec<FaultSpec>> {
    if faults.is_empty() {
        return Ok(Vec::new());
    }
    ensure!(
        !step.operation.is_chat(),
        "faults are for HTTP steps (chat has no timeline)"
    );
    let Some(Length::Duration(d)) = step.length else {
        bail!("faults need a step of a set duration (their times are within it)")
    };
    let mut sorted = faults.to_vec();
    sorted.sort_by_key(|f| f.at.0);
    let mut free_from = Duration::ZERO;
    for f in &sorted {
        let name = f.kind.name();
        ensure!(!f.duration.0.is_zero(), "{name}: `for` must be > 0");
        f.kind.check(&f.settings)?;
        ensure!(
            f.at.0 >= free_from,
            "{name} at {} overlaps the fault before it (until {})",
            f.at,
            DurationArg(free_from)
        );
        free_from = f.at.0 + f.duration.0;
        ensure!(
            free_from < d.0,
            "{name} at {} for {} does not end within the step's {} (the recovery after it must be measured)",
            f.at,
            f.duration,
            d
        );
    }
    Ok(sorted)
}

/// The step's length: a duration, a request count, or neither (chat steps).
fn length(s: &StepSpec) -> Result<Option<Length>> {
    Ok(match (s.duration, s.requests) {
        (Some(_), Some(_)) => bail!("duration and requests are exclusive"),
        (Some(d), None) => {
            ensure!(!d.0.is_zero(), "duration must be > 0");
            Some(Length::Duration(d))
        }
        (None, Some(n)) => {
            ensure!(n > 0, "requests must be ≥ 1");
            Some(Length::Requests(n))
        }
        (None, None) => None,
    })
}

/// Every published figure has its unit, label, source and conditions, a finite value and a sane range.
pub(super) fn published(figures: &[Published]) -> Result<()> {
    for p in figures {
        ensure!(
            !p.unit.trim().is_empty() && !p.label.trim().is_empty() && !p.source.trim().is_empty(),
            "published figure `{}` needs a unit, a label and a source",
            p.label
        );
        ensure!(
            !p.conditions.trim().is_empty(),
            "published figure `{}` needs its conditions",
            p.label
        );
        ensure!(
            p.value.is_finite(),
            "published figure `{}` is not a number",
            p.label
        );
        if let Some(max) = p.max {
            ensure!(
                max > p.value,
                "published range `{}` needs max > value",
                p.label
            );
        }
    }
    Ok(())
}

/// The swept counts: workers, clients and server instances, each a non-empty list of counts ≥ 1.
pub(super) fn counts(
    matrix: Option<&[u32]>,
    sweep: Option<&[u32]>,
    swept: bool,
    servers: Option<&[u32]>,
) -> Result<()> {
    if let Some(w) = matrix {
        ensure!(
            !w.is_empty() && w.iter().all(|&n| n > 0),
            "matrix workers must be a non-empty list of counts ≥ 1"
        );
    }
    if let Some(c) = sweep {
        let what = if swept || c.len() > 1 {
            "sweep clients must be a non-empty list of counts ≥ 1"
        } else {
            "clients must be ≥ 1"
        };
        ensure!(!c.is_empty() && c.iter().all(|&n| n > 0), "{what}");
    }
    if let Some(s) = servers {
        ensure!(
            !s.is_empty() && s.iter().all(|&n| n > 0),
            "scale_out servers must be a non-empty list of counts ≥ 1"
        );
    }
    Ok(())
}
