//! Scenario files (`scenarios/*.toml`): raw TOML types (deny_unknown_fields), `--quick`/`--set` overrides,
//! validation, and expansion into the server instances and client steps of one run.
//!
//! Config flows one way: TOML → [`ScenarioFile`] → overrides → [`Plan`] (validated). Only xtask reads these files.

use std::{
    fmt,
    path::{Path, PathBuf},
    time::Duration,
};

use anyhow::{bail, ensure, Context as _, Result};
use bench_proto::units;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// Where scenario files live, relative to the project root.
pub const DIR: &str = "scenarios";

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
    #[cfg(test)]
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
}

impl ServerSpec {
    fn overlay(&self, top: &ServerSpec) -> ServerSpec {
        ServerSpec {
            http: top.http.or(self.http),
            chat: top.chat.or(self.chat),
            workers: top.workers.or(self.workers),
            max_body: top.max_body.clone().or_else(|| self.max_body.clone()),
            store_cap: top.store_cap.or(self.store_cap),
            header_timeout: top.header_timeout.or(self.header_timeout),
            idle_timeout: top.idle_timeout.or(self.idle_timeout),
            max_connections: top.max_connections.or(self.max_connections),
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
    pub rooms: Option<u32>,
    pub users: Option<u32>,
    pub count: Option<u32>,
    pub pause: Option<Dur>,
    pub runs: Option<u32>,
}

impl StepSpec {
    /// `top`'s fields win; setting either of duration/requests replaces both (they are exclusive).
    fn overlay(&self, top: &StepSpec) -> StepSpec {
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
    #[serde(default)]
    pub published: Vec<Published>,
}

/// A loaded scenario file with its name and hash.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub path: PathBuf,
    pub sha256: String,
    pub file: ScenarioFile,
}

/// Every scenario name, sorted.
pub fn names(root: &Path) -> Result<Vec<String>> {
    let dir = root.join(DIR);
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "toml") {
            if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
                names.push(stem.to_owned());
            }
        }
    }
    names.sort();
    Ok(names)
}

impl Scenario {
    /// A scenario from text, for tests of the layers above.
    #[cfg(test)]
    pub fn from_text(text: &str) -> Scenario {
        Scenario {
            name: "t".into(),
            path: "t.toml".into(),
            sha256: String::new(),
            file: toml::from_str(text).expect("a valid scenario"),
        }
    }

    /// Loads `scenarios/<name>.toml` (or a path to a `.toml` file).
    pub fn load(root: &Path, name: &str) -> Result<Scenario> {
        let path = if name.ends_with(".toml") {
            PathBuf::from(name)
        } else {
            root.join(DIR).join(format!("{name}.toml"))
        };
        let bytes = std::fs::read(&path).with_context(|| {
            let known = names(root).map(|n| n.join(", ")).unwrap_or_default();
            format!(
                "no scenario `{name}` ({} not readable); scenarios: {known}",
                path.display()
            )
        })?;
        let text = std::str::from_utf8(&bytes)
            .with_context(|| format!("{} is not UTF-8", path.display()))?;
        let file: ScenarioFile =
            toml::from_str(text).with_context(|| format!("invalid scenario {}", path.display()))?;
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(name)
            .to_owned();
        let sha256 = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Ok(Scenario {
            name,
            path,
            sha256,
            file,
        })
    }

