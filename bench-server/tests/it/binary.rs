//! End to end with the real `bench-server` executable: the READY line, serving, SIGTERM/SIGINT → exit 0,
//! and usage errors.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;

use crate::support::BOUND;
use bench_proto::ready::Ready;

const EXE: &str = env!("CARGO_BIN_EXE_bench-server");

struct Running {
    /// `None` once waited for; dropped while `Some`, the process is killed (a failing test leaves no server).
    child: Option<Child>,
    stdout: BufReader<std::process::ChildStdout>,
    http: SocketAddr,
    ready: String,
}

/// Starts the binary and parses its READY line.
fn start(args: &[&str]) -> Running {
    let mut child = Command::new(EXE)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn bench-server");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut line = String::new();
        let _ = stdout.read_line(&mut line);
        let _ = tx.send((line, stdout));
    });
    let Ok((line, stdout)) = rx.recv_timeout(BOUND) else {
        let _ = child.kill();
        panic!("no READY line within {BOUND:?}");
    };
    let pid = child.id();
    let mut running = Running {
        child: Some(child),
        stdout,
        http: SocketAddr::from(([0, 0, 0, 0], 0)),
        ready: line,
    };
    let line = &running.ready;
    let ready = read_ready(line);
    assert_eq!(ready.pid, Some(pid), "{line}");
    assert!(ready.workers.is_some_and(|n| n >= 1), "{line}");
    if !args.contains(&"--chat") {
        assert_eq!(ready.chat, None, "chat is off unless asked for: {line}");
    }
    let http = ready.http.expect("http=");
    assert!(http.ip().is_loopback() && http.port() != 0, "{line}");
    running.http = http;
    running
}

/// The READY line as the harness reads it; it must end in exactly one newline.
fn read_ready(line: &str) -> Ready {
    let body = line
        .strip_suffix('\n')
        .unwrap_or_else(|| panic!("READY line not terminated: {line:?}"));
    Ready::parse(body).unwrap_or_else(|e| panic!("{e}"))
}

fn http_get(addr: SocketAddr, path: &str) -> String {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(BOUND)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).expect("response");
    out
}

fn signal(pid: u32, sig: &str) {
    let status = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
}

impl Running {
    fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    fn wait(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("running");
        let pid = child.id();
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let _ = tx.send(child.wait());
        });
        rx.recv_timeout(BOUND)
            .unwrap_or_else(|_| {
                signal(pid, "-KILL");
                panic!("no exit within {BOUND:?} (killed)");
            })
            .expect("wait")
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn ready_line_serving_and_sigterm_exit_cleanly() {
    let mut server = start(&["--http", "127.0.0.1:0", "--workers", "2"]);
    let reply = http_get(server.http, "/health");
    assert!(reply.starts_with("HTTP/1.1 200 "), "{reply}");
    let reply = http_get(server.http, &format!("{}?wsdl", bench_proto::cxf::PATH));
    assert!(
        reply.starts_with("HTTP/1.1 200 ") && reply.contains(&server.http.to_string()),
        "{reply}"
    );
    signal(server.pid(), "-TERM");
    let status = server.wait();
    assert!(status.success(), "exit status {status}");
    let mut rest = String::new();
    server.stdout.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "", "stdout carries only the READY line");
}

#[test]
fn workers_are_recorded_and_sigint_exits_cleanly() {
    let mut server = start(&["--http", "127.0.0.1:0", "--workers", "3"]);
    let reply = http_get(server.http, "/health");
    assert!(reply.starts_with("HTTP/1.1 200 "), "{reply}");
    assert!(server.ready.contains(" workers=3 "), "{}", server.ready);
    signal(server.pid(), "-INT");
    assert!(server.wait().success());
}

/// The READY line says how chat fans out and whether io_uring was allowed; `auto` takes io_uring exactly
/// when it is, `uring` refuses to start without it, `writes` never uses it.
#[test]
fn the_ready_line_states_the_chat_fan_out() {
    let fanout = |mode: &str| {
        let mut server = start(&[
            "--http",
            "127.0.0.1:0",
            "--chat",
            "127.0.0.1:0",
            "--fanout",
            mode,
        ]);
        let ready = read_ready(&server.ready);
        let (chosen, allowed) = (ready.fanout, ready.io_uring);
        assert!(
            allowed.as_deref().is_some_and(|a| !a.is_empty()),
            "{}",
            server.ready
        );
        signal(server.pid(), "-TERM");
        assert!(server.wait().success());
        (chosen.unwrap_or_default(), allowed.unwrap_or_default())
    };
    let (chosen, allowed) = fanout("writes");
    assert_eq!(chosen, "writes");
    let (chosen, auto_allowed) = fanout("auto");
    assert_eq!(auto_allowed, allowed);
    assert_eq!(chosen, if allowed == "ok" { "uring" } else { "writes" });
    if allowed == "ok" {
        assert_eq!(fanout("uring"), ("uring".to_owned(), allowed));
    } else {
        let out = Command::new(EXE)
            .args([
                "--http",
                "off",
                "--chat",
                "127.0.0.1:0",
                "--fanout",
                "uring",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stderr).contains(&allowed));
    }
    let out = Command::new(EXE)
        .args(["--fanout", "ring"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn default_listens_on_loopback() {
    let out = Command::new(EXE)
        .arg("--help")
        .output()
        .expect("run --help");
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("127.0.0.1:8080"), "{help}");
}

#[test]
fn usage_errors_exit_2_and_startup_errors_exit_1() {
    let out = Command::new(EXE).args(["--workers", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(EXE)
        .args(["--header-timeout", "soon"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(EXE).args(["--http", "off"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stdout.is_empty(),
        "no READY line when nothing is served"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to serve"));
}

#[test]
fn xml_limit_flags_reach_the_parser() {
    let out = Command::new(EXE)
        .args(["--xml-max-items", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a limit of 0 is a usage error");
    let server = start(&["--http", "127.0.0.1:0", "--xml-max-items", "2"]);
    let mut body = Vec::new();
    bench_proto::cxf::write_request(&bench_proto::cxf::echo_complex_request(3, 1), &mut body);
    let mut s = TcpStream::connect(server.http).expect("connect");
    s.set_read_timeout(Some(BOUND)).unwrap();
    write!(
        s,
        "POST {} HTTP/1.1\r\nHost: t\r\nContent-Type: text/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        bench_proto::cxf::PATH,
        body.len()
    )
    .unwrap();
    s.write_all(&body).unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).expect("response");
    assert!(reply.starts_with("HTTP/1.1 500 "), "{reply}");
    assert!(
        reply.contains(
            "echoComplexTypeDoc/in/item[2]: the sequence has more items than xml-max-items = 2"
        ),
        "{reply}"
    );
}
