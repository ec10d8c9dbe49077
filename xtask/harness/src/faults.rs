//! The faults a step can have done to its servers (`[[fault]]`, `run --fault KIND,at=T,for=D`): one table
//! with a row per kind — its name, what it does, what it is done to, its own settings, and how it is done and
//! undone — each kind in a file of its own. A backend says what its faults can reach ([`Reach`]) and hands
//! the schedule (`backend::schedule`) a [`Target`]; nothing else names a kind.

mod disconnect_server;
mod drain_backend;
mod drain_server_node;
mod kill_server;
mod link;
mod pause_broker;
mod pause_server;

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use anyhow::{bail, Result};
use bench_proto::units::DurationArg;
use serde::{Deserialize, Serialize};

/// Every kind of fault, in the order messages list them.
const TABLE: [&Fault; 7] = [
    &kill_server::FAULT,
    &pause_server::FAULT,
    &pause_broker::FAULT,
    &drain_backend::FAULT,
    &link::FAULT,
    &disconnect_server::FAULT,
    &drain_server_node::FAULT,
];

/// One kind of fault: a row of the table.
#[derive(Debug)]
pub struct Fault {
    /// Its name in scenario files, `--fault` and run.json (`kill-server`).
    pub name: &'static str,
    /// What it does and how it is undone, in words (`SIGSTOP, then SIGCONT`).
    pub does: &'static str,
    /// What it is done to, and so which backends do it.
    pub reach: Reach,
    /// Its own settings beside `kind`, `at` and `for` (`link`: rate, delay, loss).
    pub settings: &'static [&'static str],
    /// Checks the settings a fault of this kind was given (only names in `settings` get here).
    check: fn(&Settings) -> Result<()>,
    /// Does it.
    begin: fn(&FaultSpec, Target<'_>) -> Result<()>,
    /// Undoes it, `for` later.
    end: fn(&FaultSpec, Target<'_>) -> Result<()>,
}

/// What a fault is done to; each backend reaches one (or none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// The server process on this machine (processes, no `--containers`/`--swarm`).
    Process,
    /// The server containers and their network (`--containers`).
    Containers,
    /// The swarm nodes that run the server tasks (`--swarm`).
    Nodes,
}

impl Reach {
    /// `a server process on this machine (no --containers/--swarm)`.
    pub fn words(self) -> &'static str {
        match self {
            Reach::Process => "a server process on this machine (no --containers/--swarm)",
            Reach::Containers => "a server container (--containers)",
            Reach::Nodes => "a swarm node (--swarm)",
        }
    }
}

/// The server process of the local backend, as a fault sees it.
pub trait ServerProcess {
    /// Its process id, if it runs.
    fn pid(&self) -> Result<u32>;
    /// SIGKILL, and forget it.
    fn kill(&mut self) -> Result<()>;
    /// Starts it again with the command line and addresses it had, and waits for its READY line.
    fn restart(&mut self) -> Result<()>;
    /// The OSS/J portal's broker process, if one runs.
    fn broker_pid(&self) -> Result<u32>;
    /// Drains every OSS/J back end (SIGTERM; each answers what it was handed and exits), and forgets them.
    fn drain_backends(&mut self) -> Result<()>;
    /// Starts the drained back ends again with their command lines, and waits for each one's READY line.
    fn restart_backends(&mut self) -> Result<()>;
}

/// The server containers of the docker backend, as a fault sees them.
pub trait ServerContainers {
    /// Shapes each server container's link both ways with tc netem `args`.
    fn degrade(&mut self, netem: &[String]) -> Result<()>;
    /// Puts each server container's link back as the run had it (`--link`, or unshaped).
    fn restore(&mut self) -> Result<()>;
    /// Disconnects each server container from the run's network.
    fn disconnect(&mut self) -> Result<()>;
    /// Connects each again, at the address the clients call, its link as the run had it.
    fn reconnect(&mut self) -> Result<()>;
}

/// The swarm nodes of the swarm backend's server tasks, as a fault sees them.
pub trait ServerNodes {
    /// Drains the node of each server task.
    fn drain(&mut self) -> Result<()>;
    /// Makes the drained nodes active again and waits until each server task runs again.
    fn activate(&mut self) -> Result<()>;
}

/// What a backend hands a fault to be done to.
pub enum Target<'a> {
    Process(&'a mut dyn ServerProcess),
    Containers(&'a mut dyn ServerContainers),
    Nodes(&'a mut dyn ServerNodes),
}

impl fmt::Debug for Target<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Target({:?})", self.reach())
    }
}

