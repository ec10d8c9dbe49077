//! Change detection on one series (one scenario step, metric, server, machine and configuration, oldest run
//! first), by two methods from the literature:
//!
//! - **Change points: E-divisive means** (Matteson & James, "A Nonparametric Approach for Multiple Change
//!   Point Analysis of Multivariate Data", JASA 109(505), 2014), as MongoDB's CI uses it (Daly et al., "The
//!   Use of Change Point Detection to Identify Software Performance Regressions in a Continuous Integration
//!   System", ICPE 2020): the split that maximises the energy distance between the two sides is a change
//!   point when a permutation test finds it significant; then each side is searched again. Distances to the
//!   power α = 1; 199 permutations from a fixed seed, so the same history always gives the same answer;
//!   p ≤ 0.05; at least [`MIN_SEGMENT`] runs on each side of a change.
//! - **Outliers: a Student's t test over a sliding window**, as Bencher's `t_test` threshold: a run is flagged
//!   when it falls outside the 99 % prediction interval of the [`WINDOW`] runs before it,
//!   `mean ± t(0.995, n−1) · s · √(1 + 1/n)`, given at least [`MIN_WINDOW`] of them.

use crate::stats;

/// Runs on each side of a change point, at least.
pub const MIN_SEGMENT: usize = 3;
/// Permutations of the significance test.
const PERMUTATIONS: usize = 199;
/// The test's significance level.
const ALPHA: f64 = 0.05;
/// The sliding window of the outlier test: the runs before the one judged, at most this many…
pub const WINDOW: usize = 10;
/// …and at least this many.
pub const MIN_WINDOW: usize = 4;

/// Where the level of `xs` moves: each index `i` is the first run of a new level (the change lies between
/// runs `i − 1` and `i`), in increasing order.
pub(crate) fn change_points(xs: &[f64]) -> Vec<usize> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut cuts = vec![0, xs.len()];
    loop {
        // The best split of every segment between the cuts found so far; the strongest one is tested.
        let best = cuts
            .windows(2)
            .filter_map(|w| best_split(&xs[w[0]..w[1]]).map(|(tau, q)| (w[0], w[1], tau, q)))
            .max_by(|a, b| a.3.total_cmp(&b.3));
        let Some((from, to, tau, q)) = best else {
            break;
        };
        if !significant(&xs[from..to], q, &mut rng) {
            break;
        }
        cuts.push(from + tau);
        cuts.sort_unstable();
    }
    cuts[1..cuts.len() - 1].to_vec()
}

/// The split `τ` of `z` and the end `κ` of its right side (sides `z[..τ]`, `z[τ..κ]`) maximising the scaled
/// energy distance `Q = τm/(τ+m) · (2/(τm) Σ|x−y| − Σ|x−x'|/C(τ,2) − Σ|y−y'|/C(m,2))`, `m = κ − τ`, and that
/// maximum; the search over `κ` as in Matteson & James finds a change that a later one undoes.
fn best_split(z: &[f64]) -> Option<(usize, f64)> {
    let n = z.len();
    if n < 2 * MIN_SEGMENT {
        return None;
    }
    let w = within_sums(z);
    let pairs = |k: usize| (k * (k - 1) / 2) as f64;
    let mut best: Option<(usize, f64)> = None;
    for tau in MIN_SEGMENT..=n - MIN_SEGMENT {
        for kappa in tau + MIN_SEGMENT..=n {
            let m = kappa - tau;
            let (left, right) = (w[0][tau], w[tau][kappa]);
            let between = w[0][kappa] - left - right;
            let e = 2.0 * between / (tau * m) as f64 - left / pairs(tau) - right / pairs(m);
            let q = (tau * m) as f64 / kappa as f64 * e;
            if best.is_none_or(|(_, b)| q > b) {
                best = Some((tau, q));
            }
        }
    }
    best
}

