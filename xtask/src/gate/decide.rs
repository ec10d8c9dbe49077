//! The gate's verdicts: pure decision logic over criterion change estimates and instruction counts, and the table
//! that reports them. No I/O here, so every rule is unit-tested on fixture data.

use std::fmt::Write as _;

/// A relative change `head / base − 1` with its confidence interval, as criterion's `change/estimates.json` has it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Change {
    pub(crate) point: f64,
    pub(crate) lower: f64,
    pub(crate) upper: f64,
}

/// Where one wall-clock change sits relative to the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// The whole interval lies above +threshold: a slowdown, if a re-measurement agrees.
    Slower,
    /// The whole interval lies below −threshold.
    Faster,
    /// The point estimate is beyond the threshold, or the interval excludes zero, but the interval is not wholly
    /// beyond the threshold: worth a line, never a failure.
    Noise,
    /// Nothing to say.
    Flat,
}

/// Places a change against `threshold` (a fraction: 0.05 for 5 %).
pub(crate) fn classify(change: Change, threshold: f64) -> Class {
    if change.lower > threshold {
        Class::Slower
    } else if change.upper < -threshold {
        Class::Faster
    } else if change.point.abs() > threshold || change.lower > 0.0 || change.upper < 0.0 {
        Class::Noise
    } else {
        Class::Flat
    }
}

/// What the gate concludes about one benchmark or hot path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Beyond the threshold (wall clock: in the first measurement and in the re-measurement). Fails the gate.
    Regressed,
    Improved,
    /// Beyond the threshold once, but the re-measurement did not confirm it.
    Unconfirmed,
    /// A change inside the noise.
    Advisory,
    Unchanged,
    /// Only the head has it (a new benchmark): nothing to compare.
    OnlyHead,
    /// Only the base has it (removed or renamed in the head): nothing to compare.
    OnlyBase,
    /// The head counts more instructions per iteration than the hot path's ceiling allows, whatever the base.
    /// Fails the gate.
    OverCeiling,
    /// A hostile case costs more per byte than its limit times a valid echo of its size. Fails the gate.
    OverRatio,
}

impl Verdict {
    pub(crate) fn fails(self) -> bool {
        matches!(
            self,
            Verdict::Regressed | Verdict::OverCeiling | Verdict::OverRatio
        )
    }

    fn label(self) -> &'static str {
        match self {
            Verdict::Regressed => "REGRESSED",
            Verdict::Improved => "improved",
            Verdict::Unconfirmed => "advisory: not confirmed on re-measurement",
            Verdict::Advisory => "advisory: inside the noise",
            Verdict::Unchanged => "ok",
            Verdict::OnlyHead => "new in head (no base to compare)",
            Verdict::OnlyBase => "missing in head (only in base)",
            Verdict::OverCeiling => "OVER ITS CEILING",
            Verdict::OverRatio => "OVER 3× A VALID ECHO",
        }
    }
}

/// The wall-clock rule: a slowdown fails only when the first measurement's interval lies wholly beyond the
/// threshold AND the re-measurement's does too. `first`/`confirm` are `None` when not measured.
pub(crate) fn wall_verdict(
    in_base: bool,
    in_head: bool,
    first: Option<Change>,
    confirm: Option<Change>,
    threshold: f64,
) -> Verdict {
    match (in_base, in_head) {
        (false, _) => return Verdict::OnlyHead,
        (true, false) => return Verdict::OnlyBase,
        (true, true) => {}
    }
    let Some(first) = first else {
        return Verdict::Unchanged;
    };
    match classify(first, threshold) {
        Class::Slower => match confirm.map(|c| classify(c, threshold)) {
            Some(Class::Slower) => Verdict::Regressed,
            _ => Verdict::Unconfirmed,
        },
        Class::Faster => Verdict::Improved,
        Class::Noise => Verdict::Advisory,
        Class::Flat => Verdict::Unchanged,
    }
}

/// Whether a first measurement calls for a re-measurement.
pub(crate) fn needs_confirmation(first: Change, threshold: f64) -> bool {
    classify(first, threshold) == Class::Slower
}

