//! The raw TOML of a step's shape (issue 43): `operation` as one name or a weighted mix, and `stages`.

use std::fmt;

use bench_proto::operation::Operation;
use bench_proto::shape::{Mix, Ramped, Stage, Stages};
use bench_proto::units::DurationArg;
use serde::de::{self, MapAccess, Visitor};
use serde::Deserialize;

/// A step's `operation`: one (`operation = "echo"`), or a weighted mix (`operation = { get = 80, add = 15,
/// echo = 5 }`), each call drawing its own.
#[derive(Debug, Clone, PartialEq)]
pub enum OperationSpec {
    One(Operation),
    Mix(Mix),
}

impl OperationSpec {
    /// The operation, or the mix's first (what decides the service, the chat checks, sizes).
    pub fn first(&self) -> Operation {
        match self {
            OperationSpec::One(op) => *op,
            OperationSpec::Mix(m) => m.entries[0].0,
        }
    }

    /// Each operation called.
    pub fn all(&self) -> Vec<Operation> {
        match self {
            OperationSpec::One(op) => vec![*op],
            OperationSpec::Mix(m) => m.operations().collect(),
        }
    }
}

impl<'de> Deserialize<'de> for OperationSpec {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(OperationVisitor)
    }
}

struct OperationVisitor;

impl<'de> Visitor<'de> for OperationVisitor {
    type Value = OperationSpec;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "an operation's name (\"echo\") or a weighted mix ({ get = 80, add = 15, echo = 5 })",
        )
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<OperationSpec, E> {
        name.parse().map(OperationSpec::One).map_err(E::custom)
    }

    /// The mix's operations in the order written: the draws of a seed depend on it.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OperationSpec, A::Error> {
        let mut entries = Vec::new();
        while let Some((name, weight)) = map.next_entry::<String, f64>()? {
            let op: Operation = name
                .parse()
                .map_err(|e| de::Error::custom(format!("operation mix: {e}")))?;
            entries.push((op, weight));
        }
        Mix::new(entries)
            .map(OperationSpec::Mix)
            .map_err(|e| de::Error::custom(format!("operation mix: {e}")))
    }
}

/// One of a step's `stages`: `{ for = "30s", clients = 100 }` or `{ for = "60s", rate = 20000 }`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageSpec {
    #[serde(rename = "for")]
    pub duration: DurationArg,
    pub clients: Option<u32>,
    pub rate: Option<f64>,
}

impl StageSpec {
    /// The stage: exactly one of `clients` and `rate`.
    pub fn stage(&self) -> Result<Stage, String> {
        let (ramped, target) = match (self.clients, self.rate) {
            (Some(c), None) => (Ramped::Clients, f64::from(c)),
            (None, Some(r)) => (Ramped::Rate, r),
            _ => {
                return Err(format!(
                    "the stage for {} needs clients = N or rate = R (one of them)",
                    self.duration
                ))
            }
        };
        Ok(Stage {
            duration: self.duration.0,
            ramped,
            target,
        })
    }

    /// A step's stages, validated.
    pub fn stages(list: &[StageSpec]) -> Result<Stages, String> {
        let stages = list
            .iter()
            .map(StageSpec::stage)
            .collect::<Result<_, _>>()?;
        Stages::new(stages).map_err(|e| e.to_string())
    }
}
