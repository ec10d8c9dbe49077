//! `cargo xtask verify <scenario> [--sut LIST | --target URL]`: would these servers pass? Each is started (or
//! reached) as `run` would, and every call the scenario's steps make is made once and its answer checked in
//! full (bench-client `--verify-only`); no load, no results. Exit 1 names the server, operation, field path,
//! expected and received values.

use std::path::PathBuf;

use anyhow::{bail, Context as _, Result};
use xshell::Shell;

use wsbench_harness::pipeline::check;
use wsbench_harness::pipeline::{Engine, Outcome, RunOptions};
use wsbench_harness::rundoc::Problem;
use wsbench_harness::sut::{Sut, Target};

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Args {
    /// Scenario name (see `cargo xtask list`) or the path of a scenario .toml file.
    pub(crate) scenario: String,
    /// The servers to check: `bench-server`, `jaxws`, `gsoap`, comma-separated.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "bench-server",
        conflicts_with = "target"
    )]
    pub(crate) sut: String,
    /// A server wsbench did not start: `http://HOST:PORT` (a URL with a path of its own is the service's).
    #[arg(long, value_name = "URL")]
    pub(crate) target: Option<String>,
    /// Override a scenario value (as `run --set`): the calls checked are those of the steps it makes.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) sets: Vec<String>,
}

pub(crate) fn run(sh: &Shell, args: Args) -> Result<()> {
    let suts = match &args.target {
        Some(t) => vec![Sut::External(Target::parse(t, None)?)],
        None => Sut::parse_list(&args.sut)?,
    };
    let opts = RunOptions {
        sets: args.sets.clone(),
        suts,
        ..RunOptions::new(args.scenario.clone(), PathBuf::new())
    };
    let logs = sh.create_temp_dir()?;
    let verdicts = check::verify(sh, &opts, logs.path())?;
    let mut refused = 0;
    for v in &verdicts {
        match &v.outcome {
            Ok(0) => println!("not checked {}: the scenario makes no HTTP call", v.sut),
            Ok(n) => println!(
                "ok      {}: {n} distinct call(s) answered right in full",
                v.sut
            ),
            Err(e) => {
                refused += 1;
                println!("REFUSED {e:#}");
            }
        }
    }
    if refused > 0 {
        let log = std::fs::read_to_string(logs.path().join("server.log")).unwrap_or_default();
        if !log.trim().is_empty() {
            eprintln!("the servers' log:\n{}", tail(&log, 20));
        }
        bail!(
            "{refused} of {} server(s) would not be measured by {}",
            verdicts.len(),
            args.scenario
        );
    }
    Ok(())
}

/// The last `n` lines of `text`.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// This subcommand's steps of `cargo xtask test`: the servers side by side on a short customer-small run;
/// zeep's check of bench-server and every peer (7 s here with the binaries and peers the step before built: the
/// checks take 2 s, the rest is starting the servers; alone, on a clean checkout, it builds them first);
/// `--target` against a bench-server started by the test itself, as processes and from a client container on
/// the host's network (`--containers`: about 11 s more here, the images built by the earlier steps); and a
/// wrong server refused before any load. sut:cxf-side-by-side (quick cxf-echo-complex on the three servers,
/// about 18 s here once the release build is there) and sut:containers (the three in containers: 92 s with the
/// jaxws runtime image built cold — its debootstrap about 60 s with Debian's packages cached locally — and 24 s
/// with the images present); sut:containers-refused (gsoap in its container refused before any load: 7.2 s here
/// with its image present).
pub(crate) fn test_steps() -> Vec<crate::testing::Step> {
    use crate::testing::Step;
    vec![
        Step::new("sut:side-by-side", side_by_side),
        Step::new("sut:cxf-side-by-side", cxf_side_by_side),
        Step::new("sut:containers", peer_containers),
        Step::new("sut:containers-refused", containers_refused),
        Step::new("sut:zeep", zeep),
        Step::new("sut:target", target),
        Step::new("sut:chat-target", chat_target),
        Step::new("sut:refused", refused),
    ]
}

