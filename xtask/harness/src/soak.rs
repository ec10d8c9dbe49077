//! The soak verdict (`run --soak`, a scenario's `[soak]` table): judges a long step by the per-minute series
//! of its timeline — the server's RSS slope, the growth of its open file descriptors and the drift of the
//! p99 — each against a limit; a failed limit is a failed check of the run ([`crate::rundoc::FailedCheck`]).
//!
//! The series come from bench-client's timeline (`server_rss_kb`, `server_fds` and the latency histogram of
//! each interval), gathered into whole minutes; the first `settle_minutes` are left out (allocator arenas,
//! caches and connection pools fill there, which is not a leak).

use bench_proto::results::{decode_histogram, Interval, Timeline};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// The limits a soak is judged by. In a scenario, every key of `[soak]` is optional (the defaults below).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SoakLimits {
    /// The most the server's RSS may grow, MiB per hour: the least-squares slope of its per-minute RSS.
    pub rss_slope_mib_per_h: f64,
    /// The most the server's open fd count may grow from the first judged minute to the last.
    pub fd_growth: u64,
    /// The most the p99 of the last third of the judged minutes may exceed that of the first third, %.
    pub p99_drift_pct: f64,
    /// Minutes at the start left out of the series.
    pub settle_minutes: u32,
}

impl Default for SoakLimits {
    /// 16 MiB/h is 128 MiB over the 8-hour CXF run (a leak of one 4 KiB buffer per ~15,000 calls at
    /// 35,000 calls/s would exceed it); a steady server's fd count moves by its connections' churn only;
    /// a p99 50 % higher at the end leaves room for a shared machine's noise but not for a degradation.
    fn default() -> SoakLimits {
        SoakLimits {
            rss_slope_mib_per_h: 16.0,
            fd_growth: 16,
            p99_drift_pct: 50.0,
            settle_minutes: 1,
        }
    }
}

/// The fewest judged minutes a verdict is given on (a slope and thirds need some length).
pub(crate) const MIN_MINUTES: usize = 3;

/// One minute of a step's timeline.
#[derive(Debug, Clone)]
pub struct Minute {
    /// Its middle, in seconds from t = 0.
    pub mid_s: f64,
    /// The most server RSS and open fds read at the end of its intervals: the most, not the last, because the
    /// step's last interval is read after the load stopped, its connections closed (100 fds fewer).
    pub rss_kb: Option<u64>,
    pub fds: Option<u64>,
    /// Its ok calls' latencies, µs.
    pub latencies: Histogram<u64>,
}

/// One limit judged.
#[derive(Debug, Clone, PartialEq)]
pub struct SoakCheck {
    /// `RSS slope`, `open fds`, `p99 drift`, or `length`.
    pub name: &'static str,
    pub measured: String,
    pub limit: String,
    pub pass: bool,
}

/// A step's soak verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct SoakVerdict {
    pub step: String,
    /// Judged minutes (after the settling ones).
    pub minutes: usize,
    pub rss_slope_mib_per_h: Option<f64>,
    pub fds_first_last: Option<(u64, u64)>,
    pub p99_first_last_us: Option<(u64, u64)>,
    pub checks: Vec<SoakCheck>,
}

impl SoakVerdict {
    pub fn pass(&self) -> bool {
        self.checks.iter().all(|c| c.pass)
    }

    /// Each failed check in words: `RSS slope at 01 (40.2 MiB/h, limit ≤ 16 MiB/h)`.
    pub fn failures(&self) -> Vec<String> {
        self.checks
            .iter()
            .filter(|c| !c.pass)
            .map(|c| {
                format!(
                    "{} at {} ({}, limit {})",
                    c.name, self.step, c.measured, c.limit
                )
            })
            .collect()
    }
}

/// The timeline's intervals gathered into whole minutes (a minute is kept when its intervals cover at least
/// half of it: a step cut short keeps its last half-minute or more).
pub fn minutes(timeline: &Timeline) -> Vec<Minute> {
    let mut out: Vec<(u64, f64, Minute)> = Vec::new();
    for iv in &timeline.intervals {
        let m = (iv.t_s / 60.0).floor() as u64;
        if out.last().is_none_or(|(k, _, _)| *k != m) {
            out.push((
                m,
                0.0,
                Minute {
                    mid_s: m as f64 * 60.0 + 30.0,
                    rss_kb: None,
                    fds: None,
                    latencies: bench_proto::results::new_histogram(),
                },
            ));
        }
        if let Some((_, covered, minute)) = out.last_mut() {
            *covered += iv.dur_s;
            absorb(minute, iv);
        }
    }
    out.into_iter()
        .filter(|(_, covered, _)| *covered >= 30.0)
        .map(|(_, _, m)| m)
        .collect()
}

