//! `cargo xtask gate --scenarios`: the gate on what a scenario's call costs, counted exactly — per call,
//! bench-server's and bench-client's instructions (callgrind), their system calls (strace) and the bytes on
//! the wire (the client's TCP reads and writes) — base against head, each built as a release build the way
//! `gate` builds its sides. A count that moves beyond the threshold (±1 %) fails, naming the scenario, the
//! call, the metric, base, head and their ratio. Calls per second of native runs are shown, and gated only
//! when both sides have repeats (`--wall-repeats N`, N ≥ 2) and their 95 % intervals do not overlap.

mod counts;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use xshell::Shell;

use self::counts::{Call, Counts, Measured};
use wsbench_harness::artifacts::{self, Binaries};
use wsbench_harness::metric::Metric;
use wsbench_harness::numbers::num;
use wsbench_harness::scenario::{Operation, Scenario};
use wsbench_harness::stats::Estimate;
use wsbench_tools::{cargo, strace, valgrind};

/// How a count is read from [`Counts`].
type Pick = fn(&Counts) -> f64;

/// The counts the gate compares, each with its metric (the one list of metrics, `Metric`).
const COUNTED: [(Metric, Pick); 6] = [
    (Metric::ServerInstructionsPerCall, |c| c.server_instructions),
    (Metric::ClientInstructionsPerCall, |c| c.client_instructions),
    (Metric::ServerSyscallsPerCall, |c| c.server_syscalls),
    (Metric::ClientSyscallsPerCall, |c| c.client_syscalls),
    (Metric::BytesSentPerCall, |c| c.bytes_sent),
    (Metric::BytesReceivedPerCall, |c| c.bytes_received),
];

/// What `gate --scenarios` is asked.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) base: Option<String>,
    /// The working tree against itself (no base to build): proves the counting, must pass.
    pub(crate) self_check: bool,
    /// Head built with `--cfg wsbench_gate_extra_copy`: an extra copy of every request body in bench-server.
    pub(crate) inject_regression: bool,
    /// Only the scenarios whose name contains one of these.
    pub(crate) filter: Vec<String>,
    pub(crate) threshold: f64,
    /// Calls per second, when both sides have repeats.
    pub(crate) wall_threshold: f64,
    pub(crate) wall_repeats: u16,
    pub(crate) keep_worktree: bool,
}

/// The calls of every scenario: each distinct (operation, message size, packet size, keep-alive) of its
/// steps, as a fixed-count bench-client load. Chat scenarios are left out (their counts move with how the
/// room's messages batch: `cargo xtask icount --only chat` shows them), and so are OSS/J orders (their tiers).
pub(crate) fn calls(root: &Path, filter: &[String]) -> Result<Vec<(String, Vec<Call>)>> {
    let mut out = Vec::new();
    for name in wsbench_harness::scenario::names(root)? {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let plan = Scenario::load(root, &name)?.plan(true, &[])?;
        let mut calls: Vec<Call> = Vec::new();
        for step in plan.steps() {
            let c = &step.client;
            // An OSS/J order needs the portal's tiers (app, back end, broker), not one bench-server.
            if c.operation.is_chat() || c.operation == Operation::OssjOrder {
                continue;
            }
            let call = call_of(
                c.operation,
                c.message_size.as_ref().map(|s| s.text.as_str()),
                c.packet_size,
                c.keepalive,
            );
            if !calls.contains(&call) {
                calls.push(call);
            }
        }
        if !calls.is_empty() {
            out.push((name, calls));
        }
    }
    Ok(out)
}

fn call_of(op: Operation, size: Option<&str>, packet: Option<u32>, keepalive: bool) -> Call {
    let mut name = op.to_string();
    let mut args = vec!["--operation".to_owned(), op.to_string()];
    if let Some(s) = size {
        name += &format!(" {s}");
        args.extend(["--message-size".to_owned(), s.to_owned()]);
    }
    if let Some(p) = packet {
        name += &format!(" packet {p}");
        args.extend(["--packet-size".to_owned(), p.to_string()]);
    }
    if !keepalive {
        name += " no-keepalive";
        args.push("--no-keepalive".to_owned());
    }
    // Big messages: fewer calls give the same exact marginal in less time under callgrind.
    let big = size
        .and_then(|s| bench_proto::units::parse_size(s).ok())
        .is_some_and(|b| b >= 32 * 1024);
    Call {
        name,
        args,
        calls: if big { 100 } else { 1000 },
    }
}