/// Quick customer-small on bench-server, gsoap and jaxws, shortened: one summary with the three side by side.
fn side_by_side(sh: &Shell) -> Result<()> {
    let suts = Sut::parse_list("bench-server,gsoap,jaxws")?;
    crate::testing::quick_scenario_with(
        sh,
        "customer-small",
        |o| {
            o.suts = suts;
            o.sets = vec!["duration=3s".into(), "warmup=2s".into()];
        },
        |outcome| {
            let summary = std::fs::read_to_string(outcome.dir.join("summary.md"))?;
            anyhow::ensure!(
                summary.contains("## Servers side by side"),
                "no side-by-side section:\n{summary}"
            );
            for name in ["bench-server", "gsoap", "jaxws"] {
                anyhow::ensure!(
                    summary.contains(&format!("| {name} |")),
                    "{name} is not in the side-by-side table:\n{summary}"
                );
            }
            let prov = provenance(outcome)?;
            anyhow::ensure!(prov.sut.len() == 3, "provenance.json has {:?}", prov.sut);
            for r in &prov.sut {
                anyhow::ensure!(
                    r.started_by_wsbench && !r.wsdl_sha256.is_empty() && r.url.is_some(),
                    "the record of {} lacks its identity: {r:?}",
                    r.name
                );
            }
            Ok(())
        },
    )
}

/// Quick cxf-echo-complex on the four servers, shortened (the done-when): each one's row beside the
/// published CXF figures, its configuration named, and the line that sets CXF here beside CXF's 34,854/s.
fn cxf_side_by_side(sh: &Shell) -> Result<()> {
    const SERVERS: [&str; 4] = ["bench-server", "cxf", "jaxws", "gsoap"];
    crate::testing::quick_scenario_with(
        sh,
        "cxf-echo-complex",
        |o| {
            o.suts = Sut::parse_list(&SERVERS.join(",")).expect("four known servers");
            o.sets = vec!["duration=2s".into(), "warmup=10s".into()];
        },
        |outcome| {
            let summary = std::fs::read_to_string(outcome.dir.join("summary.md"))?;
            for name in SERVERS {
                anyhow::ensure!(
                    summary.contains(&format!("| {name} |")),
                    "{name} is not in the side-by-side table:\n{summary}"
                );
            }
            anyhow::ensure!(
                summary
                    .lines()
                    .any(|l| l.starts_with("- **cxf** (configuration `")
                        && l.contains("the published 34,854")),
                "no line sets cxf beside CXF's published 34,854/s:\n{summary}"
            );
            Ok(())
        },
    )
}

/// The peers in containers (`--containers`), in bench-server's place: started from their own images
/// (`wsbench-peer:<name>-<hash>`, built here), measured, and named by what they say of themselves.
fn peer_containers(sh: &Shell) -> Result<()> {
    let docker = Engine::Docker(wsbench_harness::docker::DockerOptions::default());
    crate::testing::quick_scenario_with(
        sh,
        "customer-small",
        |o| {
            o.suts = Sut::parse_list(PEERS_IN_CONTAINERS).expect("known servers");
            o.sets = vec!["duration=2s".into(), "warmup=2s".into()];
            o.engine = docker;
        },
        check_peer_containers,
    )
}

/// gsoap in a container that cannot answer right (`server.max_body=64`: every request is larger than it
/// accepts): refused by `bench-client --verify-only` in a throwaway container on the run's network before any
/// load, so nothing is measured. (Before the containers were verified, the load ran and counted errors.)
fn containers_refused(sh: &Shell) -> Result<()> {
    let tmp = sh.create_temp_dir()?;
    let opts = RunOptions {
        quick: true,
        sets: vec!["duration=1s".into(), "server.max_body=64".into()],
        suts: Sut::parse_list("gsoap")?,
        engine: Engine::Docker(wsbench_harness::docker::DockerOptions::default()),
        ..RunOptions::new("customer-small", tmp.path())
    };
    let outcome = wsbench_harness::pipeline::execute(sh, &opts)?;
    let steps = std::fs::read_dir(outcome.dir.join("steps"))?.count();
    let refusal = outcome
        .run
        .problems
        .iter()
        .find(|p| matches!(p, Problem::Refused { sut, .. } if sut == "gsoap"));
    anyhow::ensure!(
        steps == 0 && refusal.is_some(),
        "the wrong gsoap container was measured ({steps} documents): {:?}",
        outcome.run.problems
    );
    println!(
        "refused before any load: {}",
        refusal.map_or(String::new(), Problem::to_string)
    );
    Ok(())
}

