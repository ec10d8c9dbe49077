//! Planning with a scale-out run, as seed 004 asks ("predictable enough to be suitable for planning"): the
//! Universal Scalability Law fitted to the throughput measured at 1, 2, 3 … instances,
//! `X(N) = X(1)·N / (1 + σ(N−1) + κN(N−1))` (σ: contention, κ: coherency), and the instances a target
//! throughput would need. Pure: points in, a fit and sentences out; every figure it projects says so.

use bench_proto::numbers::num;
use wsbench_harness::metric::Metric;
use wsbench_harness::results;
use wsbench_harness::scenario::Published;

/// A fitted model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Usl {
    /// Throughput of one instance (measured), per s.
    pub one: f64,
    pub sigma: f64,
    pub kappa: f64,
    /// Whether κ was fitted (three or more instance counts) or taken as 0 (two: only σ can be told).
    pub kappa_fitted: bool,
}

impl Usl {
    /// Fits `(instances, throughput/s)` points; needs the one-instance point and at least one other.
    /// Least squares on the linear form `N·X(1)/X(N) − 1 = σ(N−1) + κN(N−1)`, with σ, κ ≥ 0.
    pub(crate) fn fit(points: &[(u32, f64)]) -> Option<Usl> {
        let one = points.iter().find(|p| p.0 == 1)?.1;
        let rows: Vec<(f64, f64, f64)> = points
            .iter()
            .filter(|&&(n, x)| n > 1 && x > 0.0 && x.is_finite())
            .map(|&(n, x)| {
                let n = f64::from(n);
                (n - 1.0, n * (n - 1.0), n * one / x - 1.0)
            })
            .collect();
        if rows.is_empty() || one <= 0.0 || !one.is_finite() {
            return None;
        }
        let distinct = {
            let mut ns: Vec<u64> = rows.iter().map(|r| r.0 as u64).collect();
            ns.sort_unstable();
            ns.dedup();
            ns.len()
        };
        let only_sigma = |rows: &[(f64, f64, f64)]| {
            let (num, den) = rows
                .iter()
                .fold((0.0, 0.0), |(n, d), r| (n + r.0 * r.2, d + r.0 * r.0));
            (num / den).max(0.0)
        };
        let only_kappa = |rows: &[(f64, f64, f64)]| {
            let (num, den) = rows
                .iter()
                .fold((0.0, 0.0), |(n, d), r| (n + r.1 * r.2, d + r.1 * r.1));
            (num / den).max(0.0)
        };
        if distinct < 2 {
            return Some(Usl {
                one,
                sigma: only_sigma(&rows),
                kappa: 0.0,
                kappa_fitted: false,
            });
        }
        let (mut aa, mut ab, mut bb, mut ay, mut by) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for &(a, b, y) in &rows {
            aa += a * a;
            ab += a * b;
            bb += b * b;
            ay += a * y;
            by += b * y;
        }
        let det = aa * bb - ab * ab;
        let (mut sigma, mut kappa) = ((ay * bb - by * ab) / det, (by * aa - ay * ab) / det);
        if sigma < 0.0 {
            (sigma, kappa) = (0.0, only_kappa(&rows));
        }
        if kappa < 0.0 {
            (sigma, kappa) = (only_sigma(&rows), 0.0);
        }
        Some(Usl {
            one,
            sigma,
            kappa,
            kappa_fitted: true,
        })
    }

    /// The modelled throughput of `n` instances.
    pub(crate) fn at(&self, n: f64) -> f64 {
        self.one * n / (1.0 + self.sigma * (n - 1.0) + self.kappa * n * (n - 1.0))
    }

    /// Where the modelled throughput peaks (instances), when it does.
    pub(crate) fn peak(&self) -> Option<f64> {
        (self.kappa > 0.0).then(|| ((1.0 - self.sigma) / self.kappa).sqrt().max(1.0))
    }

    /// The fewest instances (up to 1,000) whose modelled throughput reaches `target`; None beyond the peak.
    pub(crate) fn instances_for(&self, target: f64) -> Option<u32> {
        (1..=1000u32).find(|&n| self.at(f64::from(n)) >= target)
    }
}

/// The summary's section: for each step measured at several instance counts, the measured points, the
/// fit, and the instances the scenario's published throughput for most instances would need (OSS/J: the
/// paper's 4,590 tps, itself a projection) — all marked as model.
pub(crate) fn section(run: &results::Run) -> Vec<String> {
    let target = run
        .manifest
        .published
        .iter()
        .filter(|p| p.metric == Metric::TotalPerS && p.instances.is_some_and(|n| n > 1))
        // The first listed of those for the most instances (OSS/J: 4,590 before the JDK-beta 5,100).
        .fold(None, |best: Option<&Published>, p| match best {
            Some(b) if b.instances >= p.instances => Some(b),
            _ => Some(p),
        })
        .map(|p| p.value);
    let mut groups: Vec<(String, Vec<(u32, f64)>)> = Vec::new();
    for step in &run.steps {
        let (Some(n), Ok(doc)) = (step.meta.servers, &step.doc) else {
            continue;
        };
        let key = format!(
            "{} at {} clients",
            step.meta.name.as_deref().unwrap_or("step"),
            step.meta.clients.map_or("?".into(), |c| c.to_string())
        );
        let point = (n, doc.throughput.total_per_s);
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(point),
            None => groups.push((key, vec![point])),
        }
    }
    let mut out = Vec::new();
    for (key, points) in groups {
        let Some(fit) = Usl::fit(&points) else {
            continue;
        };
        if out.is_empty() {
            out.push(
                "\n## Plan with it: the Universal Scalability Law (a model, not a measurement)\n"
                    .into(),
            );
        }
        out.extend(lines(&key, &points, &fit, target));
    }
    out
}