impl<'a> Target<'a> {
    fn reach(&self) -> Reach {
        match self {
            Target::Process(_) => Reach::Process,
            Target::Containers(_) => Reach::Containers,
            Target::Nodes(_) => Reach::Nodes,
        }
    }

    /// A fault's refusal of a target it is not done to.
    fn refused<T>(&self, kind: &Fault) -> Result<T> {
        bail!(
            "{} is done to {}, not to {}",
            kind.name,
            kind.reach.words(),
            self.reach().words()
        )
    }

    pub(crate) fn process(self, kind: &Fault) -> Result<&'a mut dyn ServerProcess> {
        match self {
            Target::Process(p) => Ok(p),
            other => other.refused(kind),
        }
    }

    pub(crate) fn containers(self, kind: &Fault) -> Result<&'a mut dyn ServerContainers> {
        match self {
            Target::Containers(c) => Ok(c),
            other => other.refused(kind),
        }
    }

    pub(crate) fn nodes(self, kind: &Fault) -> Result<&'a mut dyn ServerNodes> {
        match self {
            Target::Nodes(n) => Ok(n),
            other => other.refused(kind),
        }
    }
}

/// A kind of fault: a row of the table, named in files by its name.
#[derive(Clone, Copy)]
pub struct FaultKind(&'static Fault);

impl FaultKind {
    /// Every kind, in the table's order.
    pub fn all() -> impl Iterator<Item = FaultKind> {
        TABLE.into_iter().map(FaultKind)
    }

    /// The kind named `name` (`kill-server`).
    pub fn named(name: &str) -> Option<FaultKind> {
        FaultKind::all().find(|k| k.0.name == name)
    }

    pub fn name(self) -> &'static str {
        self.0.name
    }

    pub fn does(self) -> &'static str {
        self.0.does
    }

    pub fn reach(self) -> Reach {
        self.0.reach
    }

    /// Does the fault `spec` to `target`.
    pub fn begin(self, spec: &FaultSpec, target: Target<'_>) -> Result<()> {
        (self.0.begin)(spec, target)
    }

    /// Undoes the fault `spec` on `target`.
    pub fn end(self, spec: &FaultSpec, target: Target<'_>) -> Result<()> {
        (self.0.end)(spec, target)
    }

    /// Checks `settings` for this kind: each one of its own, each as it must be.
    pub fn check(self, settings: &Settings) -> Result<()> {
        for name in settings.0.keys() {
            if self.0.settings.contains(&name.as_str()) {
                continue;
            }
            match TABLE.iter().find(|k| k.settings.contains(&name.as_str())) {
                Some(owner) => bail!(
                    "{}: {} are a {} fault's",
                    self.name(),
                    and_list(owner.settings),
                    owner.name
                ),
                None => bail!("{}: unknown field `{name}`", self.name()),
            }
        }
        (self.0.check)(settings)
    }

    /// What each kind is, for the summary: `kill-server is SIGKILL, then …; pause-server is SIGSTOP, then
    /// SIGCONT; …`.
    pub fn what_each_is() -> String {
        let each: Vec<String> = TABLE
            .iter()
            .map(|k| format!("{} is {}", k.name, k.does))
            .collect();
        each.join("; ")
    }

    /// `--fault`'s help: every kind, what it is, its settings and which backend does it.
    pub fn help() -> String {
        let each: Vec<String> = TABLE
            .iter()
            .map(|k| {
                let settings: String = k.settings.iter().map(|s| format!(",{s}=…")).collect();
                format!(
                    "`{}{settings}` ({}; done to {})",
                    k.name,
                    k.does,
                    k.reach.words()
                )
            })
            .collect();
        format!(
            "A fault done to the server during every step, `KIND,at=T,for=D` from the start of the step's \
             measured interval, added to the scenario's `[[fault]]`s: {}.",
            each.join(", ")
        )
    }

    /// Which kinds each backend does, for a refusal: `kill-server and pause-server are done to a server process
    /// on this machine (…), link and disconnect-server to a server container (--containers), …`.
    pub(crate) fn who_does_which() -> String {
        let mut groups: Vec<(Reach, Vec<&str>)> = Vec::new();
        for k in TABLE {
            match groups.iter_mut().find(|(r, _)| *r == k.reach) {
                Some((_, names)) => names.push(k.name),
                None => groups.push((k.reach, vec![k.name])),
            }
        }
        let parts: Vec<String> = groups
            .iter()
            .enumerate()
            .map(|(i, (reach, names))| {
                let verb = match (i, names.len()) {
                    (0, 1) => " is done",
                    (0, _) => " are done",
                    _ => "",
                };
                format!("{}{verb} to {}", and_list(names), reach.words())
            })
            .collect();
        parts.join(", ")
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

impl PartialEq for FaultKind {
    fn eq(&self, other: &FaultKind) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for FaultKind {}

impl fmt::Debug for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for FaultKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for FaultKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        FaultKind::named(&name).ok_or_else(|| {
            let names: Vec<String> = FaultKind::all().map(|k| format!("`{k}`")).collect();
            serde::de::Error::custom(format!(
                "unknown variant `{name}`, expected one of {}",
                names.join(", ")
            ))
        })
    }
}

