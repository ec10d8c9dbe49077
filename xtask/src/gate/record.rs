//! The gate's figures into the results store (kind `gate`, as every `run`, `calibrate` and `max-rate` is
//! recorded): the head's counts, per scenario, so that they can be followed from commit to commit.

use std::collections::BTreeMap;

use xshell::Shell;

use wsbench_harness::history::{tool, Kind, Measurement};
use wsbench_harness::metric::Metric;

/// Per scenario, one measurement per (call, metric) of `rows`: `(scenarios, call, metric, head value)`.
pub(crate) fn per_scenario<'a>(
    rows: impl Iterator<Item = (&'a Vec<String>, &'a String, Metric, f64)>,
) -> BTreeMap<String, Vec<Measurement>> {
    let mut out: BTreeMap<String, Vec<Measurement>> = BTreeMap::new();
    for (scenarios, call, metric, value) in rows {
        for s in scenarios {
            out.entry(s.clone()).or_default().push(Measurement {
                step: call.clone(),
                sut: "bench-server".to_owned(),
                metric,
                value,
                interval: None,
                rounds: 1,
                published: None,
            });
        }
    }
    out
}

/// Records one gate run per scenario of `by_scenario` in `results/wsbench.sqlite`.
pub(crate) fn gate_runs(sh: &Shell, by_scenario: BTreeMap<String, Vec<Measurement>>) {
    let entries: Vec<_> = by_scenario
        .into_iter()
        .map(|(scenario, m)| tool::entry(sh, Kind::Gate, &scenario, "gate".to_owned(), m))
        .collect();
    tool::record(&sh.current_dir().join("results"), &entries);
}
