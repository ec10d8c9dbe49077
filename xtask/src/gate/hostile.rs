//! The gate's hostile tier: every case of the hostile corpus (`bench_proto::hostile`, listed by bench-server's
//! `icount hostile-list`) counted under callgrind, all in one run, each against the valid echo of its service
//! at the same size: a case that costs more than [`MAX_RATIO`] times as many instructions per byte fails,
//! named with its ratio. Only the head is measured: the limit is absolute (issue 11: no request may cost the
//! server more than 3× a valid one of its size), so that a cost given back a little at a time still fails.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context as _};
use wsbench_tools::process;
use xshell::Shell;

use super::build::Target;
use super::callgrind;
use super::criterion::BenchBin;
use super::decide::Row;
use super::target;

/// Issue 11: every request is answered in at most 3× the work of a valid echo body of the same size.
pub(super) const MAX_RATIO: f64 = 3.0;

/// The binary that holds the corpus's hot paths.
const BINARY: (&str, &str) = ("bench-server", "icount");

/// One case: a hot path of the `icount` binary, its body's size, and the valid echo it is held to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Case {
    pub(super) name: String,
    pub(super) bytes: u64,
    pub(super) valid: String,
}

/// Counts every case of the corpus at each of `sizes` and holds it to [`MAX_RATIO`].
pub(super) fn hostile_tier(
    sh: &Shell,
    head_bins: &BTreeMap<Target, BenchBin>,
    sizes: &[String],
    dir: &Path,
) -> anyhow::Result<Vec<Row>> {
    let bin = head_bins
        .get(&target(BINARY))
        .context("the hostile tier needs bench-server's icount benchmark")?;
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let cases = list(sh, bin, sizes)?;
    let names: Vec<String> = cases.iter().map(|c| c.name.clone()).collect();
    eprintln!(
        "gate: hostile: {} cases at {} under callgrind, in one run",
        cases.len(),
        sizes.join(", ")
    );
    let counts = callgrind::measure_each(sh, bin, &names, &dir.join("hostile.out"))?;
    let rows = ratios(&cases, &counts)?;
    for r in &rows {
        eprintln!(
            "gate: hostile: {}: {:.2}× a valid echo of its size",
            r.id,
            r.head.unwrap_or(f64::NAN)
        );
    }
    Ok(rows)
}

/// The cases of `bin` at `sizes`.
fn list(sh: &Shell, bin: &BenchBin, sizes: &[String]) -> anyhow::Result<Vec<Case>> {
    let _cwd = sh.push_dir(&bin.cwd);
    let mut argv = vec![process::arg(&bin.exe), "hostile-list".to_owned()];
    argv.extend(sizes.iter().cloned());
    let out = process::read(sh, &argv)
        .with_context(|| format!("listing the cases of {}", bin.exe.display()))?;
    parse_list(&out)
}

/// `hostile-list`'s lines: `name bytes valid`.
pub(super) fn parse_list(out: &str) -> anyhow::Result<Vec<Case>> {
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            match words[..] {
                [name, bytes, valid] => Ok(Case {
                    name: name.to_owned(),
                    bytes: bytes
                        .parse()
                        .with_context(|| format!("hostile-list: `{bytes}` is not a size"))?,
                    valid: valid.to_owned(),
                }),
                _ => bail!("hostile-list: expected `name bytes valid`, got `{l}`"),
            }
        })
        .collect()
}

/// Each case's instructions per byte over its valid echo's, from `counts` (one per case, in order).
pub(super) fn ratios(cases: &[Case], counts: &[u64]) -> anyhow::Result<Vec<Row>> {
    if cases.len() != counts.len() {
        bail!(
            "callgrind counted {} hot paths of {} cases",
            counts.len(),
            cases.len()
        );
    }
    let per_byte: BTreeMap<&str, f64> = cases
        .iter()
        .zip(counts)
        .map(|(c, &n)| (c.name.as_str(), n as f64 / c.bytes.max(1) as f64))
        .collect();
    cases
        .iter()
        .map(|c| {
            let valid = per_byte
                .get(c.valid.as_str())
                .filter(|v| **v > 0.0)
                .with_context(|| format!("{}: no count of its valid echo {}", c.name, c.valid))?;
            Ok(Row::hostile(
                &c.name,
                per_byte[c.name.as_str()] / valid,
                MAX_RATIO,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::decide::Verdict;

    #[test]
    fn the_list_is_parsed_and_checked() {
        let cases = parse_list(
            "hostile_64KB/valid_echo_cxf 64372 hostile_64KB/valid_echo_cxf\n\
             hostile_64KB/tag_flood 66218 hostile_64KB/valid_echo_customer\n",
        )
        .unwrap();
        assert_eq!(
            cases[1],
            Case {
                name: "hostile_64KB/tag_flood".into(),
                bytes: 66_218,
                valid: "hostile_64KB/valid_echo_customer".into(),
            }
        );
        assert!(parse_list("hostile_64KB/x 12\n").is_err());
        assert!(parse_list("hostile_64KB/x twelve hostile_64KB/y\n").is_err());
    }

    /// Per byte, against the case's own valid echo; over 3× fails, at 3× passes.
    #[test]
    fn a_case_over_three_times_its_valid_echo_fails() {
        let case = |name: &str, bytes, valid: &str| Case {
            name: name.into(),
            bytes,
            valid: valid.into(),
        };
        let cases = [
            case("v_cxf", 1000, "v_cxf"),
            case("v_customer", 2000, "v_customer"),
            case("attrs", 500, "v_cxf"),
            case("tags", 1000, "v_customer"),
            case("refs", 1000, "v_cxf"),
        ];
        // 10 and 30 instructions a byte for the valid echoes.
        let rows = ratios(&cases, &[10_000, 60_000, 15_001, 90_000, 30_000]).unwrap();
        let verdict = |id: &str| rows.iter().find(|r| r.id == id).unwrap().verdict;
        let ratio = |id: &str| rows.iter().find(|r| r.id == id).unwrap().head.unwrap();
        assert_eq!(ratio("v_cxf"), 1.0);
        assert!((ratio("attrs") - 3.0002).abs() < 1e-9);
        assert_eq!(verdict("attrs"), Verdict::OverRatio);
        assert!(Verdict::OverRatio.fails());
        assert_eq!(verdict("tags"), Verdict::Unchanged);
        assert_eq!(verdict("refs"), Verdict::Unchanged);
        assert!(ratios(&cases, &[1, 2]).is_err());
        assert!(ratios(&[case("x", 10, "missing")], &[5]).is_err());
    }
}