/// One compared figure.
#[derive(Debug, Clone)]
struct Row {
    scenarios: Vec<String>,
    call: String,
    metric: Metric,
    base: f64,
    head: f64,
    fails: bool,
}

impl Row {
    fn ratio(&self) -> f64 {
        if self.base == 0.0 {
            if self.head == 0.0 {
                1.0
            } else {
                f64::INFINITY
            }
        } else {
            self.head / self.base
        }
    }
}

pub(crate) fn run(sh: &Shell, req: &Request) -> Result<()> {
    let started = Instant::now();
    valgrind::check_valgrind(sh)?;
    strace::STRACE.require(sh)?;
    let root = wsbench_harness::paths::project_root();
    let wanted = calls(&root, &req.filter)?;
    anyhow::ensure!(!wanted.is_empty(), "no scenario matches {:?}", req.filter);
    let gate_dir = root.join("target").join("gate").join("scenarios");
    let (base, head, _worktree) = sides(sh, req, &gate_dir)?;
    let built = started.elapsed();
    // Each distinct call once, for every scenario that makes it.
    let mut by_call: BTreeMap<String, (Call, Vec<String>)> = BTreeMap::new();
    for (scenario, calls) in &wanted {
        for c in calls {
            by_call
                .entry(c.name.clone())
                .or_insert_with(|| (c.clone(), vec![]))
                .1
                .push(scenario.clone());
        }
    }
    let mut rows = Vec::new();
    let mut wall = Vec::new();
    for (call, scenarios) in by_call.values() {
        let dir = |side: &str| -> Result<PathBuf> {
            let d = gate_dir.join("work").join(side).join(slug(&call.name));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(&d)?;
            Ok(d)
        };
        let b = counts::measure(sh, &base, call, req.wall_repeats, &dir("base")?)?;
        let h = counts::measure(sh, &head, call, req.wall_repeats, &dir("head")?)?;
        eprintln!(
            "gate --scenarios: {} ({}) measured",
            call.name,
            scenarios.join(", ")
        );
        rows.extend(compare(scenarios, &call.name, &b, &h, req.threshold));
        wall.push((scenarios.clone(), call.name.clone(), b, h));
    }
    let text = table(&rows, &wall, req.threshold);
    print!("{text}");
    let failed: Vec<&Row> = rows.iter().filter(|r| r.fails).collect();
    let wall_failed = wall_failures(&wall, req.wall_threshold);
    println!(
        "gate --scenarios: {} calls of {} scenarios, build {:.0} s, total {:.0} s",
        by_call.len(),
        wanted.len(),
        built.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    job_summary(&text, failed.is_empty() && wall_failed.is_empty());
    record(sh, &rows);
    if !failed.is_empty() || !wall_failed.is_empty() {
        let mut named: Vec<String> = failed
            .iter()
            .map(|r| {
                format!(
                    "{} {}: {} {} → {} (×{:.4})",
                    r.scenarios.join("/"),
                    r.call,
                    r.metric.key(),
                    num(r.base),
                    num(r.head),
                    r.ratio()
                )
            })
            .collect();
        named.extend(wall_failed);
        bail!("gate --scenarios failed: {}", named.join("; "));
    }
    println!("gate --scenarios: passed");
    Ok(())
}

/// The binaries of both sides, and the base's worktree (removed when dropped).
fn sides<'a>(
    sh: &'a Shell,
    req: &Request,
    gate_dir: &Path,
) -> Result<(Binaries, Binaries, Option<super::build::Worktree<'a>>)> {
    let root = wsbench_harness::paths::project_root();
    let plain = artifacts::build_release(sh)?;
    let head = if req.inject_regression {
        eprintln!("gate --scenarios: building head with the planted regression (an extra copy of every request body)");
        build_release(
            sh,
            &root,
            &gate_dir.join("build-head-regression"),
            &["wsbench_gate_extra_copy"],
        )?
    } else {
        plain.clone()
    };
    if req.self_check {
        return Ok((plain, head, None));
    }
    let rev = req
        .base
        .as_deref()
        .context("--base is required (or --self-check)")?;
    let wt = super::build::Worktree::add(sh, rev, &gate_dir.join("base"), req.keep_worktree)?;
    eprintln!(
        "gate --scenarios: building base ({rev}) in {}",
        wt.path.display()
    );
    let base = build_release(sh, &wt.path, &gate_dir.join("build-base"), &[])?;
    Ok((base, head, Some(wt)))
}

