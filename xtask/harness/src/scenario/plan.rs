//! Plan expansion: the overridden draft becomes the server instances (one per scale-out count and matrix
//! worker count) and, in each, the client steps (one per step spec and swept client count, every round of a
//! repeated run interleaved), each step's id and label built once here.

use anyhow::{ensure, Context as _, Result};

use super::file::{Operation, ServerSpec, StepSpec};
use super::set::Draft;
use super::validate::{self, AbortArgs, ClientStep};
use super::Scenario;
use crate::faults::FaultSpec;
use crate::portal::{Portal, PortalSpec};
use crate::sut::Sut;
use crate::thresholds::{self, Threshold};

/// Expands `draft` (the scenario with its overrides applied) into the plan of a run.
pub(super) fn expand(
    draft: Draft,
    scenario: &Scenario,
    quick: bool,
    sets: &[String],
) -> Result<Plan> {
    validate::counts(
        draft.matrix.as_deref(),
        draft.sweep.as_deref(),
        draft.swept,
        draft.servers.as_deref(),
    )?;
    let workers: Vec<Option<u32>> = match &draft.matrix {
        Some(w) => w.iter().map(|&n| Some(n)).collect(),
        None => vec![draft.server.workers],
    };
    let servers: Vec<Option<u32>> = match &draft.servers {
        Some(s) => s.iter().map(|&n| Some(n)).collect(),
        None => vec![None],
    };
    let mut instances = Vec::new();
    let mut n = 0;
    for (s, w) in servers
        .iter()
        .flat_map(|&s| workers.iter().map(move |&w| (s, w)))
    {
        let mut steps = instance_steps(&draft, s, w, &mut n)?;
        for st in &mut steps {
            st.faults = validate::faults(&draft.faults, &st.client)
                .with_context(|| format!("step {}", st.id))?;
        }
        // Rounds outermost, so slow drift of the machine spreads over every step alike.
        if draft.repeat > 1 {
            steps = rounds(&steps, draft.repeat);
        }
        steps
            .iter_mut()
            .for_each(|st| checks_for(st, &Sut::BenchServer));
        instances.push(Instance {
            workers: w,
            servers: s.unwrap_or(1),
            sut: Sut::BenchServer,
            steps,
        });
    }
    if instances
        .iter()
        .flat_map(|i| &i.steps)
        .any(|s| !s.client.operation.is_chat())
    {
        ensure!(draft.server.http(), "HTTP steps need [server] http = true");
    }
    let thresholds = thresholds::collect(&scenario.file.thresholds, &[])?;
    let portal = draft
        .portal
        .as_ref()
        .map(PortalSpec::validate)
        .transpose()?;
    Ok(Plan {
        portal,
        scenario: scenario.clone(),
        quick,
        sets: sets.to_vec(),
        server: draft.server,
        instances,
        repeat: draft.repeat,
        thresholds,
        soak: scenario.file.soak.clone(),
    })
}

/// The steps of one instance (`s` servers, `w` workers): every step spec once per swept client count, numbered
/// on from `n`.
fn instance_steps(
    draft: &Draft,
    s: Option<u32>,
    w: Option<u32>,
    n: &mut usize,
) -> Result<Vec<Step>> {
    let mut steps = Vec::new();
    for spec in &draft.steps {
        let first = spec.operation.as_ref().map(|o| o.first());
        let ramps_clients = spec.stages.iter().flatten().any(|st| st.clients.is_some());
        anyhow::ensure!(
            !(ramps_clients && draft.sweep.is_some()),
            "step {} ramps its clients in stages: a client sweep ([sweep], clients=…) would run the same ramp \
             once per count",
            spec.name.as_deref().unwrap_or("unnamed")
        );
        let client_counts: Vec<Option<u32>> = match (&draft.sweep, first) {
            (_, Some(Operation::Chat)) => vec![None],
            (Some(c), _) => c.iter().map(|&n| Some(n)).collect(),
            (None, _) => vec![spec.clients],
        };
        for clients in client_counts {
            *n += 1;
            let mut spec = spec.clone();
            spec.clients = clients.or(spec.clients);
            steps.push(step(
                &spec,
                &draft.server,
                *n,
                s,
                w.filter(|_| draft.matrix.is_some()),
                w,
            )?);
        }
    }
    Ok(steps)
}

