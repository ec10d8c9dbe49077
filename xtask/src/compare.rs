//! `cargo xtask compare <A> <B>`: provenance differences in words first, then per step the change in
//! throughput and latency percentiles, with a 95 % interval when either side has repeated runs.

mod provenance;
mod stats;

use std::fmt::Write as _;
use std::path::PathBuf;

use xshell::Shell;

use crate::harness::results::{run_dirs, Run, Step};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Run A (the baseline): a run directory; for repeated runs, several joined by commas, or a
    /// directory holding them (`results/<scenario>` takes every run of the scenario).
    a: String,
    /// Run B (the candidate), given like A.
    b: String,
}

pub(crate) fn run(sh: &Shell, args: Args) -> anyhow::Result<()> {
    let a = load_side(sh, &args.a)?;
    let b = load_side(sh, &args.b)?;
    let emulated = |side: &[Run]| side.iter().any(|r| r.manifest.emulated);
    let native = |side: &[Run]| side.iter().any(|r| !r.manifest.emulated);
    if (emulated(&a) || emulated(&b)) && (native(&a) || native(&b)) {
        anyhow::bail!("one side ran its client under emulation (--client-arch): emulated figures are never compared with native ones");
    }
    print!("{}", compare(&a, &b));
    Ok(())
}

fn load_side(sh: &Shell, spec: &str) -> anyhow::Result<Vec<Run>> {
    let mut runs = vec![];
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        for dir in run_dirs(&sh.current_dir().join(PathBuf::from(part)))? {
            runs.push(Run::load(&dir)?);
        }
    }
    anyhow::ensure!(!runs.is_empty(), "no run directories in {spec:?}");
    Ok(runs)
}

/// One metric of a step, per run of a side.
struct Metric {
    name: &'static str,
    get: fn(&Step) -> Option<f64>,
}

fn ms(v: f64) -> f64 {
    v / 1000.0
}

const METRICS: [Metric; 5] = [
    Metric {
        name: "throughput /s",
        get: Step::throughput,
    },
    Metric {
        name: "mean ms",
        get: |s| s.latency().map(|l| ms(l.mean)),
    },
    Metric {
        name: "p50 ms",
        get: |s| s.latency().map(|l| ms(l.p50 as f64)),
    },
    Metric {
        name: "p99 ms",
        get: |s| s.latency().map(|l| ms(l.p99 as f64)),
    },
    Metric {
        name: "p99.9 ms",
        get: |s| s.latency().map(|l| ms(l.p99_9 as f64)),
    },
];

/// The step of `run` that is "the same step": same id, else same label.
fn find<'a>(run: &'a Run, like: &Step) -> Option<&'a Step> {
    run.steps
        .iter()
        .find(|s| s.meta.id == like.meta.id)
        .or_else(|| run.steps.iter().find(|s| s.meta.label == like.meta.label))
}

/// A side's values of a metric at a step: one per run; for a single chat run, its scored runs.
fn side_values(side: &[Run], like: &Step, m: &Metric) -> Vec<f64> {
    let steps: Vec<&Step> = side
        .iter()
        .filter_map(|r| find(r, like))
        .filter(|s| s.doc.is_ok())
        .collect();
    if m.name.starts_with("throughput") && steps.len() == 1 {
        let runs = steps[0].chat_run_scores();
        if runs.len() >= 2 {
            return runs;
        }
    }
    steps.iter().filter_map(|s| (m.get)(s)).collect()
}

fn describe(side: &[Run]) -> String {
    let first = &side[0];
    let names: Vec<String> = side
        .iter()
        .map(|r| {
            r.dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    let runs = if side.len() == 1 {
        "1 run".to_string()
    } else {
        format!("{} runs", side.len())
    };
    format!(
        "{} — {runs}: {} ({})",
        first.manifest.scenario,
        names.join(", "),
        first.dir.display()
    )
}

fn fmt_val(xs: &[f64]) -> String {
    match stats::mean_sd(xs) {
        None => "—".into(),
        Some((m, _)) if xs.len() == 1 => num(m),
        Some((m, sd)) => format!("{} ± {} (n={})", num(m), num(sd), xs.len()),
    }
}

fn num(v: f64) -> String {
    match v.abs() {
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 10.0 => format!("{v:.1}"),
        a if a >= 1.0 => format!("{v:.2}"),
        _ => format!("{v:.3}"),
    }
}

fn fmt_change(a: &[f64], b: &[f64]) -> String {
    let Some(c) = stats::change(a, b) else {
        return "—".into();
    };
    let Some(rel) = c.relative() else {
        return format!("{:+}", num(c.diff));
    };
    let mut s = format!("{:+.1} %", rel * 100.0);
    match (c.half_width, c.significant()) {
        (Some(hw), Some(sig)) => {
            let _ = write!(s, " ± {:.1} %", hw / c.a.abs() * 100.0);
            s.push_str(if sig { " (real)" } else { " (noise)" });
        }
        _ => s.push_str(" (n=1: no interval)"),
    }
    s
}

/// The whole comparison, as Markdown.
pub(crate) fn compare(a: &[Run], b: &[Run]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# wsbench compare\n\nA: {}\nB: {}\n",
        describe(a),
        describe(b)
    );
    out.push_str("## Provenance\n\n");
    for line in provenance::differences(a, b) {
        let _ = writeln!(out, "- {line}");
    }
    out.push_str("\n## Steps\n\n");
    let repeated = a.len() > 1 || b.len() > 1;
    out.push_str(if repeated {
        "Values are the mean ± standard deviation over runs; the change is B against A with its 95 % \
         interval (Welch). \"noise\": the interval includes no change.\n\n"
    } else {
        "One run on each side: changes carry no interval (repeat runs, and pass them comma-joined, to get one); \
         chat steps use their scored runs.\n\n"
    });
    out.push_str("| step | metric | A | B | change |\n|---|---|---|---|---|\n");
    let mut labels_done: Vec<String> = vec![];
    let all_steps = a.iter().chain(b).flat_map(|r| r.steps.iter());
    for step in all_steps {
        if labels_done.contains(&step.meta.label) {
            continue;
        }
        labels_done.push(step.meta.label.clone());
        let in_a = a.iter().any(|r| find(r, step).is_some());
        let in_b = b.iter().any(|r| find(r, step).is_some());
        if !(in_a && in_b) {
            let only = if in_a { "A" } else { "B" };
            let _ = writeln!(out, "| {} | | only in {only} | | |", step.meta.label);
            continue;
        }
        for (i, m) in METRICS.iter().enumerate() {
            let (va, vb) = (side_values(a, step, m), side_values(b, step, m));
            if va.is_empty() && vb.is_empty() {
                continue;
            }
            let label = if i == 0 { step.meta.label.as_str() } else { "" };
            let _ = writeln!(
                out,
                "| {label} | {} | {} | {} | {} |",
                m.name,
                fmt_val(&va),
                fmt_val(&vb),
                fmt_change(&va, &vb)
            );
        }
        let errors = |side: &[Run]| -> u64 {
            side.iter()
                .filter_map(|r| find(r, step)?.doc.as_ref().ok())
                .map(|d| d.counts.errors_total)
                .sum()
        };
        let (ea, eb) = (errors(a), errors(b));
        if ea + eb > 0 {
            let _ = writeln!(out, "| | failed calls | {ea} | {eb} | |");
        }
    }
    out
}

#[cfg(test)]
mod tests;
