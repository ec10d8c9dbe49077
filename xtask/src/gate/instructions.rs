//! The gate's instruction-count tier: every hot path of the `icount` binaries (server and client) under callgrind, base and head with
//! the same iteration count. Counts are deterministic, so one measurement per side decides.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context as _;
use xshell::Shell;

use super::build::Target;
use super::callgrind;
use super::ceilings;
use super::criterion::BenchBin;
use super::decide::{self, Row};
use super::{target, union, wanted, Args, ICOUNT};

/// Counts instructions of every hot path on both sides, with the same iteration count.
pub(super) fn icount_tier(
    sh: &Shell,
    base_bins: &BTreeMap<Target, BenchBin>,
    head_bins: &BTreeMap<Target, BenchBin>,
    args: &Args,
    dir: &Path,
) -> anyhow::Result<Vec<Row>> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut rows = Vec::new();
    for &t in ICOUNT {
        rows.extend(one_binary(sh, target(t), base_bins, head_bins, args, dir)?);
    }
    Ok(rows)
}

/// The hot paths of one `icount` binary (names are unique across the binaries: each prefixes its own).
fn one_binary(
    sh: &Shell,
    t: Target,
    base_bins: &BTreeMap<Target, BenchBin>,
    head_bins: &BTreeMap<Target, BenchBin>,
    args: &Args,
    dir: &Path,
) -> anyhow::Result<Vec<Row>> {
    let (base, head) = (base_bins.get(&t), head_bins.get(&t));
    let paths = |bin: Option<&BenchBin>| -> anyhow::Result<Vec<callgrind::HotPath>> {
        let all = bin
            .map(|b| callgrind::list(sh, b))
            .transpose()?
            .unwrap_or_default();
        Ok(all
            .into_iter()
            .filter(|p| wanted(&p.name, &[""], &args.filter))
            .collect())
    };
    let (base_paths, head_paths) = (paths(base)?, paths(head)?);
    let names = union(
        &base_paths
            .iter()
            .map(|p| p.name.clone())
            .collect::<Vec<_>>(),
        &head_paths
            .iter()
            .map(|p| p.name.clone())
            .collect::<Vec<_>>(),
    );
    let mut rows = Vec::new();
    for name in names {
        let hb = base_paths.iter().find(|p| p.name == name);
        let hh = head_paths.iter().find(|p| p.name == name);
        // The head's iteration count for both sides, so that totals compare directly.
        let path = hh.or(hb).expect("from one of the lists").clone();
        let count =
            |bin: Option<&BenchBin>, present: bool, side: &str| -> anyhow::Result<Option<u64>> {
                match (bin, present) {
                    (Some(bin), true) => {
                        let out = dir.join(format!("{}.{side}.out", callgrind::file_stem(&name)));
                        callgrind::measure(sh, bin, &path, &out).map(Some)
                    }
                    _ => Ok(None),
                }
            };
        let b = count(base, hb.is_some(), "base")?;
        let h = count(head, hh.is_some(), "head")?;
        if let (Some(b), Some(h)) = (b, h) {
            eprintln!(
                "gate: icount: {name}: {b} → {h} Ir over {} iterations ({:+.3}%)",
                path.iters,
                decide::icount_change(b, h) * 100.0
            );
        }
        rows.push(
            Row::instructions(&name, b, h, path.iters, args.icount_threshold)
                .within_ceiling(ceilings::of(&name)),
        );
    }
    Ok(rows)
}