/// Step number `n` of `spec`: validated, with its id (`03-small-workers-2-clients-4`) and label.
fn step(
    spec: &StepSpec,
    server: &ServerSpec,
    n: usize,
    s: Option<u32>,
    matrix_workers: Option<u32>,
    workers: Option<u32>,
) -> Result<Step> {
    let client = ClientStep::validate(spec, server)
        .with_context(|| format!("step {} ({})", n, spec.name.as_deref().unwrap_or("unnamed")))?;
    let mut parts: Vec<String> = spec.name.iter().cloned().collect();
    let mut label = parts.clone();
    if let Some(s) = s {
        parts.push(format!("servers-{s}"));
        label.push(format!("servers={s}"));
    }
    if let Some(w) = matrix_workers {
        parts.push(format!("workers-{w}"));
        label.push(format!("workers={w}"));
    }
    if let Some(c) = client.clients {
        parts.push(format!("clients-{c}"));
        label.push(format!("clients={c}"));
    }
    if parts.is_empty() {
        let what = match &client.mix {
            Some(_) => "mix".to_owned(),
            None => client.operation.name().to_owned(),
        };
        parts.push(what.clone());
        label.push(what);
    }
    Ok(Step {
        id: format!("{n:02}-{}", slug(&parts.join("-"))),
        label: label.join(" "),
        name: spec.name.clone(),
        workers,
        servers: s,
        round: None,
        sut: None,
        client,
        faults: Vec::new(),
    })
}

/// Every step `repeat` times, rounds outermost (`…-r1`, `…-r2`).
fn rounds(steps: &[Step], repeat: u32) -> Vec<Step> {
    (1..=repeat)
        .flat_map(|r| {
            steps.iter().map(move |st| Step {
                id: format!("{}-r{r}", st.id),
                round: Some(r),
                ..st.clone()
            })
        })
        .collect()
}

/// `step` against `sut`: its name in the id (before the round) and in the label.
fn for_sut(step: &Step, sut: &Sut) -> Step {
    let base = match step.round {
        Some(r) => step
            .id
            .strip_suffix(&format!("-r{r}"))
            .unwrap_or(&step.id)
            .to_owned(),
        None => step.id.clone(),
    };
    let mut id = format!("{base}-{}", sut.name());
    if let Some(r) = step.round {
        id.push_str(&format!("-r{r}"));
    }
    let mut out = Step {
        id,
        label: format!("{} sut={}", step.label, sut.name()),
        sut: Some(sut.name().to_owned()),
        ..step.clone()
    };
    checks_for(&mut out, sut);
    out
}

/// What a step checks of `sut`'s answers beyond what the protocol promises: a chat room's one order of
/// messages, which bench-server keeps under its room lock (a server of another's, such as VOLANO's, need
/// not: each sender's order is what is promised).
fn checks_for(step: &mut Step, sut: &Sut) {
    if let Some(chat) = &mut step.client.chat {
        chat.room_order = matches!(sut, Sut::BenchServer);
    }
}

/// One step of a run: a bench-client invocation against one server instance.
#[derive(Debug, Clone)]
pub struct Step {
    /// `01-clients-1`: the results file is `steps/<id>.json`.
    pub id: String,
    /// `clients=1`, passed to bench-client as `--label`.
    pub label: String,
    pub name: Option<String>,
    pub workers: Option<u32>,
    /// Server instances the step's load is spread across (`[scale_out]`), None without one.
    pub servers: Option<u32>,
    /// The round (1 …) of a repeated step (`repeat`), None when steps run once.
    pub round: Option<u32>,
    /// The server it measures, when the run names one (`--sut`, `--target`); None: bench-server alone.
    pub sut: Option<String>,
    pub client: ClientStep,
    /// Faults done to the server while the step runs (`[[fault]]`, `--fault`), in order of `at`.
    pub faults: Vec<FaultSpec>,
}

/// One bench-server process and the steps run against it.
#[derive(Debug, Clone)]
pub struct Instance {
    /// `--workers`; None = the default (the cores the server is pinned to).
    pub workers: Option<u32>,
    /// How many bench-server instances (containers) serve the steps.
    pub servers: u32,
    /// The server the steps measure (bench-server unless `--sut`/`--target` say otherwise).
    pub sut: Sut,
    pub steps: Vec<Step>,
}

/// A validated scenario with its overrides applied: what `run` executes.
#[derive(Debug, Clone)]
pub struct Plan {
    pub scenario: Scenario,
    pub quick: bool,
    pub sets: Vec<String>,
    pub server: ServerSpec,
    pub instances: Vec<Instance>,
    /// Rounds of every step.
    pub repeat: u32,
    /// The scenario's `[thresholds]`; `run --threshold` adds to them.
    pub thresholds: Vec<Threshold>,
    /// The scenario's `[soak]` limits; `run --soak` sets the defaults when it has none.
    pub soak: Option<crate::soak::SoakLimits>,
    /// The OSS/J portal's tiers around the servers (app instances), when the scenario has `[portal]`.
    pub portal: Option<Portal>,
}

