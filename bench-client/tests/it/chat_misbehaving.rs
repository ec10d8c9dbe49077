//! `bench-client chat` (the real binary) against chat servers of the tests' own that misbehave on purpose
//! (`misbehaving_chat`): whatever the server does, the run ends within its timeout, counts the error by
//! kind and exits non-zero. A run that does not end is killed and fails the test, so none can hang the
//! test run.

use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use bench_proto::results::{ResultsDoc, RunEnd, ViolationKind};
use misbehaving_chat::{Behaviour, Misbehaviour, Relay, Spawned};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::support::{bin, schema_checked, tmp};

/// Spawns `bench-client chat --addr ADDR ARGS… --json FILE`; see [`wait`].
fn start_chat(
    name: &str,
    addr: SocketAddr,
    args: &[&str],
) -> (std::process::Child, std::path::PathBuf, Instant) {
    let json = tmp(&format!("chat-{name}.json"));
    let child = bin()
        .args(["chat", "--addr", &addr.to_string(), "--json"])
        .arg(&json)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bench-client starts");
    (child, json, Instant::now())
}

/// How a run ended.
struct Ended {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    doc: ResultsDoc,
    /// From the start of the process to its exit.
    took: Duration,
    /// When the process exited.
    at: Instant,
}

/// Runs `bench-client chat --addr ADDR ARGS… --json FILE` to its end; see [`wait`].
fn run_chat(name: &str, addr: SocketAddr, args: &[&str], bound: Duration) -> Ended {
    let (child, json, start) = start_chat(name, addr, args);
    wait(name, child, &json, start, bound)
}

