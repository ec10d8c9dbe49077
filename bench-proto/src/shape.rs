//! The shapes of a load beyond one operation at one level, with their one grammar for bench-client's flags and
//! xtask's scenario files: a weighted mix of operations (`get=80,add=15,echo=5`), ramping stages
//! (`30s:clients=100`, `60s:rate=20000`) and the arrival process of an open loop (`even`, `poisson`). Pure: the
//! random numbers a mix or Poisson arrivals draw are the caller's, so the same numbers give the same load.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::operation::Operation;
use crate::results::StageResults;
pub use crate::results::{Arrivals, Ramped};
use crate::units::{parse_duration, DurationArg};

/// Why a mix, a stage list or an arrival process was refused; the text says what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ShapeError(String);

fn err(s: impl Into<String>) -> ShapeError {
    ShapeError(s.into())
}

/// Operations drawn per call with fixed weights. `pick` maps a uniformly random `u64` to an operation's index,
/// so a seeded generator makes the sequence of operations reproducible.
#[derive(Debug, Clone, PartialEq)]
pub struct Mix {
    /// Each operation with its weight, in the order given.
    pub entries: Vec<(Operation, f64)>,
    /// `r < bounds[i]` picks entry `i` (the last bound is `u64::MAX`, so every `r` picks one).
    bounds: Vec<u64>,
}

impl Mix {
    /// A mix of `entries`: at least one operation, each once, each weight finite and > 0.
    pub fn new(entries: Vec<(Operation, f64)>) -> Result<Mix, ShapeError> {
        if entries.is_empty() {
            return Err(err("a mix needs at least one operation"));
        }
        for (i, (op, w)) in entries.iter().enumerate() {
            if !(w.is_finite() && *w > 0.0) {
                return Err(err(format!("{op}={w}: a weight must be a number > 0")));
            }
            if entries[..i].iter().any(|(o, _)| o == op) {
                return Err(err(format!("{op} is named twice in the mix")));
            }
            if !op.is_soap() {
                return Err(err(format!(
                    "{op} cannot be mixed: a mix is of SOAP operations (echoComplexTypeDoc, echoStringDoc, \
                     echoBase64Doc, add, addAsync, get, echo)"
                )));
            }
        }
        let total: f64 = entries.iter().map(|(_, w)| w).sum();
        let mut acc = 0.0;
        let mut bounds: Vec<u64> = entries
            .iter()
            .map(|(_, w)| {
                acc += w;
                // 2^64 × the cumulative share, saturating: the last is set to u64::MAX below.
                (acc / total * 18_446_744_073_709_551_616.0) as u64
            })
            .collect();
        if let Some(last) = bounds.last_mut() {
            *last = u64::MAX;
        }
        Ok(Mix { entries, bounds })
    }

    /// The index of the operation a uniformly random `r` picks.
    #[inline]
    pub fn pick(&self, r: u64) -> usize {
        self.bounds
            .iter()
            .position(|&b| r < b)
            .unwrap_or(self.bounds.len() - 1)
    }

    /// Each operation's share of the calls, summing to 1.
    pub fn shares(&self) -> Vec<(Operation, f64)> {
        let total: f64 = self.entries.iter().map(|(_, w)| w).sum();
        self.entries
            .iter()
            .map(|&(op, w)| (op, w / total))
            .collect()
    }

    pub fn operations(&self) -> impl Iterator<Item = Operation> + '_ {
        self.entries.iter().map(|(op, _)| *op)
    }
}

impl FromStr for Mix {
    type Err = ShapeError;

    /// `get=80,add=15,echo=5` (spaces allowed; weights need not add up to 100).
    fn from_str(s: &str) -> Result<Mix, ShapeError> {
        let mut entries = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, weight) = part.split_once('=').ok_or_else(|| {
                err(format!(
                    "`{part}` is not OPERATION=WEIGHT (example: get=80,add=15,echo=5)"
                ))
            })?;
            let op: Operation = name
                .trim()
                .parse()
                .map_err(|e| err(format!("`{part}`: {e}")))?;
            let w: f64 = weight
                .trim()
                .parse()
                .map_err(|_| err(format!("`{part}`: `{}` is not a weight", weight.trim())))?;
            entries.push((op, w));
        }
        Mix::new(entries)
    }
}

impl fmt::Display for Mix {
    /// As [`Mix::from_str`] reads it back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (op, w)) in self.entries.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{op}={w}")?;
        }
        Ok(())
    }
}

