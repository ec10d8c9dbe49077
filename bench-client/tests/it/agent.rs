//! The sampling agent end to end: the real `bench-client agent` beside a server, a run that reads the
//! server's figures through it (`--agent`), and peers without the token, who get nothing.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Stdio};

use bench_client::agent::{Session, Token};
use bench_proto::results::{ResultsDoc, RunRecord, SamplingVia};

use crate::support::{bin, schema_checked, tmp, Server};

/// The agent binary, stopped on drop, and its READY line's address.
struct Agent {
    child: Child,
    addr: String,
    ready: String,
}

impl Agent {
    fn start(token: &Token, args: &[&str]) -> Agent {
        let mut child = bin()
            .args(["agent", "--listen", "127.0.0.1:0"])
            .args(args)
            .env("WSBENCH_AGENT_TOKEN", token.hex())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("bench-client agent starts");
        let mut ready = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut ready)
            .expect("the READY line");
        let addr = bench_proto::ready::Ready::parse(&ready)
            .ok()
            .and_then(|r| r.agent)
            .unwrap_or_else(|| panic!("no address in {ready:?}"))
            .to_string();
        Agent { child, addr, ready }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Issue 44, item 1: the run reads the server's CPU, RSS, fds and threads, its host's CPU with steal and
/// its network through the agent, stores them beside its intervals, and says where they came from.
#[test]
fn a_run_samples_the_server_through_the_agent() {
    let server = Server::bench_server();
    let token = Token::generate();
    // The server runs in this test process: the agent finds it by its listening port.
    let port = server.addr.port().to_string();
    let agent = Agent::start(&token, &["--port", &port]);
    let me = std::process::id();
    assert!(
        agent.ready.contains(&format!("pid={me}")),
        "{}",
        agent.ready
    );
    assert!(
        !agent.ready.contains("token="),
        "a token given is never printed"
    );
    let json = tmp("agent.json");
    let out = bin()
        .args([
            "--url",
            &server.url(),
            "-c",
            "2",
            "-d",
            "1500ms",
            "--interval",
            "500ms",
        ])
        .args(["--agent", &agent.addr, "--json", json.to_str().unwrap()])
        .env("WSBENCH_AGENT_TOKEN", token.hex())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = schema_checked(&json);
    let text = serde_json::to_vec(&v).unwrap();
    let (doc, record): (ResultsDoc, RunRecord) = (
        serde_json::from_slice(&text).unwrap(),
        RunRecord::from_json(&text).unwrap(),
    );
    let sampling = record.sampling.expect("where the figures came from");
    assert_eq!(sampling.via, SamplingVia::Agent);
    assert_eq!(
        (sampling.agent.as_deref(), sampling.pid),
        (Some(&*agent.addr), Some(me))
    );
    assert!(
        sampling.agent_cpu_per_s.is_some_and(|c| c < 0.5),
        "{sampling:?}"
    );
    let cpu = record.monitored_process.expect("the server's CPU");
    assert!(cpu.pid == me && cpu.cpu_user_s + cpu.cpu_sys_s > 0.0);
    let system = doc.system.expect("the system block");
    assert!(system.samples.iter().all(|s| s.steal_pct.is_some()
        && s.server_rss_kb.is_some_and(|kb| kb > 0)
        && s.server_threads.is_some_and(|n| n > 1)
        && s.net_rx_bytes_per_s.is_some()));
    assert!(system.mean.server_fds_max.is_some_and(|n| n > 2));
    let intervals = record.timeline.unwrap().intervals;
    assert!(
        intervals
            .iter()
            .all(|i| i.server_rss_kb.is_some() && i.server_fds.is_some()),
        "{intervals:?}"
    );
}

/// Nobody without the token learns anything or drives the agent: a run with another token is refused
/// before any load (and says so), and the agent never answers it.
#[test]
fn without_the_token_nothing_is_read() {
    let token = Token::generate();
    let agent = Agent::start(&token, &["--pid", &std::process::id().to_string()]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let err = rt
        .block_on(Session::connect(&agent.addr, &Token::generate(), None))
        .expect_err("another token is refused");
    assert!(
        format!("{err:#}").contains("holds another token"),
        "{err:#}"
    );
    let ok = rt.block_on(Session::connect(&agent.addr, &token, None));
    assert!(
        ok.is_ok(),
        "the agent still serves the run that holds it: {ok:?}"
    );

    let server = Server::bench_server();
    let out = bin()
        .args(["--url", &server.url(), "-d", "1s", "--agent", &agent.addr])
        .env("WSBENCH_AGENT_TOKEN", Token::generate().hex())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("the agent at {}", agent.addr)),
        "{stderr}"
    );
    let out = bin()
        .args(["--url", &server.url(), "-d", "1s", "--agent", &agent.addr])
        .env_remove("WSBENCH_AGENT_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "no token: a usage error");
}
