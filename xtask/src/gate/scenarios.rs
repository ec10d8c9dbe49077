//! `cargo xtask gate --scenarios`: the gate on what a scenario's call costs, counted exactly — per call,
//! bench-server's and bench-client's instructions (callgrind), their system calls (strace) and the bytes on
//! the wire (the client's TCP reads and writes) — base against head, each built as a release build the way
//! `gate` builds its sides. A count that moves beyond its threshold fails, naming the scenario, the call, the
//! metric, base, head and their ratio. Each count has a band ([`Band`]): counts of a fixed path (instructions
//! on a kept-alive connection, bytes) fail beyond ±1 %; counts that depend on timing (system calls; the
//! server's instructions with a connection per call) are the median of three runs and fail beyond a wider,
//! stated threshold. Calls per second of native runs are shown, and gated only when both sides have repeats
//! (`--wall-repeats N`, N ≥ 2) and their 95 % intervals do not overlap.

mod broker;
mod counts;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use xshell::Shell;

use self::counts::{Call, Counts, Load, Measured};
use bench_proto::numbers::num;
use wsbench_harness::artifacts::{self, Binaries};
use wsbench_harness::metric::Metric;
use wsbench_harness::scenario::{Operation, Scenario};
use wsbench_harness::stats::Estimate;
use wsbench_tools::{cargo, strace, valgrind};

/// How a count is read from [`Counts`].
type Pick = fn(&Counts) -> f64;

/// How steady a count is between two runs of the same binaries, which sets its threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Band {
    /// A fixed path: instructions on a kept-alive connection and bytes on the wire repeat within 0.1 %.
    Exact,
    /// Moves with timing, so that two countings of one build differ: system calls (a read that finds nothing
    /// returns EAGAIN; one epoll wake-up brings one event or several), and with a connection per call the
    /// server's instructions too (its connection task is polled once or twice, as the request has arrived
    /// or not: 2,187 against 2,734 task polls for 2,000 calls in two countings of one build); the client's
    /// instructions for messages of 32 KiB or more (how many reads a response takes); the chat server's
    /// (how many messages one wake-up reads: 6,276, 6,360, 6,338 against 6,283, 6,269, 6,248 per message); the
    /// chat
    /// client's instructions (how its users' reads batch the room's messages); an OSS/J order's app and back
    /// end instructions (how their STOMP frames batch).
    Timing,
    /// Shown, never gated: bench-client's worker-thread instructions per OSS/J order, which moved from 3,660
    /// to 6,586 over six countings of one build (the worker waits on each transaction's trip through the
    /// broker, and what it does while waiting depends on how long that takes); and the chat client's system
    /// calls per message, mostly `epoll_wait`s whose number depends on how often its users run out of work
    /// (17.4, 18.1, 18.8 in three runs, then 24.3, 29.0, 18.1 in three more of the same build). The client's
    /// HTTP path is gated by the other calls; the portal's and the chat's own costs are the servers'.
    Shown,
}

impl Band {
    fn of(metric: Metric, call: &Call) -> Band {
        match metric {
            Metric::ClientSyscallsPerCall if matches!(call.load, Load::Chat { .. }) => Band::Shown,
            Metric::ServerSyscallsPerCall | Metric::ClientSyscallsPerCall => Band::Timing,
            Metric::ServerInstructionsPerCall
                if call.fresh_connections || call.load != Load::Http =>
            {
                Band::Timing
            }
            Metric::ClientInstructionsPerCall => match call.load {
                Load::Http if call.big_messages => Band::Timing,
                Load::Http => Band::Exact,
                Load::Chat { .. } => Band::Timing,
                Load::Portal => Band::Shown,
            },
            _ => Band::Exact,
        }
    }
}

/// The threshold of each band, as fractions (0.01 = ±1 %).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Thresholds {
    pub(crate) exact: f64,
    pub(crate) timing: f64,
}

impl Thresholds {
    fn of(self, band: Band) -> f64 {
        match band {
            Band::Exact => self.exact,
            Band::Timing => self.timing,
            Band::Shown => f64::INFINITY,
        }
    }
}

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
    pub(crate) thresholds: Thresholds,
    /// Calls per second, when both sides have repeats.
    pub(crate) wall_threshold: f64,
    pub(crate) wall_repeats: u16,
    pub(crate) keep_worktree: bool,
}

/// The calls of every scenario: each distinct (operation, message size, packet size, keep-alive) of its
/// steps, as a fixed-count bench-client load; a chat step's call is a message sent in its rooms' shape, an
/// OSS/J order's a transaction through one app instance, the broker and one back end.
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
            let call = match &c.chat {
                Some(chat) => chat_call(chat.rooms, chat.users),
                None if c.operation == Operation::OssjOrder => portal_call(),
                None => call_of(
                    c.operation,
                    c.message_size.as_ref().map(|s| s.text.as_str()),
                    c.packet_size,
                    c.keepalive,
                ),
            };
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