/// One stage: for `duration`, the level ramps linearly from where the stage before left it (0 before the
/// first) to `target` (k6's stages). A stage of 0 s jumps to its target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stage {
    pub duration: Duration,
    pub ramped: Ramped,
    /// Clients (a whole number) or calls per second.
    pub target: f64,
}

impl fmt::Display for Stage {
    /// `30s:clients=100`, as [`Stages::from_str`] reads it back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}={}",
            DurationArg(self.duration),
            self.ramped.name(),
            self.target
        )
    }
}

/// A validated list of stages, all ramping the same thing, lasting more than 0 s in all.
#[derive(Debug, Clone, PartialEq)]
pub struct Stages {
    stages: Vec<Stage>,
}

/// One stage placed on the run's clock: from `from_s` to `to_s` (seconds from the start of the measured
/// interval) the level goes from `start` to `end`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    pub from_s: f64,
    pub to_s: f64,
    pub start: f64,
    pub end: f64,
}

/// Where a recorded stage lay on the run's clock and its levels, as [`Stages::spans`] gives them.
impl From<&StageResults> for Span {
    fn from(stage: &StageResults) -> Span {
        Span {
            from_s: stage.from_s,
            to_s: stage.to_s,
            start: stage.start,
            end: stage.end,
        }
    }
}

impl Span {
    fn level_at(&self, t: f64) -> f64 {
        if self.to_s <= self.from_s {
            return self.end;
        }
        self.start + (self.end - self.start) * (t - self.from_s) / (self.to_s - self.from_s)
    }

    /// ∫ level over the span from its start to `t` (≤ `to_s`).
    fn area_to(&self, t: f64) -> f64 {
        let dt = t - self.from_s;
        dt * (self.start + self.level_at(t)) / 2.0
    }
}

/// The level at `t` seconds on stages placed on the clock in order ([`Stages::spans`], or a results document's
/// stages): interpolated within the stage around `t`, the last stage's end after them, 0 before them.
pub fn level_on(spans: &[Span], t: f64) -> f64 {
    match spans.iter().find(|s| t < s.to_s) {
        Some(s) if t >= s.from_s => s.level_at(t),
        Some(_) => 0.0,
        None => spans.last().map_or(0.0, |s| s.end),
    }
}

impl Stages {
    pub fn new(stages: Vec<Stage>) -> Result<Stages, ShapeError> {
        let Some(&first) = stages.first() else {
            return Err(err("no stages"));
        };
        for s in &stages {
            if s.ramped != first.ramped {
                return Err(err(format!(
                    "a step's stages ramp either clients (a closed loop) or rate (an open loop), not both: \
                     `{first}` and `{s}`; make them two steps"
                )));
            }
            let whole = s.target.fract() == 0.0;
            match s.ramped {
                Ramped::Clients if !(whole && s.target >= 0.0 && s.target <= 1e7) => {
                    return Err(err(format!("`{s}`: clients must be a count from 0 up")))
                }
                Ramped::Rate if !(s.target.is_finite() && s.target >= 0.0) => {
                    return Err(err(format!("`{s}`: rate must be a number ≥ 0 (calls/s)")))
                }
                _ => {}
            }
        }
        let out = Stages { stages };
        if out.duration().is_zero() {
            return Err(err("the stages last 0 s in all"));
        }
        if out.peak() <= 0.0 {
            return Err(err(format!(
                "the stages never go above 0 {}",
                first.ramped.name()
            )));
        }
        Ok(out)
    }

    pub fn list(&self) -> &[Stage] {
        &self.stages
    }

    pub fn ramped(&self) -> Ramped {
        self.stages[0].ramped
    }

    pub fn duration(&self) -> Duration {
        self.stages.iter().map(|s| s.duration).sum()
    }

    /// The highest level any stage reaches (the connections a clients ramp needs).
    pub fn peak(&self) -> f64 {
        self.stages.iter().map(|s| s.target).fold(0.0, f64::max)
    }

