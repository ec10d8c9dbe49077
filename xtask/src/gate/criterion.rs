//! The gate's wall-clock tier on criterion's terms: run one benchmark of a criterion bench binary into a
//! baseline of its own per side and round, pool each side's rounds into one sample, let criterion compare the
//! two pooled baselines (`--load-baseline` + `--baseline`: no new samples), and read back what it leaves under
//! `CRITERION_HOME`.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use wsbench_tools::process;
use xshell::Shell;

use super::decide::Change;

/// Criterion baseline names the two sides are saved under.
pub(crate) const BASE: &str = "gate-base";
pub(crate) const HEAD: &str = "gate-head";

/// Which of criterion's statistics decides. The median shrugs off the bursts of a shared machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Statistic {
    Mean,
    Median,
}

/// A criterion bench executable and the directory `cargo bench` would run it from.
#[derive(Debug, Clone)]
pub(crate) struct BenchBin {
    pub(crate) exe: PathBuf,
    pub(crate) cwd: PathBuf,
}

/// How one benchmark is measured: alternating rounds per side, each with its warm-up and measurement seconds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    pub(crate) rounds: usize,
    pub(crate) warm_up_s: f64,
    pub(crate) measurement_s: f64,
}

/// The benchmark ids a bench binary has (`--list`), in its order.
pub(crate) fn list(sh: &Shell, bin: &BenchBin) -> anyhow::Result<Vec<String>> {
    let _cwd = sh.push_dir(&bin.cwd);
    let exe = &bin.exe;
    let argv = [process::arg(exe), "--bench".to_owned(), "--list".to_owned()];
    let out = process::read(sh, &argv).with_context(|| format!("listing {}", exe.display()))?;
    Ok(parse_list(&out))
}

/// `--list` prints `id: benchmark` per benchmark.
pub(crate) fn parse_list(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| l.trim_end().strip_suffix(": benchmark"))
        .map(str::to_owned)
        .collect()
}

/// Samples benchmark `id` and saves it as baseline `baseline` under `home`.
pub(crate) fn measure(
    sh: &Shell,
    bin: &BenchBin,
    id: &str,
    home: &Path,
    baseline: &str,
    timing: Timing,
) -> anyhow::Result<()> {
    let _cwd = sh.push_dir(&bin.cwd);
    let exe = &bin.exe;
    let (w, m) = (
        timing.warm_up_s.to_string(),
        timing.measurement_s.to_string(),
    );
    // The per-round analysis is never read (the pooled comparison is), so keep its bootstrap small.
    let argv = [
        &exe.display().to_string(),
        "--bench",
        "--exact",
        id,
        "--save-baseline",
        baseline,
        "--warm-up-time",
        &w,
        "--measurement-time",
        &m,
        "--nresamples",
        "1000",
        "--noplot",
    ];
    run_quiet(sh, &argv, home, &format!("measuring {id} ({baseline})"))
}

/// Has criterion compare the saved head baseline with the saved base baseline: writes `change/estimates.json`.
pub(crate) fn compare(sh: &Shell, bin: &BenchBin, id: &str, home: &Path) -> anyhow::Result<()> {
    let _cwd = sh.push_dir(&bin.cwd);
    let exe = &bin.exe;
    let argv = [
        &exe.display().to_string(),
        "--bench",
        "--exact",
        id,
        "--load-baseline",
        HEAD,
        "--baseline",
        BASE,
        "--nresamples",
        "20000",
        "--noplot",
    ];
    run_quiet(sh, &argv, home, &format!("comparing {id}"))
}

/// Runs a criterion bench executable with `CRITERION_HOME` set to `home`; its stderr's tail when it fails.
fn run_quiet(sh: &Shell, argv: &[&str], home: &Path, what: &str) -> anyhow::Result<()> {
    let argv: Vec<String> = argv.iter().map(|a| (*a).to_owned()).collect();
    process::output_env(sh, &argv, &[("CRITERION_HOME", home)]).with_context(|| what.to_owned())?;
    Ok(())
}

