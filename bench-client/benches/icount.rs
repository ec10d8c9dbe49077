//! Instruction counts of the client's per-call hot path without sockets, a tier of `cargo xtask gate` beside
//! bench-server's `icount`: the lean HTTP/1.1 path reading a response (the usual head in one pass, framing,
//! a chunked body decoded in place) out of the reused buffer, and the per-response check run on the body
//! slice — as the load loop does for every call. Same protocol as bench-server's binary: `icount list`
//! prints each hot path and its iteration count; `icount run NAME ITERS` runs one ITERS times inside
//! `wsbench_icount_measured`, the only function callgrind collects in. Run by `cargo bench` or
//! `cargo test --benches`, it runs every hot path once as a smoke test.

use std::hint::black_box;
use std::process::ExitCode;

use bench_client::config::RunConfig;
use bench_client::engine::bench_api::Reader;
use bench_client::flags::Cli;
use bench_client::workload::Workload;
use bench_proto::cxf;
use clap::Parser as _;
use http::StatusCode;

struct HotPath {
    name: &'static str,
    iters: u64,
    setup: fn() -> Box<dyn FnMut()>,
}

const HOT_PATHS: &[HotPath] = &[
    HotPath {
        name: "client_lean/health/read_and_check",
        iters: 200,
        setup: health,
    },
    HotPath {
        name: "client_lean/echoComplexTypeDoc_1_item/read_and_check",
        iters: 200,
        setup: echo_length,
    },
    HotPath {
        name: "client_lean/echoComplexTypeDoc_1_item/read_chunked_and_check",
        iters: 200,
        setup: echo_chunked,
    },
];

fn workload(op: &str, extra: &[&str]) -> Workload {
    let base = [
        "bench-client",
        "--url",
        "http://127.0.0.1:9",
        "--operation",
        op,
    ];
    let cli = Cli::try_parse_from(base.iter().chain(extra)).expect("the bench's flags parse");
    let cfg = RunConfig::from_args(cli.run).expect("the bench's flags are valid");
    Workload::build(&cfg).expect("the workload builds")
}

/// A response head as bench-server (hyper) writes it.
fn head(extra: &str) -> Vec<u8> {
    format!("HTTP/1.1 200 OK\r\ncontent-type: text/xml; charset=utf-8\r\n{extra}date: Tue, 01 Dec 2026 10:00:00 GMT\r\n\r\n")
        .into_bytes()
}

/// The echo bench-server answers to the workload's first request.
fn echo_body(w: &Workload) -> Vec<u8> {
    let req = cxf::parse_request(&w.variant(0).body).expect("the workload's request parses");
    let mut out = Vec::new();
    cxf::write_response(&req.into_echo_response(), &mut out);
    out
}

/// One call's work after the bytes arrived: read `wire` (as one read into the reused buffer), check the body.
fn read_and_check(w: Workload, wire: Vec<u8>) -> Box<dyn FnMut()> {
    let mut buf: Vec<u8> = Vec::with_capacity(wire.len());
    let mut call = move || {
        buf.clear();
        buf.extend_from_slice(black_box(&wire));
        let resp = Reader::new(false)
            .advance(&mut buf)
            .expect("a valid response")
            .expect("complete in one read");
        let status = StatusCode::from_u16(resp.status).expect("a status");
        let checked = w.check(w.variant(0), status, &buf[resp.body], false);
        assert!(checked.is_ok(), "the response passes the check");
    };
    call();
    Box::new(call)
}

fn health() -> Box<dyn FnMut()> {
    let mut wire = head("content-length: 2\r\n");
    wire.extend_from_slice(b"ok");
    // Each body compared with the expected one, as `--expect-body ok` has the load loop do.
    read_and_check(workload("http-get", &["--expect-body", "ok"]), wire)
}

fn echo_length() -> Box<dyn FnMut()> {
    let w = workload("echoComplexTypeDoc", &[]);
    let body = echo_body(&w);
    let mut wire = head(&format!("content-length: {}\r\n", body.len()));
    wire.extend_from_slice(&body);
    read_and_check(w, wire)
}

fn echo_chunked() -> Box<dyn FnMut()> {
    let w = workload("echoComplexTypeDoc", &[]);
    let body = echo_body(&w);
    let mut wire = head("transfer-encoding: chunked\r\n");
    for part in body.chunks(body.len() / 2 + 1) {
        wire.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
        wire.extend_from_slice(part);
        wire.extend_from_slice(b"\r\n");
    }
    wire.extend_from_slice(b"0\r\n\r\n");
    read_and_check(w, wire)
}

/// Callgrind counts only inside this function (`--collect-atstart=no --toggle-collect=*wsbench_icount_measured*`).
#[inline(never)]
fn wsbench_icount_measured(work: &mut dyn FnMut(), iters: u64) {
    for _ in 0..iters {
        work();
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("list") => {
            for p in HOT_PATHS {
                println!("{} {}", p.name, p.iters);
            }
        }
        Some("run") => {
            let (Some(name), Some(Ok(iters))) =
                (args.get(1), args.get(2).map(|s| s.parse::<u64>()))
            else {
                eprintln!("usage: icount run NAME ITERATIONS");
                return ExitCode::from(2);
            };
            let Some(path) = HOT_PATHS.iter().find(|p| p.name == name) else {
                eprintln!("icount: no hot path `{name}` (see `icount list`)");
                return ExitCode::from(2);
            };
            let mut work = (path.setup)();
            wsbench_icount_measured(&mut *work, iters);
        }
        // `cargo bench` / `cargo test --benches` (with libtest flags): run each hot path once.
        _ => {
            for p in HOT_PATHS {
                let mut work = (p.setup)();
                wsbench_icount_measured(&mut *work, 1);
            }
            println!(
                "icount: {} client hot paths ran; their instruction counts come from `cargo xtask gate` (valgrind)",
                HOT_PATHS.len()
            );
        }
    }
    ExitCode::SUCCESS
}
