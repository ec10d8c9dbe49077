//! `compare` on the fixture runs: provenance first, intervals from repeats, noise told apart from change.

use crate::fixtures::{self, SWEEP_A_ALL, SWEEP_B_ALL};
use wsbench_harness::results::Run;

fn sweep_runs(stamps: &[&str]) -> Vec<Run> {
    stamps
        .iter()
        .map(|s| Run::load(&fixtures::root().join("cxf-client-sweep").join(s)).unwrap())
        .collect()
}

/// The table row of `step`'s `metric` (step label only on the first metric row, so search from it).
fn row<'a>(out: &'a str, step: &str, metric: &str) -> &'a str {
    let from = out
        .find(&format!("| {step} |"))
        .unwrap_or_else(|| panic!("no step {step} in\n{out}"));
    out[from..]
        .lines()
        .find(|l| l.contains(&format!("| {metric} |")))
        .unwrap()
}

#[test]
fn provenance_differences_come_first_in_words() {
    let out = super::markdown(&sweep_runs(&SWEEP_A_ALL), &sweep_runs(&SWEEP_B_ALL));
    let steps_at = out.find("## Steps").unwrap();
    let kernel = out
        .find("Different kernel: A Linux 6.1.0-28-amd64; B Linux 6.12.9-amd64.")
        .expect(&out);
    let commit = out.find("Different commit: A 1f2e3d4c").expect(&out);
    assert!(kernel < steps_at && commit < steps_at);
    assert!(
        out.contains("Same: scenario, scenario file, quick or full run"),
        "{out}"
    );
    assert!(out.contains("CPU, "), "matching CPU is named: {out}");
    assert!(
        !out.contains("started_at") && !out.contains("commands"),
        "times and argv are not differences"
    );
}

#[test]
fn repeats_give_intervals_that_tell_change_from_noise() {
    let out = super::markdown(&sweep_runs(&SWEEP_A_ALL), &sweep_runs(&SWEEP_B_ALL));
    // B's server saturates 8 % higher (18 400 vs 17 000 calls/s); one client is not server-bound.
    let saturated = row(&out, "clients=256", "throughput /s");
    assert!(
        saturated.contains("(n=3)") && saturated.contains("(real)"),
        "{saturated}"
    );
    let pct: f64 = saturated
        .rsplit('|')
        .nth(1)
        .unwrap()
        .trim()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((5.0..11.0).contains(&pct), "{saturated}");
    let single = row(&out, "clients=1", "throughput /s");
    assert!(single.contains("(noise)"), "{single}");
}

#[test]
fn same_run_twice_matches_and_has_no_interval() {
    let out = super::markdown(
        &sweep_runs(&SWEEP_A_ALL[..1]),
        &sweep_runs(&SWEEP_A_ALL[..1]),
    );
    assert!(out.contains("Provenance matches"), "{out}");
    let r = row(&out, "clients=8", "p99 ms");
    assert!(r.contains("+0.0 % (n=1: no interval)"), "{r}");
}

#[test]
fn mixed_repeats_are_flagged() {
    let mut a = sweep_runs(&SWEEP_A_ALL[..1]);
    a.extend(sweep_runs(&SWEEP_B_ALL[..1]));
    let out = super::markdown(&a, &sweep_runs(&SWEEP_B_ALL));
    assert!(
        out.contains("A's own runs differ in kernel, commit:"),
        "{out}"
    );
}

#[test]
fn chat_uses_its_scored_runs_and_other_scenarios_are_told_apart() {
    let chat = || vec![Run::load(&fixtures::chat()).unwrap()];
    let out = super::markdown(&chat(), &chat());
    let r = row(&out, "rooms=10", "throughput /s");
    assert!(r.contains("(n=3)") && r.contains("(noise)"), "{r}");

    let out = super::markdown(&sweep_runs(&SWEEP_A_ALL[..1]), &chat());
    assert!(
        out.contains("Different scenario: A cxf-client-sweep; B volano-chat."),
        "{out}"
    );
    assert!(out.contains("| clients=1 | | only in A |"), "{out}");
    assert!(out.contains("| rooms=1 | | only in B |"), "{out}");
}

#[test]
fn different_operations_are_not_compared_and_json_carries_the_same_rows() {
    let a = sweep_runs(&SWEEP_A_ALL);
    let mut b = sweep_runs(&SWEEP_B_ALL);
    for r in &mut b {
        for s in &mut r.steps {
            if s.meta.label == "clients=1" {
                s.meta.operation = "echoVoid".into();
            }
        }
    }
    let out = super::markdown(&a, &b);
    assert!(
        out.contains("| clients=1 | | A runs echoComplexTypeDoc, B runs echoVoid: different operations, not compared |"),
        "{out}"
    );
    let rows = super::rows(&a, &b);
    let json = super::to_json(&a, &b, &rows);
    assert_eq!(json["schema"], "wsbench.compare/v1");
    let steps = json["steps"].as_array().unwrap();
    assert_eq!(steps.len(), rows.len());
    assert_eq!(steps[0]["different_operations"]["b"], "echoVoid");
    let saturated = steps.iter().find(|s| s["step"] == "clients=256").unwrap();
    let t = &saturated["metrics"][0];
    assert_eq!(t["metric"], "throughput /s");
    assert_eq!(t["a"]["n"], 3);
    assert_eq!(t["change"]["significant"], true);
}
