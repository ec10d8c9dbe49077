//! The server under test in the step loop: before an instance's load, every call its steps will make is
//! verified once (`Backend::verify`); the first time a server answers, what it says of itself is recorded
//! (provenance.json's `sut`, run.json's notes).

use std::collections::BTreeSet;

use anyhow::Result;
use bench_proto::operation::Service;
use sha2::{Digest as _, Sha256};

use super::super::argv;
use super::super::artifacts::peers::PeerBuilds;
use super::super::backend::{Backend, Servers};
use super::super::provenance::{Provenance, SutRecord};
use super::super::rundoc::RunDoc;
use super::super::scenario::{Instance, Plan};
use super::super::sut::{probe, Sut};

/// Verifies every distinct call of `instance`'s steps on `servers`: how many were verified (0: this backend
/// does not verify), or the first refusal.
pub(super) fn verify(
    instance: &Instance,
    servers: &Servers,
    backend: &mut dyn Backend,
) -> Result<usize> {
    let mut seen = BTreeSet::new();
    let mut verified = 0;
    for step in &instance.steps {
        if !seen.insert(argv::verify(&step.client, "")) {
            continue;
        }
        if backend.verify(step, servers)? {
            verified += 1;
        }
    }
    Ok(verified)
}

/// Says on stdout what [`verify`] verified (`n` calls; nothing when this backend does not verify).
pub(super) fn say_verified(instance: &Instance, n: usize) {
    if n == 0 {
        return;
    }
    // Chat verifies the protocol, not calls: one exchange, whatever the steps.
    if instance.steps.iter().all(|s| s.client.operation.is_chat()) {
        println!(
            "{}: chat verified before the load: two users entered Room1, exchanged a message each way and \
             left",
            instance.sut
        );
    } else {
        println!(
            "{}: {n} call(s) verified in full before the load",
            instance.sut
        );
    }
}

/// What is known of the run's servers before any starts: their provenance records (none for bench-server
/// alone, as before `--sut`) and the peers' warm-up notes.
pub(super) fn begin(
    plan: &Plan,
    suts: &[Sut],
    peers: &PeerBuilds,
    run: &mut RunDoc,
    prov: &mut Provenance,
) {
    if suts == [Sut::BenchServer] {
        return;
    }
    prov.sut = records(suts, |s| match s {
        Sut::Peer(p) => peers.get(p).ok().map(|d| d.display().to_string()),
        _ => None,
    });
    run.notes.extend(plan.quick_warm_up_notes());
    let spec = &plan.server;
    let unapplied: Vec<&str> = [
        ("header_timeout", spec.header_timeout.is_some()),
        ("idle_timeout", spec.idle_timeout.is_some()),
        ("max_connections", spec.max_connections.is_some()),
        ("rest_above", spec.rest_above.is_some()),
    ]
    .iter()
    .filter(|(_, set)| *set)
    .map(|(name, _)| *name)
    .collect();
    for sut in suts {
        if let Sut::Peer(p) = sut {
            run.notes.push(format!("{p}: {}", p.describe()));
            run.notes.extend(p.warm_up_note());
            if !unapplied.is_empty() {
                run.notes.push(format!(
                    "{} has no equivalent of bench-server's server.{}: it ran without them.",
                    p.name,
                    unapplied.join(", server.")
                ));
            }
        }
    }
}

/// The provenance record of each server in `suts`, before any is started (`build`: a peer's directory).
pub fn records(suts: &[Sut], build: impl Fn(&Sut) -> Option<String>) -> Vec<SutRecord> {
    suts.iter()
        .map(|s| SutRecord {
            name: s.name().to_owned(),
            started_by_wsbench: s.started_here(),
            sampled_pid: match s {
                Sut::External(t) => t.pid,
                _ => None,
            },
            sampled_by_agent: match s {
                Sut::External(t) => t.agent.clone(),
                _ => None,
            },
            build: build(s),
            configuration: match s {
                Sut::Peer(p) => Some(p.describe()),
                _ => None,
            },
            config_name: match s {
                Sut::Peer(p) => Some(p.config.clone()),
                _ => None,
            },
            config_title: match s {
                Sut::Peer(p) => Some(p.title().to_owned()),
                _ => None,
            },
            warmup_needed_s: match s {
                Sut::Peer(p) => p.def.warmup.map(|w| w.as_secs_f64()),
                _ => None,
            },
            ..SutRecord::default()
        })
        .collect()
}