/// The baseline one side's round `round` (from 1) is saved under; [`pool`] merges them into `side`.
pub(crate) fn round_name(side: &str, round: usize) -> String {
    format!("{side}-r{round}")
}

/// criterion's `sample.json`: per sample, the iterations run and the nanoseconds they took.
#[derive(Debug, Serialize, Deserialize)]
struct Sample {
    sampling_mode: serde_json::Value,
    iters: Vec<f64>,
    times: Vec<f64>,
}

impl Sample {
    /// Nanoseconds per iteration of each sample, as criterion analyses them.
    fn per_iteration(&self) -> Vec<f64> {
        self.iters
            .iter()
            .zip(&self.times)
            .map(|(n, t)| t / n)
            .collect()
    }
}

/// Merges each side's rounds (`gate-base-r1`, `gate-base-r2`, …) into one baseline per side (`gate-base`), so
/// criterion compares all of base's samples with all of head's: slow spells of a shared machine land in both.
pub(crate) fn pool(home: &Path, rounds: usize) -> anyhow::Result<()> {
    let dir = find_benchmark_dir(home, &round_name(BASE, 1))?
        .with_context(|| format!("{}: criterion saved no samples here", home.display()))?;
    for side in [BASE, HEAD] {
        let mut pooled: Option<Sample> = None;
        for round in 1..=rounds {
            let path = dir.join(round_name(side, round)).join("sample.json");
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            let sample: Sample = parse(&text, &path)?;
            match &mut pooled {
                None => pooled = Some(sample),
                Some(p) => {
                    p.iters.extend(sample.iters);
                    p.times.extend(sample.times);
                }
            }
        }
        let out = dir.join(side);
        std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
        // criterion's comparison also loads the base's estimates and the benchmark id: take round 1's.
        for file in ["estimates.json", "benchmark.json"] {
            let from = dir.join(round_name(side, 1)).join(file);
            std::fs::copy(&from, out.join(file))
                .with_context(|| format!("copying {}", from.display()))?;
        }
        let json = serde_json::to_string(&pooled.context("no rounds")?)?;
        std::fs::write(out.join("sample.json"), json)
            .with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(())
}

/// What one benchmark's criterion home holds once the gate has measured (and compared) it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Measured {
    pub(crate) id: String,
    /// The statistic of each side's pooled per-iteration times, in nanoseconds.
    pub(crate) base_ns: Option<f64>,
    pub(crate) head_ns: Option<f64>,
    pub(crate) change: Option<Change>,
}

#[derive(Debug, Deserialize)]
struct Interval {
    lower_bound: f64,
    upper_bound: f64,
}

#[derive(Debug, Deserialize)]
struct Estimate {
    confidence_interval: Interval,
    point_estimate: f64,
}

/// `change/estimates.json` (criterion's relative change of head over base, with bootstrap intervals).
#[derive(Debug, Deserialize)]
struct ChangeEstimates {
    mean: Estimate,
    median: Estimate,
}

#[derive(Debug, Deserialize)]
struct BenchmarkJson {
    full_id: String,
}

