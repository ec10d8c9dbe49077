//! `cargo xtask swarm check|label|up|down`: what a user needs around `cargo xtask run … --swarm` — check the
//! swarm and say plainly what is missing, label nodes, and a real multi-node swarm of engines on this machine
//! (`up --local N`, `down`); plus the two-node end-to-end step of `cargo xtask test`.

use anyhow::{bail, ensure, Result};
use xshell::Shell;

use crate::testing::{quick_faults_with, quick_scenario_with, Step};
use wsbench_harness::artifacts::Arch;
use wsbench_harness::pipeline::Engine;
use wsbench_harness::provenance::swarm::SwarmRecord;
use wsbench_harness::sut::Sut;
use wsbench_harness::swarm::nodes::Role;
use wsbench_harness::swarm::{check, local, SwarmOptions};
use wsbench_tools::docker::{EngineAddr, DOCKER};
use wsbench_tools::{host, ip};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, clap::Subcommand)]
enum Cmd {
    /// Nodes, labels, engines, images and clocks: what a --swarm run needs, found or missing.
    Check,
    /// Label a node (ID or hostname) wsbench.role=server|client, with the address of its own engine.
    Label {
        node: String,
        #[arg(value_enum)]
        role: Role,
        /// How xtask reaches the node's own engine, to load images and copy results (`ssh://USER@HOST`);
        /// not needed for the manager xtask runs on.
        #[arg(long, value_name = "DOCKER_HOST")]
        engine: Option<String>,
        /// Run ARCH's images on this node whatever its own architecture (`ppc64le` on an x86_64 node with
        /// qemu-user-static in binfmt_misc: an emulated POWER node, labelled emulated in the results).
        #[arg(long, value_enum, value_name = "ARCH")]
        arch: Option<Arch>,
    },
    /// Make a swarm of N nodes on this machine: this engine (server) and N−1 engines in network namespaces (clients).
    Up {
        #[arg(long, value_name = "N")]
        local: usize,
    },
    /// Take the local swarm down, leaving nothing behind.
    Down,
}