/// Fills in, once per server, where it was reached and what it says of itself: its `Server` header and the
/// SHA-256 of each WSDL the plan's services serve; for an external target, the notes that it was not
/// started by wsbench and whether its CPU and RSS were sampled.
pub(super) fn identify(
    plan: &Plan,
    instance: &Instance,
    servers: &Servers,
    prov: &mut Provenance,
    run: &mut RunDoc,
) {
    let Some(rec) = prov
        .sut
        .iter_mut()
        .find(|r| r.name == instance.sut.name() && r.url.is_none())
    else {
        return;
    };
    let Some(endpoint) = servers.endpoints.first() else {
        return;
    };
    rec.url = endpoint.http.clone().or_else(|| endpoint.chat.clone());
    if let Some(url) = &endpoint.http {
        ask(plan, url, rec);
    }
    if let Sut::External(t) = &instance.sut {
        let sampled = match (&t.agent, t.pid) {
            (Some(agent), _) => format!(
                "its CPU, RSS, fds and threads, and its host's CPU (steal too) and network, were sampled on its \
                 own host by the agent at {agent} (--agent)"
            ),
            (None, Some(pid)) => {
                format!("its CPU and RSS were sampled from process {pid} (--target-pid)")
            }
            (None, None) => {
                "its CPU and RSS were not sampled (neither --agent nor --target-pid: the server CPU and \
                     RSS columns are empty)"
                    .to_owned()
            }
        };
        if plan.instances.iter().any(|i| i.workers.is_some()) {
            run.notes.push(
                "The scenario varies the server's worker threads; an external target keeps its own: its \
                 `workers` steps all measured the same server."
                    .to_owned(),
            );
        }
        run.notes.push(format!(
            "Measured {} — a server not started by wsbench{}; {sampled}.",
            rec.url.as_deref().unwrap_or("?"),
            rec.server_header
                .as_deref()
                .map_or(header_absent(rec), |h| format!(" (Server: {h})")),
        ));
    }
}

/// What the note says when no `Server` header was recorded: that none was sent, unless the GET that asks
/// failed or was not made (chat).
fn header_absent(rec: &SutRecord) -> String {
    match &rec.url {
        Some(url)
            if url.starts_with("http") && !rec.notes.iter().any(|n| n.starts_with("GET ")) =>
        {
            " (Server header: none sent)".to_owned()
        }
        _ => String::new(),
    }
}

/// The `Server` header of `url` and the WSDLs of the plan's SOAP services.
fn ask(plan: &Plan, url: &str, rec: &mut SutRecord) {
    match probe::get(url) {
        Ok(a) => rec.server_header = a.server,
        Err(e) => rec.notes.push(format!("GET {url}: {e:#}")),
    }
    let services: BTreeSet<&str> = plan
        .steps()
        .filter_map(|s| match s.client.operation.service() {
            Service::Cxf => Some(bench_proto::cxf::PATH),
            Service::Customer => Some(bench_proto::customer::PATH),
            _ => None,
        })
        .collect();
    // A URL with a path of its own is the service itself.
    let own_path = url
        .split_once("://")
        .and_then(|(_, r)| r.find('/').map(|i| &r[i..]))
        .filter(|p| *p != "/");
    let paths: Vec<String> = match own_path {
        Some(p) if !services.is_empty() => vec![p.to_owned()],
        _ => services.iter().map(|s| (*s).to_owned()).collect(),
    };
    let base = url.trim_end_matches('/');
    let base = own_path.map_or(base, |p| base.strip_suffix(p).unwrap_or(base));
    for path in paths {
        let wsdl = format!("{base}{path}?wsdl");
        match probe::get(&wsdl) {
            Ok(a) if a.status == 200 => {
                rec.wsdl_sha256
                    .insert(path, format!("{:x}", Sha256::digest(&a.body)));
            }
            Ok(a) => rec
                .notes
                .push(format!("GET {wsdl}: HTTP {} (no WSDL recorded)", a.status)),
            Err(e) => rec.notes.push(format!("GET {wsdl}: {e:#}")),
        }
    }
}
