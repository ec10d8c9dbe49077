//! The gate's deterministic tier: instruction counts of the hot paths, from the `icount` bench binary run under
//! `valgrind --tool=callgrind` with collection switched on only inside its measured function, so setup (building
//! the request, the runtime, the allocator's first growth) is not counted.

use std::path::Path;

use anyhow::{bail, Context as _};
use wsbench_tools::process;
use xshell::Shell;

use super::criterion::BenchBin;
use wsbench_tools::valgrind;
pub(crate) use wsbench_tools::valgrind::{check_valgrind, parse_totals};

/// The function the `icount` binary runs each hot path inside (`#[inline(never)]`); callgrind counts only there.
pub(crate) const MEASURED_FN: &str = "wsbench_icount_measured";
/// Its path in the `icount` binaries (both crates are named `icount`).
const MEASURED_PATH: &str = "icount::wsbench_icount_measured";

/// A hot path the `icount` binary offers, and how many times one measurement runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HotPath {
    pub(crate) name: String,
    pub(crate) iters: u64,
}

/// The hot paths of an `icount` binary: its `list` prints `name iters` per line.
pub(crate) fn list(sh: &Shell, bin: &BenchBin) -> anyhow::Result<Vec<HotPath>> {
    let _cwd = sh.push_dir(&bin.cwd);
    let exe = &bin.exe;
    let out = process::read(sh, &[process::arg(exe), "list".to_owned()])
        .with_context(|| format!("listing {}", exe.display()))?;
    parse_list(&out)
}

pub(crate) fn parse_list(out: &str) -> anyhow::Result<Vec<HotPath>> {
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut words = l.split_whitespace();
            match (
                words.next(),
                words.next().map(str::parse::<u64>),
                words.next(),
            ) {
                (Some(name), Some(Ok(iters)), None) if iters > 0 => Ok(HotPath {
                    name: name.to_owned(),
                    iters,
                }),
                _ => bail!("icount list: expected `name iterations`, got `{l}`"),
            }
        })
        .collect()
}

/// Runs one hot path under callgrind, writing its profile to `out_file`; returns the instructions executed inside
/// the measured function over all iterations.
pub(crate) fn measure(
    sh: &Shell,
    bin: &BenchBin,
    path: &HotPath,
    out_file: &Path,
) -> anyhow::Result<u64> {
    let _cwd = sh.push_dir(&bin.cwd);
    let exe = &bin.exe;
    let (name, iters) = (&path.name, path.iters.to_string());
    let out_arg = format!("--callgrind-out-file={}", out_file.display());
    let toggle = format!("--toggle-collect=*{MEASURED_FN}*");
    let args = [
        "--tool=callgrind".to_owned(),
        "--collect-atstart=no".to_owned(),
        toggle,
        out_arg,
        process::arg(exe),
        "run".to_owned(),
        name.clone(),
        iters,
    ];
    let out = valgrind::output(sh, &args).with_context(|| format!("running valgrind on {name}"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        bail!("callgrind run of {name} failed ({}):\n{stderr}", out.status);
    }
    let text = std::fs::read_to_string(out_file)
        .with_context(|| format!("reading {}", out_file.display()))?;
    let total = parse_totals(&text)
        .with_context(|| format!("{}: no `totals:` or `summary:` line", out_file.display()))?;
    if total == 0 {
        bail!("{name}: callgrind counted no instructions inside {MEASURED_FN}: was the function inlined or renamed?");
    }
    Ok(total)
}

/// Runs every hot path of `names` once, in one callgrind run (`icount run-each`, a profile dumped after each
/// call of the measured function, in parts `out_file.1`, `.2` …); returns the instructions of each, in order.
pub(crate) fn measure_each(
    sh: &Shell,
    bin: &BenchBin,
    names: &[String],
    out_file: &Path,
) -> anyhow::Result<Vec<u64>> {
    let _cwd = sh.push_dir(&bin.cwd);
    let mut args = vec![
        "--tool=callgrind".to_owned(),
        "--collect-atstart=no".to_owned(),
        format!("--toggle-collect=*{MEASURED_FN}*"),
        // Its whole name (callgrind 3.19 counts nothing at all when a --dump-* pattern has a wildcard here).
        format!("--dump-after={MEASURED_PATH}"),
        format!("--callgrind-out-file={}", out_file.display()),
        process::arg(&bin.exe),
        "run-each".to_owned(),
    ];
    args.extend(names.iter().cloned());
    let out = valgrind::output(sh, &args).context("running valgrind on the hostile corpus")?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        bail!(
            "callgrind run of the hostile corpus failed ({}):\n{stderr}",
            out.status
        );
    }
    (1..=names.len())
        .map(|part| {
            let file = format!("{}.{part}", out_file.display());
            let text = std::fs::read_to_string(&file).with_context(|| format!("reading {file}"))?;
            parse_totals(&text).with_context(|| format!("{file}: no `totals:` or `summary:` line"))
        })
        .collect()
}