fn absorb(minute: &mut Minute, iv: &Interval) {
    minute.rss_kb = minute.rss_kb.max(iv.server_rss_kb);
    minute.fds = minute.fds.max(iv.server_fds);
    if let Ok(h) = decode_histogram(&iv.corrected) {
        // Histograms of one run share their bounds; one that does not fit is skipped, not fatal.
        let _ = minute.latencies.add(&h);
    }
}

/// Judges one step's timeline against `limits`.
pub fn judge(step: &str, timeline: &Timeline, limits: &SoakLimits) -> SoakVerdict {
    let all = minutes(timeline);
    let judged: Vec<Minute> = all
        .into_iter()
        .skip(limits.settle_minutes as usize)
        .collect();
    let mut v = SoakVerdict {
        step: step.to_owned(),
        minutes: judged.len(),
        rss_slope_mib_per_h: None,
        fds_first_last: None,
        p99_first_last_us: None,
        checks: Vec::new(),
    };
    if judged.len() < MIN_MINUTES {
        v.checks.push(SoakCheck {
            name: "length",
            measured: format!(
                "{} judged minutes (after {} settling)",
                judged.len(),
                limits.settle_minutes
            ),
            limit: format!("≥ {MIN_MINUTES}"),
            pass: false,
        });
        return v;
    }
    v.rss_slope_mib_per_h = rss_slope(&judged);
    v.checks.push(match v.rss_slope_mib_per_h {
        Some(s) => SoakCheck {
            name: "RSS slope",
            measured: format!("{s:+.2} MiB/h"),
            limit: format!("≤ {} MiB/h", limits.rss_slope_mib_per_h),
            pass: s <= limits.rss_slope_mib_per_h,
        },
        None => not_measured("RSS slope", "the server's RSS"),
    });
    let fds: Vec<u64> = judged.iter().filter_map(|m| m.fds).collect();
    v.fds_first_last = fds.first().copied().zip(fds.last().copied());
    v.checks.push(match v.fds_first_last {
        Some((a, b)) => SoakCheck {
            name: "open fds",
            measured: format!("{a} → {b} ({:+})", b as i64 - a as i64),
            limit: format!("growth ≤ {}", limits.fd_growth),
            pass: b.saturating_sub(a) <= limits.fd_growth,
        },
        None => not_measured("open fds", "the server's open fds"),
    });
    v.p99_first_last_us = p99_thirds(&judged);
    v.checks.push(match v.p99_first_last_us {
        Some((a, b)) => {
            let drift = (b as f64 / a as f64 - 1.0) * 100.0;
            SoakCheck {
                name: "p99 drift",
                measured: format!(
                    "{:.2} → {:.2} ms ({drift:+.1} %)",
                    a as f64 / 1e3,
                    b as f64 / 1e3
                ),
                limit: format!("≤ +{} %", limits.p99_drift_pct),
                pass: drift <= limits.p99_drift_pct,
            }
        }
        None => not_measured("p99 drift", "a p99 in the first and the last third"),
    });
    v
}

fn not_measured(name: &'static str, what: &str) -> SoakCheck {
    SoakCheck {
        name,
        measured: format!("not measured (no {what} in the timeline)"),
        limit: "a measurement".to_owned(),
        pass: false,
    }
}