impl Plan {
    pub fn steps(&self) -> impl Iterator<Item = &Step> {
        self.instances.iter().flat_map(|i| &i.steps)
    }

    /// The plan run against each of `suts` in turn: with one, every instance measures it (ids unchanged);
    /// with several, each instance is split by round and each round runs against
    /// every SUT in the order given (rounds interleaved, so drift of the machine spreads over them alike),
    /// each step's id and label naming its server (`01-clients-4-gsoap-r1`, `clients=4 sut=gsoap`). In a
    /// `--quick` run a JIT-compiled peer gets at least its `quick_warmup` (quick_warmup.rs).
    pub fn for_suts(mut self, suts: &[Sut]) -> Result<Plan> {
        ensure!(!suts.is_empty(), "no server to measure");
        for sut in suts {
            if !matches!(sut, Sut::BenchServer) {
                ensure!(
                    self.portal.is_none(),
                    "{sut} cannot be measured by an OSS/J portal scenario (its tiers are bench-server roles)"
                );
                ensure!(
                    !self.needs_containers(),
                    "{sut} cannot be measured by a scale-out scenario (several bench-server instances)"
                );
            }
            if matches!(sut, Sut::Peer(_)) && self.steps().any(|s| s.client.operation.is_chat()) {
                anyhow::bail!(
                    "{} has no peer for {sut}: the peers serve SOAP and HTTP, not the chat protocol",
                    self.scenario.name
                );
            }
        }
        if let [only] = suts {
            let name = (*only != Sut::BenchServer).then(|| only.name().to_owned());
            for i in &mut self.instances {
                i.sut = only.clone();
                for st in &mut i.steps {
                    st.sut.clone_from(&name);
                    checks_for(st, only);
                }
            }
            self.quick_warm_up_floor();
            return Ok(self);
        }
        let mut out = Vec::new();
        for inst in &self.instances {
            let mut rounds: Vec<Option<u32>> = inst.steps.iter().map(|s| s.round).collect();
            rounds.dedup();
            for round in rounds {
                for sut in suts {
                    let steps = inst
                        .steps
                        .iter()
                        .filter(|s| s.round == round)
                        .map(|s| for_sut(s, sut))
                        .collect();
                    out.push(Instance {
                        sut: sut.clone(),
                        steps,
                        ..inst.clone()
                    });
                }
            }
        }
        self.instances = out;
        self.quick_warm_up_floor();
        Ok(self)
    }

    /// Has bench-client stop each HTTP step as soon as one of the plan's thresholds has clearly failed on a
    /// trailing window (the scenario's `abort_on_fail`, `run --abort-on-fail`).
    pub fn arm_abort(&mut self) -> Result<()> {
        ensure!(
            !self.thresholds.is_empty(),
            "abort_on_fail needs a threshold to judge ([thresholds] or --threshold)"
        );
        let f = &self.scenario.file;
        let args = AbortArgs {
            thresholds: self.thresholds.clone(),
            grace: f.abort_grace,
            window: f.abort_window,
        };
        // bench-client judges closed intervals: an interval longer than the window or the grace would stretch
        // both to it (a 2 s window on 10 s intervals first judged at 20 s), so the interval is cut to them.
        let finest = [f.abort_window, f.abort_grace]
            .into_iter()
            .flatten()
            .map(|d| d.0)
            .filter(|d| !d.is_zero())
            .min();
        for i in &mut self.instances {
            for st in i.steps.iter_mut().filter(|s| s.client.chat.is_none()) {
                st.client.abort = Some(args.clone());
                if let (Some(iv), Some(fine)) = (&mut st.client.interval, finest) {
                    iv.0 = iv.0.min(fine);
                }
            }
        }
        Ok(())
    }

    /// Whether its steps stop on a clearly failed threshold ([`Plan::arm_abort`]).
    pub fn aborts(&self) -> bool {
        self.steps().any(|s| s.client.abort.is_some())
    }

    /// Several server instances: only container runs provide them.
    pub(crate) fn needs_containers(&self) -> bool {
        // A portal's app instances are processes behind its front end, on this machine too.
        self.portal.is_none() && self.instances.iter().any(|i| i.servers > 1)
    }

    /// Seconds of load the plan asks for, counting only steps whose length is known in advance.
    pub fn planned_seconds(&self) -> f64 {
        self.steps()
            .filter_map(|s| s.client.planned_seconds())
            .fold(0.0, |a, b| a + b)
    }
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}