/// A file name for a hot path's profile (`cxf/parse_request/1` → `cxf-parse_request-1`).
pub(crate) fn file_stem(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::PathBuf;

    use super::*;
    use crate::gate::decide::{icount_verdict, Verdict};

    const T: f64 = 0.02;

    fn fixtures() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gate/callgrind")
    }

    /// The counts of every profile in a fixture side directory, by file stem.
    fn side(name: &str) -> std::collections::BTreeMap<String, u64> {
        std::fs::read_dir(fixtures().join(name))
            .unwrap()
            .map(|e| {
                let path = e.unwrap().path();
                let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
                let text = std::fs::read_to_string(&path).unwrap();
                (
                    stem,
                    parse_totals(&text).unwrap_or_else(|| panic!("{}", path.display())),
                )
            })
            .collect()
    }

    fn verdicts() -> Vec<(String, Verdict)> {
        let (base, head) = (side("base"), side("head"));
        let names: BTreeSet<&String> = base.keys().chain(head.keys()).collect();
        names
            .into_iter()
            .map(|n| {
                (
                    n.clone(),
                    icount_verdict(base.get(n).copied(), head.get(n).copied(), T),
                )
            })
            .collect()
    }

    fn verdict_of(name: &str) -> Verdict {
        verdicts().into_iter().find(|(n, _)| n == name).unwrap().1
    }

    #[test]
    fn reads_callgrinds_totals() {
        let base = side("base");
        assert_eq!(base["cxf-parse_request-1"], 2_378_822);
        // A profile with a `summary:` line and no `totals:` line still reads.
        assert_eq!(parse_totals("events: Ir\nsummary: 42 7\n"), Some(42));
        assert_eq!(parse_totals("events: Ir\n"), None);
    }

    #[test]
    fn a_rise_beyond_the_threshold_fails() {
        // +3.1 %
        assert_eq!(verdict_of("cxf-parse_request-1"), Verdict::Regressed);
    }

    #[test]
    fn a_fall_is_an_improvement() {
        assert_eq!(verdict_of("cxf-write_response-1"), Verdict::Improved);
    }

    #[test]
    fn jitter_below_the_threshold_passes() {
        // +0.4 %: what differing HashMap seeds or paths can do.
        assert_eq!(
            verdict_of("customer-parse_request-100K"),
            Verdict::Unchanged
        );
    }

    #[test]
    fn missing_hot_paths_on_either_side_are_reported_not_failed() {
        assert_eq!(verdict_of("chat-decode"), Verdict::OnlyBase);
        assert_eq!(verdict_of("chat-fanout-20"), Verdict::OnlyHead);
        assert!(!verdicts()
            .iter()
            .any(|(n, v)| v.fails() && n.starts_with("chat")));
    }

    #[test]
    fn list_output_is_parsed_and_checked() {
        let paths = parse_list("cxf/parse_request/1 200\ncustomer/parse_request/100K 3\n").unwrap();
        assert_eq!(
            paths[1],
            HotPath {
                name: "customer/parse_request/100K".into(),
                iters: 3
            }
        );
        assert!(parse_list("cxf/parse_request/1\n").is_err());
        assert!(parse_list("x 0\n").is_err());
    }

    #[test]
    fn file_stems_are_plain() {
        assert_eq!(
            file_stem("customer/parse_request/100K"),
            "customer-parse_request-100K"
        );
    }
}