/// A chat message, counted in runs of 10 messages per user (20 for the bigger run), paced (one message in
/// flight per room), in rooms of the step's shape.
fn chat_call(rooms: u32, users: u32) -> Call {
    Call {
        name: format!("chat message, {rooms} rooms of {users}"),
        args: Vec::new(),
        calls: 10 * u64::from(rooms) * u64::from(users),
        fresh_connections: false,
        big_messages: false,
        load: Load::Chat { rooms, users },
    }
}

/// An OSS/J order, counted in runs of 200 transactions (400 for the bigger run): each is several messages
/// through the broker, and both the app and the back end run under callgrind.
fn portal_call() -> Call {
    let op = Operation::OssjOrder.to_string();
    Call {
        name: op.clone(),
        args: vec!["--operation".to_owned(), op],
        calls: 200,
        fresh_connections: false,
        big_messages: false,
        load: Load::Portal,
    }
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
        fresh_connections: !keepalive,
        big_messages: big,
        load: Load::Http,
    }
}

/// One compared figure.
#[derive(Debug, Clone)]
struct Row {
    scenarios: Vec<String>,
    call: String,
    metric: Metric,
    band: Band,
    threshold: f64,
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
        rows.extend(compare(scenarios, call, &b, &h, req.thresholds));
        if let Some(each) = per_delivery(call) {
            let (bd, hd) = (b.per(call.load.fan_out()), h.per(call.load.fan_out()));
            rows.extend(compare(scenarios, &each, &bd, &hd, req.thresholds));
        }
        wall.push((scenarios.clone(), call.name.clone(), b, h));
    }
    let text = table(&rows, &wall);
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
                    "{} {}: {} {} → {} (×{:.4}, threshold ±{:.1} %)",
                    r.scenarios.join("/"),
                    r.call,
                    r.metric.key(),
                    num(r.base),
                    num(r.head),
                    r.ratio(),
                    r.threshold * 100.0
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

/// A chat message's counts per delivery as a call of their own (the same runs, divided by the fan-out).
fn per_delivery(call: &Call) -> Option<Call> {
    let Load::Chat { rooms, users } = call.load else {
        return None;
    };
    Some(Call {
        name: format!("chat delivery, {rooms} rooms of {users}"),
        ..call.clone()
    })
}

