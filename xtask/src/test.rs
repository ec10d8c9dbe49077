//! `cargo xtask test`: THE test command (README, CI). A list of named steps — fmt, clippy, tests, docs, then
//! every scenario `--quick` end to end — run in order, with a pass/fail table at the end.
//!
//! To add a step, add one `Step::new(…)` line to [`steps`].

use std::time::Instant;

use anyhow::{ensure, Result};
use clap::Parser as _;
use xshell::{cmd, Shell};

use crate::{rundoc::Status, scenario, summary};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Run only the steps whose name starts with one of these (e.g. `--only clippy --only scenario:`).
    #[arg(long, value_name = "NAME")]
    only: Vec<String>,
    /// Skip the steps whose name starts with one of these.
    #[arg(long, value_name = "NAME")]
    skip: Vec<String>,
    /// Stop at the first failing step.
    #[arg(long)]
    fail_fast: bool,
    /// List the steps (opt-in ones only when `--only` names them) and exit.
    #[arg(long)]
    list: bool,
}

type StepFn = Box<dyn Fn(&Shell) -> Result<()>>;

/// One named step of the test command.
pub(crate) struct Step {
    name: String,
    run: StepFn,
    /// Runs only when `--only` names it: too slow for the default list on a 2-core CI machine, covered there
    /// by a cheaper step (and run in full by GitHub's workflow).
    opt_in: bool,
}

impl Step {
    pub(crate) fn new(
        name: impl Into<String>,
        run: impl Fn(&Shell) -> Result<()> + 'static,
    ) -> Step {
        Step {
            name: name.into(),
            run: Box::new(run),
            opt_in: false,
        }
    }

    /// A step left out of the default list; `--only <name>` runs it.
    pub(crate) fn opt_in(
        name: impl Into<String>,
        run: impl Fn(&Shell) -> Result<()> + 'static,
    ) -> Step {
        Step {
            opt_in: true,
            ..Step::new(name, run)
        }
    }
}

/// `cargo xtask run`'s flags, to build its arguments as a user's command line would.
#[derive(Debug, clap::Parser)]
struct RunCommandLine {
    #[command(flatten)]
    args: crate::run::Args,
}

/// Every step, in order.
fn steps() -> Result<Vec<Step>> {
    let mut steps = vec![
        Step::new("fmt", |sh| cargo(sh, &["fmt", "--all", "--check"])),
        Step::new("clippy", |sh| {
            cargo(
                sh,
                &[
                    "clippy",
                    "--workspace",
                    "--all-targets",
                    "--",
                    "-D",
                    "warnings",
                ],
            )
        }),
        Step::new("test", |sh| cargo(sh, &["test", "--workspace"])),
        Step::new("doc", |sh| {
            let _env = sh.push_env("RUSTDOCFLAGS", "-D warnings");
            cargo(sh, &["doc", "--workspace", "--no-deps"])
        }),
    ];
    for name in scenario::names(&crate::project_root())? {
        steps.push(Step::new(format!("scenario:{name}"), move |sh| {
            quick_scenario(sh, &name)
        }));
    }
    steps.extend(crate::build::test_steps());
    steps.extend(crate::gate::test_steps());
    Ok(steps)
}

