//! `cargo xtask gate`: the regression gate. Builds a base revision (git worktree) and the working tree, measures
//! both in one run, alternating per benchmark, and fails only on a slowdown that is significant beyond the
//! threshold and confirmed by a re-measurement; beside wall clock, instruction counts under callgrind, and the
//! hostile corpus held to 3× a valid echo of its size (the head only: `--tier hostile` needs no base).

mod build;
mod callgrind;
mod ceilings;
mod criterion;
mod decide;
mod hostile;
mod instructions;
mod record;
mod scenarios;
mod wall;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use xshell::Shell;

use self::build::{Target, Worktree, SELFCHECK_CFG};
use self::criterion::BenchBin;
use self::criterion::{Statistic, Timing};
use self::decide::{parse_percent, render_table, Verdict};

/// The wall-clock selection: (package, bench target, benchmark id prefixes). Small on purpose: each benchmark is
/// measured on both sides, and suspects twice, and the whole gate must finish in minutes.
const WALL: &[(&str, &str, &[&str])] = &[
    (
        "bench-proto",
        "soap",
        &["cxf_echoComplexTypeDoc_1_item/", "customer_echo_100KB/"],
    ),
    (
        "bench-proto",
        "chat",
        &[
            "chat_codec/decode_chat_request",
            "chat_codec/encode_chat_indication",
        ],
    ),
    ("bench-server", "chat", &["chat_fan_out/room_of_20/queue"]),
    ("bench-server", "server", &["server/roundtrip/"]),
];

