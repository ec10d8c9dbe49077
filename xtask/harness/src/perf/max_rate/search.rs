//! The max-rate search itself, free of processes: double until a probe fails, bisect, then confirm.
//!
//! A rate passes when the server sustains it (achieved ≥ `min_achieved` × offered), no more than
//! `max_error_ratio` of calls fail, and the corrected p99 stays under the SLO. The best passing
//! rate must pass `confirm` more times; if a confirmation fails, that rate counts as failed and the
//! search bisects below it again, so one lucky probe cannot set the answer.

use std::fmt;

/// Why a probe was run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Ramp,
    Bisect,
    Confirm,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Ramp => "ramp",
            Phase::Bisect => "bisect",
            Phase::Confirm => "confirm",
        })
    }
}

/// What one probe measured.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Measured {
    pub achieved: f64,
    pub p99_us: u64,
    pub ok: u64,
    pub errors: u64,
    /// bench-client's own warnings (schedule lag, client CPU): evidence, not part of the verdict.
    pub warnings: Vec<String>,
}

/// One probe with its verdict.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Probe {
    pub phase: Phase,
    pub rate: f64,
    pub measured: Measured,
    pub pass: bool,
    /// Why it failed (empty when it passed).
    pub reason: String,
}

#[derive(Debug, Clone)]
pub(super) struct Config {
    pub start: f64,
    pub max: f64,
    pub slo_p99_us: u64,
    /// Stop bisecting when the bracket is narrower than this fraction of its low end.
    pub precision: f64,
    pub confirm: u32,
    pub max_probes: usize,
    pub min_achieved: f64,
    pub max_error_ratio: f64,
}

#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    /// The highest confirmed rate, if any.
    pub best: Option<f64>,
    /// The lowest rate seen failing (the answer lies below it).
    pub failed_at: Option<f64>,
    pub probes: Vec<Probe>,
    /// How the search ended, in words.
    pub verdict: String,
}

impl Config {
    pub(super) fn judge(&self, rate: f64, m: &Measured) -> (bool, String) {
        let mut why = vec![];
        let total = m.ok + m.errors;
        let err_ratio = if total == 0 {
            1.0
        } else {
            m.errors as f64 / total as f64
        };
        if total == 0 {
            why.push("no calls completed".to_string());
        } else if err_ratio > self.max_error_ratio {
            why.push(format!(
                "{} failed calls ({:.2} %)",
                m.errors,
                err_ratio * 100.0
            ));
        }
        if m.achieved < rate * self.min_achieved {
            why.push(format!(
                "achieved {:.0}/s of {rate:.0}/s offered",
                m.achieved
            ));
        }
        if m.p99_us > self.slo_p99_us {
            why.push(format!(
                "p99 {:.2} ms over the {:.2} ms SLO",
                m.p99_us as f64 / 1000.0,
                self.slo_p99_us as f64 / 1000.0
            ));
        }
        (why.is_empty(), why.join("; "))
    }
}

/// Runs the search; `run_probe(rate, phase)` measures one rate (an error aborts the search).
pub(super) fn search(
    cfg: &Config,
    mut run_probe: impl FnMut(f64, Phase) -> anyhow::Result<Measured>,
) -> anyhow::Result<Outcome> {
    let mut probes: Vec<Probe> = vec![];
    let mut probe = |rate: f64, phase: Phase, probes: &mut Vec<Probe>| -> anyhow::Result<bool> {
        let measured = run_probe(rate, phase)?;
        let (pass, reason) = cfg.judge(rate, &measured);
        probes.push(Probe {
            phase,
            rate,
            measured,
            pass,
            reason,
        });
        Ok(pass)
    };
    let round = |r: f64| r.round().max(1.0);
    let floor = (cfg.start / 64.0).max(1.0);
    let mut lo: Option<f64> = None;
    let mut hi: Option<f64> = None;

    // Ramp: double from the start rate until a probe fails or the cap is reached.
    let mut r = round(cfg.start.min(cfg.max));
    loop {
        if probes.len() >= cfg.max_probes {
            break;
        }
        if probe(r, Phase::Ramp, &mut probes)? {
            lo = Some(r);
            if r >= cfg.max {
                break;
            }
            r = round((r * 2.0).min(cfg.max));
        } else {
            hi = Some(r);
            break;
        }
    }

    loop {
        // Bisect between the best pass (or nothing) and the lowest failure.
        while let Some(h) = hi {
            if probes.len() >= cfg.max_probes {
                break;
            }
            let l = lo.unwrap_or(0.0);
            if lo.is_some() && (h - l) / l <= cfg.precision {
                break;
            }
            let mid = round((l + h) / 2.0);
            if lo.is_none() && mid < floor || mid <= l || mid >= h {
                break;
            }
            if probe(mid, Phase::Bisect, &mut probes)? {
                lo = Some(mid);
            } else {
                hi = Some(mid);
            }
        }
        // Confirm the best pass; a failure makes it the new upper bound.
        let Some(best) = lo else { break };
        let mut confirmed = true;
        for _ in 0..cfg.confirm {
            if probes.len() >= cfg.max_probes {
                confirmed = false;
                break;
            }
            if !probe(best, Phase::Confirm, &mut probes)? {
                confirmed = false;
                break;
            }
        }
        if confirmed {
            break;
        }
        if probes.len() >= cfg.max_probes {
            lo = None;
            break;
        }
        hi = Some(best);
        // The next best candidate: the highest rate below `best` that passed every probe of it.
        lo = probes
            .iter()
            .filter(|p| p.rate < best && probes.iter().filter(|q| q.rate == p.rate).all(|q| q.pass))
            .map(|p| p.rate)
            .reduce(f64::max);
    }

    let verdict = verdict(cfg, lo, hi, probes.len(), floor);
    Ok(Outcome {
        best: lo,
        failed_at: hi,
        probes,
        verdict,
    })
}

