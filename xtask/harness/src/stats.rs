//! Repeated measurements: the median and its 95 % interval, and Student's t quantile, from `statrs` (a
//! well-kept statistics crate) rather than hand-kept tables.
//!
//! The interval: with six or more values, the distribution-free interval of the median from order
//! statistics (binomial, no assumption on the shape of the noise); with three to five — too few for that
//! interval to reach 95 % — Student's t interval of the mean. Two values make no interval worth showing
//! (t = 12.7 stretches it from about zero to twice the figure): their range, min–max, is shown instead.
//! [`Estimate::method`] says which was used.

use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, StudentsT};

/// The median of `xs` (the mean of the middle two for an even count); `None` when empty.
pub fn median(xs: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Mean and sample standard deviation (`None` when empty; 0 for one value).
pub fn mean_sd(xs: &[f64]) -> Option<(f64, f64)> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = if xs.len() > 1 {
        xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    Some((mean, var.sqrt()))
}

/// The 97.5 % quantile of Student's t with `df` degrees of freedom (a two-sided 95 % interval).
pub fn t975(df: f64) -> f64 {
    t_quantile(0.975, df)
}

/// The `p` quantile of Student's t with `df` degrees of freedom (the normal's for an infinite `df`).
pub(crate) fn t_quantile(p: f64, df: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, df.max(1.0)) {
        Ok(t) if df.is_finite() => t.inverse_cdf(p),
        _ => statrs::distribution::Normal::standard().inverse_cdf(p),
    }
}

/// How an interval was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// One value: no interval.
    Single,
    /// Two values: no interval; `lo` and `hi` are their minimum and maximum.
    Range,
    /// Order statistics around the median (six or more values).
    OrderStatistics,
    /// Student's t around the mean (three to five values).
    StudentT,
}

/// A repeated figure: its median and 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub n: usize,
    pub median: f64,
    pub lo: f64,
    pub hi: f64,
    pub method: Method,
}

impl Estimate {
    pub fn of(xs: &[f64]) -> Option<Estimate> {
        let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = median(&v)?;
        let (lo, hi, method) = match n {
            1 => (median, median, Method::Single),
            2 => (v[0], v[1], Method::Range),
            3..=5 => {
                let (mean, sd) = mean_sd(&v)?;
                let h = t975((n - 1) as f64) * sd / (n as f64).sqrt();
                // Rates and latencies are never negative: neither is the interval's low end.
                let floor = if v[0] >= 0.0 { 0.0 } else { f64::NEG_INFINITY };
                ((mean - h).max(floor), mean + h, Method::StudentT)
            }
            _ => {
                // The largest k with P(B < k) ≤ 2.5 %, B ~ Binomial(n, ½): [x₍ₖ₎, x₍ₙ₋ₖ₊₁₎] covers ≥ 95 %.
                let b = Binomial::new(0.5, n as u64).ok()?;
                let k = (1..=n / 2)
                    .take_while(|&k| b.cdf(k as u64 - 1) <= 0.025)
                    .last()
                    .unwrap_or(1);
                (v[k - 1], v[n - k], Method::OrderStatistics)
            }
        };
        Some(Estimate {
            n,
            median,
            lo,
            hi,
            method,
        })
    }

    /// `[lo–hi, n=4, t]` for tables (empty for one value; `[min–max, 2 rounds: no interval]` for two),
    /// numbers formatted by `fmt`.
    pub fn interval(&self, fmt: impl Fn(f64) -> String) -> String {
        match self.method {
            Method::Single => String::new(),
            Method::Range => format!(
                " [{}–{}, {} rounds: no interval]",
                fmt(self.lo),
                fmt(self.hi),
                self.n
            ),
            m => format!(
                " [{}–{}, n={}{}]",
                fmt(self.lo),
                fmt(self.hi),
                self.n,
                if m == Method::StudentT { ", t" } else { "" }
            ),
        }
    }
}

/// How the intervals are made, for the footnote of a table that shows them.
pub const METHOD_NOTE: &str = "Repeated steps show the median and its 95 % interval in brackets: \
    from order statistics (distribution-free) with six or more rounds, Student's t interval of the mean \
    (marked `t`) with three to five; with two rounds, no interval: their range, min–max.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(
            median(&[4.0, 1.0, 3.0, 2.0]),
            Some(2.5),
            "even: the middle two's mean, not the upper"
        );
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        assert!((t975(1.0) - 12.706).abs() < 1e-3);
        assert!((t975(4.0) - 2.776).abs() < 1e-3);
        assert!((t975(30.0) - 2.042).abs() < 1e-3);
    }

    #[test]
    fn intervals_by_count() {
        let one = Estimate::of(&[5.0]).unwrap();
        assert_eq!((one.lo, one.hi, one.method), (5.0, 5.0, Method::Single));
        // Issue 27, item 7: two rounds make no interval (t = 12.7 would run from 0 to 58k around 24.9k).
        let two = Estimate::of(&[25_800.0, 24_000.0]).unwrap();
        assert_eq!(
            (two.lo, two.hi, two.median, two.method),
            (24_000.0, 25_800.0, 24_900.0, Method::Range)
        );
        assert_eq!(
            two.interval(|x| format!("{x:.0}")),
            " [24000–25800, 2 rounds: no interval]"
        );
        let four = Estimate::of(&[99.0, 100.0, 101.0, 100.0]).unwrap();
        assert_eq!(four.method, Method::StudentT);
        let h = 3.182 * mean_sd(&[99.0, 100.0, 101.0, 100.0]).unwrap().1 / 2.0;
        assert!((four.hi - 100.0 - h).abs() < 1e-2, "{four:?}");
        // n = 10: P(B ≤ 1) = 1.1 %, P(B ≤ 2) = 5.5 % → k = 2: [x₂, x₉].
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        let e = Estimate::of(&ten).unwrap();
        assert_eq!(
            (e.lo, e.hi, e.median, e.method),
            (2.0, 9.0, 5.5, Method::OrderStatistics)
        );
    }
}
