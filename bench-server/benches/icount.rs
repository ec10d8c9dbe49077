//! Instruction counts of the hot paths, the deterministic tier of `cargo xtask gate`: `icount list` prints each
//! hot path and its iteration count; `icount run NAME ITERS` sets one up and runs it ITERS times inside
//! `wsbench_icount_measured`, the only function callgrind collects in (`--toggle-collect`), so setup is not
//! counted. Run by `cargo bench` or `cargo test --benches`, it runs every hot path once as a smoke test.

use std::hint::black_box;
use std::process::ExitCode;

use bench_proto::cxf;

/// A hot path: its name (the same ids as the criterion benchmarks measuring it), the iterations one count runs,
/// and a setup that checks its input is valid and returns the work.
struct HotPath {
    name: &'static str,
    iters: u64,
    setup: fn() -> Box<dyn FnMut()>,
}

const HOT_PATHS: &[HotPath] = &[
    HotPath {
        name: "cxf/parse_request/1",
        iters: 50,
        setup: cxf_parse_request,
    },
    HotPath {
        name: "cxf/write_response/1",
        iters: 50,
        setup: cxf_write_response,
    },
    HotPath {
        name: "server/soap_echo/cxf_1",
        iters: 50,
        setup: cxf_echo,
    },
];

fn cxf_request_bytes() -> Vec<u8> {
    let mut body = Vec::new();
    cxf::write_request(&cxf::echo_complex_request(1, 1), &mut body);
    body
}

fn cxf_parse_request() -> Box<dyn FnMut()> {
    let body = cxf_request_bytes();
    cxf::parse_request(&body).expect("the reference request parses");
    Box::new(move || {
        let _ = black_box(cxf::parse_request(black_box(&body)));
    })
}

fn cxf_write_response() -> Box<dyn FnMut()> {
    let resp = cxf::echo_complex_request(1, 1).into_echo_response();
    let mut out = Vec::with_capacity(4096);
    Box::new(move || {
        out.clear();
        cxf::write_response(black_box(&resp), &mut out);
        black_box(&out);
    })
}

/// The server's work for one call without HTTP: parse, echo, serialise into a reused buffer.
fn cxf_echo() -> Box<dyn FnMut()> {
    let body = cxf_request_bytes();
    let mut out = Vec::with_capacity(4096);
    Box::new(move || {
        out.clear();
        let req = cxf::parse_request(black_box(&body)).expect("checked by the smoke run");
        cxf::write_response(&req.into_echo_response(), &mut out);
        black_box(&out);
    })
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
        // `cargo bench` / `cargo test --benches` (with libtest or criterion flags): run each hot path once.
        _ => {
            for p in HOT_PATHS {
                let mut work = (p.setup)();
                wsbench_icount_measured(&mut *work, 1);
            }
            println!(
                "icount: {} hot paths ran; their instruction counts come from `cargo xtask gate` (valgrind)",
                HOT_PATHS.len()
            );
        }
    }
    ExitCode::SUCCESS
}