/// The instruction-count binaries (`bench-server/benches/icount.rs`, `bench-client/benches/icount.rs`).
const ICOUNT: &[(&str, &str)] = &[("bench-server", "icount"), ("bench-client", "icount")];

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The git revision to compare against (branch, tag or commit), checked out into target/gate/base (the
    /// wall-clock and instruction tiers compare; the hostile tier measures the working tree alone).
    #[arg(long)]
    base: Option<String>,
    /// Fail when a benchmark's whole confidence interval of change lies above this (twice).
    #[arg(long, default_value = "5%", value_parser = parse_percent)]
    threshold: f64,
    /// Fail when a hot path's instruction count rises by more than this.
    #[arg(long, default_value = "2%", value_parser = parse_percent)]
    icount_threshold: f64,
    /// Which tiers to run.
    #[arg(long, value_enum, default_value_t = Tiers::All)]
    tier: Tiers,
    /// Only benchmarks and hot paths whose id contains this (repeatable).
    #[arg(long)]
    filter: Vec<String>,
    /// The body sizes at which the hostile tier holds every case to 3× a valid echo (repeatable: 64KB, 1MB,
    /// 8MiB).
    #[arg(long = "hostile-size", value_name = "SIZE", default_values_t = ["64KB".to_owned(), "1MB".to_owned()])]
    hostile_sizes: Vec<String>,
    /// Alternating rounds per benchmark (base, head, base, head, …); each side's rounds are pooled.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=20))]
    rounds: u16,
    /// Warm-up seconds per benchmark, side and round.
    #[arg(long, default_value_t = 0.5)]
    warm_up: f64,
    /// Measurement seconds per benchmark, side and round.
    #[arg(long, default_value_t = 1.0)]
    measurement: f64,
    /// The statistic whose change decides.
    #[arg(long, value_enum, default_value_t = Statistic::Median)]
    statistic: Statistic,
    /// Build the head with `--cfg wsbench_gate_selfcheck`: an extra pass over the buffer in the SOAP parse path
    /// (the parse benchmarks ~10–25 % slower), to prove the gate catches a known slowdown.
    #[arg(long)]
    inject_slowdown: bool,
    /// Quick self-check without a base: the instruction-count tier of the working tree against itself, and the
    /// hostile tier at 64 KB (must pass).
    #[arg(long, conflicts_with_all = ["base", "tier", "hostile_sizes"])]
    self_check: bool,
    /// Leave the base worktree in target/gate/base after the run.
    #[arg(long)]
    keep_worktree: bool,
    /// Also print every row and the verdict as one JSON document (last on stdout).
    #[arg(long)]
    json: bool,
    /// The scenario gate instead: per scenario, instructions, system calls and bytes on the wire per call of
    /// bench-server and bench-client (callgrind, strace), base against head; fails beyond ±1 %
    /// (`--count-threshold`), or `--timing-threshold` for counts that move with timing. `--filter` picks
    /// scenarios by name.
    #[arg(long)]
    scenarios: bool,
    /// With --scenarios: build the head with an extra copy of every request body in bench-server
    /// (`--cfg wsbench_gate_extra_copy`), the regression the scenario gate must catch.
    #[arg(long, requires = "scenarios")]
    inject_regression: bool,
    /// With --scenarios: the threshold for counts of a fixed path (instructions on a kept-alive connection,
    /// bytes on the wire).
    #[arg(long, default_value = "1%", value_parser = parse_percent, requires = "scenarios")]
    count_threshold: f64,
    /// With --scenarios: the threshold for counts that move with timing (system calls; the server's
    /// instructions with a connection per call), each the median of three runs. Set from two countings of
    /// one build on a shared, busy machine (see docs/history.md).
    #[arg(long, default_value = "10%", value_parser = parse_percent, requires = "scenarios")]
    timing_threshold: f64,
    /// With --scenarios: timed native runs per call and side; calls/s are gated only when both sides have
    /// at least two (the threshold is --threshold).
    #[arg(long, default_value_t = 1, requires = "scenarios", value_parser = clap::value_parser!(u16).range(1..=20))]
    wall_repeats: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Tiers {
    All,
    Wall,
    Icount,
    Hostile,
    /// `--self-check`: the instruction and hostile tiers, without a base.
    #[value(skip)]
    SelfCheck,
}

impl Tiers {
    fn wall(self) -> bool {
        matches!(self, Tiers::All | Tiers::Wall)
    }
    fn icount(self) -> bool {
        matches!(self, Tiers::All | Tiers::Icount | Tiers::SelfCheck)
    }
    fn hostile(self) -> bool {
        matches!(self, Tiers::All | Tiers::Hostile | Tiers::SelfCheck)
    }
    /// Whether a tier compares the working tree with a base.
    fn needs_base(self) -> bool {
        matches!(self, Tiers::All | Tiers::Wall | Tiers::Icount)
    }
}

pub(crate) fn run(sh: &Shell, args: Args) -> anyhow::Result<()> {
    if args.scenarios {
        return scenarios::run(
            sh,
            &scenarios::Request {
                base: args.base.clone(),
                self_check: args.self_check,
                inject_regression: args.inject_regression,
                filter: args.filter.clone(),
                thresholds: scenarios::Thresholds {
                    exact: args.count_threshold,
                    timing: args.timing_threshold,
                },
                wall_threshold: args.threshold,
                wall_repeats: args.wall_repeats,
                keep_worktree: args.keep_worktree,
            },
        );
    }
    let started = Instant::now();
    let gate_dir = wsbench_harness::paths::project_root()
        .join("target")
        .join("gate");
    let tiers = if args.self_check {
        Tiers::SelfCheck
    } else {
        args.tier
    };
    if tiers.icount() || tiers.hostile() {
        callgrind::check_valgrind(sh).context("or pass --tier wall")?;
    }
    let load_at_start = loadavg();
    let (worktree, base_bins, head_bins) = build_sides(sh, &args, tiers, &gate_dir)?;
    let built = started.elapsed();
    let measured = measure(sh, &args, tiers, &gate_dir, &base_bins, &head_bins)?;
    drop(worktree);
    let rows = &measured.rows;
    println!();
    print!("{}", render_table(rows));
    print_advisories(rows);
    record_rows(sh, rows);
    let count = |tier| rows.iter().filter(|r| r.tier == tier).count();
    println!(
        "gate: thresholds wall {:.1}% ({:?}, CI wholly beyond, confirmed), instructions {:.1}%, hostile {}×; {} wall \
         benchmarks ({} re-measured), {} hot paths, {} hostile cases; build {}, wall {}, instructions {}, \
         hostile {}, total {}; load average {} → {}",
        args.threshold * 100.0,
        args.statistic,
        args.icount_threshold * 100.0,
        hostile::MAX_RATIO,
        count(decide::Tier::Wall),
        measured.remeasured,
        count(decide::Tier::Instructions),
        count(decide::Tier::Hostile),
        secs(built),
        secs(measured.wall_time),
        secs(measured.icount_time),
        secs(measured.hostile_time),
        secs(started.elapsed()),
        load_at_start,
        loadavg(),
    );
    conclude(&args, rows)
}

/// The bench binaries of both sides: (the base worktree, kept until the end; base; head).
type Sides<'a> = (
    Option<Worktree<'a>>,
    BTreeMap<Target, BenchBin>,
    BTreeMap<Target, BenchBin>,
);

