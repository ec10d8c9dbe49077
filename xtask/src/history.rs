//! `cargo xtask history`: the results store read back — every scenario's runs (`history`), one scenario's
//! series with their change points (`history <scenario>`), its trend chart (`--html`), the exports
//! (`--export bencher|csv`), and `history import <results>` to record folders made before the store.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};
use xshell::Shell;

use wsbench_harness::history::series::{self, History, Select};
use wsbench_harness::history::store::open_existing;
use wsbench_harness::history::{import, Machine, Query, Store};
use wsbench_harness::metric::Metric;

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct Args {
    #[command(subcommand)]
    cmd: Option<Sub>,
    /// The scenario whose runs to show; without it, every scenario's newest runs.
    scenario: Option<String>,
    /// The metric (`total_per_s`, `p99_latency_ms`, …); default: that of the scenario's published figure.
    #[arg(long, value_parser = parse_metric)]
    metric: Option<Metric>,
    /// Only the runs of this server (`bench-server`, `jaxws`, `gsoap`, `external`).
    #[arg(long)]
    sut: Option<String>,
    /// Only the steps whose id contains this.
    #[arg(long)]
    step: Option<String>,
    /// Runs of this machine only (its CPU, cores, memory and kernel), or of every machine.
    #[arg(long, value_enum, default_value_t = Machines::This)]
    machine: Machines,
    /// Only the newest N runs.
    #[arg(long, value_name = "N")]
    last: Option<usize>,
    /// Also write the trend chart (self-contained HTML) to FILE (default `<results>/history/<scenario>.html`).
    // Option<Option<_>>: bare `--html` is Some(None) (an empty default_missing_value is refused by clap's
    // PathBuf parser: "a value is required").
    #[arg(long, value_name = "FILE", num_args = 0..=1)]
    html: Option<Option<PathBuf>>,
    /// Write the history for other tools instead of the table: `bencher` (Bencher Metric Format JSON of the
    /// newest run; with --out DIR, one file per run) or `csv` (one row per run and step; --out FILE).
    #[arg(long, value_enum)]
    export: Option<Export>,
    /// Where --export writes (default: standard output).
    #[arg(long, value_name = "PATH", requires = "export")]
    out: Option<PathBuf>,
    /// The results store.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "results/wsbench.sqlite",
        global = true
    )]
    store: PathBuf,
}

#[derive(Debug, clap::Subcommand)]
enum Sub {
    /// Record every run folder under DIR (`DIR/<scenario>/<time>/`) in the store; a folder recorded before
    /// is replaced, so importing twice changes nothing.
    Import {
        #[arg(default_value = "results")]
        dir: PathBuf,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Machines {
    This,
    All,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Export {
    Bencher,
    Csv,
}

fn parse_metric(s: &str) -> Result<Metric, String> {
    Metric::ALL
        .into_iter()
        .find(|m| m.key() == s)
        .ok_or_else(|| {
            let keys: Vec<&str> = Metric::ALL.iter().map(|m| m.key()).collect();
            format!("unknown metric {s:?}; one of {}", keys.join(", "))
        })
}

pub(crate) fn run(sh: &Shell, args: Args) -> Result<()> {
    let store_path = sh.current_dir().join(&args.store);
    if let Some(Sub::Import { dir }) = &args.cmd {
        return import_folders(&sh.current_dir().join(dir), &store_path);
    }
    let Some(store) = open_existing(&store_path)? else {
        println!(
            "no results store at {} yet: every `cargo xtask run` records its run there \
             (`cargo xtask history import results/` records the folders already there)",
            store_path.display()
        );
        return Ok(());
    };
    let this = Machine::this().fingerprint();
    let fingerprint = (args.machine == Machines::This).then(|| this.clone());
    let select = Select {
        metric: args.metric,
        sut: args.sut.clone(),
        step: args.step.clone(),
        last: args.last,
    };
    let Some(scenario) = &args.scenario else {
        return overview(&store, fingerprint, &select, &this);
    };
    let query = Query {
        scenario: Some(scenario.clone()),
        fingerprint: fingerprint.clone(),
        ..Query::default()
    };
    let runs = store.runs(&query)?;
    let here = runs.len();
    let h = series::build(runs, &select);
    if let Some(format) = args.export {
        return export(&h, scenario, format, args.out.as_deref());
    }
    print!("{}", wsbench_report::history::table(&h, scenario, &this));
    if fingerprint.is_some() {
        let everywhere = Query {
            scenario: Some(scenario.clone()),
            ..Query::default()
        };
        let elsewhere = store.runs(&everywhere)?.len() - here;
        if elsewhere > 0 {
            println!("\n({elsewhere} more runs of {scenario} on other machines: --machine all)");
        }
    }
    if let Some(file) = &args.html {
        let file = if let Some(file) = file {
            sh.current_dir().join(file)
        } else {
            store_path
                .parent()
                .unwrap_or(Path::new("."))
                .join("history")
                .join(format!("{scenario}.html"))
        };
        let page = wsbench_report::history::html(&h, scenario, &this)?;
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        wsbench_harness::atomic::write(&file, page.as_bytes())?;
        println!("trend chart: {}", file.display());
    }
    Ok(())
}

/// Every scenario's newest runs, by its default metric.
fn overview(store: &Store, fingerprint: Option<String>, select: &Select, this: &str) -> Result<()> {
    let mut all = Vec::new();
    for (name, _) in store.scenarios()? {
        let q = Query {
            scenario: Some(name.clone()),
            fingerprint: fingerprint.clone(),
            ..Query::default()
        };
        let runs = store.runs(&q)?;
        if !runs.is_empty() {
            all.push((name, series::build(runs, select)));
        }
    }
    print!("{}", wsbench_report::history::overview(&all, this));
    Ok(())
}

fn export(h: &History, scenario: &str, format: Export, out: Option<&Path>) -> Result<()> {
    match format {
        Export::Csv => {
            let text = wsbench_report::history::csv(h, scenario);
            match out {
                Some(file) => wsbench_harness::atomic::write(file, text.as_bytes())?,
                None => print!("{text}"),
            }
        }
        Export::Bencher => {
            let docs = wsbench_report::history::bencher(h, scenario);
            let Some((_, newest)) = docs.last() else {
                bail!("no run of {scenario} to export");
            };
            let Some(dir) = out else {
                println!("{}", serde_json::to_string_pretty(newest)?);
                return Ok(());
            };
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            for (run, doc) in &docs {
                let stamp: String = run
                    .entry
                    .started_at
                    .chars()
                    .filter(char::is_ascii_alphanumeric)
                    .collect();
                let commit = run.entry.commit.as_deref().unwrap_or("unknown");
                let file = dir.join(format!("{stamp}-{}.json", &commit[..commit.len().min(10)]));
                wsbench_harness::atomic::write_json(&file, doc)?;
            }
            println!(
                "{} Bencher Metric Format files in {} (each: bencher run --hash <its commit> --adapter json --file <it>)",
                docs.len(),
                dir.display()
            );
        }
    }
    Ok(())
}

fn import_folders(dir: &Path, store_path: &Path) -> Result<()> {
    let mut store = Store::open(store_path)?;
    let done = import::import(dir, &mut store)?;
    for (folder, why) in &done.skipped {
        eprintln!("skipped {}: {why}", folder.display());
    }
    println!(
        "history import: {} runs recorded in {} ({} folders skipped)",
        done.recorded.len(),
        store.path().display(),
        done.skipped.len()
    );
    Ok(())
}
