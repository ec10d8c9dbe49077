//! `cargo xtask swarm check`: what a swarm run needs, each item found or missing, said plainly — a manager
//! here, ready nodes labelled server and client, an engine address and the right images on each, clocks
//! that agree.

use xshell::Shell;

use super::images::{self, image_of};
use super::labels::ROLE_LABEL;
use super::nodes::{self, Facts, Node, Role};
use crate::artifacts::Arch;
use wsbench_tools::docker::EngineAddr;

/// Clock skew beyond this makes the nodes' timestamps disagree visibly (latencies are measured on one clock).
const SKEW_WARN_MS: i64 = 500;

/// One line of the check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub ok: bool,
    pub text: String,
}

fn ok(text: String) -> Item {
    Item { ok: true, text }
}

fn missing(text: String) -> Item {
    Item { ok: false, text }
}

/// A node as the check sees it: its inventory, its engine's facts (or why not), whether its role's image
/// for its arch is there.
#[derive(Debug, Clone)]
pub struct Seen {
    pub node: Node,
    pub facts: Result<Facts, String>,
    /// None: not applicable (no role, or no engine to ask).
    pub image_present: Option<bool>,
    /// The image for its arch is built here (so a run can load it onto the node).
    pub image_built_here: bool,
}

/// Gathers what the check judges (the manager must be this machine's engine).
pub fn gather(sh: &Shell) -> anyhow::Result<Result<Vec<Seen>, String>> {
    if let Err(why) = nodes::manager_state(sh)? {
        return Ok(Err(why));
    }
    let local = EngineAddr::default();
    let seen = nodes::list(sh)?
        .into_iter()
        .map(|node| {
            let facts = nodes::facts(sh, &node).map_err(|e| format!("{e:#}"));
            let want = match (node.role, node.wsbench_arch()) {
                (Some(role), Some(arch)) => {
                    images::id_on(sh, &local, &images::local_tag(image_of(role), arch))
                }
                _ => None,
            };
            let image_present = match (node.role, &node.engine) {
                (Some(role), Some(engine)) if facts.is_ok() => {
                    let have = images::id_on(sh, engine, &images::service_tag(image_of(role)));
                    Some(want.is_some() && want == have)
                }
                _ => None,
            };
            Seen {
                node,
                facts,
                image_present,
                image_built_here: want.is_some(),
            }
        })
        .collect();
    Ok(Ok(seen))
}