/// Reads the single benchmark the gate measured into `home` (one home per benchmark and pass): the pooled
/// `gate-base`/`gate-head` samples and criterion's `change/estimates.json`.
pub(crate) fn read_home(home: &Path, statistic: Statistic) -> anyhow::Result<Measured> {
    let dir = match find_benchmark_dir(home, BASE)? {
        Some(dir) => dir,
        None => find_benchmark_dir(home, HEAD)?
            .with_context(|| format!("{}: no {BASE} or {HEAD} baseline here", home.display()))?,
    };
    let read = |path: PathBuf| -> anyhow::Result<Option<(String, PathBuf)>> {
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(Some((text, path))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    };
    let side = |name: &str| -> anyhow::Result<Option<f64>> {
        read(dir.join(name).join("sample.json"))?
            .map(|(t, p)| parse::<Sample>(&t, &p).map(|s| summarise(s.per_iteration(), statistic)))
            .transpose()
    };
    let id = match [BASE, HEAD]
        .iter()
        .find_map(|b| read(dir.join(b).join("benchmark.json")).transpose())
    {
        Some(found) => {
            let (text, path) = found?;
            parse::<BenchmarkJson>(&text, &path)?.full_id
        }
        None => dir
            .strip_prefix(home)
            .unwrap_or(&dir)
            .to_string_lossy()
            .into_owned(),
    };
    let change = read(dir.join("change").join("estimates.json"))?
        .map(|(t, p)| {
            parse::<ChangeEstimates>(&t, &p).map(|e| {
                let e = match statistic {
                    Statistic::Mean => e.mean,
                    Statistic::Median => e.median,
                };
                Change {
                    point: e.point_estimate,
                    lower: e.confidence_interval.lower_bound,
                    upper: e.confidence_interval.upper_bound,
                }
            })
        })
        .transpose()?;
    Ok(Measured {
        id,
        base_ns: side(BASE)?,
        head_ns: side(HEAD)?,
        change,
    })
}

/// The mean, or the median (midpoint of the middle two for an even count), of `values`; NaN when empty.
fn summarise(mut values: Vec<f64>, statistic: Statistic) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    match statistic {
        Statistic::Mean => values.iter().sum::<f64>() / values.len() as f64,
        Statistic::Median => {
            values.sort_by(f64::total_cmp);
            let n = values.len();
            if n % 2 == 1 {
                values[n / 2]
            } else {
                (values[n / 2 - 1] + values[n / 2]) / 2.0
            }
        }
    }
}

fn parse<T: serde::de::DeserializeOwned>(text: &str, path: &Path) -> anyhow::Result<T> {
    serde_json::from_str(text).with_context(|| format!("parsing {}", path.display()))
}