/// bench-server and bench-client of the workspace at `tree`, release, into `target_dir`, with `cfgs`.
fn build_release(sh: &Shell, tree: &Path, target_dir: &Path, cfgs: &[&str]) -> Result<Binaries> {
    let mut rustflags = std::env::var("RUSTFLAGS").unwrap_or_default();
    for cfg in cfgs {
        rustflags.push_str(&format!(" --cfg {cfg}"));
    }
    let manifest = tree.join("Cargo.toml").display().to_string();
    let target = target_dir.display().to_string();
    let args = [
        "build",
        "--release",
        "--manifest-path",
        &manifest,
        "-p",
        "bench-server",
        "-p",
        "bench-client",
    ];
    cargo::read(
        sh,
        &args,
        &[
            ("CARGO_TARGET_DIR", &target),
            ("RUSTFLAGS", rustflags.trim()),
        ],
    )
    .with_context(|| {
        format!(
            "building bench-server and bench-client in {}",
            tree.display()
        )
    })?;
    let release = target_dir.join("release");
    Ok(Binaries {
        server: release.join("bench-server"),
        client: release.join("bench-client"),
        client_runner: Vec::new(),
    })
}

fn slug(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The rows of one call: each count, base against head, failing beyond `threshold` either way.
fn compare(
    scenarios: &[String],
    call: &str,
    b: &Measured,
    h: &Measured,
    threshold: f64,
) -> Vec<Row> {
    COUNTED
        .iter()
        .map(|(metric, pick)| {
            let (base, head) = (pick(&b.counts), pick(&h.counts));
            let mut row = Row {
                scenarios: scenarios.to_vec(),
                call: call.to_owned(),
                metric: *metric,
                base,
                head,
                fails: false,
            };
            row.fails = (row.ratio() - 1.0).abs() > threshold;
            row
        })
        .collect()
}

/// Calls per second, gated only when both sides have repeats: a change beyond `threshold` whose 95 %
/// intervals do not overlap.
fn wall_failures(
    wall: &[(Vec<String>, String, Measured, Measured)],
    threshold: f64,
) -> Vec<String> {
    let mut out = Vec::new();
    for (scenarios, call, b, h) in wall {
        let (Some(eb), Some(eh)) = (Estimate::of(&b.calls_per_s), Estimate::of(&h.calls_per_s))
        else {
            continue;
        };
        if eb.n < 2 || eh.n < 2 {
            continue;
        }
        let apart = eh.hi < eb.lo || eh.lo > eb.hi;
        if apart && (eh.median / eb.median - 1.0).abs() > threshold {
            out.push(format!(
                "{} {call}: calls/s {} → {} (×{:.3}, intervals apart)",
                scenarios.join("/"),
                num(eb.median),
                num(eh.median),
                eh.median / eb.median
            ));
        }
    }
    out
}

/// The table (markdown, so that the job summary shows it as one): every count, then the wall clock.
fn table(
    rows: &[Row],
    wall: &[(Vec<String>, String, Measured, Measured)],
    threshold: f64,
) -> String {
    let mut out = format!(
        "\n### Per call, base → head (counts fail beyond ±{:.1} %)\n\n| scenarios | call | metric | base | head | ratio | |\n|---|---|---|---:|---:|---:|---|\n",
        threshold * 100.0
    );
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {:.4} | {} |",
            r.scenarios.join(", "),
            r.call,
            r.metric.key(),
            num(r.base),
            num(r.head),
            r.ratio(),
            if r.fails { "**FAIL**" } else { "ok" }
        );
    }
    out += "\n### Wall clock (calls/s of native runs, one connection: shown, gated only with repeats on both sides)\n\n| call | base | head | ratio |\n|---|---:|---:|---:|\n";
    for (_, call, b, h) in wall {
        let med = |m: &Measured| Estimate::of(&m.calls_per_s).map_or(f64::NAN, |e| e.median);
        let _ = writeln!(
            out,
            "| {call} | {} | {} | {:.3} |",
            num(med(b)),
            num(med(h)),
            med(h) / med(b)
        );
    }
    out
}