/// The least-squares slope of the per-minute RSS, MiB per hour (None with fewer than two readings).
fn rss_slope(minutes: &[Minute]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = minutes
        .iter()
        .filter_map(|m| Some((m.mid_s / 3600.0, m.rss_kb? as f64 / 1024.0)))
        .collect();
    if pts.len() < 2 {
        return None;
    }
    let n = pts.len() as f64;
    let (mx, my) = pts
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let sxy: f64 = pts.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = pts.iter().map(|(x, _)| (x - mx) * (x - mx)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// The p99 of the first third of the minutes and of the last third, µs (None when either has no ok call).
fn p99_thirds(minutes: &[Minute]) -> Option<(u64, u64)> {
    let third = (minutes.len() / 3).max(1);
    let p99 = |ms: &[Minute]| {
        let mut h = bench_proto::results::new_histogram();
        for m in ms {
            let _ = h.add(&m.latencies);
        }
        (!h.is_empty()).then(|| h.value_at_quantile(0.99))
    };
    Some((
        p99(&minutes[..third])?,
        p99(&minutes[minutes.len() - third..])?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_proto::results::encode_histogram;

    /// `minutes` of 10 s intervals: the server's RSS and fds and every call's latency given per interval.
    fn timeline(minutes: u32, rss_kb: impl Fn(f64) -> u64, fds: u64, p99_us: u64) -> Timeline {
        let intervals = (0..minutes * 6)
            .map(|k| {
                let t_s = f64::from(k) * 10.0;
                let mut h = bench_proto::results::new_histogram();
                h.record_n(1_000, 990).unwrap();
                h.record_n(p99_us, 10).unwrap();
                Interval {
                    t_s,
                    dur_s: 10.0,
                    ok: 1_000,
                    corrected: encode_histogram(&h),
                    server_rss_kb: Some(rss_kb(t_s + 10.0)),
                    server_fds: Some(fds),
                    ..Interval::default()
                }
            })
            .collect();
        Timeline {
            interval_s: 10.0,
            intervals,
            ..Timeline::default()
        }
    }

    #[test]
    fn a_flat_server_passes() {
        let mut t = timeline(15, |_| 20_480, 110, 2_000);
        // The last interval is read once the load has stopped: its connections closed.
        t.intervals.last_mut().unwrap().server_fds = Some(10);
        let v = judge("01", &t, &SoakLimits::default());
        assert!(v.pass(), "{:?}", v.checks);
        assert_eq!(v.minutes, 14);
        assert!(v.rss_slope_mib_per_h.unwrap().abs() < 1e-9);
        assert_eq!(v.fds_first_last, Some((110, 110)));
        assert_eq!(v.checks.len(), 3);
    }

    #[test]
    fn a_memory_leak_fails_and_is_measured_as_its_slope() {
        // 1 MiB a minute: 60 MiB/h.
        let t = timeline(15, |t_s| 20_480 + (t_s / 60.0 * 1024.0) as u64, 110, 2_000);
        let v = judge("01", &t, &SoakLimits::default());
        assert!(!v.pass());
        let slope = v.rss_slope_mib_per_h.unwrap();
        assert!((slope - 60.0).abs() < 0.5, "{slope}");
        assert_eq!(v.failures().len(), 1);
        assert!(
            v.failures()[0].starts_with("RSS slope at 01"),
            "{:?}",
            v.failures()
        );
    }

    #[test]
    fn an_fd_leak_and_a_p99_drift_fail() {
        let mut t = timeline(12, |_| 20_480, 110, 2_000);
        for (k, iv) in t.intervals.iter_mut().enumerate() {
            iv.server_fds = Some(110 + k as u64);
            if k >= 48 {
                let mut h = bench_proto::results::new_histogram();
                h.record_n(1_000, 900).unwrap();
                h.record_n(9_000, 100).unwrap();
                iv.corrected = encode_histogram(&h);
            }
        }
        let v = judge("01", &t, &SoakLimits::default());
        let failed: Vec<&str> = v
            .checks
            .iter()
            .filter(|c| !c.pass)
            .map(|c| c.name)
            .collect();
        assert_eq!(failed, ["open fds", "p99 drift"]);
        let (a, b) = v.p99_first_last_us.unwrap();
        assert!(a < 2_100 && b > 8_900, "{a} {b}");
    }

    #[test]
    fn too_short_or_unmonitored_is_not_a_pass() {
        let v = judge("01", &timeline(3, |_| 1, 1, 1), &SoakLimits::default());
        assert_eq!(v.checks[0].name, "length");
        assert!(!v.pass());
        let mut t = timeline(10, |_| 1, 1, 1_000);
        for iv in &mut t.intervals {
            iv.server_rss_kb = None;
            iv.server_fds = None;
        }
        let v = judge("01", &t, &SoakLimits::default());
        let failed: Vec<&str> = v
            .checks
            .iter()
            .filter(|c| !c.pass)
            .map(|c| c.name)
            .collect();
        assert_eq!(failed, ["RSS slope", "open fds"]);
    }

    #[test]
    fn a_soak_table_refuses_unknown_keys_and_defaults_the_rest() {
        let l: SoakLimits = toml::from_str("rss_slope_mib_per_h = 4.0").unwrap();
        assert_eq!(l.rss_slope_mib_per_h, 4.0);
        assert_eq!(l.fd_growth, SoakLimits::default().fd_growth);
        assert!(toml::from_str::<SoakLimits>("rss_slope = 4.0").is_err());
    }
}