/// The instruction-count rule: counts are deterministic, so one measurement decides; a rise of more than
/// `threshold` (a fraction) fails.
pub(crate) fn icount_verdict(base: Option<u64>, head: Option<u64>, threshold: f64) -> Verdict {
    match (base, head) {
        (None, _) => Verdict::OnlyHead,
        (Some(_), None) => Verdict::OnlyBase,
        (Some(base), Some(head)) => {
            let change = icount_change(base, head);
            if change > threshold {
                Verdict::Regressed
            } else if change < -threshold {
                Verdict::Improved
            } else {
                Verdict::Unchanged
            }
        }
    }
}

/// `head / base − 1`; a hot path that went from zero to something counts as infinitely slower.
pub(crate) fn icount_change(base: u64, head: u64) -> f64 {
    if base == 0 {
        return if head == 0 { 0.0 } else { f64::INFINITY };
    }
    head as f64 / base as f64 - 1.0
}

/// Which measurement a row comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tier {
    Wall,
    Instructions,
    /// A hostile case's instructions per byte over a valid echo's (the head only).
    Hostile,
}

/// One line of the gate's table.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub(crate) tier: Tier,
    pub(crate) id: String,
    pub(crate) base: Option<f64>,
    pub(crate) head: Option<f64>,
    /// Wall clock: the change that decided (the re-measurement when there was one). Instructions: CI is the point.
    pub(crate) change: Option<Change>,
    pub(crate) verdict: Verdict,
}

impl Row {
    /// A wall-clock row; `base_ns`/`head_ns` are the deciding measurement's estimates (`None` when a side lacks
    /// the benchmark or it was not measured).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn wall(
        id: &str,
        in_base: bool,
        in_head: bool,
        base_ns: Option<f64>,
        head_ns: Option<f64>,
        first: Option<Change>,
        confirm: Option<Change>,
        threshold: f64,
    ) -> Row {
        let verdict = wall_verdict(in_base, in_head, first, confirm, threshold);
        Row {
            tier: Tier::Wall,
            id: id.to_owned(),
            base: base_ns,
            head: head_ns,
            change: confirm.or(first),
            verdict,
        }
    }

    pub(crate) fn instructions(
        id: &str,
        base: Option<u64>,
        head: Option<u64>,
        iters: u64,
        threshold: f64,
    ) -> Row {
        let per_iter = |n: u64| n as f64 / iters.max(1) as f64;
        let change = match (base, head) {
            (Some(b), Some(h)) => {
                let c = icount_change(b, h);
                Some(Change {
                    point: c,
                    lower: c,
                    upper: c,
                })
            }
            _ => None,
        };
        Row {
            tier: Tier::Instructions,
            id: id.to_owned(),
            base: base.map(per_iter),
            head: head.map(per_iter),
            change,
            verdict: icount_verdict(base, head, threshold),
        }
    }

    /// A hostile case: its instructions per byte over its valid echo's, failed above `limit`.
    pub(crate) fn hostile(id: &str, ratio: f64, limit: f64) -> Row {
        Row {
            tier: Tier::Hostile,
            id: id.to_owned(),
            base: None,
            head: Some(ratio),
            change: None,
            verdict: if ratio > limit {
                Verdict::OverRatio
            } else {
                Verdict::Unchanged
            },
        }
    }

    /// This instruction row, failed if its head counts more than `ceiling` instructions per iteration.
    pub(crate) fn within_ceiling(mut self, ceiling: Option<f64>) -> Row {
        if let (Some(ceiling), Some(head)) = (ceiling, self.head) {
            if head > ceiling {
                self.verdict = Verdict::OverCeiling;
            }
        }
        self
    }
}

