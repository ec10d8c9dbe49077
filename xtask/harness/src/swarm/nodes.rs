//! The nodes of the swarm as the manager sees them (`docker node inspect`): role label, architecture, CPUs,
//! engine address; and what a node's own engine adds (`docker -H … info`: kernel, hostname, clock).

use anyhow::Context as _;

use serde_json::Value;
use xshell::Shell;

use super::labels::{ARCH_LABEL, ENGINE_LABEL, ROLE_LABEL};
pub use crate::provenance::swarm::{Facts, Node, Role};
use wsbench_tools::docker::EngineAddr;

/// Whether this machine's engine is a swarm manager: `active` + manager, or why not.
pub(crate) fn manager_state(sh: &Shell) -> anyhow::Result<Result<(), String>> {
    let out = EngineAddr::default().read(
        sh,
        &[
            "info",
            "--format",
            "{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}",
        ],
    )?;
    Ok(match out.split_whitespace().collect::<Vec<_>>()[..] {
        ["active", "true"] => Ok(()),
        ["active", _] => Err("this machine's engine is a swarm worker: run xtask on a manager node".to_owned()),
        [state, ..] => Err(format!("this machine's engine is not in a swarm (state {state}): `docker swarm init` (see README, On several machines) or `cargo xtask swarm up --local 2`")),
        [] => Err("docker info said nothing about swarm mode".to_owned()),
    })
}

/// Every node, from the manager.
pub fn list(sh: &Shell) -> anyhow::Result<Vec<Node>> {
    let me = EngineAddr::default();
    let self_id = me.read(sh, &["info", "--format", "{{.Swarm.NodeID}}"])?;
    let ids = me.read(sh, &["node", "ls", "--quiet"])?;
    let ids: Vec<&str> = ids.split_whitespace().collect();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut args = vec!["node", "inspect"];
    args.extend(&ids);
    let json = me.read(sh, &args)?;
    let values: Vec<Value> = serde_json::from_str(&json).context("parsing docker node inspect")?;
    Ok(values.iter().map(|v| parse(v, &self_id)).collect())
}

fn parse(v: &Value, self_id: &str) -> Node {
    let s = |p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let label = |k: &str| {
        v.pointer("/Spec/Labels")
            .and_then(|l| l.get(k))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let id = s("/ID");
    let is_self = id == self_id;
    let engine = match label(ENGINE_LABEL) {
        Some(addr) => Some(EngineAddr::at(&addr)),
        None if is_self => Some(EngineAddr::default()),
        None => None,
    };
    Node {
        hostname: s("/Description/Hostname"),
        role: match label(ROLE_LABEL).as_deref() {
            Some("server") => Some(Role::Server),
            Some("client") => Some(Role::Client),
            _ => None,
        },
        arch: s("/Description/Platform/Architecture"),
        image_arch: label(ARCH_LABEL),
        os: s("/Description/Platform/OS"),
        cpus: v
            .pointer("/Description/Resources/NanoCPUs")
            .and_then(Value::as_f64)
            .unwrap_or(0.0)
            / 1e9,
        memory_bytes: v
            .pointer("/Description/Resources/MemoryBytes")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        engine_version: s("/Description/Engine/EngineVersion"),
        state: s("/Status/State"),
        availability: s("/Spec/Availability"),
        manager: s("/Spec/Role") == "manager",
        is_self,
        engine,
        id,
    }
}

/// `docker -H … info` of the node's engine; Err when it does not answer.
pub fn facts(sh: &Shell, node: &Node) -> anyhow::Result<Facts> {
    let engine = node
        .engine
        .as_ref()
        .with_context(|| format!("node {} has no {ENGINE_LABEL} label", node.hostname))?;
    let before = std::time::SystemTime::now();
    let out = engine.read(sh, &["info", "--format", "{{json .}}"])?;
    let after = std::time::SystemTime::now();
    let v: Value = serde_json::from_str(&out).context("parsing docker info")?;
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let unix_ms = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(0))
    };
    let (t0, t1) = (unix_ms(before), unix_ms(after));
    let skew = s("SystemTime")
        .and_then(|t| parse_rfc3339_ms(&t))
        .map(|node_ms| node_ms - (t0 + t1) / 2);
    // An engine reached over a local unix socket runs on this machine: its CPU is this machine's.
    let local = engine
        .0
        .as_deref()
        .map_or(true, |a| a.starts_with("unix://"));
    Ok(Facts {
        hostname: s("Name"),
        kernel: s("KernelVersion"),
        operating_system: s("OperatingSystem"),
        cpus: v
            .get("NCPU")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok()),
        cpu_model: if local {
            wsbench_tools::host::cpu_model()
        } else {
            None
        },
        clock_skew_ms: skew,
        round_trip_ms: Some(t1 - t0),
    })
}