/// Builds the base (in a worktree of `--base`) and the head (the working tree); with `--self-check` the head
/// stands for both.
fn build_sides<'a>(
    sh: &'a Shell,
    args: &Args,
    tiers: Tiers,
    gate_dir: &std::path::Path,
) -> anyhow::Result<Sides<'a>> {
    let root = wsbench_harness::paths::project_root();
    let cfgs: &[&str] = if args.inject_slowdown {
        &[SELFCHECK_CFG]
    } else {
        &[]
    };
    // One target directory per side: cargo names and fingerprints a workspace's artifacts by their path relative
    // to the workspace root, so the base worktree and the working tree would overwrite (or reuse!) each other's
    // binaries in a shared one. The injected cfg changes RUSTFLAGS, so it gets its own too.
    let head_build = gate_dir.join(if args.inject_slowdown {
        "build-head-selfcheck"
    } else {
        "build-head"
    });
    let head_targets = select(build::bench_targets(sh, &root)?, tiers);
    if args.self_check {
        eprintln!("gate: self-check: the working tree against itself (instruction counts), and the hostile corpus");
        let head_bins = build::build_benches(sh, &root, &head_build, &head_targets, cfgs)?;
        return Ok((None, head_bins.clone(), head_bins));
    }
    if !tiers.needs_base() {
        let head_bins = build::build_benches(sh, &root, &head_build, &head_targets, cfgs)?;
        return Ok((None, BTreeMap::new(), head_bins));
    }
    let rev = args
        .base
        .as_deref()
        .context("--base is required for the wall-clock and instruction tiers (or --tier hostile, or --self-check)")?;
    let wt = Worktree::add(sh, rev, &gate_dir.join("base"), args.keep_worktree)?;
    let base_targets = select(build::bench_targets(sh, &wt.path)?, tiers);
    eprintln!("gate: building base ({rev}) in {}", wt.path.display());
    let base_build = gate_dir.join("build-base");
    let marker = base_build.join("gate-base-commit");
    let base_bins = wt.build_benches(&base_build, &base_targets, &marker)?;
    eprintln!(
        "gate: building head (working tree){}",
        if args.inject_slowdown {
            " with the injected slowdown"
        } else {
            ""
        }
    );
    let head_bins = build::build_benches(sh, &root, &head_build, &head_targets, cfgs)?;
    Ok((Some(wt), base_bins, head_bins))
}

/// What the tiers measured, and how long each took.
struct Measured {
    rows: Vec<decide::Row>,
    remeasured: usize,
    wall_time: Duration,
    icount_time: Duration,
    hostile_time: Duration,
}

fn measure(
    sh: &Shell,
    args: &Args,
    tiers: Tiers,
    gate_dir: &std::path::Path,
    base_bins: &BTreeMap<Target, BenchBin>,
    head_bins: &BTreeMap<Target, BenchBin>,
) -> anyhow::Result<Measured> {
    let mut rows = Vec::new();
    let mut remeasured = 0;
    let wall_started = Instant::now();
    if tiers.wall() {
        let timing = Timing {
            rounds: usize::from(args.rounds),
            warm_up_s: args.warm_up,
            measurement_s: args.measurement,
        };
        let criterion = gate_dir.join("criterion");
        let (wall_rows, n) = wall::wall_tier(sh, base_bins, head_bins, args, timing, &criterion)?;
        rows.extend(wall_rows);
        remeasured = n;
    }
    let wall_time = wall_started.elapsed();
    let icount_started = Instant::now();
    if tiers.icount() {
        let dir = gate_dir.join("callgrind");
        rows.extend(instructions::icount_tier(
            sh, base_bins, head_bins, args, &dir,
        )?);
    }
    let icount_time = icount_started.elapsed();
    let hostile_started = Instant::now();
    if tiers.hostile() {
        let sizes = if args.self_check {
            vec!["64KB".to_owned()]
        } else {
            args.hostile_sizes.clone()
        };
        let dir = gate_dir.join("hostile");
        rows.extend(hostile::hostile_tier(sh, head_bins, &sizes, &dir)?);
    }
    Ok(Measured {
        rows,
        remeasured,
        wall_time,
        icount_time,
        hostile_time: hostile_started.elapsed(),
    })
}

fn print_advisories(rows: &[decide::Row]) {
    for r in rows
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Advisory | Verdict::Unconfirmed))
    {
        let c = r.change.expect("advisories have a change");
        println!(
            "advisory: {} changed {:+.2}% [{:+.2}% {:+.2}%]: {}",
            r.id,
            c.point * 100.0,
            c.lower * 100.0,
            c.upper * 100.0,
            if r.verdict == Verdict::Unconfirmed {
                "beyond the threshold once, not on re-measurement"
            } else {
                "inside the noise"
            }
        );
    }
}

