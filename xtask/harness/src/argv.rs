//! The command lines of bench-server and bench-client, built in one place for every backend (processes,
//! containers): what provenance.json records is exactly what ran (contract: docs/contracts.md).

use std::path::Path;

use bench_proto::units::DurationArg;

use super::scenario::{deadline, ClientStep, Instance, Length, ServerSpec};
use super::sut::{peer, PeerSut, Sampler};

/// Where bench-server listens: `--http ADDR|off`, and `--chat ADDR` when chat is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listen {
    pub http: Option<String>,
    pub chat: Option<String>,
}

impl Listen {
    /// The spec's listeners on one address, with the given ports (0: any free port).
    pub fn on(spec: &ServerSpec, ip: &str, http_port: u16, chat_port: u16) -> Listen {
        Listen {
            http: spec.http().then(|| format!("{ip}:{http_port}")),
            chat: spec.chat().then(|| format!("{ip}:{chat_port}")),
        }
    }
}

/// bench-server's arguments, after the binary.
pub fn server(spec: &ServerSpec, workers: Option<u32>, listen: &Listen) -> Vec<String> {
    let mut a = vec![
        "--http".to_owned(),
        listen.http.clone().unwrap_or_else(|| "off".to_owned()),
    ];
    if let Some(chat) = &listen.chat {
        a.extend(["--chat".to_owned(), chat.clone()]);
    }
    if let Some(w) = workers {
        a.extend(["--workers".to_owned(), w.to_string()]);
    }
    a.extend(server_options(spec));
    a
}

/// bench-server as an OSS/J application instance named `name`: the portal on `http`, its orders through the
/// broker at `broker` (`--role app`).
pub(crate) fn portal_app(
    spec: &ServerSpec,
    workers: Option<u32>,
    http: &str,
    broker: &str,
    name: &str,
) -> Vec<String> {
    let listen = Listen {
        http: Some(http.to_owned()),
        chat: None,
    };
    let mut a = server(spec, workers, &listen);
    a.extend(["--role", "app", "--broker", broker, "--instance", name].map(String::from));
    a
}

/// bench-server as an OSS/J back end consuming the orders at `broker` (`--role backend`, no HTTP).
pub(crate) fn portal_backend(workers: Option<u32>, broker: &str) -> Vec<String> {
    let mut a = ["--role", "backend", "--http", "off", "--broker", broker]
        .map(String::from)
        .to_vec();
    if let Some(w) = workers {
        a.extend(["--workers".to_owned(), w.to_string()]);
    }
    a
}

/// bench-server flags other than the listeners and workers.
fn server_options(spec: &ServerSpec) -> Vec<String> {
    let mut a = Vec::new();
    if let Some(s) = &spec.max_body {
        a.extend(["--max-body".to_owned(), s.bytes.to_string()]);
    }
    if let Some(n) = spec.store_cap {
        a.extend(["--store-cap".to_owned(), n.to_string()]);
    }
    if let Some(d) = spec.header_timeout {
        a.extend(["--header-timeout".to_owned(), d.to_string()]);
    }
    if let Some(d) = spec.idle_timeout {
        a.extend(["--idle-timeout".to_owned(), d.to_string()]);
    }
    if let Some(n) = spec.max_connections {
        a.extend(["--max-connections".to_owned(), n.to_string()]);
    }
    if let Some(n) = spec.rest_above {
        a.extend(["--rest-above".to_owned(), n.to_string()]);
    }
    a
}