/// Waits for a `bench-client chat` started at `start`; SIGKILLs it and fails the test when it has not ended
/// within `bound`.
fn wait(
    name: &str,
    child: std::process::Child,
    json: &std::path::Path,
    start: Instant,
    bound: Duration,
) -> Ended {
    let pid = Pid::from_raw(child.id() as i32);
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let out = child.wait_with_output();
        let _ = tx.send(());
        out
    });
    if rx.recv_timeout(bound).is_err() {
        let _ = kill(pid, Signal::SIGKILL);
        let out = waiter.join().expect("the waiter").expect("wait");
        panic!(
            "{name}: bench-client chat hung: not ended within {bound:?} (killed)\nstdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let at = Instant::now();
    let took = at - start;
    let out = waiter.join().expect("the waiter").expect("wait");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        json.exists(),
        "{name}: no results document\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let doc = serde_json::from_value(schema_checked(json)).expect("a results document");
    Ended {
        code: out.status.code(),
        stdout,
        stderr,
        doc,
        took,
        at,
    }
}

/// Seconds from the server's misbehaviour to the client's exit.
fn time_to_end(server: &Spawned, end: &Ended) -> f64 {
    let at = server
        .misbehaved_at()
        .expect("the server reached the message it misbehaves at");
    end.at.saturating_duration_since(at).as_secs_f64()
}

/// The server dies mid-run (every connection closed at once): users fail one after the other while the
/// run is being aborted. This froze bench-client (a watch guard held across the wait for the users, and
/// every later failing user blocked on it); it must end, with its errors and what was measured.
#[test]
fn a_server_that_dies_mid_run_ends_the_run_with_what_was_measured() {
    for attempt in 1..=3 {
        let server = Spawned::start(Behaviour::misbehaving(Misbehaviour::CloseAll, 30));
        let args = [
            "--rooms",
            "10",
            "--users",
            "20",
            "--count",
            "1000",
            "--timeout",
            "5s",
            "--threads",
            "1",
        ];
        let end = run_chat("close-all", server.addr, &args, Duration::from_secs(30));
        println!(
            "close-all, attempt {attempt}: ended {:.3} s after the server died ({:.3} s in all)",
            time_to_end(&server, &end),
            end.took.as_secs_f64()
        );
        assert_eq!(end.code, Some(1), "{}\n{}", end.stdout, end.stderr);
        assert!(end.doc.counts.errors.io > 0, "{}", end.stdout);
        // What was measured until the server died is kept, marked cut short.
        let chat = end.doc.chat.as_ref().expect("a chat block");
        assert_eq!(chat.runs[0].end, RunEnd::Failed);
        assert!(
            chat.runs[0].errors.iter().any(|e| e.contains("closed")),
            "what cut the run short is in the document: {:?}",
            chat.runs[0].errors
        );
        assert_eq!(chat.scored_runs, [1]);
        assert!(end.doc.partial && chat.messages_received > 0 && chat.score_msg_per_s > 0.0);
        assert!(end.doc.latency_us.corrected.count > 0);
    }
}

/// Per-expected-packet timeout of the cases below: a stalled room ends within it (and a quarter).
const TIMEOUT: &str = "2s";
/// A hang, not a slow end: the binary is killed past this.
const BOUND: Duration = Duration::from_secs(30);

/// A paced run of 2 rooms of 5 users, 20 messages each, misbehaved at at Room1's message 8 (Mark3's
/// second; the victim, Mark5, is not its successor).
const PACED: [&str; 10] = [
    "--rooms",
    "2",
    "--users",
    "5",
    "--count",
    "20",
    "--threads",
    "1",
    "--timeout",
    TIMEOUT,
];

/// What a case must count.
#[derive(Debug, Clone, Copy)]
enum Counted {
    Io,
    Timeout,
    /// Not the protocol: the stream cannot be read on.
    Validation,
    Violation(ViolationKind),
}

impl Counted {
    fn of(self, doc: &ResultsDoc) -> u64 {
        let v = &doc.chat.as_ref().expect("a chat block").violations;
        match self {
            Counted::Io => doc.counts.errors.io,
            Counted::Timeout => doc.counts.errors.timeout,
            Counted::Validation => doc.counts.errors.validation,
            Counted::Violation(k) => v.get(k),
        }
    }
}

/// Each misbehaviour: the run ends (never hangs), well within its timeout, counts what the server did by
/// kind, and exits 1.
#[test]
fn every_misbehaviour_ends_the_run_counted_by_kind_and_failed() {
    let pause: Vec<&str> = PACED.iter().copied().chain(["--pause", "20ms"]).collect();
    let cases: [(Misbehaviour, &[&str], Counted); 7] = [
        (Misbehaviour::CloseUser, &PACED, Counted::Io),
        (Misbehaviour::StallRoom, &PACED, Counted::Timeout),
        // With a pause, Mark5 leaves once each sender's last message is in: the lost one is missing.
        (
            Misbehaviour::DropOne,
            &pause,
            Counted::Violation(ViolationKind::Missing),
        ),
        (
            Misbehaviour::DuplicateOne,
            &PACED,
            Counted::Violation(ViolationKind::Duplicate),
        ),
        (Misbehaviour::UnknownPacket, &PACED, Counted::Validation),
        (Misbehaviour::GarbledFrame, &PACED, Counted::Validation),
        (Misbehaviour::Reset, &PACED, Counted::Io),
    ];
    let mut failures = Vec::new();
    for (m, args, counted) in cases {
        let server = Spawned::start(Behaviour::misbehaving(m, 8));
        let end = run_chat(m.name(), server.addr, args, BOUND);
        let took = time_to_end(&server, &end);
        let chat = end.doc.chat.as_ref().expect("a chat block");
        println!(
            "{m}: exit {:?} {took:.3} s after the misbehaviour; {}; errors {:?}; violations {:?}",
            end.code, chat.runs[0].end, end.doc.counts.errors, chat.violations
        );
        let ok = end.code == Some(1) && counted.of(&end.doc) > 0 && took < 8.0;
        if !ok {
            failures.push(format!(
                "{m}: wanted exit 1 and {counted:?} counted within 8 s:\n{}\n{}",
                end.stdout, end.stderr
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Relaying without a room lock, as the VOLANO server does: each sender's order is kept, so the default
/// check passes (the room's departures counted, not errors); `--check-room-order` fails it.
#[test]
fn a_lock_free_relay_passes_the_per_sender_check_and_fails_the_room_order() {
    let server = Spawned::start(Behaviour::relay(Relay::LockFree));
    let end = run_chat("lock-free", server.addr, &PACED, BOUND);
    let chat = end.doc.chat.as_ref().expect("a chat block");
    assert_eq!(end.code, Some(0), "{}\n{}", end.stdout, end.stderr);
    assert_eq!(chat.violations.total(), 0, "{}", end.stdout);
    assert!(chat.room_order_departures > Some(0), "{}", end.stdout);
    assert!(
        end.stdout.contains("came out of the room's order"),
        "{}",
        end.stdout
    );
    assert_eq!(chat.runs[0].end, RunEnd::Completed);

    let mut args = PACED.to_vec();
    args.push("--check-room-order");
    let end = run_chat("lock-free-room-order", server.addr, &args, BOUND);
    let chat = end.doc.chat.as_ref().expect("a chat block");
    assert_eq!(end.code, Some(1), "{}\n{}", end.stdout, end.stderr);
    let v = chat.violations;
    assert!(
        v.room_order > 0 && v.total() == v.room_order,
        "{v:?}\n{}",
        end.stdout
    );
    assert!(
        end.stdout.contains("out of the room's order at"),
        "{}",
        end.stdout
    );
    assert_eq!(chat.runs[0].end, RunEnd::Completed);
    println!("lock-free relay: {} room-order violations", v.room_order);
}

/// The same relay with a room lock passes `--check-room-order`: the check fails only a server that breaks
/// the order.
#[test]
fn a_room_lock_relay_passes_the_room_order_check() {
    let server = Spawned::start(Behaviour::relay(Relay::RoomLock));
    let mut args = PACED.to_vec();
    args.push("--check-room-order");
    let end = run_chat("room-lock", server.addr, &args, BOUND);
    let chat = end.doc.chat.as_ref().expect("a chat block");
    assert_eq!(end.code, Some(0), "{}\n{}", end.stdout, end.stderr);
    assert_eq!(chat.violations.total(), 0);
    assert!(end
        .stdout
        .contains("every member saw the room's messages in one order"));
}

/// SIGTERM and SIGINT end a run within a second, with what it measured kept and marked cut short (not an
/// error: exit 0).
#[test]
fn a_signal_ends_the_run_within_a_second_with_partial_results() {
    for signal in [Signal::SIGTERM, Signal::SIGINT] {
        let server = Spawned::start(Behaviour::relay(Relay::RoomLock));
        let args = [
            "--rooms",
            "4",
            "--users",
            "10",
            "--count",
            "100000",
            "--threads",
            "1",
        ];
        let (child, json, start) = start_chat("signal", server.addr, &args);
        let pid = Pid::from_raw(child.id() as i32);
        // Waiting on what the run itself causes (its messages reach the server), bounded.
        while server.relayed() < 200 {
            assert!(start.elapsed() < BOUND, "the run never got going");
            std::thread::sleep(Duration::from_millis(5));
        }
        let sent = Instant::now();
        kill(pid, signal).expect("the signal is sent");
        let end = wait("signal", child, &json, start, BOUND);
        let took = end.at.saturating_duration_since(sent).as_secs_f64();
        let chat = end.doc.chat.as_ref().expect("a chat block");
        println!("{signal}: ended {took:.3} s after it; {}", chat.runs[0].end);
        assert_eq!(end.code, Some(0), "{}\n{}", end.stdout, end.stderr);
        assert!(end.doc.partial);
        assert_eq!(chat.runs[0].end, RunEnd::Interrupted);
        assert_eq!(
            chat.scored_runs,
            [1],
            "the run cut short is what was measured"
        );
        assert!(chat.messages_received > 0 && chat.score_msg_per_s > 0.0);
        assert!(
            end.stdout.contains("cut short by SIGINT/SIGTERM"),
            "{}",
            end.stdout
        );
        assert!(took < 1.0, "{signal} took {took:.3} s to end the run");
    }
}

/// A run still going at its deadline is cut short there: counted as a timeout, what it measured kept.
#[test]
fn a_run_past_its_deadline_is_cut_short_there() {
    let server = Spawned::start(Behaviour::relay(Relay::RoomLock));
    let args = [
        "--rooms",
        "2",
        "--users",
        "5",
        "--count",
        "1000000",
        "--threads",
        "1",
        "--deadline",
        "1s",
    ];
    let end = run_chat("deadline", server.addr, &args, BOUND);
    let chat = end.doc.chat.as_ref().expect("a chat block");
    println!("deadline 1 s: ended after {:.3} s", end.took.as_secs_f64());
    assert_eq!(end.code, Some(1), "{}\n{}", end.stdout, end.stderr);
    assert_eq!(chat.runs[0].end, RunEnd::Deadline);
    assert_eq!(end.doc.counts.errors.timeout, 1);
    assert!(end.doc.partial && chat.messages_received > 0);
    assert!(
        end.stdout.contains("was still going at its deadline"),
        "{}",
        end.stdout
    );
}

/// A server that leaves TCP_NODELAY off (as the VOLANO product build does) holds each small write for the
/// client's delayed ACK: deliveries come in gaps near 40 ms, and the summary says so; with it on, it does not.
#[test]
fn a_server_without_tcp_nodelay_is_named_in_the_summary() {
    let args = [
        "--rooms",
        "2",
        "--users",
        "2",
        "--count",
        "40",
        "--threads",
        "1",
    ];
    for nodelay in [false, true] {
        let server = Spawned::start(Behaviour {
            nodelay,
            ..Behaviour::relay(Relay::RoomLock)
        });
        let end = run_chat("nagle", server.addr, &args, BOUND);
        let chat = end.doc.chat.as_ref().expect("a chat block");
        let gaps = chat.inter_arrival.expect("gaps measured");
        println!(
            "TCP_NODELAY {}: {:.0} msg/s, gaps p50 {} us, {:.0} % near 40 ms",
            if nodelay { "on" } else { "off" },
            chat.score_msg_per_s,
            gaps.p50_us,
            gaps.near_40ms * 100.0
        );
        assert_eq!(end.code, Some(0), "{}\n{}", end.stdout, end.stderr);
        assert_eq!(gaps.nagle_suspected(), !nodelay, "{gaps:?}");
        assert_eq!(end.stdout.contains("NAGLE: "), !nodelay, "{}", end.stdout);
    }
}
