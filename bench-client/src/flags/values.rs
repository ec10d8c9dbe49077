//! The values of `run`'s flags as wrk and oha write them: a bare number of seconds is a duration (wrk's
//! `-d 3`, `--timeout 2`), counts and rates take SI suffixes (wrk's `-c 1k`, oha's `-n 10k`), and a path
//! is never a URL (oha's old `--json` took no value, so `--json URL` is a slip, not a file name).

use std::path::PathBuf;
use std::time::Duration;

use bench_proto::units::parse_duration;

/// DUR: `30s`, `500ms`, `8h` (humantime's grammar), or a bare number of seconds (`3`, `0.5`) as wrk reads
/// it. wrk's units are case-insensitive, so `2M` is two minutes there (humantime would read months).
pub(super) fn duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if t.starts_with(|c: char| c.is_ascii_digit()) {
        if let Ok(secs) = t.parse::<f64>() {
            return Duration::try_from_secs_f64(secs)
                .map_err(|_| format!("{s:?} is not a number of seconds"));
        }
    }
    let wrk_unit = t.len() > 1
        && t.ends_with(['S', 'M', 'H'])
        && t[..t.len() - 1].bytes().all(|b| b.is_ascii_digit());
    let t = if wrk_unit {
        t.to_ascii_lowercase()
    } else {
        t.to_owned()
    };
    parse_duration(&t).map_err(|e| format!("{e} (or a bare number of seconds, as wrk reads it)"))
}

/// `-d`/`-z`: a duration; oha's `-d` (a request body) is `--body` here.
pub(crate) fn run_length(s: &str) -> Result<Duration, String> {
    duration(s)
        .map_err(|e| format!("{e}; -d is wrk's duration (oha's -z): oha's -d, a body, is --body"))
}

/// `--timeout`/`-T`: a duration; oha's `-T` (a Content-Type) is `-H 'Content-Type: …'` here.
pub(super) fn timeout(s: &str) -> Result<Duration, String> {
    duration(s).map_err(|e| {
        format!("{e}; -T is wrk's timeout: oha's -T, a Content-Type, is -H 'Content-Type: …'")
    })
}

/// A count of at least 1: `100`, or with an SI suffix, `10k`, `1.5k`, `1M`, `1G` (k = 1,000; M and m =
/// 1,000,000, as both wrk and oha read them; G = 10⁹).
pub(super) fn count(s: &str) -> Result<u64, String> {
    let bad = || format!("{s:?} is not a count of at least 1 (examples: 100, 10k, 1.5k, 1M)");
    let (num, scale) = si(s.trim());
    let n = if num.contains(['.', 'e', 'E']) {
        let x = num.parse::<f64>().map_err(|_| bad())? * scale as f64;
        if !(x.is_finite() && x.fract() == 0.0 && x <= u64::MAX as f64) {
            return Err(bad());
        }
        x as u64
    } else {
        num.parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(scale))
            .ok_or_else(bad)?
    };
    if n == 0 {
        return Err(bad());
    }
    Ok(n)
}

/// R/s: requests per second in total, `5000`, `5000/s`, `5k` (wrk2 reads `-R` with SI suffixes).
pub(super) fn rate(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, scale) = si(t.strip_suffix("/s").unwrap_or(t).trim());
    match num.parse::<f64>().map(|r| r * scale as f64) {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(format!(
            "{s:?} is not a positive rate (examples: 5000, 5000/s, 5k)"
        )),
    }
}

/// `--json`'s value: a path, or `-` for standard output; never a URL.
pub(crate) fn output_path(s: &str) -> Result<PathBuf, String> {
    if s.contains("://") {
        return Err(format!(
            "{s:?} is a URL: --json needs where to write the results document, a path or `-` for \
             standard output (oha's --json, which took no value, is `--json -`)"
        ));
    }
    if s.is_empty() {
        return Err("--json needs a path, or `-` for standard output".to_owned());
    }
    Ok(PathBuf::from(s))
}

/// Splits an SI suffix off a number: `10k` → (`10`, 1000).
fn si(t: &str) -> (&str, u64) {
    match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1_000),
        Some((i, 'm' | 'M')) => (&t[..i], 1_000_000),
        Some((i, 'g' | 'G')) => (&t[..i], 1_000_000_000),
        _ => (t, 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_as_wrk_and_humantime_write_them() {
        let secs = |s| duration(s).map(|d| d.as_secs_f64());
        assert_eq!(secs("3"), Ok(3.0));
        assert_eq!(secs("0.5"), Ok(0.5));
        assert_eq!(secs("2s"), Ok(2.0));
        assert_eq!(secs("2m"), Ok(120.0));
        assert_eq!(secs("2M"), Ok(120.0));
        assert_eq!(secs("1H"), Ok(3600.0));
        assert_eq!(secs("1500ms"), Ok(1.5));
        assert_eq!(secs("1m 30s"), Ok(90.0));
        for bad in ["", "inf", "NaN", "soon", "1e400"] {
            assert!(duration(bad).is_err(), "{bad:?}");
        }
        assert!(run_length(r#"{"a":1}"#).unwrap_err().contains("--body"));
        assert!(timeout("application/json")
            .unwrap_err()
            .contains("Content-Type"));
    }

    #[test]
    fn counts_and_rates_with_si_suffixes() {
        assert_eq!(count("100"), Ok(100));
        assert_eq!(count("10k"), Ok(10_000));
        assert_eq!(count("1.5k"), Ok(1_500));
        assert_eq!(count("1m"), Ok(1_000_000));
        assert_eq!(count("1M"), Ok(1_000_000));
        assert_eq!(count("2G"), Ok(2_000_000_000));
        for bad in [
            "0",
            "0k",
            "1.5",
            "0.0001k",
            "x",
            "-1",
            "99999999999999999999k",
        ] {
            assert!(count(bad).is_err(), "{bad:?}");
        }
        assert_eq!(rate("5000"), Ok(5000.0));
        assert_eq!(rate("5000/s"), Ok(5000.0));
        assert_eq!(rate("2.5k"), Ok(2500.0));
        assert!(rate("0").is_err() && rate("fast").is_err());
    }

    #[test]
    fn a_json_path_is_never_a_url() {
        assert_eq!(output_path("-"), Ok(PathBuf::from("-")));
        assert_eq!(output_path("out.json"), Ok(PathBuf::from("out.json")));
        let e = output_path("http://127.0.0.1:8080/health").unwrap_err();
        assert!(e.contains("`--json -`"), "{e}");
        assert!(output_path("").is_err());
    }
}
