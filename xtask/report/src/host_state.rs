//! `## The machine's power and virtualisation state`: this machine's settings when the run began (governor,
//! turbo, SMT, C-states, THP, NUMA, the NIC's IRQs, clock source, hypervisor, cgroup quota) and any that
//! changed; per step the CPU time stolen by the hypervisor here and on the server's host (as the agent, or
//! the local monitor, sampled it), the frequencies and cgroup throttling; and the flag of every step that
//! lost more than 5 % of its CPU time to steal. Pure: a loaded results directory in, Markdown lines out.

use bench_proto::numbers::num;
use bench_proto::results::SamplingVia;
use wsbench_harness::provenance::host_state::{HostStates, STEAL_FLAG_PCT};
use wsbench_harness::results;

/// Each step's steal: here (provenance) and where the server was sampled (its document).
struct Steal<'a> {
    id: &'a str,
    here: Option<f64>,
    server: Option<f64>,
}

fn steals(loaded: &results::Run) -> Vec<Steal<'_>> {
    let states = loaded
        .provenance
        .as_ref()
        .and_then(|p| p.host_state.as_ref());
    loaded
        .steps
        .iter()
        .map(|s| Steal {
            id: &s.meta.id,
            here: states
                .and_then(|h| h.steps.get(&s.meta.id))
                .and_then(|st| st.steal_pct),
            server: s
                .doc
                .as_ref()
                .ok()
                .and_then(|d| d.system.as_ref())
                .and_then(|b| b.mean.steal_pct),
        })
        .collect()
}

/// The summary's top lines: each step that lost more than 5 % of its CPU time to the hypervisor.
pub(crate) fn flags(loaded: &results::Run) -> Vec<String> {
    steal_flags(loaded)
        .into_iter()
        .map(|f| format!("- ⚠ {f}"))
        .collect()
}

/// Each step that lost more than 5 % of its CPU time to the hypervisor, in a sentence.
pub(crate) fn steal_flags(loaded: &results::Run) -> Vec<String> {
    steals(loaded)
        .iter()
        .filter_map(|s| {
            let worst = s.here.into_iter().chain(s.server).reduce(f64::max)?;
            (worst > STEAL_FLAG_PCT).then(|| {
                format!(
                    "Steal: step {} lost {} % of its CPU time to the hypervisor (more than {} %): its figures \
                     are of a machine whose CPUs other guests shared.",
                    s.id,
                    num(worst),
                    num(STEAL_FLAG_PCT)
                )
            })
        })
        .collect()
}

/// The section's lines (none for a run recorded before host states were).
pub(crate) fn section(loaded: &results::Run) -> Vec<String> {
    let Some(states) = loaded
        .provenance
        .as_ref()
        .and_then(|p| p.host_state.as_ref())
    else {
        return Vec::new();
    };
    let mut o = vec!["\n## The machine's power and virtualisation state\n".to_owned()];
    o.push(format!(
        "- This machine when the run began: {}.",
        settings(states)
    ));
    for (id, st) in &states.steps {
        for c in &st.changed {
            o.push(format!("- ⚠ Changed during step {id}: {c}."));
        }
    }
    let sampled_where = loaded
        .steps
        .iter()
        .find_map(|s| s.record.as_ref()?.sampling.as_ref())
        .map(|s| match (&s.via, &s.agent) {
            (SamplingVia::Agent, Some(a)) => format!("the server's host, by the agent at {a}"),
            _ => "the server's host (this machine)".to_owned(),
        })
        .unwrap_or_else(|| "the server's host (not sampled)".to_owned());
    o.push(String::new());
    o.push(format!(
        "| step | steal % here | steal % on {sampled_where} | CPU MHz here (before → after) | cgroup throttled |"
    ));
    o.push("|---|---|---|---|---|".to_owned());
    let pct = |v: Option<f64>| match v {
        Some(v) if v > STEAL_FLAG_PCT => format!("**{}** ⚠", num(v)),
        Some(v) => num(v),
        None => "–".to_owned(),
    };
    for s in steals(loaded) {
        let st = states.steps.get(s.id);
        let freq = st.map_or("–".to_owned(), |st| {
            format!(
                "{} → {}",
                st.before.freq_range().unwrap_or_else(|| "?".into()),
                st.after.freq_range().unwrap_or_else(|| "?".into())
            )
        });
        let throttled = st
            .and_then(|st| st.throttled)
            .map_or("–".to_owned(), |n| n.to_string());
        o.push(format!(
            "| {} | {} | {} | {freq} | {throttled} |",
            s.id,
            pct(s.here),
            pct(s.server)
        ));
    }
    o.push(format!(
        "\nSteal is CPU time the hypervisor gave other guests while this one's CPUs wanted to run; a step above {} % is \
         flagged. `cargo xtask doctor` shows how to pin each setting for benchmarking; provenance.json's `host_state` \
         has every reading.",
        num(STEAL_FLAG_PCT)
    ));
    o
}