/// On GitHub Actions the table goes to the job's summary page.
fn job_summary(text: &str, passed: bool) {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") else {
        return;
    };
    let verdict = if passed { "passed" } else { "FAILED" };
    let text = format!("## wsbench gate --scenarios: {verdict}\n{text}\n");
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()));
    if let Err(e) = written {
        eprintln!("gate: could not write $GITHUB_STEP_SUMMARY: {e}");
    }
}

/// The head's counts into the results store (kind `gate`): a scenario's per-call counts follow it commit by
/// commit in `cargo xtask history <scenario> --metric server_instructions_per_call`.
fn record(sh: &Shell, rows: &[Row]) {
    let by_scenario = super::record::per_scenario(
        rows.iter()
            .map(|r| (&r.scenarios, &r.call, r.metric, r.head)),
    );
    super::record::gate_runs(sh, by_scenario);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_http_scenario_has_its_calls_and_chat_is_left_out() {
        let root = wsbench_harness::paths::project_root();
        let all = calls(&root, &[]).expect("the scenario files load");
        let of = |name: &str| all.iter().find(|(n, _)| n == name).map(|(_, c)| c.clone());
        let cxf = of("cxf-echo-complex").expect("cxf-echo-complex has a call");
        assert_eq!(cxf.len(), 1);
        assert_eq!(cxf[0].name, "echoComplexTypeDoc packet 1");
        assert!(of("volano-loopback").is_none(), "chat is not counted here");
        let large = of("customer-large").expect("customer-large has calls");
        assert!(
            large.len() >= 4 && large.iter().all(|c| c.calls == 100),
            "{large:?}"
        );
        let churn = of("oss-connection-churn").expect("churn has a call");
        assert!(
            churn.iter().all(|c| c.name.ends_with("no-keepalive")),
            "{churn:?}"
        );
        assert_eq!(
            calls(&root, &["customer-small".to_owned()]).unwrap().len(),
            1
        );
    }

    #[test]
    fn a_count_beyond_the_threshold_either_way_fails_and_is_named() {
        let m = |server_instructions, bytes_sent| Measured {
            counts: Counts {
                server_instructions,
                client_instructions: 5_000.0,
                server_syscalls: 4.0,
                client_syscalls: 5.0,
                bytes_sent,
                bytes_received: 900.0,
            },
            calls_per_s: vec![10_000.0],
        };
        let s = vec!["cxf-echo-complex".to_owned()];
        let rows = compare(&s, "echo", &m(16_000.0, 1200.0), &m(16_500.0, 1190.0), 0.01);
        let failing: Vec<Metric> = rows.iter().filter(|r| r.fails).map(|r| r.metric).collect();
        assert_eq!(
            failing,
            [Metric::ServerInstructionsPerCall],
            "+3.1 % fails, −0.8 % does not"
        );
        let fewer = compare(&s, "echo", &m(16_000.0, 1200.0), &m(15_000.0, 1200.0), 0.01);
        assert!(
            fewer[0].fails,
            "a fall beyond the threshold fails too: the counts are exact"
        );
        let text = table(
            &rows,
            &[(s.clone(), "echo".into(), m(1.0, 1.0), m(1.0, 1.0))],
            0.01,
        );
        assert!(text.contains("| cxf-echo-complex | echo | server_instructions_per_call | 16,000 | 16,500 | 1.0312 | **FAIL** |"), "{text}");
        // Wall clock: never gated with one run a side; with repeats, only when the intervals are apart.
        let runs = |v: &[f64]| Measured {
            calls_per_s: v.to_vec(),
            ..m(1.0, 1.0)
        };
        let once = [(s.clone(), "echo".to_owned(), runs(&[100.0]), runs(&[50.0]))];
        assert!(wall_failures(&once, 0.05).is_empty());
        let apart = [(
            s.clone(),
            "echo".to_owned(),
            runs(&[100.0, 101.0, 99.0]),
            runs(&[80.0, 81.0, 79.0]),
        )];
        assert_eq!(wall_failures(&apart, 0.05).len(), 1);
    }
}