fn slug(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The rows of one call: each count, base against head, failing beyond its band's threshold either way.
fn compare(
    scenarios: &[String],
    call: &Call,
    b: &Measured,
    h: &Measured,
    thresholds: Thresholds,
) -> Vec<Row> {
    COUNTED
        .iter()
        .map(|(metric, pick)| {
            let (base, head) = (pick(&b.counts), pick(&h.counts));
            let band = Band::of(*metric, call);
            let mut row = Row {
                scenarios: scenarios.to_vec(),
                call: call.name.clone(),
                metric: *metric,
                band,
                threshold: thresholds.of(band),
                base,
                head,
                fails: false,
            };
            // NaN (a count that could not be read) fails too, unless the count is only shown.
            let change = (row.ratio() - 1.0).abs();
            row.fails = band != Band::Shown && (change.is_nan() || change > row.threshold);
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
fn table(rows: &[Row], wall: &[(Vec<String>, String, Measured, Measured)]) -> String {
    let mut out = format!(
        "\n### Per call, base → head (each count fails beyond its threshold; timing-dependent counts are the median of {} runs)\n\n| scenarios | call | metric | base | head | ratio | threshold | |\n|---|---|---|---:|---:|---:|---:|---|\n",
        counts::TIMING_REPEATS
    );
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {:.4} | {} | {} |",
            r.scenarios.join(", "),
            r.call,
            r.metric.key(),
            num(r.base),
            num(r.head),
            r.ratio(),
            match r.band {
                Band::Exact => format!("±{:.1} %", r.threshold * 100.0),
                Band::Timing => format!("±{:.1} % (timing)", r.threshold * 100.0),
                Band::Shown => "shown".to_owned(),
            },
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
    fn every_scenario_has_its_calls() {
        let root = wsbench_harness::paths::project_root();
        let all = calls(&root, &[]).expect("the scenario files load");
        let of = |name: &str| all.iter().find(|(n, _)| n == name).map(|(_, c)| c.clone());
        let cxf = of("cxf-echo-complex").expect("cxf-echo-complex has a call");
        assert_eq!(cxf.len(), 1);
        assert_eq!(cxf[0].name, "echoComplexTypeDoc packet 1");
        let chat = of("volano-loopback").expect("chat has its call");
        assert_eq!(chat.len(), 1);
        assert_eq!(
            chat[0].load,
            Load::Chat {
                rooms: 10,
                users: 20
            }
        );
        assert_eq!(chat[0].calls, 2_000, "10 messages a user");
        let portal = of("oss-scale-out").expect("the portal has its call");
        assert_eq!(portal.len(), 1);
        assert_eq!(portal[0].load, Load::Portal);
        let large = of("customer-large").expect("customer-large has calls");
        assert!(
            large.len() >= 4
                && large.iter().all(|c| c.calls == 100
                    && Band::of(Metric::ClientInstructionsPerCall, c) == Band::Timing),
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
        let echo = call_of(Operation::Echo, None, None, true);
        let t = Thresholds {
            exact: 0.01,
            timing: 0.10,
        };
        let rows = compare(&s, &echo, &m(16_000.0, 1200.0), &m(16_500.0, 1190.0), t);
        let failing: Vec<Metric> = rows.iter().filter(|r| r.fails).map(|r| r.metric).collect();
        assert_eq!(
            failing,
            [Metric::ServerInstructionsPerCall],
            "+3.1 % fails, −0.8 % does not"
        );
        let fewer = compare(&s, &echo, &m(16_000.0, 1200.0), &m(15_000.0, 1200.0), t);
        assert!(
            fewer[0].fails,
            "a fall beyond the threshold fails too: the counts are exact"
        );
        let text = table(
            &rows,
            &[(s.clone(), "echo".into(), m(1.0, 1.0), m(1.0, 1.0))],
        );
        assert!(text.contains("| cxf-echo-complex | echo | server_instructions_per_call | 16,000 | 16,500 | 1.0312 | ±1.0 % | **FAIL** |"), "{text}");
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

    #[test]
    fn counts_that_move_with_timing_have_their_own_stated_threshold() {
        let with = |server_instructions, server_syscalls| Measured {
            counts: Counts {
                server_instructions,
                client_instructions: 36_000.0,
                server_syscalls,
                client_syscalls: 11.0,
                bytes_sent: 60.0,
                bytes_received: 588.0,
            },
            calls_per_s: vec![],
        };
        let t = Thresholds {
            exact: 0.01,
            timing: 0.10,
        };
        let s = vec!["oss-connection-churn".to_owned()];
        let churn = call_of(Operation::Echo, None, None, false);
        let kept = call_of(Operation::Echo, None, None, true);
        // +5 % server instructions and +5 % server syscalls: within the timing band with a connection per call.
        let (b, h) = (with(24_000.0, 16.0), with(25_200.0, 16.8));
        assert!(compare(&s, &churn, &b, &h, t).iter().all(|r| !r.fails));
        // On a kept-alive connection the same +5 % in instructions fails (a fixed path); syscalls still pass.
        let rows = compare(&s, &kept, &b, &h, t);
        let failing: Vec<Metric> = rows.iter().filter(|r| r.fails).map(|r| r.metric).collect();
        assert_eq!(failing, [Metric::ServerInstructionsPerCall]);
        // One more system call per call on a 3-syscall call (+33 %) fails even in the timing band.
        let rows = compare(&s, &kept, &with(24_000.0, 3.0), &with(24_000.0, 4.0), t);
        assert!(rows
            .iter()
            .any(|r| r.fails && r.metric == Metric::ServerSyscallsPerCall));
        // The table states each row's threshold and band.
        let text = table(&rows, &[]);
        assert!(
            text.contains(
                "| server_syscalls_per_call | 3.00 | 4.00 | 1.3333 | ±10.0 % (timing) | **FAIL** |"
            ),
            "{text}"
        );
        assert!(
            text.contains("| bytes_sent_per_call | 60.00 | 60.00 | 1.0000 | ±1.0 % | ok |"),
            "{text}"
        );
        // The portal client's instructions are shown, never gated.
        let portal = portal_call();
        let (mut b, mut h) = (with(126_000.0, 11.0), with(126_000.0, 11.0));
        b.counts.client_instructions = 3_660.0;
        h.counts.client_instructions = 6_586.0;
        let rows = compare(&s, &portal, &b, &h, t);
        assert!(rows.iter().all(|r| !r.fails), "{rows:?}");
        assert!(table(&rows, &[]).contains("| 1.7995 | shown | ok |"));
        // So are the chat client's system calls; its server's are gated in the timing band.
        let chat = chat_call(10, 20);
        let (mut b, mut h) = (with(6_300.0, 21.0), with(6_300.0, 21.0));
        b.counts.client_syscalls = 18.1;
        h.counts.client_syscalls = 24.3;
        assert!(compare(&s, &chat, &b, &h, t).iter().all(|r| !r.fails));
        h.counts.server_syscalls = 25.0;
        let failing: Vec<Metric> = compare(&s, &chat, &b, &h, t)
            .iter()
            .filter(|r| r.fails)
            .map(|r| r.metric)
            .collect();
        assert_eq!(failing, [Metric::ServerSyscallsPerCall]);
        assert_eq!(
            Band::of(Metric::ServerInstructionsPerCall, &chat),
            Band::Timing
        );
    }
}
