//! Validation: a step spec becomes one validated bench-client invocation ([`ClientStep`]) or an error naming
//! the field; the published figures and the swept counts are checked before the plan is expanded.

use std::time::Duration;

use anyhow::{bail, ensure, Context as _, Result};

use super::file::{Dur, FaultKind, FaultSpec, Operation, Published, ServerSpec, Size, StepSpec};

/// How long one step runs: a fixed duration or a number of requests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Length {
    Duration(Dur),
    Requests(u64),
}

/// The VOLANO chat parameters of a chat step.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatStep {
    pub rooms: u32,
    pub users: u32,
    pub count: u32,
    pub pause: Option<Dur>,
    pub runs: Option<u32>,
}

/// One validated bench-client invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientStep {
    pub operation: Operation,
    pub clients: Option<u32>,
    pub threads: Option<u32>,
    pub rate: Option<f64>,
    pub length: Option<Length>,
    pub warmup: Option<Dur>,
    pub think_time: Option<Dur>,
    pub timeout: Option<Dur>,
    pub connect_timeout: Option<Dur>,
    pub keepalive: bool,
    pub packet_size: Option<u32>,
    pub message_size: Option<Size>,
    pub validate_first: Option<u64>,
    pub validate_every: Option<u64>,
    /// `--interval`: the timeline's resolution and how often the document is checkpointed (None: chat steps,
    /// which have no timeline).
    pub interval: Option<Dur>,
    pub chat: Option<ChatStep>,
}

/// bench-client's checkpoint interval when a scenario sets none (its own default).
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(10);
/// The interval of `--quick` runs: a smoke run of seconds still has a timeline and loses at most a second.
pub const QUICK_INTERVAL: Duration = Duration::from_secs(1);

impl ClientStep {
    pub(super) fn validate(s: &StepSpec, server: &ServerSpec) -> Result<ClientStep> {
        let Some(operation) = s.operation else {
            bail!("no operation")
        };
        let chat_fields = [
            s.rooms.is_some(),
            s.users.is_some(),
            s.count.is_some(),
            s.pause.is_some(),
            s.runs.is_some(),
        ];
        let chat = if operation.is_chat() {
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
            Some(ChatStep {
                rooms,
                users,
                count,
                pause: s.pause,
                runs: s.runs,
            })
        } else {
            ensure!(
                !chat_fields.iter().any(|&b| b),
                "rooms/users/count/pause/runs belong to chat steps"
            );
            None
        };
        let length = length(s)?;
        if !operation.is_chat() {
            let clients = s.clients.context("no clients (set clients or a [sweep])")?;
            ensure!(clients > 0, "clients must be ≥ 1");
            ensure!(length.is_some(), "no duration or requests");
        }
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
                operation == Operation::EchoComplexTypeDoc,
                "packet_size belongs to echoComplexTypeDoc"
            );
        }
        if s.message_size.is_some() {
            ensure!(
                operation.takes_message_size(),
                "{} takes no message_size",
                operation.name()
            );
        }
        Ok(ClientStep {
            operation,
            clients: if operation.is_chat() { None } else { s.clients },
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
            interval: (!operation.is_chat()).then(|| s.interval.unwrap_or(Dur(DEFAULT_INTERVAL))),
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

/// A link fault names how the link degrades (`rate`, `delay`, `loss`, each checked); no other fault has them.
fn link_fault(f: &FaultSpec) -> Result<()> {
    let given = f.rate.is_some() || f.delay.is_some() || f.loss.is_some();
    if f.kind != FaultKind::Link {
        ensure!(
            !given,
            "{}: rate, delay and loss are a link fault's",
            f.kind.name()
        );
        return Ok(());
    }
    ensure!(
        given,
        "link: give rate=R, delay=D or loss=L% (how the link degrades)"
    );
    if let Some(r) = &f.rate {
        wsbench_tools::tc::parse_rate(r).with_context(|| format!("link: rate `{r}`"))?;
    }
    if let Some(l) = &f.loss {
        let pct = l.strip_suffix('%').and_then(|n| n.parse::<f64>().ok());
        ensure!(
            pct.is_some_and(|p| (0.0..=100.0).contains(&p)),
            "link: loss `{l}` is not a percentage (1%, 0.5%)"
        );
    }
    Ok(())
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
        link_fault(f)?;
        ensure!(
            f.at.0 >= free_from,
            "{name} at {} overlaps the fault before it (until {})",
            f.at,
            Dur(free_from)
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