/// Renders rows as a fixed-width table: benchmark, base, head, change %, confidence interval, verdict.
pub(crate) fn render_table(rows: &[Row]) -> String {
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|r| {
            let value = |v: Option<f64>| match (r.tier, v) {
                (_, None) => "-".to_owned(),
                (Tier::Wall, Some(ns)) => format_ns(ns),
                (Tier::Instructions, Some(n)) => format!("{n:.0} Ir"),
                (Tier::Hostile, Some(ratio)) => format!("{ratio:.2}×"),
            };
            let (change, ci) = match (r.tier, r.change) {
                (_, None) => ("-".to_owned(), "-".to_owned()),
                (Tier::Wall, Some(c)) => {
                    (pct(c.point), format!("[{} {}]", pct(c.lower), pct(c.upper)))
                }
                (Tier::Instructions | Tier::Hostile, Some(c)) => (pct(c.point), "exact".to_owned()),
            };
            let tier = match r.tier {
                Tier::Wall => "wall",
                Tier::Instructions => "instr",
                Tier::Hostile => "hostile",
            };
            [
                format!("{tier} {}", r.id),
                value(r.base),
                value(r.head),
                change,
                ci,
                r.verdict.label().to_owned(),
            ]
        })
        .collect();
    let header = [
        "benchmark",
        "base",
        "head",
        "change",
        "95% CI of change",
        "verdict",
    ];
    let mut widths = header.map(str::len);
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.len());
        }
    }
    let mut out = String::new();
    let mut line = |cols: &[String; 6]| {
        let _ = writeln!(
            out,
            "{:<w0$}  {:>w1$}  {:>w2$}  {:>w3$}  {:<w4$}  {}",
            cols[0],
            cols[1],
            cols[2],
            cols[3],
            cols[4],
            cols[5],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3],
            w4 = widths[4],
        );
    };
    line(&header.map(str::to_owned));
    for row in &cells {
        line(row);
    }
    out
}

fn pct(fraction: f64) -> String {
    format!("{:+.2}%", fraction * 100.0)
}

fn format_ns(ns: f64) -> String {
    match ns {
        ns if ns >= 1e9 => format!("{:.3} s", ns / 1e9),
        ns if ns >= 1e6 => format!("{:.3} ms", ns / 1e6),
        ns if ns >= 1e3 => format!("{:.3} µs", ns / 1e3),
        ns => format!("{ns:.1} ns"),
    }
}

