//! The soak verdict in the summary (`run --soak`, `[soak]`): per step, each limit with what was measured and
//! pass or FAIL, as [`wsbench_harness::results::Run::soak_verdicts`] judges them (the run's status takes the
//! same verdicts as its failed checks). Pure: a loaded results directory in, lines out.

use wsbench_harness::results;

/// The `## Soak` section; no lines when the run was not judged as a soak.
pub fn section(loaded: &results::Run) -> Vec<String> {
    let Some(limits) = &loaded.manifest.soak else {
        return vec![];
    };
    let verdicts = loaded.soak_verdicts();
    let failed = verdicts.iter().filter(|v| !v.pass()).count();
    let mut out = vec![
        "\n## Soak\n".to_owned(),
        format!(
            "Each step judged by its per-minute series (the first {} minute(s) left out as settling): the \
             server's RSS slope (least squares), its open fds (first → last judged minute), the p99 of the \
             last third of the minutes against the first third. {}\n",
            limits.settle_minutes,
            if failed == 0 {
                "**Passed.**".to_owned()
            } else {
                format!("**{failed} of {} steps FAILED** (the run exits non-zero).", verdicts.len())
            }
        ),
        "| step | minutes | check | measured | limit | verdict |\n|---|---|---|---|---|---|".to_owned(),
    ];
    for v in &verdicts {
        for c in &v.checks {
            out.push(format!(
                "| {} | {} | {} | {} | {} | {} |",
                v.step,
                v.minutes,
                c.name,
                c.measured,
                c.limit,
                if c.pass { "pass" } else { "**FAIL**" }
            ));
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use std::fs;
    use std::path::Path;

    use bench_proto::results::{encode_histogram, new_histogram, Interval, Timeline};
    use wsbench_harness::results::Run;

    /// The single-step fixture judged as a soak, its step given ten minutes of 10 s intervals whose server
    /// RSS grows by `leak_kb_per_min`.
    pub(crate) fn soak_run(dir: &Path, leak_kb_per_min: u64) -> Run {
        let single = wsbench_harness::paths::project_root().join("xtask/tests/fixtures/summary");
        copy_tree(&single, dir);
        let intervals = (0..60u64)
            .map(|k| {
                let mut h = new_histogram();
                h.record_n(900, 99).unwrap();
                h.record(2_000).unwrap();
                Interval {
                    t_s: k as f64 * 10.0,
                    dur_s: 10.0,
                    ok: 100,
                    corrected: encode_histogram(&h),
                    server_rss_kb: Some(30_000 + leak_kb_per_min * (k + 1) / 6),
                    server_fds: Some(107),
                    ..Interval::default()
                }
            })
            .collect();
        let timeline = Timeline {
            interval_s: 10.0,
            intervals,
            ..Timeline::default()
        };
        let step = dir.join("steps/01-clients-16.json");
        let mut doc: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&step).unwrap()).unwrap();
        doc["timeline"] = serde_json::to_value(&timeline).unwrap();
        fs::write(&step, doc.to_string()).unwrap();
        let mut run: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
        run["soak"] = serde_json::json!({ "rss_slope_mib_per_h": 8.0 });
        fs::write(dir.join("run.json"), run.to_string()).unwrap();
        Run::load(dir).unwrap()
    }

    /// Copies the files under `from` to the same places under `to`.
    pub(crate) fn copy_tree(from: &Path, to: &Path) {
        for entry in walk(from) {
            let dest = to.join(entry.strip_prefix(from).unwrap());
            fs::create_dir_all(dest.parent().unwrap()).unwrap();
            fs::copy(&entry, dest).unwrap();
        }
    }

    fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
        fs::read_dir(dir)
            .unwrap()
            .flat_map(|e| {
                let p = e.unwrap().path();
                if p.is_dir() {
                    walk(&p)
                } else {
                    vec![p]
                }
            })
            .collect()
    }

    #[test]
    fn a_flat_soak_passes_and_a_leak_fails_each_limit_shown() {
        let tmp = tempfile::tempdir().unwrap();
        let flat = super::section(&soak_run(tmp.path(), 0)).join("\n");
        assert!(flat.contains("**Passed.**"), "{flat}");
        assert!(
            flat.contains("| 01-clients-16 | 9 | RSS slope | +0.00 MiB/h | ≤ 8 MiB/h | pass |"),
            "{flat}"
        );
        assert!(
            flat.contains("| open fds | 107 → 107 (+0) | growth ≤ 16 | pass |"),
            "{flat}"
        );
        assert!(
            flat.contains("| p99 drift | 0.90 → 0.90 ms (+0.0 %) | ≤ +50 % | pass |"),
            "{flat}"
        );
        let tmp = tempfile::tempdir().unwrap();
        // 256 kB a minute: 15 MiB/h.
        let leaking = soak_run(tmp.path(), 256);
        let md = super::section(&leaking).join("\n");
        assert!(md.contains("**1 of 1 steps FAILED**"), "{md}");
        assert!(
            md.contains("| RSS slope | +15.00 MiB/h | ≤ 8 MiB/h | **FAIL** |"),
            "{md}"
        );
        let failures: Vec<String> = leaking
            .soak_verdicts()
            .iter()
            .flat_map(|v| v.failures())
            .collect();
        assert_eq!(
            failures,
            ["RSS slope at 01-clients-16 (+15.00 MiB/h, limit ≤ 8 MiB/h)"]
        );
    }

    #[test]
    fn a_run_not_judged_as_a_soak_has_no_section() {
        let fixture = wsbench_harness::paths::project_root().join("xtask/tests/fixtures/summary");
        assert!(super::section(&Run::load(&fixture).unwrap()).is_empty());
    }
}