/// The directory (at any depth: group/function/value) holding a baseline named `baseline`.
fn find_benchmark_dir(dir: &Path, baseline: &str) -> anyhow::Result<Option<PathBuf>> {
    if dir.join(baseline).is_dir() {
        return Ok(Some(dir.to_owned()));
    }
    let mut subdirs = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            subdirs.push(path);
        }
    }
    subdirs.sort();
    for sub in subdirs {
        if let Some(found) = find_benchmark_dir(&sub, baseline)? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::decide::{wall_verdict, Verdict};

    const T: f64 = 0.05;

    fn fixture(case: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/gate/criterion")
            .join(case)
    }

    fn verdict(first: &str, confirm: Option<&str>, statistic: Statistic) -> (Measured, Verdict) {
        let m = read_home(&fixture(first), statistic).unwrap();
        let c = confirm.map(|c| read_home(&fixture(c), statistic).unwrap().change.unwrap());
        let v = wall_verdict(m.base_ns.is_some(), m.head_ns.is_some(), m.change, c, T);
        (m, v)
    }

    #[test]
    fn reads_what_criterion_writes() {
        let m = read_home(&fixture("regression"), Statistic::Median).unwrap();
        assert_eq!(m.id, "cxf_echoComplexTypeDoc_1_item/parse");
        let (base, head) = (m.base_ns.unwrap(), m.head_ns.unwrap());
        assert!(
            (base - 15_000.0).abs() < 150.0 && (head - 16_500.0).abs() < 165.0,
            "{m:?}"
        );
        let c = m.change.unwrap();
        assert!(
            c.lower > 0.08 && c.upper < 0.13 && c.lower < c.point && c.point < c.upper,
            "{c:?}"
        );
        let mean = read_home(&fixture("regression"), Statistic::Mean).unwrap();
        assert_ne!(mean.change, m.change);
    }

    #[test]
    fn a_confirmed_regression_fails() {
        let (_, v) = verdict(
            "regression",
            Some("regression-confirmed"),
            Statistic::Median,
        );
        assert_eq!(v, Verdict::Regressed);
    }

    #[test]
    fn a_regression_the_remeasurement_does_not_confirm_is_advisory() {
        let (_, v) = verdict("regression", Some("noise"), Statistic::Median);
        assert_eq!(v, Verdict::Unconfirmed);
    }

    #[test]
    fn an_improvement_passes() {
        let (_, v) = verdict("improvement", None, Statistic::Median);
        assert_eq!(v, Verdict::Improved);
    }

    #[test]
    fn noise_passes_with_an_advisory() {
        // Median +6 % but its interval reaches down to +2 %: inside the noise for a 5 % threshold.
        let (m, v) = verdict("noise", None, Statistic::Median);
        assert!(m.change.unwrap().point > T);
        assert_eq!(v, Verdict::Advisory);
    }

    #[test]
    fn missing_benchmarks_on_either_side_are_reported_not_failed() {
        let (m, v) = verdict("only-head", None, Statistic::Median);
        assert_eq!(
            (m.id.as_str(), m.base_ns, m.change),
            ("customer_echo_100KB/parse", None, None)
        );
        assert_eq!(v, Verdict::OnlyHead);
        let (m, v) = verdict("only-base", None, Statistic::Median);
        assert_eq!((m.head_ns, m.change), (None, None));
        assert_eq!(v, Verdict::OnlyBase);
    }

    #[test]
    fn a_missing_home_is_an_error() {
        assert!(read_home(&fixture("no-such-case"), Statistic::Median).is_err());
    }

    #[test]
    fn rounds_pool_into_one_sample_per_side() {
        let home = std::env::temp_dir().join(format!("wsbench-gate-pool-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        copy_dir(&fixture("rounds"), &home);
        pool(&home, 2).unwrap();
        let dir = home.join("customer_echo_100KB/parse");
        let read = |side: &str| -> Sample {
            let p = dir.join(side).join("sample.json");
            parse(&std::fs::read_to_string(&p).unwrap(), &p).unwrap()
        };
        let (base, head) = (read(BASE), read(HEAD));
        assert_eq!((base.iters.len(), head.iters.len()), (20, 20));
        assert_eq!(base.iters[..10], read(&round_name(BASE, 1)).iters[..]);
        assert_eq!(base.times[10..], read(&round_name(BASE, 2)).times[..]);
        assert!(
            dir.join(BASE).join("estimates.json").is_file()
                && dir.join(HEAD).join("benchmark.json").is_file()
        );
        let m = read_home(&home, Statistic::Median).unwrap();
        assert_eq!(m.id, "customer_echo_100KB/parse");
        assert!(m.base_ns.unwrap() > 0.0 && m.change.is_none());
        std::fs::remove_dir_all(&home).unwrap();
    }

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let path = entry.unwrap().path();
            let dest = to.join(path.file_name().unwrap());
            if path.is_dir() {
                copy_dir(&path, &dest);
            } else {
                std::fs::copy(&path, &dest).unwrap();
            }
        }
    }

    #[test]
    fn medians_and_means() {
        assert_eq!(summarise(vec![3.0, 1.0, 2.0], Statistic::Median), 2.0);
        assert_eq!(summarise(vec![4.0, 1.0, 2.0, 3.0], Statistic::Median), 2.5);
        assert_eq!(summarise(vec![1.0, 2.0, 6.0], Statistic::Mean), 3.0);
        assert!(summarise(vec![], Statistic::Median).is_nan());
    }

    #[test]
    fn list_output_is_parsed() {
        let out = "cxf/parse: benchmark\n\ncxf/serialise: benchmark\nWarning: x\n";
        assert_eq!(parse_list(out), ["cxf/parse", "cxf/serialise"]);
    }
}