    /// The same ramp compressed or stretched to last `total` (each stage's share of the time kept, to the
    /// millisecond; the last stage takes what rounding leaves): a scenario's `duration` over its stages, as
    /// `--quick` shortens them.
    pub fn scaled_to(&self, total: Duration) -> Result<Stages, ShapeError> {
        let (was, want) = (self.duration().as_secs_f64(), total.as_millis() as u64);
        let mut left = want;
        let n = self.stages.len();
        let stages =
            self.stages
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let ms = match i + 1 == n {
                        true => left,
                        false => ((s.duration.as_secs_f64() / was * want as f64).round() as u64)
                            .min(left),
                    };
                    left -= ms;
                    Stage {
                        duration: Duration::from_millis(ms),
                        ..*s
                    }
                })
                .collect();
        Stages::new(stages)
    }

    /// Part `i` of `k` of the level, for one of `k` client processes that share a step: a rate in
    /// proportion to `weight` (of 1 in all); clients as whole counts, the remainder of each stage's target
    /// to the first processes, so the parts add up to the whole at every stage's end. A part that never
    /// rises above 0 is refused.
    pub fn part(&self, i: usize, k: usize, weight: f64) -> Result<Stages, ShapeError> {
        let stages = self
            .stages
            .iter()
            .map(|s| {
                let target = match s.ramped {
                    Ramped::Rate => s.target * weight,
                    Ramped::Clients => {
                        let (t, k) = (s.target as u64, k as u64);
                        (t / k + u64::from((i as u64) < t % k)) as f64
                    }
                };
                Stage { target, ..*s }
            })
            .collect();
        Stages::new(stages)
    }

    /// Every stage on the clock, in order.
    pub fn spans(&self) -> Vec<Span> {
        let (mut t, mut level) = (0.0, 0.0);
        self.stages
            .iter()
            .map(|s| {
                let span = Span {
                    from_s: t,
                    to_s: t + s.duration.as_secs_f64(),
                    start: level,
                    end: s.target,
                };
                (t, level) = (span.to_s, s.target);
                span
            })
            .collect()
    }

    /// The level at `t` seconds (the last stage's target after the end; 0 before the start).
    pub fn level_at(&self, t: f64) -> f64 {
        level_on(&self.spans(), t)
    }

    /// ∫ level from 0 to `t` (for a rate: the calls offered by `t`).
    pub fn area_to(&self, t: f64) -> f64 {
        let mut sum = 0.0;
        for s in self.spans() {
            if t <= s.from_s {
                break;
            }
            sum += s.area_to(t.min(s.to_s));
        }
        sum
    }

    /// The first time by which the area reaches `work` (for a rate: when the `work`-th call is due), `None`
    /// when the stages end before. Exact on each linear piece (the quadratic's root).
    pub fn time_of(&self, work: f64) -> Option<f64> {
        let mut before = 0.0;
        for s in self.spans() {
            let area = s.area_to(s.to_s);
            if before + area >= work && area > 0.0 {
                return Some(s.from_s + span_time(&s, work - before));
            }
            before += area;
        }
        None
    }

    /// A clients ramp: when client `c` (from 0) is active — while the level is at least `c + 1` — as
    /// `(from_s, to_s)` windows in order.
    pub fn windows(&self, c: u64) -> Vec<(f64, f64)> {
        let need = c as f64 + 1.0;
        let mut out: Vec<(f64, f64)> = Vec::new();
        for s in self.spans() {
            let Some((a, b)) = active_part(&s, need) else {
                continue;
            };
            match out.last_mut() {
                Some(last) if (last.1 - a).abs() < 1e-12 => last.1 = b,
                _ => out.push((a, b)),
            }
        }
        out
    }
}

/// Within `s`, the time after its start at which the area reaches `w` (0 ≤ w ≤ the span's area).
fn span_time(s: &Span, w: f64) -> f64 {
    let d = s.to_s - s.from_s;
    let slope = (s.end - s.start) / d;
    if slope.abs() < 1e-12 {
        return w / s.start;
    }
    // start·x + slope·x²/2 = w
    let disc = (s.start * s.start + 2.0 * slope * w).max(0.0);
    ((disc.sqrt() - s.start) / slope).clamp(0.0, d)
}

/// The part of span `s` where the level is at least `need`, if any (and of more than 0 s).
fn active_part(s: &Span, need: f64) -> Option<(f64, f64)> {
    if s.to_s <= s.from_s {
        return None;
    }
    let (lo, hi) = (s.start.min(s.end), s.start.max(s.end));
    if hi < need {
        return None;
    }
    if lo >= need {
        return Some((s.from_s, s.to_s));
    }
    let cross = s.from_s + (need - s.start) / (s.end - s.start) * (s.to_s - s.from_s);
    let part = if s.end > s.start {
        (cross, s.to_s)
    } else {
        (s.from_s, cross)
    };
    (part.1 > part.0).then_some(part)
}

