//! Knee finding for sweeps: where total throughput stops rising while latency keeps rising.
//!
//! The CXF seed's client-count table left open "a possible convergence point"; this answers it
//! for a sweep: the smallest x after which throughput never rises by more than `min_gain` (a
//! fraction of the throughput at x) while latency at the end of the sweep is clearly higher.
//! Comparing against the best *later* point (not the next one) keeps a single noisy dip
//! from being mistaken for a plateau, and a later rise from being missed.

use bench_proto::numbers::fmt_x;

/// The knee of a sweep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Knee {
    /// Index of the knee in the points sorted by x.
    pub index: usize,
    pub x: f64,
    pub throughput: f64,
    pub latency: f64,
    /// The largest relative throughput rise at any later point (0.03 = 3 %; negative if all later points are lower).
    pub later_gain: f64,
    /// Latency at the last point of the sweep divided by latency at the knee.
    pub latency_growth: f64,
    /// x of the last point of the sweep.
    pub last_x: f64,
}

/// Finds the knee of `(x, throughput, latency)` points (any order; non-finite points ignored).
///
/// `min_gain` is the fraction by which throughput must still rise somewhere beyond a point for
/// that point not to be the knee (0.05 = 5 %); latency must grow by more than the same fraction
/// from the knee to the last point and never fall below the knee's by more than it.
/// `None` when throughput keeps rising, when latency does not rise, or with fewer than two points.
pub(crate) fn find_knee(points: &[(f64, f64, f64)], min_gain: f64) -> Option<Knee> {
    let mut pts: Vec<(f64, f64, f64)> = points
        .iter()
        .copied()
        .filter(|(x, t, l)| x.is_finite() && t.is_finite() && l.is_finite())
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (&(last_x, _, last_latency), _) = pts.split_last()?;
    for (k, &(x, t, l)) in pts.iter().enumerate() {
        let later = &pts[k + 1..];
        if later.is_empty() || t <= 0.0 || l <= 0.0 {
            continue;
        }
        let later_max = later.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
        let later_gain = later_max / t - 1.0;
        if later_gain > min_gain {
            continue;
        }
        let latency_rises = last_latency > l * (1.0 + min_gain)
            && later.iter().all(|p| p.2 >= l * (1.0 - min_gain));
        if latency_rises {
            return Some(Knee {
                index: k,
                x,
                throughput: t,
                latency: l,
                later_gain,
                latency_growth: last_latency / l,
                last_x,
            });
        }
    }
    None
}

impl Knee {
    /// One sentence for a summary: `axis` names x ("clients"), `latency_unit` the latency's unit.
    pub fn sentence(&self, axis: &str, min_gain: f64, latency_unit: &str) -> String {
        let gain = if self.later_gain > 0.0 {
            format!("rises by at most {:.1} %", self.later_gain * 100.0)
        } else {
            "does not rise".to_string()
        };
        format!(
            "Knee at {x} {axis}: from there to {last} {axis} total throughput {gain} \
             (threshold {thr:.0} %) while mean latency grows {growth:.1}× \
             ({l:.3} → {ll:.3} {latency_unit}); throughput at the knee {t:.0}/s.",
            x = fmt_x(self.x),
            last = fmt_x(self.last_x),
            thr = min_gain * 100.0,
            growth = self.latency_growth,
            l = self.latency,
            ll = self.latency * self.latency_growth,
            t = self.throughput,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep(clients: &[f64], tput: &[f64]) -> Vec<(f64, f64, f64)> {
        // Closed loop: latency = clients / throughput (Little's law).
        clients
            .iter()
            .zip(tput)
            .map(|(&c, &t)| (c, t, c / t))
            .collect()
    }

    const CLIENTS: [f64; 8] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0];

    #[test]
    fn saturating_sweep_has_knee_where_throughput_flattens() {
        let pts = sweep(
            &CLIENTS,
            &[
                1000.0, 1900.0, 3500.0, 6000.0, 6100.0, 6150.0, 6120.0, 6080.0,
            ],
        );
        let knee = find_knee(&pts, 0.05).expect("knee");
        assert_eq!(knee.x, 8.0);
        assert_eq!(knee.index, 3);
        assert!((knee.later_gain - 0.025).abs() < 1e-9, "{knee:?}");
        assert!(knee.latency_growth > 10.0);
        assert_eq!(knee.last_x, 128.0);
    }

    #[test]
    fn noisy_sweep_ignores_dips_before_the_plateau() {
        // A dip at 4 clients and jitter on the plateau must not move the knee.
        let pts = sweep(
            &CLIENTS,
            &[
                1000.0, 1900.0, 1850.0, 5200.0, 6000.0, 5800.0, 6200.0, 5900.0,
            ],
        );
        let knee = find_knee(&pts, 0.05).expect("knee");
        assert_eq!(knee.x, 16.0);
        // Order of the input does not matter.
        let mut rev = pts.clone();
        rev.reverse();
        assert_eq!(find_knee(&rev, 0.05), Some(knee));
    }

    #[test]
    fn noisy_sweep_with_late_rise_is_not_a_knee_early() {
        let pts = sweep(
            &CLIENTS,
            &[
                1000.0, 1900.0, 3600.0, 3700.0, 3500.0, 5000.0, 6000.0, 6050.0,
            ],
        );
        assert_eq!(find_knee(&pts, 0.05).map(|k| k.x), Some(64.0));
    }

    #[test]
    fn flat_throughput_with_rising_latency_knees_at_the_start() {
        let pts = sweep(
            &CLIENTS,
            &[
                6000.0, 6050.0, 5990.0, 6010.0, 6000.0, 6030.0, 5980.0, 6000.0,
            ],
        );
        let knee = find_knee(&pts, 0.05).expect("knee");
        assert_eq!(knee.x, 1.0);
        assert!((knee.latency_growth - 128.0).abs() < 1.0);
    }

    #[test]
    fn flat_throughput_and_flat_latency_is_no_knee() {
        // Open loop below saturation: the offered rate is met and latency does not grow.
        let pts: Vec<_> = CLIENTS.iter().map(|&x| (x, 5000.0, 0.8)).collect();
        assert_eq!(find_knee(&pts, 0.05), None);
    }

    #[test]
    fn linear_scaling_is_no_knee() {
        let pts = sweep(&CLIENTS, &CLIENTS.map(|c| c * 1000.0));
        assert_eq!(find_knee(&pts, 0.05), None);
    }

    #[test]
    fn degenerate_inputs() {
        assert_eq!(find_knee(&[], 0.05), None);
        assert_eq!(find_knee(&[(1.0, 100.0, 1.0)], 0.05), None);
        assert_eq!(
            find_knee(&[(1.0, f64::NAN, 1.0), (2.0, 100.0, 2.0)], 0.05),
            None
        );
        let two = find_knee(&[(1.0, 100.0, 1.0), (2.0, 101.0, 2.0)], 0.05).expect("knee");
        assert_eq!(two.x, 1.0);
    }

    #[test]
    fn sentence_states_the_numbers() {
        let pts = sweep(
            &CLIENTS,
            &[
                1000.0, 1900.0, 3500.0, 6000.0, 6100.0, 6150.0, 6120.0, 6080.0,
            ],
        );
        let s = find_knee(&pts, 0.05)
            .unwrap()
            .sentence("clients", 0.05, "ms");
        assert!(
            s.starts_with("Knee at 8 clients: from there to 128 clients"),
            "{s}"
        );
        assert!(s.contains("at most 2.5 %"), "{s}");
        assert!(s.contains("threshold 5 %"), "{s}");
    }
}