/// The head's figures into the results store: scenario `gate`, a step per benchmark or hot path.
fn record_rows(sh: &Shell, rows: &[decide::Row]) {
    let scenario = vec!["gate".to_owned()];
    let picked: Vec<(String, wsbench_harness::metric::Metric, f64)> = rows
        .iter()
        .filter_map(|r| {
            let metric = match r.tier {
                decide::Tier::Wall => wsbench_harness::metric::Metric::NsPerIteration,
                decide::Tier::Instructions => {
                    wsbench_harness::metric::Metric::InstructionsPerIteration
                }
                // A ratio, not a metric of the store's: the hostile tier's verdict is its own record.
                decide::Tier::Hostile => return None,
            };
            Some((r.id.clone(), metric, r.head?))
        })
        .collect();
    let by = record::per_scenario(picked.iter().map(|(id, m, v)| (&scenario, id, *m, *v)));
    record::gate_runs(sh, by);
}

/// The verdict: to GitHub's job summary and as JSON when asked; Err when something regressed or nothing
/// was measured.
fn conclude(args: &Args, rows: &[decide::Row]) -> anyhow::Result<()> {
    let failed: Vec<String> = rows
        .iter()
        .filter(|r| r.verdict.fails())
        .map(|r| match r.tier {
            decide::Tier::Wall => format!("{} (time)", r.id),
            decide::Tier::Instructions => format!("{} (instructions)", r.id),
            decide::Tier::Hostile => format!(
                "{} ({:.2}× a valid echo of its size, over {}×)",
                r.id,
                r.head.unwrap_or(f64::NAN),
                hostile::MAX_RATIO
            ),
        })
        .collect();
    let verdict = if !failed.is_empty() {
        format!(
            "failed: {} regressed or over a limit: {}",
            failed.len(),
            failed.join(", ")
        )
    } else if rows.is_empty() {
        "measured nothing".to_owned()
    } else {
        "passed".to_owned()
    };
    // On GitHub Actions the verdict and the table go to the job's summary page too.
    if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") {
        let text = format!("## wsbench gate: {verdict}\n\n{}\n", render_table(rows));
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()));
        if let Err(e) = written {
            eprintln!("gate: could not write $GITHUB_STEP_SUMMARY: {e}");
        }
    }
    if args.json {
        let passed = failed.is_empty() && !rows.is_empty();
        println!(
            "{}",
            serde_json::to_string_pretty(&to_json(rows, &verdict, passed))?
        );
    }
    if !failed.is_empty() {
        bail!(
            "gate failed: {} regressed or over a limit: {}",
            failed.len(),
            failed.join(", ")
        );
    }
    if rows.is_empty() {
        bail!(
            "gate measured nothing: no selected benchmark exists on either side (filters: {:?})",
            args.filter
        );
    }
    println!("gate: passed");
    Ok(())
}

/// The rows and verdict as one JSON document.
fn to_json(rows: &[decide::Row], verdict: &str, passed: bool) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "tier": format!("{:?}", r.tier).to_lowercase(),
                "id": r.id,
                "base": r.base,
                "head": r.head,
                "change": r.change.map(|c| serde_json::json!({"point": c.point, "lower": c.lower, "upper": c.upper})),
                "verdict": format!("{:?}", r.verdict).to_lowercase(),
            })
        })
        .collect();
    serde_json::json!({"schema": "wsbench.gate/v1", "passed": passed, "verdict": verdict, "rows": rows})
}