/// The search's conclusion in one sentence.
fn verdict(cfg: &Config, lo: Option<f64>, hi: Option<f64>, probes: usize, floor: f64) -> String {
    match (lo, hi) {
        (Some(b), Some(h)) => format!(
            "{b:.0}/s sustained (confirmed {} more time{}); {h:.0}/s was not.",
            cfg.confirm,
            if cfg.confirm == 1 { "" } else { "s" }
        ),
        (Some(b), None) => format!(
            "{b:.0}/s sustained: the cap (--max {:.0}) was reached, the limit is higher.",
            cfg.max
        ),
        (None, _) if probes >= cfg.max_probes => {
            format!(
                "No confirmed rate within {} probes (--max-probes).",
                cfg.max_probes
            )
        }
        (None, Some(_)) => format!("Not even {floor:.0}/s met the SLO."),
        (None, None) => "No probe ran.".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> Config {
        Config {
            start: 1000.0,
            max: 1_000_000.0,
            slo_p99_us: 10_000,
            precision: 0.05,
            confirm: 2,
            max_probes: 40,
            min_achieved: 0.97,
            max_error_ratio: 0.0,
        }
    }

    /// A server that sustains `capacity`/s; p99 blows up past it.
    fn server(capacity: f64) -> impl FnMut(f64, Phase) -> anyhow::Result<Measured> {
        move |rate, _| {
            let achieved = rate.min(capacity);
            let p99_us = if rate <= capacity { 2_000 } else { 900_000 };
            Ok(Measured {
                achieved,
                p99_us,
                ok: (achieved * 10.0) as u64,
                errors: 0,
                warnings: vec![],
            })
        }
    }

    #[test]
    fn finds_the_capacity_within_precision_and_confirms_it() {
        let out = search(&cfg(), server(12_345.0)).unwrap();
        let best = out.best.unwrap();
        assert!((12_345.0 / 1.05..=12_345.0).contains(&best), "{best}");
        assert!(out.failed_at.unwrap() > 12_345.0);
        let ramp: Vec<f64> = out
            .probes
            .iter()
            .filter(|p| p.phase == Phase::Ramp)
            .map(|p| p.rate)
            .collect();
        assert_eq!(ramp, [1000.0, 2000.0, 4000.0, 8000.0, 16000.0]);
        let confirms: Vec<&Probe> = out
            .probes
            .iter()
            .filter(|p| p.phase == Phase::Confirm)
            .collect();
        assert_eq!(confirms.len(), 2);
        assert!(confirms.iter().all(|p| p.pass && p.rate == best));
        assert!(
            out.verdict.starts_with(&format!("{best:.0}/s sustained")),
            "{}",
            out.verdict
        );
        let failed = out.probes.iter().find(|p| !p.pass).unwrap();
        assert!(
            failed.reason.contains("over the 10.00 ms SLO"),
            "{}",
            failed.reason
        );
    }

    #[test]
    fn a_failed_confirmation_moves_the_answer_down() {
        // The first time 11_000/s or more is probed it passes (a lucky run), then never again.
        let mut seen_lucky = false;
        let mut inner = server(10_000.0);
        let probe = move |rate: f64, phase: Phase| {
            if rate > 10_000.0 && rate < 12_000.0 && !seen_lucky {
                seen_lucky = true;
                return Ok(Measured {
                    achieved: rate,
                    p99_us: 2_000,
                    ok: 1000,
                    errors: 0,
                    warnings: vec![],
                });
            }
            inner(rate, phase)
        };
        let out = search(&cfg(), probe).unwrap();
        let best = out.best.unwrap();
        assert!(best <= 10_000.0, "{best} {:#?}", out.probes);
        assert!(out
            .probes
            .iter()
            .any(|p| p.phase == Phase::Confirm && !p.pass));
    }

    #[test]
    fn errors_and_shortfall_fail_a_probe() {
        let c = cfg();
        let (pass, why) = c.judge(
            1000.0,
            &Measured {
                achieved: 1000.0,
                p99_us: 100,
                ok: 9990,
                errors: 10,
                warnings: vec![],
            },
        );
        assert!(!pass && why.contains("10 failed calls"), "{why}");
        let (pass, why) = c.judge(
            1000.0,
            &Measured {
                achieved: 900.0,
                p99_us: 100,
                ok: 9000,
                errors: 0,
                warnings: vec![],
            },
        );
        assert!(!pass && why.contains("achieved 900/s"), "{why}");
        assert!(
            c.judge(
                1000.0,
                &Measured {
                    achieved: 990.0,
                    p99_us: 100,
                    ok: 9900,
                    errors: 0,
                    warnings: vec![],
                }
            )
            .0
        );
    }

    #[test]
    fn nothing_sustained_and_cap_reached() {
        let out = search(&cfg(), server(5.0)).unwrap();
        assert_eq!(out.best, None);
        assert!(out.verdict.starts_with("Not even"), "{}", out.verdict);
        let capped = Config {
            max: 4000.0,
            ..cfg()
        };
        let out = search(&capped, server(1e9)).unwrap();
        assert_eq!(out.best, Some(4000.0));
        assert!(out.verdict.contains("cap"), "{}", out.verdict);
    }

    #[test]
    fn probe_budget_is_respected() {
        let tight = Config {
            max_probes: 6,
            ..cfg()
        };
        let out = search(&tight, server(12_345.0)).unwrap();
        assert!(out.probes.len() <= 6);
        assert_eq!(out.best, None);
        assert!(out.verdict.contains("--max-probes"), "{}", out.verdict);
    }
}
