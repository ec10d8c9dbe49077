//! The raw TOML types of a scenario file, as written (`deny_unknown_fields`): the server and step specs, the
//! sweep, matrix and scale-out tables, the published figures, and the duration and size syntax.

use bench_proto::units::{self, DurationArg};
use serde::{Deserialize, Serialize};

use crate::faults::FaultSpec;
use crate::metric::Metric;
use crate::portal::PortalSpec;

/// A message size: `1K`, `100K`, `1M` or bytes. The text is passed to bench-client as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Size {
    pub text: String,
    pub bytes: u64,
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Bytes(u64),
            Text(String),
        }
        let text = match Raw::deserialize(d)? {
            Raw::Bytes(n) => n.to_string(),
            Raw::Text(s) => s,
        };
        units::parse_size(&text)
            .map(|bytes| Size {
                text: text.clone(),
                bytes,
            })
            .map_err(serde::de::Error::custom)
    }
}

/// What bench-client is asked to do: the one catalogue of operation names, bench-proto's.
pub use bench_proto::operation::Operation;
use bench_proto::shape::Arrivals;

mod shape;
pub use shape::{OperationSpec, StageSpec};

/// `[server]`: how bench-server is started.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    /// Serve HTTP (default true).
    pub http: Option<bool>,
    /// Serve the chat protocol (default false).
    pub chat: Option<bool>,
    /// Worker threads; default: the cores the server is pinned to.
    pub workers: Option<u32>,
    #[serde(skip_serializing)]
    pub max_body: Option<Size>,
    pub store_cap: Option<u64>,
    #[serde(skip_serializing)]
    pub header_timeout: Option<DurationArg>,
    #[serde(skip_serializing)]
    pub idle_timeout: Option<DurationArg>,
    pub max_connections: Option<u64>,
    /// bench-server's `--rest-above`: above this many open connections, connections rest between requests.
    pub rest_above: Option<u64>,
}

impl ServerSpec {
    pub(super) fn overlay(&self, top: &ServerSpec) -> ServerSpec {
        ServerSpec {
            http: top.http.or(self.http),
            chat: top.chat.or(self.chat),
            workers: top.workers.or(self.workers),
            max_body: top.max_body.clone().or_else(|| self.max_body.clone()),
            store_cap: top.store_cap.or(self.store_cap),
            header_timeout: top.header_timeout.or(self.header_timeout),
            idle_timeout: top.idle_timeout.or(self.idle_timeout),
            max_connections: top.max_connections.or(self.max_connections),
            rest_above: top.rest_above.or(self.rest_above),
        }
    }

    pub fn http(&self) -> bool {
        self.http.unwrap_or(true)
    }

    pub fn chat(&self) -> bool {
        self.chat.unwrap_or(false)
    }
}

/// `[defaults]` and each `[[step]]`: what one bench-client invocation does. Unset fields come from `[defaults]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    pub name: Option<String>,
    pub operation: Option<OperationSpec>,
    /// The seed of a mix's draws and of Poisson arrivals (bench-client's `--seed`; 1 unless set).
    pub random_seed: Option<u64>,
    /// Open loop: `even` (the default) or `poisson`.
    pub arrivals: Option<Arrivals>,
    /// Ramping stages instead of a fixed level (they set the step's length; a duration, requests or warm-up
    /// of `[defaults]` does not apply to a step with stages).
    pub stages: Option<Vec<StageSpec>>,
    pub clients: Option<u32>,
    pub threads: Option<u32>,
    /// Open loop: requests/s in total; closed loop when unset.
    pub rate: Option<f64>,
    pub duration: Option<DurationArg>,
    pub requests: Option<u64>,
    pub warmup: Option<DurationArg>,
    pub think_time: Option<DurationArg>,
    pub timeout: Option<DurationArg>,
    pub connect_timeout: Option<DurationArg>,
    pub keepalive: Option<bool>,
    pub packet_size: Option<u32>,
    pub message_size: Option<Size>,
    pub validate_first: Option<u64>,
    pub validate_every: Option<u64>,
    /// How often bench-client closes an interval of its timeline and checkpoints its document (`--interval`):
    /// what a killed step can lose at most. 10 s unless set; `--quick` runs use 1 s.
    pub interval: Option<DurationArg>,
    pub rooms: Option<u32>,
    pub users: Option<u32>,
    pub count: Option<u32>,
    pub pause: Option<DurationArg>,
    pub runs: Option<u32>,
}