/// The servers `sut:containers` runs in containers.
const PEERS_IN_CONTAINERS: &str = "bench-server,gsoap,jaxws,cxf";

fn check_peer_containers(outcome: &Outcome) -> Result<()> {
    let prov = provenance(outcome)?;
    let started: Vec<String> = prov.commands.server.iter().map(|c| c.join(" ")).collect();
    for (name, image) in [
        ("gsoap", "wsbench-peer:gsoap-"),
        ("jaxws", "wsbench-peer:jaxws-"),
        ("cxf", "wsbench-peer:cxf-"),
    ] {
        if !PEERS_IN_CONTAINERS.contains(name) {
            continue;
        }
        anyhow::ensure!(
            started
                .iter()
                .any(|c| c.starts_with("docker run") && c.contains(image)),
            "no {name} container was started from its image: {started:#?}"
        );
    }
    let header = |name: &str| {
        prov.sut
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.server_header.clone())
    };
    anyhow::ensure!(
        header("gsoap") == Some(Some("gSOAP/2.8".to_owned())),
        "gsoap's Server header: {:?}",
        header("gsoap")
    );
    for (name, says) in [
        ("jaxws", "wsbench-jaxws (JAX-WS RI"),
        ("cxf", "wsbench-cxf (Apache CXF 4."),
    ] {
        if !PEERS_IN_CONTAINERS.contains(name) {
            continue;
        }
        let said = header(name).flatten().unwrap_or_default();
        anyhow::ensure!(said.starts_with(says), "{name}'s Server header: {said:?}");
    }
    let summary = std::fs::read_to_string(outcome.dir.join("summary.md"))?;
    anyhow::ensure!(
        summary.contains("**bench-server** at http://")
            && summary.contains("Server header: none sent"),
        "summary.md does not say bench-server sent no Server header:\n{summary}"
    );
    Ok(())
}

/// A bench-server started here by hand (as a user would), measured with `--target` and `--target-pid`.
fn target(sh: &Shell) -> Result<()> {
    use wsbench_harness::local::process::ServerProcess;
    let bins = wsbench_harness::artifacts::build_release(sh)?;
    let log = tempfile_log(sh)?;
    let argv = vec![
        bins.server.display().to_string(),
        "--http".to_owned(),
        "127.0.0.1:0".to_owned(),
    ];
    let server = ServerProcess::start(&argv, log, std::time::Duration::from_secs(30))?;
    let url = format!(
        "http://{}",
        server.ready.http.context("bench-server serves no HTTP")?
    );
    let pid = server.pid;
    // As processes, then driven by a client container on the host's network (`--containers`).
    let docker = Engine::Docker(wsbench_harness::docker::DockerOptions::default());
    let mut result = Ok(());
    for engine in [Engine::Local, docker] {
        let in_containers = !matches!(engine, Engine::Local);
        result = crate::testing::quick_scenario_with(
            sh,
            "customer-small",
            |o| {
                o.suts = vec![Sut::External(Target {
                    http: Some(url.clone()),
                    chat: None,
                    pid: Some(pid),
                    agent: None,
                })];
                o.sets = vec!["duration=2s".into(), "warmup=1s".into()];
                o.engine = engine;
            },
            |outcome| check_target(outcome, &url, pid, in_containers),
        );
        if result.is_err() {
            break;
        }
    }
    server.stop(std::time::Duration::from_secs(20))?;
    result
}

