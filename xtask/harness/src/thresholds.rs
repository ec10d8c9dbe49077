//! A run's pass/fail conditions, k6-style: `p99<5ms`, `errors<1%`, `throughput>1000/s`. From a scenario's
//! `[thresholds]` table (`p99 = "<5ms"`) and `run --threshold`; every measured step (the median of its
//! rounds when repeated) must meet every one. The grammar, its parser and its messages are bench-proto's
//! [`Threshold`], the one bench-client's `--threshold` reads too; here only the scenario's table is read, and
//! each figure is named by its [`Metric`] ([`metric`]).

use anyhow::{Context as _, Result};
use bench_proto::thresholds::Figure;
pub use bench_proto::thresholds::Threshold;

use crate::metric::Metric;

/// The metric a condition is on: a latency percentile or the mean (ms), failed calls (counted or %),
/// throughput. None only for a percentile the grammar refuses (it admits those the results give).
pub fn metric(t: &Threshold) -> Option<Metric> {
    Some(match t.figure {
        Figure::MeanLatency => Metric::MeanLatencyMs,
        Figure::ErrorRate => Metric::ErrorsPct,
        Figure::Errors => Metric::Errors,
        Figure::Throughput => Metric::ThroughputPerS,
        Figure::Percentile(pct) => Metric::ALL
            .into_iter()
            .find(|m| m.percentile() == Some(pct))?,
    })
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

    /// Each figure of the grammar reads the value it names off a results document, in the grammar's unit.
    #[test]
    fn each_figure_is_read_by_its_metric() {
        let d = doc();
        let judge = |t: &str| {
            let t = Threshold::parse(t).unwrap();
            t.holds(metric(&t).unwrap().of(&d).unwrap())
        };
        assert!(judge("p99<5ms"));
        assert!(!judge("p99 < 3ms"));
        assert!(judge("p50<=0.4ms"));
        assert!(judge("p99.9<=9000us"));
        assert!(judge("max<1s"));
        assert!(!judge("max<20"));
        assert!(judge("mean<1ms"));
        assert!(!judge("errors<1%"), "10 of 1000 is 1 %");
        assert!(judge("errors<=1%"));
        assert!(!judge("errors==0"));
        assert!(judge("errors<=10"));
        assert!(judge("throughput>1000/s"));
        assert!(!judge("throughput>=1.6k/s"));
        for p in ["p50", "p90", "p99", "p99.9", "max"] {
            let t = Threshold::parse(&format!("{p}<1ms")).unwrap();
            let m = metric(&t).unwrap();
            assert_eq!((m.short(), m.unit().symbol()), (Some(p), t.unit()));
        }
    }

    /// A bad condition in the table or on the command line says where, then the grammar's why.
    #[test]
    fn bad_conditions_say_where_and_why() {
        for (cli, why) in [
            ("p99", "needs <"),
            ("p97<5ms", "p50, p90"),
            ("latency<5ms", "unknown figure"),
            ("p99<fast", "not a number"),
        ] {
            let e = format!(
                "{:#}",
                collect(&toml::Table::new(), &[cli.into()]).unwrap_err()
            );
            assert!(
                e.starts_with("--threshold: ") && e.contains(why),
                "{cli}: {e}"
            );
        }
        let table: toml::Table = toml::from_str("p97 = \"<5ms\"").unwrap();
        let e = format!("{:#}", collect(&table, &[]).unwrap_err());
        assert!(
            e.starts_with("in [thresholds]: ") && e.contains("p50, p90"),
            "{e}"
        );
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
