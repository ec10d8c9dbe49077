//! The gate's wall-clock tier on criterion's terms: run one benchmark of a criterion bench binary into a
//! baseline of its own, let criterion compare two saved baselines (`--load-baseline` + `--baseline`, so the
//! comparison takes no new samples), and read back the estimates it leaves under `CRITERION_HOME`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};
use serde::Deserialize;
use xshell::{cmd, Shell};

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

/// Warm-up and measurement seconds per benchmark and side.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    pub(crate) warm_up_s: f64,
    pub(crate) measurement_s: f64,
}

/// The benchmark ids a bench binary has (`--list`), in its order.
pub(crate) fn list(sh: &Shell, bin: &BenchBin) -> anyhow::Result<Vec<String>> {
    let _cwd = sh.push_dir(&bin.cwd);
    let exe = &bin.exe;
    let out = cmd!(sh, "{exe} --bench --list")
        .quiet()
        .read()
        .with_context(|| format!("listing {}", exe.display()))?;
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
    let c = cmd!(
        sh,
        "{exe} --bench --exact {id} --save-baseline {baseline} --warm-up-time {w} --measurement-time {m} --noplot"
    );
    run_quiet(
        c.env("CRITERION_HOME", home),
        &format!("measuring {id} ({baseline})"),
    )
}

/// Has criterion compare the saved head baseline with the saved base baseline: writes `change/estimates.json`.
pub(crate) fn compare(sh: &Shell, bin: &BenchBin, id: &str, home: &Path) -> anyhow::Result<()> {
    let _cwd = sh.push_dir(&bin.cwd);
    let exe = &bin.exe;
    let c = cmd!(
        sh,
        "{exe} --bench --exact {id} --load-baseline {HEAD} --baseline {BASE} --noplot"
    );
    run_quiet(c.env("CRITERION_HOME", home), &format!("comparing {id}"))
}

fn run_quiet(c: xshell::Cmd<'_>, what: &str) -> anyhow::Result<()> {
    let out = c
        .quiet()
        .ignore_status()
        .output()
        .with_context(|| what.to_owned())?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(15).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        bail!("{what} failed ({}):\n{}", out.status, tail.join("\n"));
    }
    Ok(())
}

/// What one benchmark's criterion home holds once the gate has measured (and compared) it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Measured {
    pub(crate) id: String,
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

/// Both `<baseline>/estimates.json` and `change/estimates.json` have these two (and more we do not need).
#[derive(Debug, Deserialize)]
struct Estimates {
    mean: Estimate,
    median: Estimate,
}

impl Estimates {
    fn get(&self, statistic: Statistic) -> &Estimate {
        match statistic {
            Statistic::Mean => &self.mean,
            Statistic::Median => &self.median,
        }
    }
}

#[derive(Debug, Deserialize)]
struct BenchmarkJson {
    full_id: String,
}

/// Reads the single benchmark the gate measured into `home` (one home per benchmark and pass).
pub(crate) fn read_home(home: &Path, statistic: Statistic) -> anyhow::Result<Measured> {
    let dir = find_benchmark_dir(home)?.with_context(|| {
        format!(
            "{}: criterion saved no {BASE} or {HEAD} baseline here",
            home.display()
        )
    })?;
    let read_json = |path: PathBuf| -> anyhow::Result<Option<String>> {
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    };
    let side = |name: &str| -> anyhow::Result<Option<f64>> {
        let path = dir.join(name).join("estimates.json");
        read_json(path.clone())?
            .map(|t| parse::<Estimates>(&t, &path).map(|e| e.get(statistic).point_estimate))
            .transpose()
    };
    let id_path = [BASE, HEAD]
        .map(|b| dir.join(b).join("benchmark.json"))
        .into_iter()
        .find(|p| p.exists());
    let id = match id_path {
        Some(p) => parse::<BenchmarkJson>(&std::fs::read_to_string(&p)?, &p)?.full_id,
        None => dir
            .strip_prefix(home)
            .unwrap_or(&dir)
            .to_string_lossy()
            .into_owned(),
    };
    let change_path = dir.join("change").join("estimates.json");
    let change = read_json(change_path.clone())?
        .map(|t| {
            parse::<Estimates>(&t, &change_path).map(|e| {
                let e = e.get(statistic);
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

fn parse<T: serde::de::DeserializeOwned>(text: &str, path: &Path) -> anyhow::Result<T> {
    serde_json::from_str(text).with_context(|| format!("parsing {}", path.display()))
}

/// The directory (at any depth: group/function/value) holding a `gate-base` or `gate-head` baseline.
fn find_benchmark_dir(dir: &Path) -> anyhow::Result<Option<PathBuf>> {
    if dir.join(BASE).is_dir() || dir.join(HEAD).is_dir() {
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
        if let Some(found) = find_benchmark_dir(&sub)? {
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
        assert_eq!(m.id, "cxf/parse_request/1");
        assert!((m.base_ns.unwrap() - 5012.0).abs() < 1.0, "{m:?}");
        assert!((m.head_ns.unwrap() - 5530.0).abs() < 1.0, "{m:?}");
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
            ("customer/parse_request/100K", None, None)
        );
        assert_eq!(v, Verdict::OnlyHead);
        let (m, v) = verdict("only-base", None, Statistic::Median);
        assert_eq!((m.head_ns, m.change), (None, None));
        assert_eq!(v, Verdict::OnlyBase);
    }

    #[test]
    fn an_empty_home_is_an_error() {
        let empty = fixture("no-such-case");
        assert!(read_home(&empty, Statistic::Median).is_err());
    }

    #[test]
    fn list_output_is_parsed() {
        let out = "cxf/parse_request/1: benchmark\n\ncxf/write_response/1: benchmark\nWarning: x\n";
        assert_eq!(
            parse_list(out),
            ["cxf/parse_request/1", "cxf/write_response/1"]
        );
    }
}