/// `cargo xtask run volano-loopback --target HOST:PORT --quick` against a chat server that relays without a
/// room lock, as the VOLANO server does (the tests' own, `misbehaving-chat --relay lock-free`: the genuine
/// VOLANO server is on no registry this project reaches): verified before the load, every step ok — the
/// per-sender check passes, the room's order is not asked of a server wsbench did not start, and the
/// deliveries out of it are counted in the summary — and the server said to be not started, not pinned.
fn chat_target(sh: &Shell) -> Result<()> {
    use wsbench_harness::local::process::ServerProcess;
    wsbench_tools::cargo::run(sh, &["build", "--quiet", "-p", "misbehaving-chat"])?;
    let bin = wsbench_tools::cargo::target_dir(sh)?.join("debug/misbehaving-chat");
    let argv = vec![
        bin.display().to_string(),
        "--relay".to_owned(),
        "lock-free".to_owned(),
    ];
    let server =
        ServerProcess::start(&argv, tempfile_log(sh)?, std::time::Duration::from_secs(30))?;
    let addr = server
        .ready
        .chat
        .context("misbehaving-chat serves no chat")?
        .to_string();
    let result = crate::testing::quick_scenario_with(
        sh,
        "volano-loopback",
        |o| {
            o.suts = vec![Sut::External(Target {
                http: None,
                chat: Some(addr.clone()),
                pid: None,
                agent: None,
            })]
        },
        |outcome| {
            let prov = provenance(outcome)?;
            anyhow::ensure!(prov.commands.server.is_empty(), "wsbench started a server");
            let checks_room = prov
                .commands
                .client
                .values()
                .any(|c| c.iter().any(|a| a == "--check-room-order"));
            anyhow::ensure!(
                !checks_room,
                "the room's order was asked of a server wsbench did not start"
            );
            let summary = std::fs::read_to_string(outcome.dir.join("summary.md"))?;
            for said in [
                "server not started by wsbench, not pinned",
                "checked: per sender",
                "came out of the room's order",
            ] {
                anyhow::ensure!(
                    summary.contains(said),
                    "summary.md does not say {said:?}:\n{summary}"
                );
            }
            Ok(())
        },
    );
    server.stop(std::time::Duration::from_secs(20))?;
    result
}

/// What a `--target` run must have written: the server's identity, that wsbench did not start it, and, in
/// containers, that a client container on the host's network drove it and sampled it.
fn check_target(outcome: &Outcome, url: &str, pid: u32, in_containers: bool) -> Result<()> {
    let prov = provenance(outcome)?;
    let r = prov.sut.first().context("provenance.json has no sut")?;
    anyhow::ensure!(
        !r.started_by_wsbench
            && r.url.as_deref() == Some(url)
            && r.sampled_pid == Some(pid)
            && r.wsdl_sha256.contains_key(bench_proto::customer::PATH),
        "provenance.json's sut: {r:?}"
    );
    anyhow::ensure!(prov.commands.server.is_empty(), "wsbench started a server");
    let summary = std::fs::read_to_string(outcome.dir.join("summary.md"))?;
    anyhow::ensure!(
        summary.contains("not started by wsbench") && summary.contains(url),
        "summary.md does not say what it measured:\n{summary}"
    );
    if in_containers {
        let client: Vec<String> = prov.commands.client.values().map(|c| c.join(" ")).collect();
        let client = client.join("\n");
        anyhow::ensure!(
            client.starts_with("docker run") && client.contains("--network host --pid host"),
            "not a client container on the host's network: {client}"
        );
        anyhow::ensure!(
            summary.contains("client containers on the host's network")
                && summary.contains(" µs |"),
            "summary.md does not say how the target was reached, or has no server CPU:\n{summary}"
        );
    }
    Ok(())
}

/// A server answering 404 to everything: `verify` refuses it naming the operation, and a run measures
/// nothing (no step document, the run failed) — the load never started.
fn refused(sh: &Shell) -> Result<()> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}", listener.local_addr()?);
    std::thread::spawn(move || answer_404(&listener));
    let opts = |out: PathBuf| RunOptions {
        quick: true,
        sets: vec!["duration=1s".into()],
        suts: vec![Sut::External(Target::parse(&url, None).expect("a URL"))],
        ..RunOptions::new("customer-small", out)
    };
    let tmp = sh.create_temp_dir()?;
    let verdicts = check::verify(sh, &opts(PathBuf::new()), tmp.path())?;
    let said = format!("{:#}", verdicts[0].outcome.as_ref().expect_err("refused"));
    anyhow::ensure!(
        said.contains("operation echo") && said.contains("HTTP 404"),
        "verify's refusal does not name the operation and status: {said}"
    );
    let outcome = wsbench_harness::pipeline::execute(sh, &opts(tmp.path().to_path_buf()))?;
    let steps = std::fs::read_dir(outcome.dir.join("steps"))?.count();
    anyhow::ensure!(
        steps == 0
            && outcome
                .run
                .problems
                .iter()
                .any(|p| matches!(p, Problem::Refused { error, .. } if error.contains("HTTP 404"))),
        "a refused server was measured ({steps} documents): {:?}",
        outcome.run.problems
    );
    println!("refused before any load: {said}");
    Ok(())
}

