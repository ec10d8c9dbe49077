//! The one grammar of sizes, rates and durations, shared by bench-client's flags and xtask's scenario files, so
//! a value accepted in one place is accepted, with the same meaning, in the other.

use std::fmt;
use std::time::Duration;

/// Why a size, rate or duration was refused; the text says what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UnitError(String);

/// SIZE: `512`, `512B`, `1K`, `100K`, `1M` — bytes, K and M binary (1024, 1024²), as message sizes usually are.
/// Zero is refused: no size in wsbench can be empty.
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1024),
        Some((i, 'm' | 'M')) => (&t[..i], 1024 * 1024),
        Some((i, 'b' | 'B')) => (&t[..i], 1),
        _ => (t, 1),
    };
    let n: u64 = num.trim().parse().map_err(|_| {
        UnitError(format!(
            "{s:?} is not a size (examples: 512, 512B, 1K, 100K, 1M)"
        ))
    })?;
    if n == 0 {
        return Err(UnitError(format!("{s:?}: a size must be at least 1 byte")));
    }
    n.checked_mul(mult)
        .ok_or_else(|| UnitError(format!("{s:?} is too large")))
}

/// RATE: requests per second in total, `5000` or `5000/s`.
pub fn parse_rate(s: &str) -> Result<f64, UnitError> {
    let t = s.trim();
    let t = t.strip_suffix("/s").unwrap_or(t);
    match t.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(UnitError(format!(
            "{s:?} is not a positive rate (examples: 5000, 5000/s)"
        ))),
    }
}

/// DUR: `30s`, `500ms`, `8h`, `28800s`, `1m 30s` (humantime's grammar).
pub fn parse_duration(s: &str) -> Result<Duration, UnitError> {
    humantime::parse_duration(s.trim()).map_err(|e| {
        UnitError(format!(
            "{s:?} is not a duration ({e}); examples: 30s, 500ms, 8h"
        ))
    })
}

/// A duration written so that [`parse_duration`] reads it back exactly: `30s`, `1500ms`, `250us`; read from a
/// string of [`parse_duration`]'s grammar (scenario files).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DurationArg(pub Duration);

impl<'de> serde::Deserialize<'de> for DurationArg {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        parse_duration(&s)
            .map(DurationArg)
            .map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for DurationArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        if d.subsec_nanos() == 0 {
            write!(f, "{}s", d.as_secs())
        } else if d.as_nanos() % 1_000_000 == 0 {
            write!(f, "{}ms", d.as_millis())
        } else if d.as_nanos() % 1_000 == 0 {
            write!(f, "{}us", d.as_micros())
        } else {
            write!(f, "{}ns", d.as_nanos())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1K"), Ok(1024));
        assert_eq!(parse_size("100k"), Ok(102_400));
        assert_eq!(parse_size("1M"), Ok(1_048_576));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("512B"), Ok(512));
        assert!(parse_size("0").is_err());
        assert!(parse_size("0K").is_err());
        assert!(parse_size("1G").is_err());
        assert!(parse_size("lots").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("99999999999999999M").is_err());
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("5000/s"), Ok(5000.0));
        assert_eq!(parse_rate("2.5"), Ok(2.5));
        assert!(parse_rate("0").is_err());
        assert!(parse_rate("-1/s").is_err());
        assert!(parse_rate("inf").is_err());
        assert!(parse_rate("fast").is_err());
    }

    #[test]
    fn durations_round_trip() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("8h"), Ok(Duration::from_secs(28_800)));
        assert!(parse_duration("soon").is_err());
        for d in [
            Duration::from_secs(0),
            Duration::from_secs(28_800),
            Duration::from_millis(1_500),
            Duration::from_micros(250),
            Duration::from_nanos(7),
        ] {
            let text = DurationArg(d).to_string();
            assert_eq!(parse_duration(&text), Ok(d), "{text}");
        }
        assert_eq!(
            DurationArg(Duration::from_millis(1500)).to_string(),
            "1500ms"
        );
    }
}