impl FromStr for Stages {
    type Err = ShapeError;

    /// `30s:clients=100,60s:clients=100,10s:clients=0` or `10s:rate=1000,…`.
    fn from_str(s: &str) -> Result<Stages, ShapeError> {
        let stages = s
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(parse_stage)
            .collect::<Result<Vec<_>, _>>()?;
        Stages::new(stages)
    }
}

impl fmt::Display for Stages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.stages.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{s}")?;
        }
        Ok(())
    }
}

/// One `FOR:clients=N` or `FOR:rate=R`.
fn parse_stage(text: &str) -> Result<Stage, ShapeError> {
    let bad = || {
        err(format!("stage `{text}` is not FOR:clients=N or FOR:rate=R (examples: 30s:clients=100, 1m:rate=2000)"))
    };
    let (dur, level) = text.split_once(':').ok_or_else(bad)?;
    let (what, value) = level.split_once('=').ok_or_else(bad)?;
    let duration = parse_duration(dur).map_err(|e| err(format!("stage `{text}`: {e}")))?;
    let ramped = match what.trim() {
        "clients" | "vus" => Ramped::Clients,
        "rate" => Ramped::Rate,
        _ => return Err(bad()),
    };
    let v = value.trim();
    let target = v
        .strip_suffix("/s")
        .unwrap_or(v)
        .parse::<f64>()
        .map_err(|_| err(format!("stage `{text}`: `{v}` is not a number")))?;
    Ok(Stage {
        duration,
        ramped,
        target,
    })
}

impl FromStr for Arrivals {
    type Err = ShapeError;

    fn from_str(s: &str) -> Result<Arrivals, ShapeError> {
        match s.trim() {
            "even" | "uniform" | "constant" => Ok(Arrivals::Even),
            "poisson" | "exponential" => Ok(Arrivals::Poisson),
            other => Err(err(format!(
                "arrivals `{other}`: `even` (the default) or `poisson`"
            ))),
        }
    }
}

/// The seed of a mix's draws and of Poisson arrivals when none is given (bench-client's `--seed`).
pub const DEFAULT_SEED: u64 = 1;