/// A fault's own settings as written (`rate = "100mbit"`), checked by its kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings(BTreeMap<String, String>);

impl Settings {
    /// The setting `name`, if given.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// The setting `name` as a duration, if given.
    pub fn duration(&self, name: &str) -> Result<Option<Duration>> {
        self.get(name)
            .map(|v| {
                bench_proto::units::parse_duration(v).map_err(|e| anyhow::anyhow!("{name}: {e}"))
            })
            .transpose()
    }
}

/// `[[fault]]` (and `--fault KIND,at=T,for=D,…`): done to the servers during every step, at `at` from the
/// start of the step's measured interval, for `for`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultSpec {
    pub kind: FaultKind,
    pub at: DurationArg,
    /// How long the fault lasts (then the server is restarted, resumed, connected…).
    pub duration: DurationArg,
    /// The kind's own settings, checked by it ([`FaultKind::check`]).
    pub settings: Settings,
}

impl<'de> Deserialize<'de> for FaultSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let mut raw = BTreeMap::<String, toml::Value>::deserialize(d)?;
        let mut take = |key: &str| {
            raw.remove(key).ok_or_else(|| {
                D::Error::missing_field(match key {
                    "kind" => "kind",
                    "at" => "at",
                    _ => "for",
                })
            })
        };
        let kind = FaultKind::deserialize(take("kind")?).map_err(D::Error::custom)?;
        let at = DurationArg::deserialize(take("at")?).map_err(D::Error::custom)?;
        let duration = DurationArg::deserialize(take("for")?).map_err(D::Error::custom)?;
        let settings = raw
            .into_iter()
            .map(|(k, v)| match v {
                toml::Value::String(s) => Ok((k, s)),
                other => Err(D::Error::custom(format!(
                    "`{k}` is written as a string, not `{other}`"
                ))),
            })
            .collect::<Result<_, _>>()?;
        Ok(FaultSpec {
            kind,
            at,
            duration,
            settings: Settings(settings),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The refusal a backend gives is written from the table, so a new kind is named in it.
    #[test]
    fn the_table_says_which_backend_does_which_kind() {
        assert_eq!(
            FaultKind::who_does_which(),
            "kill-server, pause-server, pause-broker and drain-backend are done to a server process on \
             this machine (no --containers/--swarm), link and disconnect-server to a server container (--containers), \
             drain-server-node to a swarm node (--swarm)"
        );
        for k in FaultKind::all() {
            assert_eq!(FaultKind::named(k.name()), Some(k));
        }
    }

    fn spec(text: &str) -> Result<FaultSpec> {
        Ok(toml::from_str::<FaultSpec>(text)?)
    }

    #[test]
    fn a_kind_checks_its_own_settings_and_refuses_another_s() {
        let link = spec("kind = \"link\"\nat = \"1s\"\nfor = \"2s\"\nrate = \"100mbit\"").unwrap();
        assert_eq!(link.kind.name(), "link");
        assert_eq!(link.settings.get("rate"), Some("100mbit"));
        link.kind.check(&link.settings).unwrap();
        let pause =
            spec("kind = \"pause-server\"\nat = \"1s\"\nfor = \"2s\"\ndelay = \"5ms\"").unwrap();
        let e = pause.kind.check(&pause.settings).unwrap_err().to_string();
        assert_eq!(e, "pause-server: rate, delay and loss are a link fault's");
        let e = format!(
            "{:#}",
            spec("kind = \"unplug\"\nat = \"1s\"\nfor = \"2s\"").unwrap_err()
        );
        assert!(
            e.contains("unknown variant `unplug`, expected one of `kill-server`"),
            "{e}"
        );
        let e = format!("{:#}", spec("kind = \"link\"\nfor = \"2s\"").unwrap_err());
        assert!(e.contains("missing field `at`"), "{e}");
    }
}