fn lines(key: &str, points: &[(u32, f64)], fit: &Usl, target: Option<f64>) -> Vec<String> {
    let mut out = model_lines(key, points, fit);
    if let Some(target) = target {
        out.push(target_line(fit, target));
    }
    out
}

fn model_lines(key: &str, points: &[(u32, f64)], fit: &Usl) -> Vec<String> {
    let measured: Vec<String> = points
        .iter()
        .map(|&(n, x)| {
            format!(
                "{n}: {} /s (model {} /s)",
                num(x.round()),
                num(fit.at(f64::from(n)).round())
            )
        })
        .collect();
    let kappa = if fit.kappa_fitted {
        format!("κ = {:.4}", fit.kappa)
    } else {
        "κ not told apart (two instance counts: κ taken as 0)".into()
    };
    let mut out = vec![
        format!("- {key}: measured {}.", measured.join(", ")),
        format!(
            "- Fitted: X(N) = {} /s × N / (1 + σ(N−1) + κN(N−1)), σ = {:.4}, {kappa}.",
            num(fit.one.round()),
            fit.sigma
        ),
    ];
    if let Some(peak) = fit.peak() {
        out.push(format!(
            "- Projection: throughput peaks near N = {peak:.1} instances at {} /s.",
            num(fit.at(peak).round())
        ));
    }
    out
}

fn target_line(fit: &Usl, target: f64) -> String {
    match fit.instances_for(target) {
        Some(n) => format!(
            "- Projection: {} /s (the published figure for the most instances) would need {n} instance{} here (model: {} /s).",
            num(target),
            if n == 1 { "" } else { "s" },
            num(fit.at(f64::from(n)).round())
        ),
        None => format!("- Projection: {} /s is beyond what the fitted model reaches with any number of instances.", num(target)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(one: f64, sigma: f64, kappa: f64) -> Usl {
        Usl {
            one,
            sigma,
            kappa,
            kappa_fitted: true,
        }
    }

    #[test]
    fn a_model_is_recovered_from_its_own_points() {
        let truth = model(1800.0, 0.08, 0.01);
        let points: Vec<(u32, f64)> = (1..=4).map(|n| (n, truth.at(f64::from(n)))).collect();
        let fit = Usl::fit(&points).unwrap();
        assert!(
            (fit.sigma - 0.08).abs() < 1e-9 && (fit.kappa - 0.01).abs() < 1e-9,
            "{fit:?}"
        );
        assert!(fit.kappa_fitted);
    }

    #[test]
    fn the_papers_point_085_at_three_is_sigma_0088_with_two_or_three_points() {
        // 1800 × 3 × 0.85 = 4590: efficiency 0.85 at N = 3 with κ = 0 is σ = (3/2.55 − 1)/2.
        let fit = Usl::fit(&[(1, 1800.0), (3, 4590.0)]).unwrap();
        assert!(
            (fit.sigma - (3.0 / 2.55 - 1.0) / 2.0).abs() < 1e-9,
            "{fit:?}"
        );
        assert!(!fit.kappa_fitted);
        assert_eq!(fit.instances_for(4590.0), Some(3));
        assert_eq!(fit.peak(), None);
    }

    #[test]
    fn superlinear_or_noisy_points_keep_the_coefficients_non_negative() {
        let fit = Usl::fit(&[(1, 1000.0), (2, 2100.0), (3, 3300.0)]).unwrap();
        assert!(fit.sigma >= 0.0 && fit.kappa >= 0.0, "{fit:?}");
        let fit = Usl::fit(&[(1, 1000.0), (2, 1500.0), (3, 1400.0)]).unwrap();
        assert!(fit.kappa > 0.0, "{fit:?}");
        let peak = fit.peak().unwrap();
        assert!((1.0..3.0).contains(&peak), "{peak}");
        assert_eq!(fit.instances_for(10_000.0), None);
        assert!(
            Usl::fit(&[(2, 1.0), (3, 2.0)]).is_none(),
            "no one-instance point"
        );
        assert!(Usl::fit(&[(1, 1.0)]).is_none(), "nothing to fit");
    }

    #[test]
    fn the_lines_call_projections_projections() {
        let fit = Usl::fit(&[(1, 1000.0), (2, 1800.0), (3, 2400.0)]).unwrap();
        let text = lines(
            "step at 48 clients",
            &[(1, 1000.0), (2, 1800.0), (3, 2400.0)],
            &fit,
            Some(4590.0),
        )
        .join("\n");
        assert!(text.contains("measured 1: 1,000 /s"), "{text}");
        assert!(text.contains("Projection: throughput peaks"), "{text}");
        assert!(
            text.contains("beyond what the fitted model reaches"),
            "{text}"
        );
    }
}