/// The seed of client process `i` of several that share a step: the step's own for the first (one process
/// draws what a run of one process draws), a SplitMix64 step away for each other, so their mixes and
/// Poisson arrivals are independent (the same seed everywhere would send the same gaps at once).
pub fn part_seed(seed: u64, i: usize) -> u64 {
    if i == 0 {
        return seed;
    }
    let mut z = seed.wrapping_add((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An exponential gap of mean 1 from a uniformly random `u` in [0, 1): −ln(1 − u) (inverse transform).
#[inline]
pub fn exponential(u: f64) -> f64 {
    -(1.0 - u).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_parse_and_pick_by_weight() {
        let m: Mix = "get=80, add=15,echo=5".parse().unwrap();
        assert_eq!(m.to_string(), "get=80,add=15,echo=5");
        assert_eq!(m.pick(0), 0);
        assert_eq!(m.pick(u64::MAX / 100 * 79), 0);
        assert_eq!(m.pick(u64::MAX / 100 * 81), 1);
        assert_eq!(m.pick(u64::MAX / 100 * 96), 2);
        assert_eq!(m.pick(u64::MAX), 2);
        let shares = m.shares();
        assert!((shares[0].1 - 0.8).abs() < 1e-12);
        for bad in [
            "",
            "get",
            "get=0",
            "get=-1",
            "get=x",
            "get=1,get=2",
            "nope=1",
            "http-get=1",
        ] {
            assert!(bad.parse::<Mix>().is_err(), "{bad}");
        }
        let one: Mix = "echo=1".parse().unwrap();
        assert_eq!(one.pick(u64::MAX), 0);
    }

    #[test]
    fn stages_ramp_linearly_from_zero() {
        let s: Stages = "10s:clients=100,20s:clients=100,10s:clients=0"
            .parse()
            .unwrap();
        assert_eq!(s.duration(), Duration::from_secs(40));
        assert_eq!(s.ramped(), Ramped::Clients);
        assert_eq!(s.level_at(5.0), 50.0);
        assert_eq!(s.level_at(15.0), 100.0);
        assert_eq!(s.level_at(35.0), 50.0);
        assert_eq!(s.peak(), 100.0);
        assert_eq!(
            s.to_string(),
            "10s:clients=100,20s:clients=100,10s:clients=0"
        );
        // Client 0 from 0.1 s to 39.9 s; client 99 only at the plateau.
        let w0 = s.windows(0);
        assert_eq!(w0.len(), 1);
        assert!(
            (w0[0].0 - 0.1).abs() < 1e-9 && (w0[0].1 - 39.9).abs() < 1e-9,
            "{w0:?}"
        );
        let w99 = s.windows(99);
        assert!(
            (w99[0].0 - 10.0).abs() < 1e-9 && (w99[0].1 - 30.0).abs() < 1e-9,
            "{w99:?}"
        );
        assert!(s.windows(100).is_empty());
    }

    #[test]
    fn a_rate_ramp_places_each_call_where_the_area_reaches_it() {
        let s: Stages = "10s:rate=100,10s:rate=100".parse().unwrap();
        // 500 calls during the ramp, 1,000 on the plateau.
        assert!((s.area_to(10.0) - 500.0).abs() < 1e-9);
        assert!((s.area_to(20.0) - 1500.0).abs() < 1e-9);
        for w in [0.5, 1.0, 125.0, 499.0, 500.0, 750.0, 1499.0] {
            let t = s.time_of(w).unwrap();
            assert!((s.area_to(t) - w).abs() < 1e-6, "{w} at {t}");
        }
        assert_eq!(s.time_of(1500.5), None);
        // A jump (0 s) then a hold; a ramp down to 0 ends the calls.
        let j: Stages = "0s:rate=50,2s:rate=50,2s:rate=0".parse().unwrap();
        assert!((j.time_of(1.0).unwrap() - 0.02).abs() < 1e-9);
        assert!((j.area_to(4.0) - 150.0).abs() < 1e-9);
    }

    #[test]
    fn stages_scale_in_time_and_split_in_level() {
        let s: Stages = "10s:clients=10,20s:clients=10,10s:clients=0"
            .parse()
            .unwrap();
        let q = s.scaled_to(Duration::from_secs(4)).unwrap();
        assert_eq!(q.to_string(), "1s:clients=10,2s:clients=10,1s:clients=0");
        let odd = s.scaled_to(Duration::from_millis(1001)).unwrap();
        assert_eq!(odd.duration(), Duration::from_millis(1001));
        // Clients: whole counts adding up to each target; a rate: in proportion.
        let parts: Vec<Stages> = (0..3).map(|i| s.part(i, 3, 1.0 / 3.0).unwrap()).collect();
        let at = |st: &Stages, k: usize| st.list()[k].target;
        assert_eq!(
            parts.iter().map(|p| at(p, 0)).collect::<Vec<_>>(),
            [4.0, 3.0, 3.0]
        );
        assert_eq!(parts.iter().map(|p| at(p, 2)).sum::<f64>(), 0.0);
        let r: Stages = "10s:rate=900".parse().unwrap();
        assert_eq!(at(&r.part(1, 3, 1.0 / 3.0).unwrap(), 0), 300.0);
        let few: Stages = "10s:clients=2".parse().unwrap();
        assert!(
            few.part(2, 3, 1.0 / 3.0).is_err(),
            "a third process has no client"
        );
    }

    #[test]
    fn stage_lists_are_refused_with_the_reason() {
        let e = |s: &str| s.parse::<Stages>().unwrap_err().to_string();
        assert!(e("10s:clients=10,10s:rate=5").contains("not both"));
        assert!(e("10s:clients=1.5").contains("count"));
        assert!(e("0s:rate=10").contains("0 s"));
        assert!(e("10s:rate=0").contains("never go above"));
        assert!(e("10s-clients=1").contains("FOR:clients=N"));
        assert!(e("10s:users=1").contains("FOR:clients=N"));
        assert!(e("soon:clients=1").contains("duration"));
        assert!(e("").contains("no stages"));
    }

    #[test]
    fn arrivals_parse() {
        assert_eq!("poisson".parse::<Arrivals>(), Ok(Arrivals::Poisson));
        assert_eq!("even".parse::<Arrivals>(), Ok(Arrivals::Even));
        assert!("bursty".parse::<Arrivals>().is_err());
        assert_eq!(exponential(0.0), 0.0);
        assert!((exponential(1.0 - (-1.0f64).exp()) - 1.0).abs() < 1e-12);
    }
}
