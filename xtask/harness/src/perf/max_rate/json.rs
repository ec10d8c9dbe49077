//! `max-rate --json`: the answer, the best unconfirmed rate and every probe, for scripts and CI.

use super::search::Outcome;
use super::{best_unconfirmed, Args};

/// The answer and every probe as one JSON document (`wsbench.max-rate/v1`).
pub(super) fn render(args: &Args, url: &str, out: &Outcome) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(&value(args, url, out))?)
}

fn value(args: &Args, url: &str, out: &Outcome) -> serde_json::Value {
    let probes: Vec<serde_json::Value> = out
        .probes
        .iter()
        .map(|p| {
            serde_json::json!({
                "phase": p.phase.to_string(),
                "offered_per_s": p.rate,
                "achieved_per_s": p.measured.achieved,
                "p99_ms": p.measured.p99_us as f64 / 1000.0,
                "ok": p.measured.ok,
                "errors": p.measured.errors,
                "pass": p.pass,
                "reason": p.reason,
            })
        })
        .collect();
    serde_json::json!({
        "schema": "wsbench.max-rate/v1",
        "operation": args.operation,
        "url": url,
        "slo_p99_ms": args.slo.as_secs_f64() * 1000.0,
        "max_rate_per_s": out.best,
        "first_failing_per_s": out.failed_at,
        "best_unconfirmed_per_s": best_unconfirmed(out).map(|p| p.rate),
        "verdict": out.verdict,
        "probes": probes,
    })
}