/// The verdict, line by line.
pub fn judge(seen: &[Seen]) -> Vec<Item> {
    let mut items = Vec::new();
    for s in seen {
        let n = &s.node;
        let role = n.role.map_or("no role label", Role::name);
        let head = format!(
            "node {} ({}, {}, {role})",
            n.hostname,
            &n.id[..n.id.len().min(12)],
            n.arch_shown()
        );
        if !n.usable() {
            items.push(missing(format!(
                "{head}: {} / {} — not taking tasks",
                n.state, n.availability
            )));
            continue;
        }
        if n.role.is_none() {
            items.push(ok(format!("{head}: takes no wsbench tasks (label it: cargo xtask swarm label {} server|client)", n.id)));
            continue;
        }
        if n.wsbench_arch().is_none() {
            items.push(missing(format!(
                "{head}: wsbench builds for x86_64 and ppc64le only"
            )));
        }
        match &s.facts {
            Ok(f) => {
                items.push(ok(format!(
                    "{head}: engine {} answers — kernel {}, {} CPUs{}",
                    n.engine
                        .as_ref()
                        .map_or_else(String::new, EngineAddr::describe),
                    f.kernel.as_deref().unwrap_or("?"),
                    f.cpus.map_or("?".into(), |c| c.to_string()),
                    f.cpu_model
                        .as_deref()
                        .map_or(String::new(), |m| format!(" ({m})"))
                )));
                match f.clock_skew_ms {
                    Some(skew) if skew.abs() > SKEW_WARN_MS + f.round_trip_ms.unwrap_or(0) => items.push(missing(format!(
                        "{head}: clock is {skew} ms off this machine's (±{} ms): synchronise it (chrony/NTP)",
                        f.round_trip_ms.unwrap_or(0)
                    ))),
                    Some(skew) => items.push(ok(format!(
                        "{head}: clock within {} ms of this machine's ({skew:+} ms measured)",
                        SKEW_WARN_MS
                    ))),
                    None => items.push(missing(format!("{head}: its engine reported no time"))),
                }
            }
            Err(e) if n.engine.is_none() => items.push(missing(format!(
                "{head}: no engine address to load images through and ask for kernel and clock: \
                 cargo xtask swarm label {} {role} --engine ssh://USER@HOST ({e})",
                n.id
            ))),
            Err(e) => items.push(missing(format!("{head}: its engine does not answer: {e}"))),
        }
        match (s.image_present, n.role, n.wsbench_arch()) {
            (Some(true), Some(r), _) => items.push(ok(format!("{head}: has {}", images::service_tag(image_of(r))))),
            (Some(false), Some(r), Some(arch)) if s.image_built_here || Arch::host() == Some(arch) => {
                items.push(ok(format!(
                    "{head}: lacks the current {} for {} (cargo xtask run … --swarm builds it here if need \
                     be and loads it onto the node)",
                    images::service_tag(image_of(r)),
                    arch.name(),
                )))
            }
            (Some(false), Some(r), Some(arch)) => items.push(missing(format!(
                "{head}: {} is not built here, so it cannot be loaded onto this {} node: \
                 cargo xtask build --target {} --images",
                images::local_tag(image_of(r), arch),
                arch.name(),
                arch.name()
            ))),
            _ => {}
        }
    }
    for role in [Role::Server, Role::Client] {
        let count = seen
            .iter()
            .filter(|s| s.node.role == Some(role) && s.node.usable())
            .count();
        if count == 0 {
            items.push(missing(format!(
                "no ready node is labelled {ROLE_LABEL}={}: cargo xtask swarm label NODE {}",
                role.name(),
                role.name()
            )));
        } else {
            items.push(ok(format!(
                "{count} ready node(s) labelled {ROLE_LABEL}={}",
                role.name()
            )));
        }
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, role: Option<Role>, engine: Option<EngineAddr>) -> Node {
        Node {
            id: id.into(),
            hostname: format!("host-{id}"),
            role,
            arch: "x86_64".into(),
            image_arch: None,
            os: "linux".into(),
            cpus: 2.0,
            memory_bytes: 0,
            engine_version: "20.10".into(),
            state: "ready".into(),
            availability: "active".into(),
            manager: false,
            is_self: false,
            engine,
        }
    }

    #[test]
    fn says_what_is_missing() {
        let facts = Facts {
            clock_skew_ms: Some(2000),
            round_trip_ms: Some(3),
            ..Facts::default()
        };
        let foreign = Arch::ALL
            .into_iter()
            .find(|a| Arch::host() != Some(*a))
            .unwrap();
        let mut server = node("a", Some(Role::Server), Some(EngineAddr::default()));
        server.arch = foreign.name().to_owned();
        let seen = [
            Seen {
                node: server,
                facts: Ok(facts),
                image_present: Some(false),
                image_built_here: false,
            },
            Seen {
                node: node("b", None, None),
                facts: Err("no engine".into()),
                image_present: None,
                image_built_here: false,
            },
        ];
        let items = judge(&seen);
        let bad: Vec<&str> = items
            .iter()
            .filter(|i| !i.ok)
            .map(|i| i.text.as_str())
            .collect();
        assert!(
            bad.iter().any(|t| t.contains("clock is 2000 ms off")),
            "{bad:?}"
        );
        assert!(
            bad.iter().any(|t| t.contains("is not built here")),
            "{bad:?}"
        );
        assert!(
            bad.iter()
                .any(|t| t.contains("labelled wsbench.role=client")),
            "{bad:?}"
        );
        assert!(
            !bad.iter().any(|t| t.contains("host-b")),
            "an unlabelled node is not a problem: {bad:?}"
        );
    }
}