/// Parses a threshold: `5%`, `5` (per cent) or `0.5%`, into a fraction.
pub(crate) fn parse_percent(s: &str) -> Result<f64, String> {
    let number = s.trim().trim_end_matches('%').trim();
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{s}` is not a percentage (e.g. `5%`)"))?;
    if !(0.0..1000.0).contains(&value) {
        return Err(format!("`{s}`: a threshold must be between 0% and 1000%"));
    }
    Ok(value / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: f64 = 0.05;

    fn c(point: f64, lower: f64, upper: f64) -> Change {
        Change {
            point,
            lower,
            upper,
        }
    }

    #[test]
    fn classify_places_intervals_against_the_threshold() {
        assert_eq!(classify(c(0.10, 0.08, 0.12), T), Class::Slower);
        assert_eq!(classify(c(-0.10, -0.12, -0.08), T), Class::Faster);
        // Point beyond, interval straddling the threshold: noise.
        assert_eq!(classify(c(0.06, 0.04, 0.08), T), Class::Noise);
        // Significant but small: noise worth a line.
        assert_eq!(classify(c(0.02, 0.01, 0.03), T), Class::Noise);
        assert_eq!(classify(c(0.001, -0.01, 0.012), T), Class::Flat);
        // Exactly on the threshold is not beyond it.
        assert_eq!(classify(c(0.06, 0.05, 0.07), T), Class::Noise);
    }

    #[test]
    fn a_slowdown_fails_only_when_confirmed() {
        let slow = c(0.10, 0.08, 0.12);
        assert_eq!(
            wall_verdict(true, true, Some(slow), Some(slow), T),
            Verdict::Regressed
        );
        assert_eq!(
            wall_verdict(true, true, Some(slow), Some(c(0.03, 0.0, 0.06)), T),
            Verdict::Unconfirmed
        );
        assert_eq!(
            wall_verdict(true, true, Some(slow), None, T),
            Verdict::Unconfirmed
        );
        assert!(!Verdict::Unconfirmed.fails());
        assert!(Verdict::Regressed.fails());
    }

    #[test]
    fn missing_sides_never_fail() {
        assert_eq!(wall_verdict(false, true, None, None, T), Verdict::OnlyHead);
        assert_eq!(wall_verdict(true, false, None, None, T), Verdict::OnlyBase);
        assert_eq!(icount_verdict(None, Some(5), 0.02), Verdict::OnlyHead);
        assert_eq!(icount_verdict(Some(5), None, 0.02), Verdict::OnlyBase);
    }

    #[test]
    fn instruction_counts_fail_beyond_their_threshold() {
        assert_eq!(
            icount_verdict(Some(1_000_000), Some(1_030_000), 0.02),
            Verdict::Regressed
        );
        assert_eq!(
            icount_verdict(Some(1_000_000), Some(1_019_999), 0.02),
            Verdict::Unchanged
        );
        assert_eq!(
            icount_verdict(Some(1_000_000), Some(900_000), 0.02),
            Verdict::Improved
        );
        assert_eq!(icount_verdict(Some(0), Some(1), 0.02), Verdict::Regressed);
        assert_eq!(icount_verdict(Some(0), Some(0), 0.02), Verdict::Unchanged);
    }

    /// A head over its ceiling fails even when the base was as slow (a cost given back in small steps); under
    /// it, or without one, the relative rule decides.
    #[test]
    fn a_head_over_its_ceiling_fails_whatever_the_base() {
        let row = |base, head, ceiling| {
            Row::instructions("cxf/echo", Some(base), Some(head), 10, 0.02)
                .within_ceiling(ceiling)
                .verdict
        };
        assert_eq!(row(1_010, 1_010, Some(100.0)), Verdict::OverCeiling);
        assert!(Verdict::OverCeiling.fails());
        assert_eq!(row(1_000, 1_000, Some(100.0)), Verdict::Unchanged);
        assert_eq!(row(1_000, 1_100, Some(200.0)), Verdict::Regressed);
        assert_eq!(row(1_000, 5_000, None), Verdict::Regressed);
        let only_base = Row::instructions("cxf/echo", Some(5_000), None, 10, 0.02);
        assert_eq!(
            only_base.within_ceiling(Some(1.0)).verdict,
            Verdict::OnlyBase
        );
    }

    #[test]
    fn the_table_names_the_benchmark_and_the_change() {
        let slow = c(0.10, 0.08, 0.12);
        let rows = [
            Row::wall(
                "cxf/parse_request/1",
                true,
                true,
                Some(10_000.0),
                Some(11_000.0),
                Some(slow),
                Some(slow),
                T,
            ),
            Row::instructions("cxf/parse_request/1", Some(1000), Some(1100), 10, 0.02),
        ];
        let table = render_table(&rows);
        assert!(table.contains("wall cxf/parse_request/1"), "{table}");
        assert!(
            table.contains("10.000 µs") && table.contains("11.000 µs"),
            "{table}"
        );
        assert!(
            table.contains("+10.00%") && table.contains("[+8.00% +12.00%]"),
            "{table}"
        );
        assert!(
            table.contains("instr cxf/parse_request/1") && table.contains("100 Ir"),
            "{table}"
        );
        assert_eq!(table.matches("REGRESSED").count(), 2, "{table}");
        let hostile = render_table(&[Row::hostile("hostile_64KB/tag_flood", 5.2241, 3.0)]);
        assert!(
            hostile.contains("hostile hostile_64KB/tag_flood")
                && hostile.contains("5.22×")
                && hostile.contains("OVER 3× A VALID ECHO"),
            "{hostile}"
        );
    }

    #[test]
    fn percentages_parse_with_or_without_the_sign() {
        assert_eq!(parse_percent("5%"), Ok(0.05));
        assert_eq!(parse_percent("2"), Ok(0.02));
        assert_eq!(parse_percent("0.5%"), Ok(0.005));
        assert!(parse_percent("five").is_err());
        assert!(parse_percent("-3%").is_err());
    }
}
