//! The gate's wall-clock tier: each selected criterion benchmark is measured in alternating rounds, base, head,
//! base, head, … (so both sides share the machine's slow spells), each side's rounds are pooled and criterion
//! compares the pools; a suspect is re-measured, head first, and must be beyond the threshold again to fail.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context as _;
use xshell::Shell;

use super::build::Target;
use super::criterion::{self, BenchBin, Statistic, Timing, BASE, HEAD};
use super::decide::{needs_confirmation, Change, Row};
use super::{target, union, wanted, Args, WALL};

/// Measures every selected benchmark on both sides, has criterion compare them, re-measures the suspects, and
/// returns the rows and how many were re-measured.
pub(super) fn wall_tier(
    sh: &Shell,
    base_bins: &BTreeMap<Target, BenchBin>,
    head_bins: &BTreeMap<Target, BenchBin>,
    args: &Args,
    timing: Timing,
    dir: &Path,
) -> anyhow::Result<(Vec<Row>, usize)> {
    let _ = std::fs::remove_dir_all(dir);
    let mut rows = Vec::new();
    let mut remeasured = 0;
    for &(package, bench, prefixes) in WALL {
        let t = target((package, bench));
        let (base, head) = (base_bins.get(&t), head_bins.get(&t));
        let ids = |bin: Option<&BenchBin>| -> anyhow::Result<Vec<String>> {
            let all = bin
                .map(|b| criterion::list(sh, b))
                .transpose()?
                .unwrap_or_default();
            Ok(all
                .into_iter()
                .filter(|id| wanted(id, prefixes, &args.filter))
                .collect())
        };
        let (base_ids, head_ids) = (ids(base)?, ids(head)?);
        let all = union(&base_ids, &head_ids);
        for (i, id) in all.iter().enumerate() {
            let (in_base, in_head) = (base_ids.contains(id), head_ids.contains(id));
            let (Some(b), Some(h), true, true) = (base, head, in_base, in_head) else {
                rows.push(Row::wall(
                    id,
                    in_base,
                    in_head,
                    None,
                    None,
                    None,
                    None,
                    args.threshold,
                ));
                continue;
            };
            let home = dir
                .join(format!("{package}-{bench}"))
                .join(format!("{i:03}"));
            let first = measure_pair(sh, b, h, id, &home, false, timing, args.statistic)?;
            let change = first
                .change
                .with_context(|| format!("criterion compared nothing for {id}"))?;
            progress(bench, id, "", change);
            let mut deciding = first;
            let mut confirm = None;
            if needs_confirmation(change, args.threshold) {
                remeasured += 1;
                let home = dir
                    .join(format!("{package}-{bench}-confirm"))
                    .join(format!("{i:03}"));
                let second = measure_pair(sh, b, h, id, &home, true, timing, args.statistic)?;
                confirm = Some(
                    second
                        .change
                        .with_context(|| format!("criterion compared nothing for {id}"))?,
                );
                progress(bench, id, " (re-measured)", confirm.expect("just set"));
                deciding = second;
            }
            rows.push(Row::wall(
                id,
                true,
                true,
                deciding.base_ns,
                deciding.head_ns,
                Some(change),
                confirm,
                args.threshold,
            ));
        }
    }
    Ok((rows, remeasured))
}

#[allow(clippy::too_many_arguments)]
fn measure_pair(
    sh: &Shell,
    base: &BenchBin,
    head: &BenchBin,
    id: &str,
    home: &Path,
    head_first: bool,
    timing: Timing,
    statistic: Statistic,
) -> anyhow::Result<criterion::Measured> {
    let _ = std::fs::remove_dir_all(home);
    std::fs::create_dir_all(home).with_context(|| format!("creating {}", home.display()))?;
    let mut sides = [(base, BASE), (head, HEAD)];
    if head_first {
        sides.reverse();
    }
    for round in 1..=timing.rounds {
        for (bin, side) in sides {
            criterion::measure(
                sh,
                bin,
                id,
                home,
                &criterion::round_name(side, round),
                timing,
            )?;
        }
    }
    criterion::pool(home, timing.rounds)?;
    criterion::compare(sh, head, id, home)?;
    criterion::read_home(home, statistic)
}

fn progress(bench: &str, id: &str, note: &str, c: Change) {
    eprintln!(
        "gate: {bench}: {id}{note}: {:+.2}% [{:+.2}% {:+.2}%]",
        c.point * 100.0,
        c.lower * 100.0,
        c.upper * 100.0
    );
}