    /// Applies `--quick` (the file's `[quick]` table) and then every `--set`, and validates the result.
    pub fn plan(&self, quick: bool, sets: &[String]) -> Result<Plan> {
        let f = &self.file;
        ensure!(!f.description.trim().is_empty(), "description is empty");
        ensure!(!f.seed.trim().is_empty(), "seed is empty");
        ensure!(
            !f.steps.is_empty(),
            "a scenario needs at least one [[step]]"
        );
        let mut draft = Draft {
            server: f.server.clone(),
            steps: f.steps.iter().map(|s| f.defaults.overlay(s)).collect(),
            sweep: f.sweep.as_ref().map(|s| s.clients.clone()),
            matrix: f.matrix.as_ref().map(|m| m.workers.clone()),
            servers: f.scale_out.as_ref().map(|s| s.servers.clone()),
            repeat: f.repeat.unwrap_or(1),
            swept: f.sweep.is_some(),
        };
        // The [quick] table is validated on every load, not only under --quick.
        let mut quick_draft = draft.clone();
        for (k, v) in &f.quick {
            quick_draft
                .apply(k, v)
                .with_context(|| format!("in [quick]: `{k}`"))?;
        }
        if quick {
            draft = quick_draft;
        }
        for set in sets {
            let (k, v) = parse_set(set)?;
            draft
                .apply(&k, &v)
                .with_context(|| format!("--set {set}"))?;
        }
        for p in &f.published {
            ensure!(
                !p.unit.trim().is_empty()
                    && !p.label.trim().is_empty()
                    && !p.source.trim().is_empty(),
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
        draft.into_plan(self, quick, sets)
    }
}

/// `key=value` → the key and a TOML value (a bare word that is not TOML is a string: `duration=60s`).
pub fn parse_set(set: &str) -> Result<(String, toml::Value)> {
    let Some((k, v)) = set.split_once('=') else {
        bail!("--set takes key=value, got `{set}`")
    };
    let value = toml::from_str::<toml::Table>(&format!("v = {v}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(v.to_owned()));
    Ok((k.trim().to_owned(), value))
}

/// The scenario while overrides are applied.
#[derive(Debug, Clone)]
struct Draft {
    server: ServerSpec,
    steps: Vec<StepSpec>,
    sweep: Option<Vec<u32>>,
    matrix: Option<Vec<u32>>,
    servers: Option<Vec<u32>>,
    repeat: u32,
    /// The scenario sweeps client counts itself (so `clients=` sets the sweep, not one count).
    swept: bool,
}

impl Draft {
    fn apply(&mut self, key: &str, value: &toml::Value) -> Result<()> {
        match key {
            "clients" | "sweep.clients" => self.sweep = Some(int_list(value)?),
            "workers" | "matrix.workers" => self.matrix = Some(int_list(value)?),
            "servers" | "scale_out.servers" => self.servers = Some(int_list(value)?),
            "repeat" => {
                let n = value.as_integer().filter(|n| (1..=1000).contains(n));
                self.repeat = n.context("repeat takes a count of rounds, 1 … 1000")? as u32;
            }
            "name" => bail!("step names cannot be overridden"),
            _ => {
                if let Some(server_key) = key.strip_prefix("server.") {
                    let top: ServerSpec = one_key(server_key, value)?;
                    self.server = self.server.overlay(&top);
                } else {
                    let top: StepSpec = one_key(key, value)?;
                    for s in &mut self.steps {
                        *s = s.overlay(&top);
                    }
                }
            }
        }
        Ok(())
    }

    fn into_plan(self, scenario: &Scenario, quick: bool, sets: &[String]) -> Result<Plan> {
        let server = self.server;
        if let Some(w) = &self.matrix {
            ensure!(
                !w.is_empty() && w.iter().all(|&n| n > 0),
                "matrix workers must be a non-empty list of counts ≥ 1"
            );
        }
        if let Some(c) = &self.sweep {
            let what = if self.swept || c.len() > 1 {
                "sweep clients must be a non-empty list of counts ≥ 1"
            } else {
                "clients must be ≥ 1"
            };
            ensure!(!c.is_empty() && c.iter().all(|&n| n > 0), "{what}");
        }
        if let Some(s) = &self.servers {
            ensure!(
                !s.is_empty() && s.iter().all(|&n| n > 0),
                "scale_out servers must be a non-empty list of counts ≥ 1"
            );
        }
        let workers: Vec<Option<u32>> = match &self.matrix {
            Some(w) => w.iter().map(|&n| Some(n)).collect(),
            None => vec![server.workers],
        };
        let servers: Vec<Option<u32>> = match &self.servers {
            Some(s) => s.iter().map(|&n| Some(n)).collect(),
            None => vec![None],
        };
        let mut instances = Vec::new();
        let mut n = 0;
        for (s, w) in servers
            .iter()
            .flat_map(|&s| workers.iter().map(move |&w| (s, w)))
        {
            let mut steps = Vec::new();
            for spec in &self.steps {
                let client_counts: Vec<Option<u32>> = match (&self.sweep, spec.operation) {
                    (_, Some(Operation::Chat)) => vec![None],
                    (Some(c), _) => c.iter().map(|&n| Some(n)).collect(),
                    (None, _) => vec![spec.clients],
                };
                for clients in client_counts {
                    n += 1;
                    let mut spec = spec.clone();
                    spec.clients = clients.or(spec.clients);
                    let client = ClientStep::validate(&spec, &server).with_context(|| {
                        format!("step {} ({})", n, spec.name.as_deref().unwrap_or("unnamed"))
                    })?;
                    let mut parts: Vec<String> = spec.name.iter().cloned().collect();
                    let mut label = parts.clone();
                    if let Some(s) = s {
                        parts.push(format!("servers-{s}"));
                        label.push(format!("servers={s}"));
                    }
                    if self.matrix.is_some() {
                        if let Some(w) = w {
                            parts.push(format!("workers-{w}"));
                            label.push(format!("workers={w}"));
                        }
                    }
                    if let Some(c) = client.clients {
                        parts.push(format!("clients-{c}"));
                        label.push(format!("clients={c}"));
                    }
                    if parts.is_empty() {
                        parts.push(client.operation.name().to_owned());
                        label.push(client.operation.name().to_owned());
                    }
                    steps.push(Step {
                        id: format!("{n:02}-{}", slug(&parts.join("-"))),
                        label: label.join(" "),
                        name: spec.name.clone(),
                        workers: w,
                        servers: s,
                        round: None,
                        client,
                    });
                }
            }
            // Rounds outermost, so slow drift of the machine spreads over every step alike.
            if self.repeat > 1 {
                steps = (1..=self.repeat)
                    .flat_map(|r| {
                        steps.iter().map(move |st| Step {
                            id: format!("{}-r{r}", st.id),
                            round: Some(r),
                            ..st.clone()
                        })
                    })
                    .collect();
            }
            instances.push(Instance {
                workers: w,
                servers: s.unwrap_or(1),
                steps,
            });
        }
        if instances
            .iter()
            .flat_map(|i| &i.steps)
            .any(|s| !s.client.operation.is_chat())
        {
            ensure!(server.http(), "HTTP steps need [server] http = true");
        }
        let thresholds = super::thresholds::collect(&scenario.file.thresholds, &[])?;
        Ok(Plan {
            scenario: scenario.clone(),
            quick,
            sets: sets.to_vec(),
            server,
            instances,
            repeat: self.repeat,
            thresholds,
        })
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

fn int_list(value: &toml::Value) -> Result<Vec<u32>> {
    let parse = |v: &toml::Value| -> Result<u32> {
        match v {
            toml::Value::Integer(i) => {
                u32::try_from(*i).with_context(|| format!("{i} is out of range"))
            }
            toml::Value::String(s) => s
                .trim()
                .parse()
                .with_context(|| format!("`{s}` is not a count")),
            other => bail!("`{other}` is not a count"),
        }
    };
    match value {
        toml::Value::Array(a) => a.iter().map(parse).collect(),
        toml::Value::String(s) if s.contains(',') => s
            .split(',')
            .map(|p| parse(&toml::Value::String(p.to_owned())))
            .collect(),
        v => Ok(vec![parse(v)?]),
    }
}

/// Deserialises `{ key = value }` into `T`, so unknown keys and wrong types are refused as in the file.
fn one_key<T: DeserializeOwned>(key: &str, value: &toml::Value) -> Result<T> {
    let mut t = toml::Table::new();
    t.insert(key.to_owned(), value.clone());
    T::deserialize(toml::Value::Table(t)).map_err(|e| anyhow::anyhow!("{}", e.to_string().trim()))
}

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
    pub chat: Option<ChatStep>,
}

impl ClientStep {
    fn validate(s: &StepSpec, server: &ServerSpec) -> Result<ClientStep> {
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
        let length = match (s.duration, s.requests) {
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
        };
        if !operation.is_chat() {
            let clients = s.clients.context("no clients (set clients or a [sweep])")?;
            ensure!(clients > 0, "clients must be ≥ 1");
            ensure!(length.is_some(), "no duration or requests");
        }
        ensure!(s.threads.map_or(true, |t| t > 0), "threads must be ≥ 1");
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
    pub client: ClientStep,
}

/// One bench-server process and the steps run against it.
#[derive(Debug, Clone)]
pub struct Instance {
    /// `--workers`; None = the default (the cores the server is pinned to).
    pub workers: Option<u32>,
    /// How many bench-server instances (containers) serve the steps.
    pub servers: u32,
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
    pub thresholds: Vec<super::thresholds::Threshold>,
}

impl Plan {
    pub fn steps(&self) -> impl Iterator<Item = &Step> {
        self.instances.iter().flat_map(|i| &i.steps)
    }

    /// Several server instances: only container runs provide them.
    pub fn needs_containers(&self) -> bool {
        self.instances.iter().any(|i| i.servers > 1)
    }

    /// Seconds of load the plan asks for, counting only steps whose length is known in advance.
    pub fn planned_seconds(&self) -> f64 {
        self.steps()
            .filter_map(|s| s.client.planned_seconds())
            .fold(0.0, |a, b| a + b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(text: &str) -> Scenario {
        Scenario {
            name: "t".into(),
            path: "t.toml".into(),
            sha256: String::new(),
            file: toml::from_str(text).unwrap(),
        }
    }

    const BASE: &str = r#"
        description = "d"
        reproduces = "r"
        seed = "000_x.txt"
        [defaults]
        operation = "echoComplexTypeDoc"
        clients = 4
        duration = "10s"
        warmup = "1s"
        [[step]]
        [[step]]
        name = "small"
        operation = "echo"
        message_size = "1K"
        [quick]
        duration = "2s"
        clients = [1, 2]
    "#;

    /// The tidy check of every committed scenario: parses (deny_unknown_fields), validates full and quick,
    /// and the quick plan stays well inside the one-minute budget of `--quick`.
    #[test]
    fn every_scenario_file_parses_validates_and_is_quick() {
        let root = crate::paths::project_root();
        let names = names(&root).unwrap();
        assert!(
            names.len() >= 6,
            "expected the seed scenarios, found {names:?}"
        );
        for name in names {
            let s = Scenario::load(&root, &name).unwrap_or_else(|e| panic!("{name}: {e:#}"));
            let full = s
                .plan(false, &[])
                .unwrap_or_else(|e| panic!("{name}: {e:#}"));
            let quick = s
                .plan(true, &[])
                .unwrap_or_else(|e| panic!("{name} --quick: {e:#}"));
            assert!(
                !s.file.published.is_empty(),
                "{name} has no published figures"
            );
            assert!(!s.file.quick.is_empty(), "{name} has no [quick] table");
            assert!(
                quick.planned_seconds() <= 45.0,
                "{name} --quick plans {} s",
                quick.planned_seconds()
            );
            assert!(
                quick.planned_seconds() <= full.planned_seconds(),
                "{name}: quick is longer than full"
            );
        }
    }

    #[test]
    fn defaults_sweep_and_ids() {
        let plan = scenario(BASE).plan(false, &[]).unwrap();
        let ids: Vec<_> = plan.steps().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["01-clients-4", "02-small-clients-4"]);
        let plan = scenario(BASE).plan(true, &[]).unwrap();
        let ids: Vec<_> = plan.steps().map(|s| s.id.clone()).collect();
        assert_eq!(
            ids,
            [
                "01-clients-1",
                "02-clients-2",
                "03-small-clients-1",
                "04-small-clients-2"
            ]
        );
        assert_eq!(plan.steps().nth(2).unwrap().label, "small clients=1");
        assert_eq!(plan.planned_seconds(), 4.0 * 3.0);
    }

    #[test]
    fn set_overrides_and_validates() {
        let s = scenario(BASE);
        let plan = s
            .plan(
                false,
                &[
                    "duration=28800s".into(),
                    "workers=1,2".into(),
                    "server.max_connections=10".into(),
                ],
            )
            .unwrap();
        assert_eq!(plan.instances.len(), 2);
        assert_eq!(plan.server.max_connections, Some(10));
        let step = &plan.instances[1].steps[0];
        assert_eq!(step.id, "03-workers-2-clients-4");
        assert_eq!(
            step.client.length,
            Some(Length::Duration(Dur(Duration::from_secs(28800))))
        );
        // requests replaces duration rather than clashing with it.
        let plan = s.plan(false, &["requests=5".into()]).unwrap();
        assert_eq!(
            plan.steps().next().unwrap().client.length,
            Some(Length::Requests(5))
        );
        let err = |set: &str| format!("{:#}", s.plan(false, &[set.to_owned()]).unwrap_err());
        assert!(
            err("colour=red").contains("unknown field"),
            "{}",
            err("colour=red")
        );
        assert!(err("duration=soon").contains("not a duration"));
        assert!(err("clients=0").contains("≥ 1"));
        assert!(err("rooms=3").contains("chat steps"));
        assert!(err("packet_size=2").contains("packet_size belongs"));
        assert!(err("nonsense").contains("key=value"));
    }

    #[test]
    fn metric_keys_are_their_names_in_files() {
        for m in Metric::ALL {
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(json, format!("\"{}\"", m.key()));
        }
    }

    #[test]
    fn unknown_fields_are_refused() {
        let bad = BASE.replace("warmup = \"1s\"", "warmup = \"1s\"\nwarm_up = \"1s\"");
        assert!(toml::from_str::<ScenarioFile>(&bad).is_err());
    }

    #[test]
    fn sizes_and_durations() {
        let size = |t: &str| toml::from_str::<Sized>(&format!("size = {t}")).map(|s| s.size.bytes);
        #[derive(Deserialize)]
        struct Sized {
            size: Size,
        }
        assert_eq!(size("\"100K\"").unwrap(), 102_400);
        assert_eq!(size("\"1M\"").unwrap(), 1_048_576);
        assert_eq!(size("512").unwrap(), 512);
        assert_eq!(size("\"512B\"").unwrap(), 512);
        assert!(size("0").is_err());
        assert!(size("\"1G\"").is_err());
        assert_eq!(Dur(Duration::from_millis(1500)).to_string(), "1500ms");
        assert_eq!(Dur(Duration::from_secs(28800)).to_string(), "28800s");
    }
}
