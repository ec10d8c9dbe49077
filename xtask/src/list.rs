//! `cargo xtask list [SCENARIO]`: every scenario with its description and seed, or one scenario's steps and
//! published figures.

use anyhow::Result;
use xshell::Shell;

use wsbench_harness::scenario::{self, Plan, Scenario};

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
            println!(
                "  {:<28} {:<20} {length}",
                step.id,
                step.client.operation.name()
            );
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
    Ok(())
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