pub(crate) fn run(sh: &Shell, args: Args) -> Result<()> {
    match args.cmd {
        Cmd::Check => {
            let seen = match check::gather(sh)? {
                Ok(seen) => seen,
                Err(why) => bail!("missing: {why}"),
            };
            let items = check::judge(&seen);
            for i in &items {
                println!("{} {}", if i.ok { "ok     " } else { "MISSING" }, i.text);
            }
            let bad = items.iter().filter(|i| !i.ok).count();
            ensure!(bad == 0, "{bad} thing(s) missing for a --swarm run (above)");
            println!("the swarm is ready for `cargo xtask run <scenario> --swarm`");
            Ok(())
        }
        Cmd::Label {
            node,
            role,
            engine,
            arch,
        } => {
            let arch = arch.map(Arch::name);
            local::label(sh, &node, role.name(), engine.as_deref(), arch)?;
            println!("labelled {node} wsbench.role={}", role.name());
            if let Some(a) = arch {
                println!("labelled {node} wsbench.arch={a}: it runs {a} images");
            }
            Ok(())
        }
        Cmd::Up { local: n } => {
            let s = local::up(sh, n)?;
            println!(
                "local swarm up: this engine (server) and {} more (client): {}",
                s.nodes.len(),
                s.nodes
                    .iter()
                    .map(|n| format!("{} at {} ({})", n.hostname, n.node_ip, n.socket()))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            println!("next: cargo xtask swarm check; cargo xtask run <scenario> --swarm; cargo xtask swarm down");
            Ok(())
        }
        Cmd::Down => {
            let left = local::down(sh)?;
            ensure!(left.is_empty(), "left behind: {}", left.join("; "));
            println!("local swarm down: nothing left behind");
            Ok(())
        }
    }
}

/// swarm:two-nodes: 84.9 s here with the images present (the quick cxf-echo-complex; bench-server and gsoap
/// side by side 26.8 s; the drain 29.5 s; the local swarm up and down), 172.6 s on a machine busy with builds.
pub(crate) fn test_steps() -> Vec<Step> {
    vec![Step::new("swarm:two-nodes", two_nodes)]
}

/// What a swarm run could leave on this machine: namespaces, links, networks, containers, swarm state, files.
/// Only what wsbench names or labels: others share this machine's engine and make their own.
fn machine_state(sh: &Shell) -> Result<String> {
    let me = EngineAddr::default();
    let ours = |text: String, prefixes: &[&str]| -> String {
        text.lines()
            .filter(|l| prefixes.iter().any(|p| l.starts_with(p)))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let swarm_made = ["wsb", "docker_gwbridge", "ingress"];
    Ok([
        ip::read(sh, &["netns", "list"])?,
        ours(ip::read(sh, &["-brief", "link"])?, &swarm_made),
        ours(
            me.read(sh, &["network", "ls", "--format", "{{.Name}} {{.Driver}}"])?,
            &swarm_made,
        ),
        me.read(
            sh,
            &[
                "ps",
                "-a",
                "--filter",
                "label=wsbench.session",
                "--format",
                "{{.Names}}",
            ],
        )?,
        me.read(sh, &["info", "--format", "{{.Swarm.LocalNodeState}}"])?,
        format!(
            "{:?}",
            ["/run/wsbench-swarm", "/var/lib/wsbench-swarm"].map(host::exists)
        ),
    ]
    .join("\n"))
}

/// On two local nodes, the server on one and the clients on the other: a quick scenario, bench-server and
/// gsoap side by side, and the server's node drained and back (its recovery measured); the machine left as it
/// was found.
fn two_nodes(sh: &Shell) -> Result<()> {
    if DOCKER.path().is_none() {
        println!("SKIPPED swarm:two-nodes: Docker is not installed here (`docker` not on PATH)");
        return Ok(());
    }
    let before = machine_state(sh)?;
    local::up(sh, 2)?;
    let outcome = two_nodes_run(sh)
        .and_then(|()| timed("peers side by side", || peers_side_by_side(sh)))
        .and_then(|()| timed("drain-server-node", || drained(sh)));
    let left = local::down(sh)?;
    outcome?;
    ensure!(left.is_empty(), "swarm down left: {}", left.join("; "));
    let after = machine_state(sh)?;
    ensure!(
        before == after,
        "the machine is not as it was found:\nbefore:\n{before}\nafter:\n{after}"
    );
    Ok(())
}

/// Runs `part`, saying how long it took.
fn timed(what: &str, part: impl FnOnce() -> Result<()>) -> Result<()> {
    let start = std::time::Instant::now();
    let r = part();
    println!(
        "swarm:two-nodes: {what} in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    r
}

/// customer-small on bench-server and gsoap, shortened: gsoap's image loaded to the server node, run as the
/// server service, its calls verified before the load, and the two side by side in the summary.
fn peers_side_by_side(sh: &Shell) -> Result<()> {
    quick_scenario_with(
        sh,
        "customer-small",
        |opts| {
            opts.engine = Engine::Swarm(SwarmOptions { clients_tasks: 1 });
            opts.suts = Sut::parse_list("bench-server,gsoap").expect("known servers");
            opts.sets = vec!["duration=2s".into(), "warmup=1s".into()];
        },
        |outcome| {
            let summary = std::fs::read_to_string(outcome.dir.join("summary.md"))?;
            for name in ["bench-server", "gsoap"] {
                ensure!(
                    summary.contains(&format!("| {name} |")),
                    "{name} is not in the side-by-side table:\n{summary}"
                );
            }
            let record = swarm_record(outcome)?;
            ensure!(
                record.tasks.iter().any(|t| t.kind == "server"
                    && t.command
                        .iter()
                        .any(|a| a.starts_with("wsbench-peer:gsoap-"))),
                "no gsoap server service: {:?}",
                record.tasks
            );
            Ok(())
        },
    )
}

/// `cargo xtask run failover --quick --swarm --fault drain-server-node,at=2s,for=2s --set duration=12s` with
/// 500 ms call and connect timeouts: the calls the drain cost counted as errors, and the first success after the server's
/// task runs again timed (the clients find its new address by looking the name up again).
fn drained(sh: &Shell) -> Result<()> {
    quick_faults_with(
        sh,
        "failover",
        |opts| {
            opts.engine = Engine::Swarm(SwarmOptions { clients_tasks: 1 });
            opts.sets = [
                "fault=drain-server-node,at=2s,for=2s",
                "timeout=500ms",
                "connect_timeout=500ms",
                // The rescheduled task runs 2 to 4 s after its node is active: time left to recover in.
                "duration=12s",
            ]
            .map(str::to_owned)
            .to_vec();
        },
        "drain-server-node",
    )
}

fn swarm_record(outcome: &wsbench_harness::pipeline::Outcome) -> Result<SwarmRecord> {
    let prov: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        outcome.dir.join("provenance.json"),
    )?)?;
    Ok(serde_json::from_value(prov["swarm"].clone())?)
}

/// A quick cxf-echo-complex across the two nodes, two client tasks.
fn two_nodes_run(sh: &Shell) -> Result<()> {
    quick_scenario_with(
        sh,
        "cxf-echo-complex",
        |opts| {
            opts.engine = Engine::Swarm(SwarmOptions { clients_tasks: 2 });
            opts.sets = vec!["duration=3s".into(), "warmup=1s".into()];
        },
        |outcome| {
            let record = swarm_record(outcome)?;
            ensure!(
                record.nodes.len() == 2,
                "expected 2 nodes: {:?}",
                record.nodes
            );
            ensure!(
                record
                    .nodes
                    .iter()
                    .all(|n| n.facts.as_ref().is_some_and(|f| f.kernel.is_some())),
                "a node's kernel is not recorded"
            );
            let nodes_of = |kind: &str| -> Vec<&str> {
                record
                    .tasks
                    .iter()
                    .filter(|t| t.kind == kind)
                    .map(|t| t.node.as_str())
                    .collect()
            };
            let (servers, clients) = (nodes_of("server"), nodes_of("client"));
            ensure!(
                servers.len() == 1 && clients.len() == 2,
                "tasks: {:?}",
                record.tasks
            );
            ensure!(
                clients.iter().all(|c| !servers.contains(c)),
                "server and clients ran on the same node: {servers:?} {clients:?}"
            );
            Ok(())
        },
    )
}
