//! `cargo xtask list [SCENARIO]`: every scenario with its description and seed, or one scenario's steps and
//! published figures.

use anyhow::Result;
use xshell::Shell;

use bench_proto::numbers::{level, span};
use bench_proto::shape::Ramped;
use bench_proto::units::DurationArg;
use wsbench_harness::scenario::{self, ClientStep, Plan, Scenario};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Show this scenario's steps (full and `--quick`) and published figures.
    scenario: Option<String>,
}

pub(crate) fn run(_sh: &Shell, args: Args) -> Result<()> {
    let root = wsbench_harness::paths::project_root();
    if let Some(name) = args.scenario {
        return detail(&Scenario::load(&root, &name)?);
    }
    let names = scenario::names(&root)?;
    let width = names.iter().map(String::len).max().unwrap_or(0);
    for name in &names {
        let s = Scenario::load(&root, name)?;
        println!("{name:width$}  {}", s.file.description);
        println!(
            "{:width$}  reproduces: {} (seed {})",
            "", s.file.reproduces, s.file.seed
        );
    }
    println!("\nRun one with `cargo xtask run <scenario> [--quick]`; details with `cargo xtask list <scenario>`.");
    Ok(())
}

fn detail(s: &Scenario) -> Result<()> {
    println!(
        "{}: {}\nreproduces: {}\nseed: {}",
        s.name, s.file.description, s.file.reproduces, s.file.seed
    );
    for (title, quick) in [("full", false), ("--quick", true)] {
        let plan = s.plan(quick, &[])?;
        println!("\nsteps ({title}, {}):", load_words(&plan));
        for step in plan.steps() {
            let length = match (&step.client.chat, step.client.length) {
                (Some(c), _) => format!(
                    "{} rooms × {} users × {} messages, {} runs",
                    c.rooms,
                    c.users,
                    c.count,
                    c.runs.map_or("default".to_owned(), |r| r.to_string())
                ),
                (None, Some(scenario::Length::Duration(d))) => format!("{d}"),
                (None, Some(scenario::Length::Requests(n))) => format!("{n} requests"),
                (None, None) => "as the client decides".to_owned(),
            };
            let what = match &step.client.mix {
                Some(_) => "mix".to_owned(),
                None => step.client.operation.name().to_owned(),
            };
            println!("  {:<28} {what:<20} {length}", step.id);
            for line in shape_lines(&step.client) {
                println!("  {:<28} {line}", "");
            }
        }
    }
    println!("\npublished:");
    for p in &s.file.published {
        let range = p.max.map_or(String::new(), |m| format!("–{m}"));
        // The conditions a figure is compared under: a sweep's figures differ only in them.
        let mut at: Vec<String> = vec![];
        if let Some(c) = p.clients {
            at.push(format!("{c} client{}", if c == 1 { "" } else { "s" }));
        }
        if let Some(op) = p.operation {
            at.push(op.name().to_owned());
        }
        if let Some(w) = p.workers {
            at.push(format!("{w} workers"));
        }
        if let Some(st) = &p.step {
            at.push(format!("step {st}"));
        }
        if let Some(i) = p.instances {
            at.push(format!("{i} servers"));
        }
        let at = if at.is_empty() {
            String::new()
        } else {
            format!(" at {}", at.join(", "))
        };
        println!(
            "  {} {}{range} {}{at} ({}) — {}",
            p.metric.name(),
            p.value,
            p.unit,
            p.label,
            p.source
        );
    }
    let plan = s.plan(false, &[])?;
    if plan.repeat > 1 {
        println!(
            "\nrepeat: every step {} rounds (medians with 95 % intervals)",
            plan.repeat
        );
    }
    if !plan.thresholds.is_empty() {
        let t: Vec<&str> = plan.thresholds.iter().map(|t| t.text.as_str()).collect();
        println!("\nthresholds: {}", t.join(", "));
    }
    if s.file.abort_on_fail {
        let or_10 = |d: Option<DurationArg>| d.map_or("10s".to_owned(), |d| d.to_string());
        println!(
            "abort_on_fail: each step stops as soon as a threshold has clearly failed on its last {} (judged \
             after its first {})",
            or_10(s.file.abort_window),
            or_10(s.file.abort_grace)
        );
    }
    Ok(())
}

/// A step's shape in words, a line each: its mix, its stages, how an open loop's sends arrive.
fn shape_lines(c: &ClientStep) -> Vec<String> {
    let mut out = vec![];
    if let Some(m) = &c.mix {
        let parts: Vec<String> = m
            .shares()
            .iter()
            .map(|(op, share)| format!("{} {}", op.name(), pct(*share)))
            .collect();
        let seed = c
            .random_seed
            .map_or("1, the default".to_owned(), |s| s.to_string());
        out.push(format!(
            "mix: {} (each call drawn; seed {seed})",
            parts.join(", ")
        ));
    }
    if let Some(st) = &c.stages {
        let unit = match st.ramped() {
            Ramped::Clients => "clients",
            Ramped::Rate => "calls/s",
        };
        let spans: Vec<String> = st
            .spans()
            .iter()
            .map(|sp| {
                let took = span(sp.to_s - sp.from_s);
                match (sp.start == sp.end, sp.to_s == sp.from_s) {
                    (_, true) => format!("jump to {}", level(sp.end)),
                    (true, false) => format!("hold {} for {took}", level(sp.end)),
                    (false, false) => {
                        format!("{} → {} over {took}", level(sp.start), level(sp.end))
                    }
                }
            })
            .collect();
        out.push(format!("stages ({unit}): {}", spans.join(", ")));
    }
    if let Some(r) = c.rate {
        let how = c.arrivals.unwrap_or_default().name();
        out.push(format!("open loop: {} calls/s, {how} arrivals", level(r)));
    } else if let (Some(a), Some(_)) = (c.arrivals, &c.stages) {
        out.push(format!("{} arrivals", a.name()));
    }
    out
}

fn pct(share: f64) -> String {
    format!("{} %", level(share * 100.0))
}

/// How much load a plan holds, in words: the seconds of the steps that run for a time, and how many end on a
/// count instead (chat messages, requests), whose length no plan knows.
fn load_words(plan: &Plan) -> String {
    let counted = plan
        .steps()
        .filter(|s| s.client.planned_seconds().is_none())
        .count();
    let n = plan.steps().count();
    let seconds = plan.planned_seconds();
    match counted {
        0 => format!("{seconds:.0} s of load planned"),
        c if c == n => format!(
            "{} on a count (messages or requests), not after a time",
            if n == 1 {
                "the step ends"
            } else {
                "every step ends"
            }
        ),
        c => format!("{seconds:.0} s of load planned, and {c} step(s) that end on a count"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 27, item 13: a scenario whose steps end on message counts plans no "0 s of load".
    #[test]
    fn steps_that_end_on_a_count_are_not_zero_seconds() {
        let root = wsbench_harness::paths::project_root();
        let volano = Scenario::load(&root, "volano-loopback").unwrap();
        for quick in [false, true] {
            let words = load_words(&volano.plan(quick, &[]).unwrap());
            assert_eq!(
                words,
                "every step ends on a count (messages or requests), not after a time"
            );
        }
        let cxf = Scenario::load(&root, "cxf-echo-complex").unwrap();
        let words = load_words(&cxf.plan(true, &[]).unwrap());
        assert!(words.ends_with(" s of load planned"), "{words}");
        assert!(!words.starts_with("0 s"), "{words}");
    }
}