/// bench-client's arguments for one step, after the binary: `target` is the URL (or chat address) to load,
/// `json` where it writes the results document, `sampler` where it reads the server's figures.
pub fn client(
    step: &ClientStep,
    target: &str,
    json: &Path,
    sampler: &Sampler,
    label: &str,
) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    let mut flag = |name: &str, value: String| {
        a.push(format!("--{name}"));
        a.push(value);
    };
    if let Some(chat) = &step.chat {
        flag("addr", target.to_owned());
        flag("rooms", chat.rooms.to_string());
        flag("users", chat.users.to_string());
        flag("count", chat.count.to_string());
        if let Some(p) = chat.pause {
            flag("pause", p.to_string());
        }
        if let Some(r) = chat.runs {
            flag("runs", r.to_string());
        }
        flag("deadline", DurationArg(deadline::CHAT_RUN).to_string());
        flag("json", json.display().to_string());
        if let Sampler::Pid(pid) = sampler {
            flag("monitor-pid", pid.to_string());
        }
        if chat.room_order {
            a.push("--check-room-order".to_owned());
        }
        a.insert(0, "chat".to_owned());
        return a;
    }
    flag("url", target.to_owned());
    // A clients ramp's connections are its stages' (bench-client takes its peak).
    if let Some(c) = step.clients.filter(|_| !ramps_clients(step)) {
        flag("clients", c.to_string());
    }
    if let Some(t) = step.threads {
        flag("threads", t.to_string());
    }
    if let Some(r) = step.rate {
        flag("rate", r.to_string());
    }
    match step.length.filter(|_| step.stages.is_none()) {
        Some(Length::Duration(d)) => flag("duration", d.to_string()),
        Some(Length::Requests(n)) => flag("requests", n.to_string()),
        None => {}
    }
    let durations = [
        ("warmup", step.warmup),
        ("think-time", step.think_time),
        ("timeout", step.timeout),
        ("connect-timeout", step.connect_timeout),
    ];
    for (name, d) in durations {
        if let Some(d) = d {
            flag(name, d.to_string());
        }
    }
    if let Some(p) = step.packet_size {
        flag("packet-size", p.to_string());
    }
    if let Some(m) = &step.message_size {
        flag("message-size", m.text.clone());
    }
    if let Some(n) = step.validate_first {
        flag("validate-first", n.to_string());
    }
    if let Some(n) = step.validate_every {
        flag("validate-every", n.to_string());
    }
    if let Some(i) = step.interval {
        flag("interval", i.to_string());
    }
    flag("json", json.display().to_string());
    sampler.flags(&mut flag);
    flag("label", label.to_owned());
    // The shape's flags after `--url URL`, where `--operation` has always been.
    a.splice(2..2, shape(step));
    if !step.keepalive {
        a.push("--no-keepalive".to_owned());
    }
    a
}

/// The flags of a step's shape (issue 43): its operation or mix, stages, arrivals, seed, and the thresholds
/// it stops on.
fn shape(step: &ClientStep) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    let mut flag = |name: &str, value: String| a.extend([format!("--{name}"), value]);
    match &step.mix {
        Some(m) => flag("mix", m.to_string()),
        None => flag("operation", step.operation.name().to_owned()),
    }
    if let Some(st) = &step.stages {
        flag("stage", st.to_string());
    }
    if let Some(a) = step.arrivals {
        flag("arrivals", a.name().to_owned());
    }
    if let Some(seed) = step.random_seed {
        flag("seed", seed.to_string());
    }
    if let Some(ab) = &step.abort {
        for t in &ab.thresholds {
            flag("threshold", t.text.clone());
        }
        for (name, d) in [("abort-grace", ab.grace), ("abort-window", ab.window)] {
            if let Some(d) = d {
                flag(name, d.to_string());
            }
        }
        a.push("--abort-on-fail".to_owned());
    }
    a
}

fn ramps_clients(step: &ClientStep) -> bool {
    step.stages
        .as_ref()
        .is_some_and(|s| s.ramped() == bench_proto::shape::Ramped::Clients)
}

/// bench-client's arguments to verify `step`'s operation at `url` before any load (`--verify-only`): the
/// same request bodies the step sends (operation, sizes), one call each.
pub fn verify(step: &ClientStep, url: &str) -> Vec<String> {
    let mut a = vec!["--url".to_owned(), url.to_owned()];
    // Every operation of a mix.
    match &step.mix {
        Some(m) => a.extend(["--mix".to_owned(), m.to_string()]),
        None => a.extend(["--operation".to_owned(), step.operation.name().to_owned()]),
    }
    if let Some(p) = step.packet_size {
        a.extend(["--packet-size".to_owned(), p.to_string()]);
    }
    if let Some(m) = &step.message_size {
        a.extend(["--message-size".to_owned(), m.text.clone()]);
    }
    // As many request variants as the step's connections use (CXF ids differ per connection).
    if let Some(c) = step.clients {
        a.extend(["--clients".to_owned(), c.to_string()]);
    }
    a.push("--verify-only".to_owned());
    a
}

/// bench-client's arguments to verify a chat server at `addr` before any load: two users enter the first
/// room, exchange a message each way and leave (`chat --verify-only`).
pub(crate) fn verify_chat(addr: &str) -> Vec<String> {
    ["chat", "--addr", addr, "--verify-only"]
        .map(str::to_owned)
        .to_vec()
}

/// Where a peer server runs: as a process from its build directory here, or in its container image.
#[derive(Debug, Clone, Copy)]
pub enum PeerPlace<'a> {
    Process(&'a Path),
    Container,
}

/// A peer server's whole command line (program and flags; after the CPU pinning prefix for a process, the
/// container's command in its image), from its peer.toml's templates — the one place it is built, for every
/// backend. It listens on `http` (`127.0.0.1:0` as a process, `0.0.0.0:8080` in a container); its workers are
/// its configuration's rule (gsoap's pool: at least the instance's largest client count; jaxws's: 2 for each of
/// the `cores` the server is given), else `workers` (the harness's: the scenario's, or the pinned server CPUs);
/// store cap and body bound are the scenario's.
pub fn peer(
    peer: &PeerSut,
    place: PeerPlace<'_>,
    spec: &ServerSpec,
    instance: &Instance,
    (workers, cores): (Option<u32>, u32),
    http: &str,
) -> anyhow::Result<Vec<String>> {
    let clients = instance
        .steps
        .iter()
        .filter_map(|s| s.client.clients)
        .max()
        .unwrap_or(0);
    peer_for(peer, place, spec, clients, (workers, cores), http)
}

