//! Pass/fail conditions on a run's figures, k6-style: `p99<5ms`, `errors<1%`, `throughput>1000/s` — the one
//! grammar of xtask's `--threshold` and `[thresholds]` and of bench-client's `--threshold`. Pure: parsing, and
//! judging figures already measured.

use std::fmt;

/// Why a threshold was refused; the text says what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ThresholdError(String);

fn bad(s: String) -> ThresholdError {
    ThresholdError(s)
}

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

impl Op {
    /// Whether `value` meets `value OP limit`.
    pub fn holds(self, value: f64, limit: f64) -> bool {
        match self {
            Op::Lt => value < limit,
            Op::Le => value <= limit,
            Op::Gt => value > limit,
            Op::Ge => value >= limit,
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        }
    }
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
    pub fn parse(text: &str) -> Result<Threshold, ThresholdError> {
        let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let at = t.find(['<', '>', '=']).ok_or_else(|| {
            bad(format!(
                "threshold `{text}`: needs <, <=, > or >= (e.g. p99<5ms)"
            ))
        })?;
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
            return Err(bad(format!("threshold `{text}`: needs <, <=, > or >=")));
        };
        let number = |s: &str| -> Result<f64, ThresholdError> {
            let (n, mult) = match s.strip_suffix(['k', 'K']) {
                Some(n) => (n, 1e3),
                None => (s, 1.0),
            };
            n.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .map(|v| v * mult)
                .ok_or_else(|| bad(format!("threshold `{text}`: `{s}` is not a number ≥ 0")))
        };
        let ms = |s: &str| -> Result<f64, ThresholdError> {
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
                    .ok_or_else(|| bad(format!("threshold `{text}`: `{p}` is not a percentile (p50, p99, p99.9)")))?;
                ensure_known(pct, text)?;
                (Figure::Percentile(pct), ms(value)?)
            }
            other => return Err(bad(format!(
                "threshold `{text}`: unknown figure `{other}` (p50, p90, p99, p99.9, mean, max, errors, throughput)"
            ))),
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
        self.op.holds(value, self.limit)
    }

    /// The condition as one of `share` (0 … 1) of the calls judges it: a throughput or a count of failed
    /// calls in proportion (each client process of a step split across several sees its share of them);
    /// latencies and error rates are the same for a part as for the whole.
    pub fn for_share(&self, share: f64) -> Threshold {
        let (name, unit) = match self.figure {
            Figure::Throughput => ("throughput", "/s"),
            Figure::Errors => ("errors", ""),
            _ => return self.clone(),
        };
        let limit = self.limit * share;
        Threshold {
            text: format!("{name}{}{limit}{unit}", self.op.symbol()),
            limit,
            ..self.clone()
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

fn ensure_known(pct: f64, text: &str) -> Result<(), ThresholdError> {
    if [50.0, 90.0, 99.0, 99.9, 100.0].contains(&pct) {
        Ok(())
    } else {
        Err(bad(format!(
            "threshold `{text}`: the results give p50, p90, p99, p99.9 and max"
        )))
    }
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

    /// A client process of several judges its share of a throughput or an error count, and reads it back.
    #[test]
    fn a_share_judges_its_part_of_counts_and_rates() {
        let t = Threshold::parse("throughput >= 1k/s")
            .unwrap()
            .for_share(0.25);
        assert_eq!((t.text.as_str(), t.limit), ("throughput>=250/s", 250.0));
        assert_eq!(Threshold::parse(&t.text).unwrap(), t);
        let e = Threshold::parse("errors<10").unwrap().for_share(0.5);
        assert_eq!(Threshold::parse(&e.text).unwrap(), e);
        assert_eq!(e.limit, 5.0);
        for same in ["p99<5ms", "errors<1%", "mean<2ms"] {
            let t = Threshold::parse(same).unwrap();
            assert_eq!(t.for_share(0.3), t);
        }
    }

    #[test]
    fn bad_conditions_say_why() {
        for (t, why) in [
            ("p99", "needs <"),
            ("p97<5ms", "p50, p90"),
            ("latency<5ms", "unknown figure"),
            ("p99<fast", "not a number"),
        ] {
            let e = Threshold::parse(t).unwrap_err().to_string();
            assert!(e.contains(why), "{t}: {e}");
        }
    }
}
