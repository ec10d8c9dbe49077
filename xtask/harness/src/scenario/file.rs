//! The raw TOML types of a scenario file, as written (`deny_unknown_fields`): the server and step specs, the
//! sweep, matrix and scale-out tables, the published figures, and the duration and size syntax.

use std::{fmt, time::Duration};

use bench_proto::units;
use serde::{Deserialize, Serialize};

/// A duration as written on the command lines (`30s`, `500ms`, `8h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dur(pub Duration);

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        units::parse_duration(&s)
            .map(Dur)
            .map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for Dur {
    /// Formatted the way bench-client parses it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        units::DurationArg(self.0).fmt(f)
    }
}

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

/// The figures a published number can be compared on (contract: `metric` names in run.json).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    TotalPerS,
    PerClientPerS,
    MeanLatencyMs,
    P99LatencyMs,
    ReceivedMbPerS,
    SentMbPerS,
    XmlMbPerS,
    /// The larger of sent and received: a figure given for a link that caps each direction.
    BusierMbPerS,
    ChatScoreMsgPerS,
    ScalingEfficiency,
    CpuUserPct,
    CpuSysPct,
    CpuIdlePct,
}

impl Metric {
    pub const ALL: [Metric; 13] = [
        Metric::TotalPerS,
        Metric::PerClientPerS,
        Metric::MeanLatencyMs,
        Metric::P99LatencyMs,
        Metric::ReceivedMbPerS,
        Metric::SentMbPerS,
        Metric::XmlMbPerS,
        Metric::BusierMbPerS,
        Metric::ChatScoreMsgPerS,
        Metric::ScalingEfficiency,
        Metric::CpuUserPct,
        Metric::CpuSysPct,
        Metric::CpuIdlePct,
    ];

    /// Its name in scenario files and run.json (`total_per_s`).
    pub fn key(self) -> &'static str {
        match self {
            Metric::TotalPerS => "total_per_s",
            Metric::PerClientPerS => "per_client_per_s",
            Metric::MeanLatencyMs => "mean_latency_ms",
            Metric::P99LatencyMs => "p99_latency_ms",
            Metric::ReceivedMbPerS => "received_mb_per_s",
            Metric::SentMbPerS => "sent_mb_per_s",
            Metric::XmlMbPerS => "xml_mb_per_s",
            Metric::BusierMbPerS => "busier_mb_per_s",
            Metric::ChatScoreMsgPerS => "chat_score_msg_per_s",
            Metric::ScalingEfficiency => "scaling_efficiency",
            Metric::CpuUserPct => "cpu_user_pct",
            Metric::CpuSysPct => "cpu_sys_pct",
            Metric::CpuIdlePct => "cpu_idle_pct",
        }
    }

    /// In words, for people.
    pub fn name(self) -> &'static str {
        match self {
            Metric::TotalPerS => "total throughput",
            Metric::PerClientPerS => "throughput per client",
            Metric::MeanLatencyMs => "mean latency",
            Metric::P99LatencyMs => "p99 latency",
            Metric::ReceivedMbPerS => "MB/s received by the client",
            Metric::SentMbPerS => "MB/s sent by the client",
            Metric::XmlMbPerS => "MB/s of XML (sent + received)",
            Metric::BusierMbPerS => "MB/s of XML in the busier direction",
            Metric::ChatScoreMsgPerS => "chat messages/s (VolanoMark score)",
            Metric::ScalingEfficiency => "scaling efficiency",
            Metric::CpuUserPct => "system CPU user %",
            Metric::CpuSysPct => "system CPU sys %",
            Metric::CpuIdlePct => "system CPU idle %",
        }
    }
}

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
    pub header_timeout: Option<Dur>,
    #[serde(skip_serializing)]
    pub idle_timeout: Option<Dur>,
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
    pub operation: Option<Operation>,
    pub clients: Option<u32>,
    pub threads: Option<u32>,
    /// Open loop: requests/s in total; closed loop when unset.
    pub rate: Option<f64>,
    pub duration: Option<Dur>,
    pub requests: Option<u64>,
    pub warmup: Option<Dur>,
    pub think_time: Option<Dur>,
    pub timeout: Option<Dur>,
    pub connect_timeout: Option<Dur>,
    pub keepalive: Option<bool>,
    pub packet_size: Option<u32>,
    pub message_size: Option<Size>,
    pub validate_first: Option<u64>,
    pub validate_every: Option<u64>,
    /// How often bench-client closes an interval of its timeline and checkpoints its document (`--interval`):
    /// what a killed step can lose at most. 10 s unless set; `--quick` runs use 1 s.
    pub interval: Option<Dur>,
    pub rooms: Option<u32>,
    pub users: Option<u32>,
    pub count: Option<u32>,
    pub pause: Option<Dur>,
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
        let (duration, requests) = if top.duration.is_some() || top.requests.is_some() {
            (top.duration, top.requests)
        } else {
            (self.duration, self.requests)
        };
        StepSpec {
            name: pick!(name),
            operation: pick!(operation),
            clients: pick!(clients),
            threads: pick!(threads),
            rate: pick!(rate),
            duration,
            requests,
            warmup: pick!(warmup),
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

/// What a fault does to the system under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// SIGKILL of the server at `at`, restarted on the same address `for` later.
    KillServer,
    /// SIGSTOP of the server at `at`, SIGCONT `for` later.
    PauseServer,
    /// With `--containers`: the server container's link shaped both ways (`rate`, `delay`, `loss`) from `at`
    /// for `for`, then as it was.
    Link,
    /// With `--containers`: the server container disconnected from the run's network (`docker network
    /// disconnect`) at `at`, connected again `for` later.
    DisconnectServer,
    /// With `--swarm`: the node of each server task drained (`docker node update --availability drain`) at
    /// `at`, made active again `for` later; the task is rescheduled there and gets a new address.
    DrainServerNode,
}