/// [`peer()`] for a load of at most `clients` clients, outside a plan (calibration, the zeep check).
pub fn peer_for(
    peer: &PeerSut,
    place: PeerPlace<'_>,
    spec: &ServerSpec,
    clients: u32,
    (workers, cores): (Option<u32>, u32),
    http: &str,
) -> anyhow::Result<Vec<String>> {
    let config = peer.config();
    let (build, java) = match place {
        PeerPlace::Process(dir) => (
            dir.display().to_string(),
            wsbench_tools::jdk::JAVA.name.to_owned(),
        ),
        PeerPlace::Container => (peer::IMAGE_DIR.to_owned(), peer::IMAGE_JAVA.to_owned()),
    };
    let vars = peer::Vars {
        build,
        java,
        http: http.to_owned(),
        workers: match config.workers {
            Some(rule) => rule.count(clients, cores),
            None => workers,
        },
        store_cap: spec.store_cap,
        max_body: spec.max_body.as_ref().map(|s| s.bytes),
        jvm: config.jvm.clone(),
        args: config.args.clone(),
    };
    let mut a = peer::render(&peer.build().1.program, &vars)?;
    a.extend(peer::render(&peer.def.args, &vars)?);
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

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

    #[test]
    fn client_args_follow_the_contract() {
        let plan = Scenario::from_text(BASE)
            .plan(false, &["keepalive=false".into(), "rate=100".into()])
            .unwrap();
        let step = plan.steps().nth(1).unwrap();
        let args = client(
            &step.client,
            "http://127.0.0.1:1",
            Path::new("steps/02.json"),
            &Sampler::Pid(42),
            &step.label,
        );
        assert_eq!(
            args.join(" "),
            "--url http://127.0.0.1:1 --operation echo --clients 4 --rate 100 --duration 10s --warmup 1s \
             --message-size 1K --interval 10s --json steps/02.json --monitor-pid 42 --label small clients=4 --no-keepalive"
        );
        let agent = Sampler::Agent {
            addr: "10.9.0.2:7171".into(),
            pid: Some(5),
            token_file: Some("/run/secrets/t".into()),
        };
        let args = client(&step.client, "http://x:1", Path::new("j"), &agent, "l").join(" ");
        assert!(
            args.contains(
                "--json j --agent 10.9.0.2:7171 --agent-pid 5 --agent-token-file /run/secrets/t --label l"
            ),
            "{args}"
        );
        assert!(
            !args.contains("TOKEN"),
            "the token is never on a command line"
        );
    }

    #[test]
    fn chat_steps() {
        let text = r#"
            description = "d"
            reproduces = "r"
            seed = "002_x.txt"
            server = { chat = true, http = false }
            matrix = { workers = [1, 2] }
            [[step]]
            operation = "chat"
            rooms = 10
            users = 20
            count = 100
            runs = 4
        "#;
        let plan = Scenario::from_text(text).plan(false, &[]).unwrap();
        let step = &plan.instances[1].steps[0];
        assert_eq!(step.id, "02-workers-2");
        let args = client(
            &step.client,
            "127.0.0.1:9",
            Path::new("s.json"),
            &Sampler::Pid(7),
            &step.label,
        )
        .join(" ");
        assert_eq!(args, "chat --addr 127.0.0.1:9 --rooms 10 --users 20 --count 100 --runs 4 --deadline 600s --json s.json --monitor-pid 7 --check-room-order");
        assert!(
            Scenario::from_text(&text.replace("chat = true", "chat = false"))
                .plan(false, &[])
                .is_err()
        );
    }

    #[test]
    fn servers_listen_where_they_are_told() {
        let spec: ServerSpec =
            toml::from_str("chat = true\nmax_connections = 10\nrest_above = 0").unwrap();
        assert_eq!(
            server(&spec, Some(2), &Listen::on(&spec, "0.0.0.0", 8080, 8081)).join(" "),
            "--http 0.0.0.0:8080 --chat 0.0.0.0:8081 --workers 2 --max-connections 10 --rest-above 0"
        );
        let chat_only: ServerSpec = toml::from_str("http = false\nchat = true").unwrap();
        assert_eq!(
            server(&chat_only, None, &Listen::on(&chat_only, "127.0.0.1", 0, 0)).join(" "),
            "--http off --chat 127.0.0.1:0"
        );
    }
}