/// The gate's step in `cargo xtask test` (its unit tests run with `cargo test`): the quick self-check, the
/// instruction-count tier of the working tree against itself, which proves valgrind, the `icount` binary and the
/// counting work here and are deterministic, and the hostile tier at 64 KB, which holds every case of the
/// corpus to 3× a valid echo.
pub(crate) fn test_steps() -> Vec<crate::testing::Step> {
    #[derive(clap::Parser)]
    struct Gate {
        #[command(flatten)]
        args: Args,
    }
    let parse = |argv: &[&str]| -> anyhow::Result<Args> {
        Ok(<Gate as clap::Parser>::try_parse_from(argv)?.args)
    };
    vec![
        crate::testing::Step::new("gate:self-check", move |sh| {
            run(sh, parse(&["gate", "--self-check"])?)
        }),
        // The scenario gate's smoke: one scenario's call counted twice from the same build, which must agree
        // within the threshold (the counts are exact).
        crate::testing::Step::new("gate:scenarios-smoke", move |sh| {
            run(
                sh,
                parse(&[
                    "gate",
                    "--scenarios",
                    "--self-check",
                    "--filter",
                    "cxf-echo-complex",
                ])?,
            )
        }),
        // The planted regression (an extra copy of every request body in bench-server, a build of its own):
        // the scenario gate must fail and name the scenario and the metric.
        crate::testing::Step::opt_in("gate:scenarios-planted", move |sh| {
            let args = [
                "gate",
                "--scenarios",
                "--self-check",
                "--inject-regression",
                "--filter",
                "cxf-echo-complex",
            ];
            let Err(e) = run(sh, parse(&args)?) else {
                bail!("the planted regression passed the scenario gate");
            };
            let said = format!("{e:#}");
            anyhow::ensure!(
                said.contains("cxf-echo-complex") && said.contains("server_instructions_per_call"),
                "the scenario gate failed without naming the scenario and the metric: {said}"
            );
            println!("the planted regression failed the scenario gate: {said}");
            Ok(())
        }),
    ]
}

/// The gate's bench targets among those a tree has.
fn select(targets: BTreeMap<Target, PathBuf>, tiers: Tiers) -> BTreeMap<Target, PathBuf> {
    targets
        .into_iter()
        .filter(|(t, _)| {
            let is = |(p, b): (&str, &str)| t.package == p && t.bench == b;
            (tiers.wall() && WALL.iter().any(|&(p, b, _)| is((p, b))))
                || (tiers.icount() && ICOUNT.iter().any(|&t| is(t)))
                || (tiers.hostile() && is(("bench-server", "icount")))
        })
        .collect()
}

fn target((package, bench): (&str, &str)) -> Target {
    Target {
        package: package.to_owned(),
        bench: bench.to_owned(),
    }
}

fn wanted(id: &str, prefixes: &[&str], filters: &[String]) -> bool {
    prefixes.iter().any(|p| id.starts_with(p))
        && (filters.is_empty() || filters.iter().any(|f| id.contains(f.as_str())))
}

/// Ids of both sides, head's order first, then those only the base has.
fn union(base: &[String], head: &[String]) -> Vec<String> {
    let mut ids = head.to_vec();
    ids.extend(base.iter().filter(|b| !head.contains(b)).cloned());
    ids
}

fn secs(d: Duration) -> String {
    format!("{:.0}s", d.as_secs_f64())
}

/// The 1-minute load average, to tell how busy the machine was while the gate measured.
fn loadavg() -> String {
    wsbench_tools::load::average().map_or_else(|| "?".to_owned(), |l| format!("{:.2}", l.one))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_matches_prefixes_and_filters() {
        let prefixes = &["cxf/parse_request/", "chat/"];
        assert!(wanted("cxf/parse_request/1", prefixes, &[]));
        assert!(!wanted("cxf/wsdl", prefixes, &[]));
        assert!(wanted("chat/decode", prefixes, &["decode".to_owned()]));
        assert!(!wanted(
            "cxf/parse_request/1",
            prefixes,
            &["decode".to_owned()]
        ));
    }

    #[test]
    fn union_keeps_head_order_then_base_only() {
        let s = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            union(&s(&["a", "gone", "b"]), &s(&["b", "a", "new"])),
            s(&["b", "a", "new", "gone"])
        );
    }

    #[test]
    fn only_the_gates_targets_are_built() {
        let dir = PathBuf::from("x");
        let all: BTreeMap<Target, PathBuf> = [
            ("bench-proto", "soap"),
            ("bench-server", "icount"),
            ("bench-client", "icount"),
            ("bench-client", "misc"),
        ]
        .into_iter()
        .map(|t| (target(t), dir.clone()))
        .collect();
        let names = |tiers| {
            select(all.clone(), tiers)
                .into_keys()
                .map(|t| t.bench)
                .collect::<Vec<_>>()
        };
        assert_eq!(names(Tiers::All), ["icount", "soap", "icount"]);
        assert_eq!(names(Tiers::Wall), ["soap"]);
        assert_eq!(names(Tiers::Icount), ["icount", "icount"]);
        assert_eq!(names(Tiers::Hostile), ["icount"]);
        assert!(!Tiers::Hostile.needs_base() && !Tiers::SelfCheck.needs_base());
    }
}
