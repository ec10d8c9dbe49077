//! Pass/fail conditions on a run, k6-style: `p99<5ms`, `errors<1%`, `throughput>1000/s`. From a scenario's
//! `[thresholds]` table (`p99 = "<5ms"`) and `run --threshold`; every measured step (the median of its
//! rounds when repeated) must meet every one. Pure: parsing and judging a step's figures.

use std::fmt;

use anyhow::{bail, Context as _, Result};
pub use bench_proto::thresholds::Op;
use bench_proto::thresholds::{self as grammar, Figure};

use crate::metric::Metric;

/// One parsed condition.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// As written (normalised: no spaces), for messages.
    pub text: String,
    /// What it is on: a latency percentile or the mean (ms), failed calls (counted or %), throughput.
    pub figure: Metric,
    pub op: Op,
    /// In the figure's unit: ms, %, calls, per second.
    pub limit: f64,
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Threshold {
    /// Parses `p99<5ms`, `p99.9<=20ms`, `mean<2ms`, `max<1s`, `errors<1%`, `errors==0` (as `errors<=0`),
    /// `throughput>1000/s` (also `rps`, `rate`). Latency without a unit is in ms. The grammar is
    /// bench-proto's, the one bench-client's `--threshold` reads too; here each figure is named by its
    /// [`Metric`].
    pub fn parse(text: &str) -> Result<Threshold> {
        let t = grammar::Threshold::parse(text)?;
        let figure = match t.figure {
            Figure::MeanLatency => Metric::MeanLatencyMs,
            Figure::ErrorRate => Metric::ErrorsPct,
            Figure::Errors => Metric::Errors,
            Figure::Throughput => Metric::ThroughputPerS,
            Figure::Percentile(pct) => percentile(pct, text)?,
        };
        Ok(Threshold {
            text: t.text,
            figure,
            op: t.op,
            limit: t.limit,
        })
    }

    /// Whether `value` meets the condition.
    pub fn holds(&self, value: f64) -> bool {
        self.op.holds(value, self.limit)
    }

    /// The unit the value is stated in.
    pub fn unit(&self) -> &'static str {
        match self.figure {
            Metric::Errors => "failed calls",
            m => m.unit().symbol(),
        }
    }
}

/// The latency percentile metric `pct` is (the results give p50, p90, p99, p99.9 and max).
fn percentile(pct: f64, text: &str) -> Result<Metric> {
    match Metric::ALL
        .into_iter()
        .find(|m| m.percentile() == Some(pct))
    {
        Some(m) => Ok(m),
        None => bail!("threshold `{text}`: the results give p50, p90, p99, p99.9 and max"),
    }
}

/// The scenario's `[thresholds]` table (`p99 = "<5ms"`) as conditions, then the command line's.
pub fn collect(table: &toml::Table, cli: &[String]) -> Result<Vec<Threshold>> {
    let mut out = vec![];
    for (k, v) in table {
        let cond = v.as_str().with_context(|| {
            format!("[thresholds] {k}: write the condition as a string, e.g. {k} = \"<5ms\"")
        })?;
        out.push(Threshold::parse(&format!("{k}{cond}")).context("in [thresholds]")?);
    }
    for c in cli {
        out.push(Threshold::parse(c).context("--threshold")?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step's results: p50 0.4 ms, p99 3.2 ms, p99.9 9 ms, max 30 ms, mean 0.6 ms, 990 ok and 10 failed calls,
    /// 1,500 calls/s.
    fn doc() -> bench_proto::results::ResultsDoc {
        let text = std::fs::read_to_string(
            crate::paths::project_root()
                .join("xtask/tests/fixtures/summary/steps/01-clients-16.json"),
        )
        .unwrap();
        let mut d: bench_proto::results::ResultsDoc = serde_json::from_str(&text).unwrap();
        let l = &mut d.latency_us.corrected;
        (l.count, l.p50, l.p99, l.p99_9, l.max, l.mean) = (1000, 400, 3200, 9000, 30_000, 600.0);
        (d.counts.ok, d.counts.errors_total) = (990, 10);
        d.throughput.total_per_s = 1500.0;
        d
    }

    #[test]
    fn k6_style_conditions_parse_and_judge() {
        let d = doc();
        let judge = |t: &str| {
            let t = Threshold::parse(t).unwrap();
            t.holds(t.figure.of(&d).unwrap())
        };
        assert!(judge("p99<5ms"));
        assert!(!judge("p99 < 3ms"));
        assert!(judge("p99.9<=9000us"));
        assert!(judge("max<1s"));
        assert!(!judge("max<20"));
        assert!(judge("mean<1ms"));
        assert!(!judge("errors<1%"), "10 of 1000 is 1 %");
        assert!(judge("errors<=1%"));
        assert!(!judge("errors==0"));
        assert!(judge("throughput>1000/s"));
        assert!(!judge("throughput>=1.6k/s"));
        assert_eq!(Threshold::parse("p99<5ms").unwrap().limit, 5.0);
        assert_eq!(Threshold::parse("p99<2s").unwrap().limit, 2000.0);
    }

    #[test]
    fn bad_conditions_say_why() {
        for (t, why) in [
            ("p99", "needs <"),
            ("p97<5ms", "p50, p90"),
            ("latency<5ms", "unknown figure"),
            ("p99<fast", "not a number"),
        ] {
            let e = format!("{:#}", Threshold::parse(t).unwrap_err());
            assert!(e.contains(why), "{t}: {e}");
        }
    }

    #[test]
    fn scenario_table_then_command_line() {
        let table: toml::Table = toml::from_str("p99 = \"<5ms\"\nerrors = \"<1%\"").unwrap();
        let all = collect(&table, &["throughput>10/s".into()]).unwrap();
        let texts: Vec<&str> = all.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(texts, ["errors<1%", "p99<5ms", "throughput>10/s"]);
        let bad: toml::Table = toml::from_str("p99 = 5").unwrap();
        assert!(collect(&bad, &[]).is_err());
    }
}