/// Milliseconds since the epoch of `2026-12-01T10:14:35.556127250Z` or `…+01:00` (what docker prints).
pub(crate) fn parse_rfc3339_ms(t: &str) -> Option<i64> {
    let (date, rest) = t.split_once('T')?;
    let mut d = date.split('-').map(|x| x.parse::<i64>());
    let (y, m, day) = (d.next()?.ok()?, d.next()?.ok()?, d.next()?.ok()?);
    let zone_at = rest.find(['Z', '+', '-'])?;
    let (clock, zone) = rest.split_at(zone_at);
    let mut c = clock.split(':');
    let (hh, mm) = (
        c.next()?.parse::<i64>().ok()?,
        c.next()?.parse::<i64>().ok()?,
    );
    let secs: f64 = c.next()?.parse().ok()?;
    let offset_min = match zone {
        "Z" => 0,
        z => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let (oh, om) = z[1..].split_once(':')?;
            sign * (oh.parse::<i64>().ok()? * 60 + om.parse::<i64>().ok()?)
        }
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y2, m2) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let doy = (153 * m2 + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let ms = (days * 86_400 + hh * 3600 + mm * 60 - offset_min * 60) * 1000;
    Some(ms + (secs * 1000.0).round() as i64)
}

/// The service placement constraint of a role.
pub fn constraint(role: Role) -> String {
    format!("node.labels.{ROLE_LABEL}=={}", role.name())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::Arch;

    #[test]
    fn docker_times_parse_to_epoch_ms() {
        assert_eq!(parse_rfc3339_ms("1970-01-01T00:00:01.5Z"), Some(1500));
        assert_eq!(
            parse_rfc3339_ms("2026-12-01T10:14:35.556127250Z"),
            Some(1_796_120_075_556)
        );
        assert_eq!(
            parse_rfc3339_ms("2026-12-01T11:14:35.556+01:00"),
            parse_rfc3339_ms("2026-12-01T10:14:35.556Z")
        );
        assert_eq!(parse_rfc3339_ms("yesterday"), None);
    }

    #[test]
    fn node_inspect_gives_role_arch_and_engine() {
        let v: Value = serde_json::from_str(
            r#"{"ID":"abc","Spec":{"Labels":{"wsbench.role":"client","wsbench.engine":"ssh://u@h"},"Role":"worker","Availability":"active"},
               "Description":{"Hostname":"h","Platform":{"Architecture":"ppc64le","OS":"linux"},
               "Resources":{"NanoCPUs":4000000000,"MemoryBytes":8},"Engine":{"EngineVersion":"20.10"}},"Status":{"State":"ready"}}"#,
        )
        .unwrap();
        let n = parse(&v, "other");
        assert_eq!(n.role, Some(Role::Client));
        assert_eq!(n.wsbench_arch(), Some(Arch::Ppc64le));
        assert_eq!(n.engine, Some(EngineAddr::at("ssh://u@h")));
        assert!((n.cpus - 4.0).abs() < 1e-9 && n.usable() && !n.manager && !n.is_self);
        assert!(!n.emulated());
        let emulated: Value = serde_json::from_str(
            r#"{"ID":"e","Spec":{"Labels":{"wsbench.role":"server","wsbench.arch":"ppc64le"}},
               "Description":{"Platform":{"Architecture":"x86_64"}}}"#,
        )
        .unwrap();
        let e = parse(&emulated, "me");
        assert_eq!(e.wsbench_arch(), Some(Arch::Ppc64le));
        assert!(e.emulated());
        let unlabelled = parse(&serde_json::json!({"ID": "me"}), "me");
        assert_eq!(unlabelled.engine, Some(EngineAddr::default()));
        assert_eq!(unlabelled.role, None);
    }
}