fn settings(states: &HostStates) -> String {
    let s = &states.at_start;
    let mut parts: Vec<String> = s
        .settings()
        .into_iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    if let Some(f) = s.freq_range() {
        parts.push(format!("CPU {f}"));
    }
    if let Some(c) = &s.container {
        parts.push(format!("in a {c} container"));
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use std::fs;

    use wsbench_harness::results::Run;

    /// The summary fixture with a host state: step 01 stole `here` % on this machine and `server` % on
    /// the server's host (its document's samples).
    fn run_with(dir: &std::path::Path, here: u64, server: f64) -> Run {
        let fixture = wsbench_harness::paths::project_root().join("xtask/tests/fixtures/summary");
        fs::create_dir_all(dir.join("steps")).unwrap();
        for f in ["run.json", "provenance.json", "steps/01-clients-16.json"] {
            fs::copy(fixture.join(f), dir.join(f)).unwrap();
        }
        let state = |ticks: u64, steal: u64, mhz: u32| {
            serde_json::json!({ "freq_mhz": [mhz, mhz], "nic_irqs": [], "cpu_ticks": ticks,
                                "steal_ticks": steal, "governor": "performance", "thp": "madvise" })
        };
        let mut prov: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(dir.join("provenance.json")).unwrap())
                .unwrap();
        prov["host_state"] = serde_json::json!({
            "at_start": state(0, 0, 2600),
            "steps": { "01-clients-16": {
                "before": state(1000, 0, 2600), "after": state(2000, here * 10, 2400),
                "steal_pct": here as f64, "throttled": 0 } }
        });
        fs::write(dir.join("provenance.json"), prov.to_string()).unwrap();
        let step = dir.join("steps/01-clients-16.json");
        let mut doc: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&step).unwrap()).unwrap();
        doc["system"]["mean"]["steal_pct"] = server.into();
        fs::write(&step, doc.to_string()).unwrap();
        Run::load(dir).unwrap()
    }

    /// Issue 44, item 2: the summary shows the state and each step's steal, and flags a step above 5 %.
    #[test]
    fn steal_per_step_is_shown_and_above_five_percent_flagged() {
        let tmp = tempfile::tempdir().unwrap();
        let calm = run_with(tmp.path(), 1, 0.5);
        assert!(super::flags(&calm).is_empty());
        let text = super::section(&calm).join("\n");
        assert!(text.contains("governor performance"), "{text}");
        assert!(
            text.contains("| 01-clients-16 | 1.00 | 0.500 | 2600 MHz → 2400 MHz | 0 |"),
            "{text}"
        );
        let stolen = run_with(tmp.path(), 2, 7.25);
        let flags = super::flags(&stolen);
        assert_eq!(flags.len(), 1);
        assert!(
            flags[0].contains("step 01-clients-16 lost 7.25 %"),
            "{flags:?}"
        );
        assert!(super::section(&stolen).join("\n").contains("**7.25** ⚠"));
        let summary = crate::summary::render(&stolen, &[]);
        assert!(summary.contains("⚠ Steal: step 01-clients-16"), "{summary}");
    }
}
