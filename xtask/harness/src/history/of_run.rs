//! A results folder as the store keeps it: the run's commit, machine and status from run.json and
//! provenance.json, and every metric of every step the folder's reader gives (the median of the rounds with
//! its interval), beside the published figure the step is compared with.

use crate::metric::Metric;
use crate::provenance::Provenance;
use crate::results::Run;
use crate::stats::Estimate;

use super::entry::{Entry, Kind, Machine, Measurement, PublishedFigure};

/// The entry of a loaded results folder.
pub fn entry(run: &Run) -> Entry {
    let m = &run.manifest;
    let prov = run.provenance.as_ref();
    Entry {
        kind: Kind::Run,
        scenario: m.scenario.clone(),
        started_at: m.started_at.clone(),
        finished_at: m.finished_at.clone(),
        commit: prov.and_then(|p| p.git.as_ref()).map(|g| g.commit.clone()),
        dirty: prov.and_then(|p| p.git.as_ref()).is_some_and(|g| g.dirty),
        profile: prov.map(|p| p.build.profile.clone()),
        machine: prov.map_or_else(Machine::default, |p| {
            Machine::of(&p.host).with_state(p.host_state.as_ref().map(|h| &h.at_start))
        }),
        config: config(m.quick, &m.sets),
        sut_config: sut_config(prov),
        status: m.status,
        busy: !m.busy.is_empty(),
        emulated: m.emulated,
        dir: Some(run.dir.clone()),
        measurements: measurements(run),
    }
}

/// `quick; duration=6s; clients=1,8` — what sets a run's conditions apart from the scenario as written.
pub fn config(quick: bool, sets: &[String]) -> String {
    let mut parts: Vec<&str> = Vec::new();
    if quick {
        parts.push("quick");
    }
    parts.extend(sets.iter().map(String::as_str));
    parts.join("; ")
}

/// The servers measured (as provenance identified them) and the command lines that started them.
fn sut_config(prov: Option<&Provenance>) -> serde_json::Value {
    let Some(p) = prov else {
        return serde_json::Value::Null;
    };
    serde_json::json!({
        "sut": p.sut,
        "server": p.commands.server,
    })
}

/// Every metric the reader gives for every step: per step (its rounds together), per metric.
fn measurements(run: &Run) -> Vec<Measurement> {
    let comparisons = run.comparisons();
    let mut out = Vec::new();
    for (group, rounds) in run.groups() {
        let meta = &run.steps[rounds[0]].meta;
        let sut = meta
            .sut
            .clone()
            .unwrap_or_else(|| "bench-server".to_owned());
        let step = group
            .strip_suffix(&format!("-{sut}"))
            .filter(|_| meta.sut.is_some())
            .unwrap_or(&group)
            .to_owned();
        for metric in Metric::ALL {
            let xs: Vec<f64> = rounds
                .iter()
                .filter_map(|&i| run.measured(i, metric))
                .collect();
            let Some(e) = Estimate::of(&xs) else {
                continue;
            };
            let published = comparisons
                .iter()
                .find(|c| {
                    c.published.metric == metric && c.rows.iter().any(|(i, _)| rounds.contains(i))
                })
                .map(|c| PublishedFigure {
                    value: c.published.value,
                    max: c.published.max,
                    label: c.published.label.clone(),
                });
            out.push(Measurement {
                step: step.clone(),
                sut: sut.clone(),
                metric,
                value: e.median,
                interval: (e.n > 1).then_some((e.lo, e.hi)),
                rounds: e.n as u32,
                published,
            });
        }
    }
    out
}