impl StepSpec {
    /// `top`'s fields win; setting either of duration/requests replaces both (they are exclusive).
    pub(super) fn overlay(&self, top: &StepSpec) -> StepSpec {
        macro_rules! pick {
            ($f:ident) => {
                top.$f.clone().or_else(|| self.$f.clone())
            };
        }
        // Stages set the length: the defaults' does not apply to them (a duration of their own compresses them).
        let (duration, requests) =
            if top.stages.is_some() || top.duration.is_some() || top.requests.is_some() {
                (top.duration, top.requests)
            } else {
                (self.duration, self.requests)
            };
        // Stages start from 0: a warm-up of the defaults does not apply to them (one of their own would).
        let warmup = match top.stages.is_some() {
            true => top.warmup,
            false => pick!(warmup),
        };
        StepSpec {
            name: pick!(name),
            operation: pick!(operation),
            random_seed: pick!(random_seed),
            arrivals: pick!(arrivals),
            stages: pick!(stages),
            clients: pick!(clients),
            threads: pick!(threads),
            rate: pick!(rate),
            duration,
            requests,
            warmup,
            think_time: pick!(think_time),
            timeout: pick!(timeout),
            connect_timeout: pick!(connect_timeout),
            keepalive: pick!(keepalive),
            packet_size: pick!(packet_size),
            message_size: pick!(message_size),
            validate_first: pick!(validate_first),
            validate_every: pick!(validate_every),
            interval: pick!(interval),
            rooms: pick!(rooms),
            users: pick!(users),
            count: pick!(count),
            pause: pick!(pause),
            runs: pick!(runs),
        }
    }
}

/// `[sweep]`: every step is run once per client count.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    pub clients: Vec<u32>,
}

/// `[matrix]`: the server is restarted once per value and every step run against each.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Matrix {
    pub workers: Vec<u32>,
}

/// `[scale_out]`: everything is run once per number of server instances (containers: `run` uses them for such a
/// scenario), the clients spread across the instances.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleOut {
    pub servers: Vec<u32>,
}

/// `[[published]]`: a figure from the seed document, shown beside the measured one and never adjusted.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Published {
    pub metric: Metric,
    pub value: f64,
    /// Upper end when the seed gives a range (`value`–`max`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// The seed gives the figure as approximate ("about", "~").
    #[serde(default)]
    pub approx: bool,
    pub unit: String,
    /// Short name for tables and chart legends.
    pub label: String,
    /// Hardware, software and run conditions of the published figure.
    pub conditions: String,
    /// The seed file (or other document) the figure is taken from.
    pub source: String,
    /// Selectors: the figure is compared with the steps that match every selector given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<Operation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// Server instances the figure needs; a single-server run never matches a figure with `instances > 1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instances: Option<u32>,
}

/// One `scenarios/<name>.toml`, as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// One line: what this scenario measures.
    pub description: String,
    /// The published benchmark it reproduces, in a few words.
    pub reproduces: String,
    /// The seed document the published figures come from (`/work/shared/seeds/<seed>`).
    pub seed: String,
    /// Caveats printed in every summary (differences of conditions, what is not reproduced).
    #[serde(default)]
    pub notes: Vec<String>,
    #[serde(default)]
    pub server: ServerSpec,
    #[serde(default)]
    pub defaults: StepSpec,
    #[serde(rename = "step")]
    pub steps: Vec<StepSpec>,
    /// Faults done to the server during every step.
    #[serde(default, rename = "fault")]
    pub faults: Vec<FaultSpec>,
    pub sweep: Option<Sweep>,
    pub matrix: Option<Matrix>,
    pub scale_out: Option<ScaleOut>,
    /// The OSS/J portal's tiers around the app instances (the servers): its steps go through a front end
    /// to them, and through the broker to the back ends.
    pub portal: Option<PortalSpec>,
    /// What `--quick` sets, with the keys and values of `--set`.
    #[serde(default)]
    pub quick: toml::Table,
    /// Rounds of every step (`run --repeat N` overrides): figures are their medians with 95 % intervals.
    pub repeat: Option<u32>,
    /// Pass/fail conditions, k6-style: `p99 = "<5ms"`, `errors = "<1%"`, `throughput = ">1000/s"`.
    #[serde(default)]
    pub thresholds: toml::Table,
    /// Stop a step as soon as a threshold has clearly failed on a trailing window (bench-client's
    /// `--abort-on-fail`; `run --abort-on-fail` sets it too).
    #[serde(default)]
    pub abort_on_fail: bool,
    /// With `abort_on_fail`: nothing judged in a step's first `abort_grace` (10 s), each judgement on the
    /// last `abort_window` (10 s).
    pub abort_grace: Option<DurationArg>,
    pub abort_window: Option<DurationArg>,
    /// Judge every step as a soak (`run --soak` with these limits; a key left out keeps its default).
    #[serde(default)]
    pub soak: Option<crate::soak::SoakLimits>,
    #[serde(default)]
    pub published: Vec<Published>,
}