pub(crate) fn run(sh: &Shell, args: Args) -> Result<()> {
    let selected: Vec<Step> = steps()?
        .into_iter()
        .filter(|s| {
            if args.only.is_empty() {
                !s.opt_in
            } else {
                args.only.iter().any(|p| s.name.starts_with(p.as_str()))
            }
        })
        .filter(|s| !args.skip.iter().any(|p| s.name.starts_with(p.as_str())))
        .collect();
    if args.list {
        selected.iter().for_each(|s| println!("{}", s.name));
        return Ok(());
    }
    ensure!(
        !selected.is_empty(),
        "no test step matches --only/--skip (see `cargo xtask test --list`)"
    );
    let mut table = Vec::new();
    for step in &selected {
        println!("\n════ cargo xtask test: {} ════", step.name);
        let start = Instant::now();
        let result = (step.run)(sh);
        let secs = start.elapsed().as_secs_f64();
        if let Err(e) = &result {
            eprintln!("FAILED {}: {e:#}", step.name);
        }
        let failed = result.is_err();
        table.push((step.name.clone(), result, secs));
        if crate::containers::interrupt::interrupted() {
            anyhow::bail!("interrupted during {}", step.name);
        }
        if failed && args.fail_fast {
            break;
        }
    }
    println!("\n════ cargo xtask test: results ════");
    for (name, result, secs) in &table {
        let status = match result {
            Ok(()) => "ok".to_owned(),
            Err(e) => format!("FAILED: {}", first_line(&format!("{e:#}"))),
        };
        println!("{name:<32} {secs:>7.1} s  {status}");
    }
    let failed = table.iter().filter(|(_, r, _)| r.is_err()).count();
    ensure!(failed == 0, "{failed} of {} test steps failed", table.len());
    Ok(())
}

fn first_line(s: &str) -> &str {
    let line = s.lines().next().unwrap_or("");
    line.get(..160).unwrap_or(line)
}

fn cargo(sh: &Shell, args: &[&str]) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    cmd!(sh, "{cargo} {args...}").run()?;
    Ok(())
}

/// Runs a scenario with `--quick` into a temporary directory and checks what it wrote: run.json,
/// provenance.json, summary.md, one results document per step, written by bench-client, without errors.
fn quick_scenario(sh: &Shell, name: &str) -> Result<()> {
    quick_scenario_with(sh, name, |_| {}, |_| Ok(()))
}

/// [`quick_scenario`] with its run arguments adjusted and an extra check of what the run wrote.
pub(crate) fn quick_scenario_with(
    sh: &Shell,
    name: &str,
    adjust: impl FnOnce(&mut crate::run::Args),
    verify: impl FnOnce(&crate::run::Outcome) -> Result<()>,
) -> Result<()> {
    let tmp = sh.create_temp_dir()?;
    // Parsed like a command line, so every flag has the default a user gets.
    let argv = [
        "run".into(),
        name.into(),
        "--quick".into(),
        "--out".into(),
        tmp.path().as_os_str().to_owned(),
    ];
    let mut args = RunCommandLine::try_parse_from::<[std::ffi::OsString; 5], _>(argv)?.args;
    adjust(&mut args);
    let start = Instant::now();
    let outcome = crate::run::execute(sh, &args)?;
    let dir = &outcome.dir;
    for file in ["run.json", "provenance.json", "summary.md"] {
        ensure!(dir.join(file).is_file(), "{name}: {file} was not written");
    }
    let summary_text = std::fs::read_to_string(dir.join("summary.md"))?;
    ensure!(
        summary_text.contains("## Measured here vs published"),
        "{name}: summary.md has no published comparison"
    );
    let failed: Vec<_> = outcome
        .run
        .steps
        .iter()
        .filter(|s| s.status != Status::Ok)
        .map(|s| &s.id)
        .collect();
    ensure!(
        outcome.run.status == Status::Ok && failed.is_empty(),
        "{name}: run status {:?}, steps not ok: {failed:?}, problems: {:?}\n{summary_text}",
        outcome.run.status,
        outcome.run.problems
    );
    for step in &outcome.run.steps {
        let doc = summary::read_doc(&dir.join(&step.result)).map_err(anyhow::Error::msg)?;
        ensure!(
            doc.tool.name == "bench-client",
            "{}: written by {:?}, not bench-client",
            step.result,
            doc.tool.name
        );
        ensure!(
            doc.counts.errors_total == 0 && !doc.partial,
            "{}: errors or partial",
            step.result
        );
        let measured =
            doc.counts.ok > 0 || doc.chat.as_ref().is_some_and(|c| c.messages_received > 0);
        ensure!(measured, "{}: nothing was measured", step.result);
    }
    verify(&outcome)?;
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{name} --quick: {} steps in {secs:.1} s (including the build check)",
        outcome.run.steps.len()
    );
    Ok(())
}
