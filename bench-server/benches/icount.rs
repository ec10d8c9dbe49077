//! Instruction counts of the hot paths, the deterministic tier of `cargo xtask gate`: `icount list` prints each
//! hot path and its iteration count; `icount run NAME ITERS` sets one up and runs it ITERS times inside
//! `wsbench_icount_measured`, the only function callgrind collects in (`--toggle-collect`), so setup is not
//! counted. Run by `cargo bench` or `cargo test --benches`, it runs every hot path once as a smoke test.
//! `icount run-each NAME…` runs several hot paths once each, each in its own call of the measured function, so
//! that one callgrind run with `--dump-after` counts them all. `icount hostile-list SIZE…` lists the hostile
//! corpus's cases for the gate's hostile tier (see `icount/hostile.rs`).

use std::hint::black_box;
use std::process::ExitCode;

use bench_proto::arena::Bump;
use bench_proto::chat::{self, Chat, JString, Kind, MARK_TEXT};
use bench_proto::soap::Limits;
use bench_proto::{customer, cxf};
use bench_server::chat::bench_api::FanOutRoom;

#[path = "icount/hostile.rs"]
mod hostile;

/// A hot path: its name (the id of the criterion benchmark that times the same work), the iterations one count
/// runs, and a setup that checks its input is valid and returns the work.
struct HotPath {
    name: &'static str,
    iters: u64,
    setup: fn() -> Box<dyn FnMut()>,
}

const HOT_PATHS: &[HotPath] = &[
    HotPath {
        name: "cxf_echoComplexTypeDoc_1_item/parse",
        iters: 50,
        setup: cxf_parse,
    },
    HotPath {
        name: "cxf_echoComplexTypeDoc_1_item/serialise",
        iters: 50,
        setup: cxf_serialise,
    },
    HotPath {
        name: "cxf_echoComplexTypeDoc_1_item/server_echo",
        iters: 50,
        setup: cxf_server_echo,
    },
    HotPath {
        name: "cxf_echoStringDoc/server_echo",
        iters: 50,
        setup: cxf_string_echo,
    },
    HotPath {
        name: "cxf_echoBase64Doc/server_echo",
        iters: 50,
        setup: cxf_base64_echo,
    },
    HotPath {
        name: "customer_echo_100KB/server_echo",
        iters: 3,
        setup: customer_server_echo,
    },
    HotPath {
        name: "customer_echo_100KB/parse",
        iters: 3,
        setup: customer_parse,
    },
    HotPath {
        name: "customer_echo_100KB/serialise",
        iters: 3,
        setup: customer_serialise,
    },
    HotPath {
        name: "chat_codec/decode_chat_request",
        iters: 200,
        setup: chat_decode,
    },
    HotPath {
        name: "chat_codec/encode_chat_indication",
        iters: 200,
        setup: chat_encode,
    },
    HotPath {
        name: "chat_fan_out/room_of_20/queue",
        iters: 50,
        setup: chat_fan_out,
    },
];

fn cxf_request() -> (cxf::Request<'static>, Vec<u8>) {
    let req = cxf::echo_complex_request(1, 1);
    let mut bytes = Vec::new();
    cxf::write_request(&req, &mut bytes);
    cxf::parse_request(&bytes).expect("the reference request parses");
    (req, bytes)
}

/// The parse as the server does it: values borrowed from the body and an arena reset after each call.
fn cxf_parse() -> Box<dyn FnMut()> {
    let (_, bytes) = cxf_request();
    let limits = Limits::default();
    let mut arena = Bump::new();
    Box::new(move || {
        let _ = black_box(cxf::parse_request_in(black_box(&bytes), &limits, &arena));
        arena.reset();
    })
}

fn cxf_serialise() -> Box<dyn FnMut()> {
    let (req, bytes) = cxf_request();
    let mut out = Vec::with_capacity(bytes.len());
    Box::new(move || {
        out.clear();
        cxf::write_request(black_box(&req), &mut out);
        black_box(&out);
    })
}

/// The server's work for one call without HTTP: parse, echo, serialise into a reused buffer.
fn cxf_server_echo() -> Box<dyn FnMut()> {
    cxf_echo_of(cxf::echo_complex_request(1, 1))
}

/// The server's work for a CXF call of `req` (as the CXF client sends it), into a reused buffer: bench-server's
/// own `cxf_call`, with its per-thread arena.
fn cxf_echo_of(req: cxf::Request<'_>) -> Box<dyn FnMut()> {
    let mut bytes = Vec::new();
    cxf::write_request(&req, &mut bytes);
    cxf::parse_request(&bytes).expect("the reference request parses");
    let limits = Limits::default();
    let mut out = Vec::with_capacity(4096);
    Box::new(move || {
        out.clear();
        black_box(bench_server::http::cxf_echo(
            black_box(&bytes),
            &limits,
            &mut out,
        ));
        black_box(&out);
    })
}

fn cxf_string_echo() -> Box<dyn FnMut()> {
    cxf_echo_of(cxf::echo_string_request(1))
}

fn cxf_base64_echo() -> Box<dyn FnMut()> {
    cxf_echo_of(cxf::echo_base64_request())
}

