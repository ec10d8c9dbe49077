//! The 95 % interval of a difference of means (Welch), for comparing repeated runs; Student's t from
//! the harness's statistics (statrs).

use wsbench_harness::stats::{mean_sd, t975};

/// The change from `a` to `b` in their means, with the half-width of its 95 % interval when both
/// sides have at least two values (Welch's t, Welch–Satterthwaite degrees of freedom).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Change {
    pub a: f64,
    pub b: f64,
    pub diff: f64,
    pub half_width: Option<f64>,
}

impl Change {
    /// Relative change, `None` when `a` is zero.
    pub(super) fn relative(&self) -> Option<f64> {
        (self.a != 0.0).then(|| self.diff / self.a)
    }

    /// Whether the 95 % interval excludes zero (`None`: no interval).
    pub(super) fn significant(&self) -> Option<bool> {
        self.half_width.map(|h| self.diff.abs() > h)
    }
}

pub(super) fn change(a: &[f64], b: &[f64]) -> Option<Change> {
    let (ma, sa) = mean_sd(a)?;
    let (mb, sb) = mean_sd(b)?;
    let half_width = (a.len() >= 2 && b.len() >= 2).then(|| {
        let (va, vb) = (sa * sa / a.len() as f64, sb * sb / b.len() as f64);
        let se = (va + vb).sqrt();
        if se == 0.0 {
            return 0.0;
        }
        let df =
            (va + vb).powi(2) / (va * va / (a.len() - 1) as f64 + vb * vb / (b.len() - 1) as f64);
        t975(df) * se
    });
    Some(Change {
        a: ma,
        b: mb,
        diff: mb - ma,
        half_width,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_interval() {
        // Equal spreads, n = 3 each: se = sqrt(2/3)·s, df = 4, t = 2.776.
        let c = change(&[99.0, 100.0, 101.0], &[109.0, 110.0, 111.0]).unwrap();
        assert_eq!(c.diff, 10.0);
        let hw = c.half_width.unwrap();
        assert!((hw - 2.776 * (2.0f64 / 3.0).sqrt()).abs() < 1e-3, "{hw}");
        assert_eq!(c.significant(), Some(true));
        assert_eq!(c.relative(), Some(0.1));
        let noise = change(&[99.0, 100.0, 101.0], &[98.5, 100.5, 102.0]).unwrap();
        assert_eq!(noise.significant(), Some(false));
    }

    #[test]
    fn single_runs_have_no_interval() {
        let c = change(&[100.0], &[103.0]).unwrap();
        assert_eq!(c.half_width, None);
        assert_eq!(c.significant(), None);
        assert_eq!(change(&[], &[1.0]), None);
    }
}