/// zeep, a third-party SOAP client, checks every operation on bench-server and every peer build started fresh
/// (`get` compared with bench-server's answers), and shows with `--self-test` that a wrong answer fails.
fn zeep(sh: &Shell) -> Result<()> {
    use std::time::Duration;
    use wsbench_harness::argv::{self, PeerPlace};
    use wsbench_harness::artifacts::peers;
    use wsbench_harness::local::process::ServerProcess;
    use wsbench_harness::scenario::ServerSpec;
    use wsbench_tools::python;
    anyhow::ensure!(
        python::has_zeep(sh),
        "python3 cannot import zeep: {}",
        python::PYTHON3.install
    );
    let root = wsbench_harness::paths::project_root();
    let bins = wsbench_harness::artifacts::build_release(sh)?;
    let every = one_config_per_build()?;
    let built = peers::build_all(sh, &root, &every)?;
    let listen = "127.0.0.1:0";
    let mut argvs = vec![vec![
        bins.server.display().to_string(),
        "--http".to_owned(),
        listen.to_owned(),
    ]];
    for peer in &every {
        let place = PeerPlace::Process(built.get(peer)?);
        argvs.push(argv::peer_for(
            peer,
            place,
            &ServerSpec::default(),
            1,
            (None, 1),
            listen,
        )?);
    }
    let mut servers = Vec::new();
    for argv in &argvs {
        servers.push(ServerProcess::start(
            argv,
            tempfile_log(sh)?,
            Duration::from_secs(60),
        )?);
    }
    let urls: Vec<String> = servers
        .iter()
        .filter_map(|s| s.ready.http.map(|a| format!("http://{a}")))
        .collect();
    let script = root.join("peers/tests/zeep_check.py");
    let mut args = vec!["--reference".to_owned(), urls[0].clone()];
    args.extend(urls.iter().cloned());
    let checked = python::run(sh, &script, &args)
        .and_then(|()| python::run(sh, &script, &["--self-test".to_owned(), urls[1].clone()]));
    for s in servers {
        s.stop(Duration::from_secs(20))?;
    }
    checked
}

/// Each build of every peer once, in its default configuration if that is the build's, else its first.
fn one_config_per_build() -> Result<Vec<wsbench_harness::sut::PeerSut>> {
    let catalog = wsbench_harness::sut::Catalog::project()?;
    let mut out: Vec<wsbench_harness::sut::PeerSut> = Vec::new();
    for def in &catalog.peers {
        let mut names: Vec<&str> = vec![def.default.as_str()];
        names.extend(def.configs.iter().map(|c| c.name.as_str()));
        for name in names {
            let peer = catalog
                .resolve(&def.sut_name(name))
                .context("a configuration of the catalogue")?;
            if !out.iter().any(|p| p.build_key() == peer.build_key()) {
                out.push(peer);
            }
        }
    }
    Ok(out)
}

/// Answers every request on `listener` with 404 (one request per connection).
fn answer_404(listener: &std::net::TcpListener) {
    use std::io::{Read as _, Write as _};
    for mut s in listener.incoming().map_while(Result::ok) {
        let mut buf = [0u8; 65536];
        let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(2)));
        let _ = s.read(&mut buf);
        let _ = s.write_all(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found",
        );
    }
}

fn provenance(outcome: &Outcome) -> Result<wsbench_harness::provenance::Provenance> {
    let text = std::fs::read_to_string(outcome.dir.join("provenance.json"))?;
    Ok(serde_json::from_str(&text)?)
}

fn tempfile_log(sh: &Shell) -> Result<std::fs::File> {
    let dir = sh.create_temp_dir()?;
    let path = dir.path().join("server.log");
    // The directory outlives the file handle only as long as the test: leak it on purpose.
    std::mem::forget(dir);
    Ok(std::fs::File::create(path)?)
}