/// The server's work for a 100 KB customer echo: read the request and write the response in one pass, as
/// bench-server does.
fn customer_server_echo() -> Box<dyn FnMut()> {
    let (_, bytes) = customer_request();
    let limits = Limits::default();
    let mut out = Vec::with_capacity(2 * bytes.len());
    Box::new(move || {
        out.clear();
        let _ = black_box(customer::serve_request(
            black_box(&bytes),
            &limits,
            &mut out,
        ));
        black_box(&out);
    })
}

fn customer_request() -> (customer::Request, Vec<u8>) {
    let req = customer::Request::Echo(customer::generate_for_size(100 * 1024, 1));
    let mut bytes = Vec::new();
    customer::write_request(&req, &mut bytes);
    customer::parse_request(&bytes).expect("the 100 KB request parses");
    (req, bytes)
}

fn customer_parse() -> Box<dyn FnMut()> {
    let (_, bytes) = customer_request();
    Box::new(move || {
        let _ = black_box(customer::parse_request(black_box(&bytes)));
    })
}

fn customer_serialise() -> Box<dyn FnMut()> {
    let (req, bytes) = customer_request();
    let mut out = Vec::with_capacity(bytes.len());
    Box::new(move || {
        out.clear();
        customer::write_request(black_box(&req), &mut out);
        black_box(&out);
    })
}

/// A VolanoMark chat request, encoded.
fn chat_request() -> Vec<u8> {
    let room = JString::new("Room1").expect("ASCII");
    let user = JString::new("Mark1").expect("ASCII");
    let text = JString::new(MARK_TEXT).expect("ASCII");
    let chat = Chat {
        room_name: room.as_jstr(),
        user_name: user.as_jstr(),
        text: text.as_jstr(),
        ..Chat::default()
    };
    let mut bytes = Vec::new();
    chat.encode(&mut bytes);
    bytes
}

fn chat_decode() -> Box<dyn FnMut()> {
    let bytes = chat_request();
    let (_, used) = chat::decode(&bytes, 8192)
        .expect("valid")
        .expect("complete");
    assert_eq!(used, bytes.len());
    Box::new(move || {
        let _ = black_box(chat::decode(black_box(&bytes), 8192));
    })
}

fn chat_encode() -> Box<dyn FnMut()> {
    let room = JString::new("Room1").expect("ASCII");
    let user = JString::new("Mark1").expect("ASCII");
    let text = JString::new(chat::MARK_TEXT_TRIMMED).expect("ASCII");
    let mut out = Vec::with_capacity(256);
    Box::new(move || {
        // Building the borrowed view is free; the work is the encoding.
        let indication = Chat {
            kind: Kind::Indication,
            room_name: room.as_jstr(),
            user_name: user.as_jstr(),
            text: text.as_jstr(),
            ..Chat::default()
        };
        out.clear();
        black_box(&indication).encode(&mut out);
        black_box(&out);
    })
}

fn chat_fan_out() -> Box<dyn FnMut()> {
    let mut room = FanOutRoom::new(20);
    assert_eq!(room.send_one(), 19);
    Box::new(move || {
        black_box(room.send_one());
    })
}

/// The work of hot path `name`, of either kind, set up.
fn setup(name: &str) -> Option<Box<dyn FnMut()>> {
    match HOT_PATHS.iter().find(|p| p.name == name) {
        Some(path) => Some((path.setup)()),
        None => hostile::setup(name),
    }
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
            for (name, iters) in hostile::gated() {
                println!("{name} {iters}");
            }
        }
        Some("hostile-list") => {
            if let Err(e) = hostile::list(&args[1..]) {
                eprintln!("icount hostile-list: {e} (sizes: 64KB, 1MB, 8MiB)");
                return ExitCode::from(2);
            }
        }
        Some("run") => {
            let (Some(name), Some(Ok(iters))) =
                (args.get(1), args.get(2).map(|s| s.parse::<u64>()))
            else {
                eprintln!("usage: icount run NAME ITERATIONS");
                return ExitCode::from(2);
            };
            let Some(mut work) = setup(name) else {
                eprintln!("icount: no hot path `{name}` (see `icount list`)");
                return ExitCode::from(2);
            };
            wsbench_icount_measured(&mut *work, iters);
        }
        Some("run-each") => {
            // Every setup first (none is counted; they may allocate what the next would reuse), then each
            // hot path once, in order.
            let works: Option<Vec<_>> = args[1..].iter().map(|name| setup(name)).collect();
            let Some(mut works) = works else {
                eprintln!("icount run-each: no such hot path among {:?}", &args[1..]);
                return ExitCode::from(2);
            };
            for work in &mut works {
                wsbench_icount_measured(&mut **work, 1);
            }
        }
        // `cargo bench` / `cargo test --benches` (with libtest or criterion flags): run each hot path once.
        _ => {
            for p in HOT_PATHS {
                let mut work = (p.setup)();
                wsbench_icount_measured(&mut *work, 1);
            }
            let mut hostile_paths = 0;
            for (name, _) in hostile::gated() {
                if let Some(mut work) = hostile::setup(&name) {
                    wsbench_icount_measured(&mut *work, 1);
                    hostile_paths += 1;
                }
            }
            println!(
                "icount: {} hot paths ran; their instruction counts come from `cargo xtask gate` (valgrind)",
                HOT_PATHS.len() + hostile_paths
            );
        }
    }
    ExitCode::SUCCESS
}
