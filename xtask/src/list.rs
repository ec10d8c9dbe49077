//! `cargo xtask list [SCENARIO]`: every scenario with its description and seed, or one scenario's steps and
//! published figures.

use anyhow::Result;
use xshell::Shell;

use wsbench_harness::scenario::{self, Scenario};

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
        println!(
            "\nsteps ({title}, {:.0} s of load planned):",
            plan.planned_seconds()
        );
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
