//! `--quick` and `--set key=value` overrides: a draft of the scenario that each override is applied to, key by
//! key, before the plan is expanded.

use anyhow::{bail, Context as _, Result};
use serde::de::DeserializeOwned;
use serde::Deserialize as _;

use super::file::{ServerSpec, StepSpec};
use crate::faults::FaultSpec;
use crate::portal::PortalSpec;

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
pub(super) struct Draft {
    pub(super) server: ServerSpec,
    pub(super) steps: Vec<StepSpec>,
    pub(super) sweep: Option<Vec<u32>>,
    pub(super) matrix: Option<Vec<u32>>,
    pub(super) servers: Option<Vec<u32>>,
    pub(super) repeat: u32,
    /// The scenario sweeps client counts itself (so `clients=` sets the sweep, not one count).
    pub(super) swept: bool,
    pub(super) faults: Vec<FaultSpec>,
    /// `[portal]`, None when the scenario has none.
    pub(super) portal: Option<PortalSpec>,
}

impl Draft {
    /// A key of the `[quick]` table: as `--set`, but a warm-up or a request count is not applied to a step
    /// with stages (they start from 0 and set its length; `duration` compresses them instead).
    pub(super) fn apply_quick(&mut self, key: &str, value: &toml::Value) -> Result<()> {
        if !matches!(key, "warmup" | "requests") {
            return self.apply(key, value);
        }
        let top: StepSpec = one_key(key, value)?;
        for s in self.steps.iter_mut().filter(|s| s.stages.is_none()) {
            *s = s.overlay(&top);
        }
        Ok(())
    }

    pub(super) fn apply(&mut self, key: &str, value: &toml::Value) -> Result<()> {
        match key {
            "clients" | "sweep.clients" => self.sweep = Some(int_list(value)?),
            "workers" | "matrix.workers" => self.matrix = Some(int_list(value)?),
            "servers" | "scale_out.servers" => self.servers = Some(int_list(value)?),
            "front" | "backends" | "portal.front" | "portal.backends" => {
                let key = key.trim_start_matches("portal.");
                let base = self
                    .portal
                    .as_ref()
                    .with_context(|| format!("`{key}` belongs to a scenario with [portal]"))?;
                let top: PortalSpec = one_key(key, value)?;
                self.portal = Some(base.overlay(&top));
            }
            "repeat" => {
                let n = value.as_integer().filter(|n| (1..=1000).contains(n));
                self.repeat = n.context("repeat takes a count of rounds, 1 … 1000")? as u32;
            }
            "name" => bail!("step names cannot be overridden"),
            // `fault=` replaces the scenario's faults (`fault=[]` removes them); `fault+=` (what `--fault`
            // records) adds one.
            "fault" => self.faults = faults(value)?,
            "fault+" => self.faults.extend(faults(value)?),
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
}

/// Faults written as `KIND,at=T,for=D` (a string, or an array of them).
fn faults(value: &toml::Value) -> Result<Vec<FaultSpec>> {
    match value {
        toml::Value::Array(a) => a.iter().map(fault).collect(),
        v => Ok(vec![fault(v)?]),
    }
}

/// `kill-server,at=20s,for=5s` → the fault, as `[[fault]]` would read it (unknown keys refused).
pub fn fault(value: &toml::Value) -> Result<FaultSpec> {
    let text = value
        .as_str()
        .with_context(|| format!("a fault is written KIND,at=T,for=D, not `{value}`"))?;
    let mut parts = text.split(',');
    let mut t = toml::Table::new();
    let kind = parts.next().unwrap_or_default().trim();
    t.insert("kind".into(), toml::Value::String(kind.to_owned()));
    for p in parts {
        let (k, v) = p
            .split_once('=')
            .with_context(|| format!("fault `{text}`: `{p}` is not key=value (at=T, for=D)"))?;
        t.insert(
            k.trim().to_owned(),
            toml::Value::String(v.trim().to_owned()),
        );
    }
    FaultSpec::deserialize(toml::Value::Table(t))
        .map_err(|e| anyhow::anyhow!("fault `{text}`: {}", e.to_string().trim()))
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