impl FaultKind {
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::KillServer => "kill-server",
            FaultKind::PauseServer => "pause-server",
            FaultKind::Link => "link",
            FaultKind::DisconnectServer => "disconnect-server",
            FaultKind::DrainServerNode => "drain-server-node",
        }
    }

    /// Whether it is done to a server container's network (`--containers`), not to a process on this machine.
    pub fn on_network(self) -> bool {
        matches!(self, FaultKind::Link | FaultKind::DisconnectServer)
    }

    /// Whether it is done to a swarm node (`--swarm`).
    pub fn on_swarm(self) -> bool {
        self == FaultKind::DrainServerNode
    }
}

/// `[[fault]]` (and `--fault KIND,at=T,for=D`): done to the server during every step, at `at` from the start
/// of the step's measured interval, for `for`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    pub kind: FaultKind,
    pub at: Dur,
    /// How long the server stays killed (then it is restarted) or paused.
    #[serde(rename = "for")]
    pub duration: Dur,
    /// `link` only: the link's rate (tc syntax, `100mbit`), one-way delay (`5ms`) and loss (`1%`).
    #[serde(default)]
    pub rate: Option<String>,
    #[serde(default)]
    pub delay: Option<Dur>,
    #[serde(default)]
    pub loss: Option<String>,
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
    /// What `--quick` sets, with the keys and values of `--set`.
    #[serde(default)]
    pub quick: toml::Table,
    /// Rounds of every step (`run --repeat N` overrides): figures are their medians with 95 % intervals.
    pub repeat: Option<u32>,
    /// Pass/fail conditions, k6-style: `p99 = "<5ms"`, `errors = "<1%"`, `throughput = ">1000/s"`.
    #[serde(default)]
    pub thresholds: toml::Table,
    /// Judge every step as a soak (`run --soak` with these limits; a key left out keeps its default).
    #[serde(default)]
    pub soak: Option<crate::soak::SoakLimits>,
    #[serde(default)]
    pub published: Vec<Published>,
}
