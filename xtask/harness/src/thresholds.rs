//! Pass/fail conditions on a run, k6-style: `p99<5ms`, `errors<1%`, `throughput>1000/s`. From a scenario's
//! `[thresholds]` table (`p99 = "<5ms"`) and `run --threshold`; every measured step (the median of its
//! rounds when repeated) must meet every one. Pure: parsing and judging a step's figures.

use std::fmt;

use anyhow::{bail, Context as _, Result};

/// What a threshold is on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Figure {
    /// A corrected latency percentile (50, 90, 99, 99.9, 100 = max), in ms.
    Percentile(f64),
    MeanLatency,
    /// Failed calls as a percentage of all calls.
    ErrorRate,
    /// Failed calls, counted.
    Errors,
    /// Successful calls (or chat messages) per second.
    Throughput,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
}

/// One parsed condition.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// As written (normalised: no spaces), for messages.
    pub text: String,
    pub figure: Figure,
    pub op: Op,
    /// In the figure's unit: ms, %, calls, per second.
    pub limit: f64,
}

/// A step's figures a threshold can judge; `None` where not measured.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// `(percentile, ms)`: 50, 90, 99, 99.9, 100.
    pub percentiles_ms: Vec<(f64, f64)>,
    pub mean_ms: Option<f64>,
    pub ok: u64,
    pub errors: u64,
    pub throughput: Option<f64>,
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Threshold {
    /// Parses `p99<5ms`, `p99.9<=20ms`, `mean<2ms`, `max<1s`, `errors<1%`, `errors==0` (as `errors<=0`),
    /// `throughput>1000/s` (also `rps`, `rate`). Latency without a unit is in ms.
    pub fn parse(text: &str) -> Result<Threshold> {
        let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let at = t
            .find(['<', '>', '='])
            .with_context(|| format!("threshold `{text}`: needs <, <=, > or >= (e.g. p99<5ms)"))?;
        let (name, rest) = t.split_at(at);
        let (op, value) = if let Some(v) = rest.strip_prefix("<=") {
            (Op::Le, v)
        } else if let Some(v) = rest.strip_prefix(">=") {
            (Op::Ge, v)
        } else if let Some(v) = rest.strip_prefix("==") {
            (Op::Le, v)
        } else if let Some(v) = rest.strip_prefix('<') {
            (Op::Lt, v)
        } else if let Some(v) = rest.strip_prefix('>') {
            (Op::Gt, v)
        } else {
            bail!("threshold `{text}`: needs <, <=, > or >=")
        };
        let number = |s: &str| -> Result<f64> {
            let (n, mult) = match s.strip_suffix(['k', 'K']) {
                Some(n) => (n, 1e3),
                None => (s, 1.0),
            };
            n.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .map(|v| v * mult)
                .with_context(|| format!("threshold `{text}`: `{s}` is not a number ≥ 0"))
        };
        let ms = |s: &str| -> Result<f64> {
            for (suffix, to_ms) in [("ms", 1.0), ("us", 1e-3), ("µs", 1e-3), ("s", 1e3)] {
                if let Some(n) = s.strip_suffix(suffix) {
                    return Ok(number(n)? * to_ms);
                }
            }
            number(s)
        };
        let name = name.to_ascii_lowercase();
        let (figure, limit) = match name.as_str() {
            "mean" | "avg" => (Figure::MeanLatency, ms(value)?),
            "max" => (Figure::Percentile(100.0), ms(value)?),
            "errors" | "error_rate" | "errors_rate" => match value.strip_suffix('%') {
                Some(pct) => (Figure::ErrorRate, number(pct)?),
                None => (Figure::Errors, number(value)?),
            },
            "throughput" | "rps" | "rate" | "tps" => {
                let v = value
                    .strip_suffix("/s")
                    .unwrap_or(value)
                    .trim_end_matches("req")
                    .trim_end_matches("msg");
                (Figure::Throughput, number(v)?)
            }
            p if p.starts_with('p') => {
                let pct: f64 = p[1..]
                    .trim_start_matches('(')
                    .trim_end_matches(')')
                    .parse()
                    .ok()
                    .filter(|v| (0.0..=100.0).contains(v))
                    .with_context(|| format!("threshold `{text}`: `{p}` is not a percentile (p50, p99, p99.9)"))?;
                ensure_known(pct, text)?;
                (Figure::Percentile(pct), ms(value)?)
            }
            other => bail!(
                "threshold `{text}`: unknown figure `{other}` (p50, p90, p99, p99.9, mean, max, errors, throughput)"
            ),
        };
        Ok(Threshold {
            text: t,
            figure,
            op,
            limit,
        })
    }

    /// The step's value of the figure, or `None` when the step did not measure it.
    pub fn value(&self, f: &Figures) -> Option<f64> {
        match self.figure {
            Figure::Percentile(p) => f
                .percentiles_ms
                .iter()
                .find(|(q, _)| (q - p).abs() < 1e-9)
                .map(|x| x.1),
            Figure::MeanLatency => f.mean_ms,
            Figure::ErrorRate => {
                let all = f.ok + f.errors;
                (all > 0).then(|| f.errors as f64 * 100.0 / all as f64)
            }
            Figure::Errors => Some(f.errors as f64),
            Figure::Throughput => f.throughput,
        }
    }

    /// Whether `value` meets the condition.
    pub fn holds(&self, value: f64) -> bool {
        match self.op {
            Op::Lt => value < self.limit,
            Op::Le => value <= self.limit,
            Op::Gt => value > self.limit,
            Op::Ge => value >= self.limit,
        }
    }

    /// The unit the value is stated in.
    pub fn unit(&self) -> &'static str {
        match self.figure {
            Figure::Percentile(_) | Figure::MeanLatency => "ms",
            Figure::ErrorRate => "%",
            Figure::Errors => "failed calls",
            Figure::Throughput => "/s",
        }
    }
}

fn ensure_known(pct: f64, text: &str) -> Result<()> {
    if [50.0, 90.0, 99.0, 99.9, 100.0].contains(&pct) {
        Ok(())
    } else {
        bail!("threshold `{text}`: the results give p50, p90, p99, p99.9 and max")
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

    fn figures() -> Figures {
        Figures {
            percentiles_ms: vec![(50.0, 0.4), (99.0, 3.2), (99.9, 9.0), (100.0, 30.0)],
            mean_ms: Some(0.6),
            ok: 990,
            errors: 10,
            throughput: Some(1500.0),
        }
    }

    #[test]
    fn k6_style_conditions_parse_and_judge() {
        let f = figures();
        let judge = |t: &str| {
            let t = Threshold::parse(t).unwrap();
            t.holds(t.value(&f).unwrap())
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
