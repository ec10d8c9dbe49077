//! The hostile corpus in the instruction-count binary: `hostile_<size>/<shape>` hot paths (an echo server's work
//! on one body of `bench_proto::hostile`, within the default limits), and `hostile-ratios [SIZE…]`, which runs
//! each of them under callgrind and prints its instructions per byte against the valid echo body of the same
//! size, failing (exit 1) if any is more than [`MAX_RATIO`] times as costly.

use std::hint::black_box;
use std::path::Path;
use std::process::{Command, ExitCode};

use bench_proto::hostile::{echo_service, valid_echo, Service, SHAPES};
use bench_proto::soap::Limits;

/// Issue 11: every request is answered in at most 3× the time of a valid echo body of the same size.
const MAX_RATIO: f64 = 3.0;

/// The sizes a name may ask for.
const SIZES: &[(&str, usize)] = &[("64KB", 64 << 10), ("1MB", 1 << 20), ("8MiB", 8 << 20)];

/// Shapes whose 1 MB hot paths the gate counts (`icount list`): the two valid echoes and the costliest
/// shapes of the corpus, so that a slower hostile path shows up as a regression. `hostile-ratios` covers all.
const GATED: &[&str] = &[
    "valid_echo_cxf",
    "valid_echo_customer",
    "header_blocks_max_attributes",
    "header_must_understand_scan",
    "items_scope_scan",
    "comments",
];

/// `(name, iterations)` of the hostile hot paths the gate counts.
pub fn gated() -> impl Iterator<Item = (String, u64)> {
    GATED.iter().map(|s| (format!("hostile_1MB/{s}"), 1))
}

/// Every shape name, the valid echoes first.
fn all_names() -> impl Iterator<Item = String> {
    ["valid_echo_cxf", "valid_echo_customer"]
        .into_iter()
        .map(str::to_owned)
        .chain(SHAPES.iter().map(|s| s.name.to_owned()))
}

/// The body and service of `hostile_<size>/<shape>`, if that is such a name.
fn body_of(name: &str) -> Option<(Service, Vec<u8>)> {
    let (size, shape) = name.strip_prefix("hostile_")?.split_once('/')?;
    let size = SIZES.iter().find(|(label, _)| *label == size)?.1;
    match shape {
        "valid_echo_cxf" => Some((Service::Cxf, valid_echo(Service::Cxf, size))),
        "valid_echo_customer" => Some((Service::Customer, valid_echo(Service::Customer, size))),
        _ => {
            let shape = SHAPES.iter().find(|s| s.name == shape)?;
            Some((shape.service, (shape.make)(size)))
        }
    }
}

/// The work of a hostile hot path, if `name` is one.
pub fn setup(name: &str) -> Option<Box<dyn FnMut()>> {
    let (service, body) = body_of(name)?;
    let limits = Limits::default();
    let mut out = Vec::with_capacity(2 * body.len());
    Some(Box::new(move || {
        out.clear();
        let _ = black_box(echo_service(service, black_box(&body), &limits, &mut out));
    }))
}

/// Instructions callgrind counts in one run of hot path `name` by this executable.
fn count(exe: &Path, name: &str, out_file: &Path) -> Result<u64, String> {
    let status = Command::new("valgrind")
        .args([
            "--tool=callgrind",
            "--collect-atstart=no",
            "--toggle-collect=*wsbench_icount_measured*",
        ])
        .arg(format!("--callgrind-out-file={}", out_file.display()))
        .arg(exe)
        .args(["run", name, "1"])
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("running valgrind (apt-get install valgrind): {e}"))?;
    if !status.success() {
        return Err(format!("callgrind run of {name}: {status}"));
    }
    let text = std::fs::read_to_string(out_file).map_err(|e| e.to_string())?;
    text.lines()
        .find_map(|l| {
            l.strip_prefix("totals:")
                .or_else(|| l.strip_prefix("summary:"))
        })
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .ok_or_else(|| format!("{}: no totals", out_file.display()))
}

/// `hostile-ratios [SIZE…]`: the table, and exit 1 if a shape costs more than `MAX_RATIO` times the valid
/// echo per byte.
pub fn ratios(sizes: &[String]) -> ExitCode {
    let sizes: Vec<&str> = if sizes.is_empty() {
        vec!["1MB", "8MiB"]
    } else {
        sizes.iter().map(String::as_str).collect()
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("hostile-ratios: {e}");
            return ExitCode::FAILURE;
        }
    };
    let dir = std::env::temp_dir().join(format!("wsbench-hostile-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("hostile-ratios: {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    let mut worst: f64 = 0.0;
    let mut failed = false;
    for size in sizes {
        println!("hostile corpus at {size}: instructions per byte, and the ratio to the valid echo of its service");
        println!(
            "{:<32} {:>10} {:>14} {:>8} {:>7}",
            "shape", "bytes", "instructions", "per byte", "ratio"
        );
        let mut valid_per_byte = [0.0f64; 2];
        for name in all_names() {
            let full = format!("hostile_{size}/{name}");
            let Some((service, body)) = body_of(&full) else {
                eprintln!("hostile-ratios: unknown size {size} (one of 64KB, 1MB, 8MiB)");
                return ExitCode::from(2);
            };
            let instr = match count(&exe, &full, &dir.join("callgrind.out")) {
                Ok(n) => n,
                Err(e) => {
                    eprintln!("hostile-ratios: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let per_byte = instr as f64 / body.len() as f64;
            let slot = usize::from(service == Service::Customer);
            let ratio = if name.starts_with("valid_echo") {
                valid_per_byte[slot] = per_byte;
                1.0
            } else {
                per_byte / valid_per_byte[slot]
            };
            let flag = if ratio > MAX_RATIO { "  > 3×" } else { "" };
            failed |= ratio > MAX_RATIO;
            worst = worst.max(ratio);
            println!(
                "{name:<32} {:>10} {instr:>14} {per_byte:>8.1} {ratio:>7.2}{flag}",
                body.len()
            );
        }
        println!();
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("worst ratio {worst:.2} (limit {MAX_RATIO})");
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