/// `w[a][b]`: Σ|zi − zj| over a ≤ i < j < b.
fn within_sums(z: &[f64]) -> Vec<Vec<f64>> {
    let n = z.len();
    let mut w = vec![vec![0.0; n + 1]; n + 1];
    for b in 1..=n {
        // Σ|zi − z(b−1)| for i from a to b − 2, built from a = b − 2 down.
        let mut to_last = 0.0;
        for a in (0..b).rev() {
            if a + 1 < b {
                to_last += (z[a] - z[b - 1]).abs();
            }
            w[a][b] = w[a][b - 1] + to_last;
        }
    }
    w
}

/// Whether `q`, the best split's statistic of `z`, beats that of random orders of `z` often enough:
/// p = (1 + #{permutations at least as strong}) / (1 + permutations) ≤ α.
fn significant(z: &[f64], q: f64, rng: &mut Rng) -> bool {
    let mut shuffled = z.to_vec();
    let mut as_strong = 0;
    for _ in 0..PERMUTATIONS {
        rng.shuffle(&mut shuffled);
        if best_split(&shuffled).is_some_and(|(_, qp)| qp >= q) {
            as_strong += 1;
        }
    }
    (1 + as_strong) as f64 / (1 + PERMUTATIONS) as f64 <= ALPHA
}

/// A run outside the range its window predicts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outlier {
    /// The window's mean and the prediction interval's ends.
    pub mean: f64,
    pub low: f64,
    pub high: f64,
}

/// For each run, whether it falls outside the 99 % prediction interval of the runs before it (None: inside,
/// or too few runs before it to say).
pub fn outliers(xs: &[f64]) -> Vec<Option<Outlier>> {
    (0..xs.len())
        .map(|i| {
            let window = &xs[i.saturating_sub(WINDOW)..i];
            if window.len() < MIN_WINDOW {
                return None;
            }
            let (mean, sd) = stats::mean_sd(window)?;
            let n = window.len() as f64;
            let half = stats::t_quantile(0.995, n - 1.0) * sd * (1.0 + 1.0 / n).sqrt();
            let (low, high) = (mean - half, mean + half);
            (xs[i] < low || xs[i] > high).then_some(Outlier { mean, low, high })
        })
        .collect()
}

/// xorshift64*: a small generator with a fixed seed, so that the permutation test is repeatable.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Fisher–Yates.
    fn shuffle(&mut self, v: &mut [f64]) {
        for i in (1..v.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Noise of ±1 % around `level`, the same every time.
    fn noisy(level: f64, n: usize, seed: u64) -> Vec<f64> {
        let mut rng = Rng(seed);
        (0..n)
            .map(|_| level * (1.0 + ((rng.next() % 2001) as f64 / 1000.0 - 1.0) / 100.0))
            .collect()
    }

    #[test]
    fn finds_a_step_and_only_the_step() {
        let mut xs = noisy(60_000.0, 12, 1);
        xs.extend(noisy(54_000.0, 10, 2));
        assert_eq!(change_points(&xs), [12], "a 10 % step after run 12");
        assert!(
            change_points(&noisy(60_000.0, 30, 3)).is_empty(),
            "noise alone"
        );
        // Two steps, down and back up.
        let mut two = noisy(100.0, 8, 4);
        two.extend(noisy(80.0, 8, 5));
        two.extend(noisy(100.0, 8, 6));
        assert_eq!(change_points(&two), [8, 16]);
        // Too few runs to tell.
        assert!(change_points(&[1.0, 1.0, 2.0, 2.0]).is_empty());
    }

    #[test]
    fn flags_a_run_outside_its_window() {
        let mut xs = noisy(100.0, 8, 7);
        xs.push(90.0);
        xs.push(100.2);
        let flags = outliers(&xs);
        assert!(flags[..8].iter().all(Option::is_none));
        let o = flags[8].expect("a 10 % drop is flagged");
        assert!(
            o.low > 90.0 && o.high < 110.0 && (o.mean - 100.0).abs() < 1.0,
            "{o:?}"
        );
        assert!(flags[9].is_none(), "back to normal");
        assert!(
            outliers(&[1.0, 2.0, 50.0]).iter().all(Option::is_none),
            "too few to judge"
        );
    }
}
