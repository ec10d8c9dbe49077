//! Parsing and printing of the units on the command line and in the summary: sizes, rates, durations,
//! thousands separators, and Java's `Double.toString` (for the CXF-format block).

use std::time::Duration;

/// SIZE: `1K`, `100K`, `1M`, `512` (bytes). K and M are binary (1024, 1024²), as message sizes usually are.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1024),
        Some((i, 'm' | 'M')) => (&t[..i], 1024 * 1024),
        Some((i, 'b' | 'B')) => (&t[..i], 1),
        _ => (t, 1),
    };
    let n: u64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a size (examples: 1K, 100K, 1M, 4096)"))?;
    n.checked_mul(mult)
        .ok_or_else(|| format!("{s:?} is too large"))
}

/// RATE: requests per second in total, `5000` or `5000/s`.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let t = t.strip_suffix("/s").unwrap_or(t);
    match t.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(format!(
            "{s:?} is not a positive rate (examples: 5000, 5000/s)"
        )),
    }
}

/// DUR: `30s`, `500ms`, `8h`, `28800s` (humantime).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    humantime::parse_duration(s.trim())
        .map_err(|e| format!("{s:?} is not a duration ({e}); examples: 30s, 500ms, 8h"))
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A float with thousands separators and `decimals` places: `41152.24` → `41,152.2`.
pub fn thousands_f(x: f64, decimals: usize) -> String {
    let s = format!("{:.*}", decimals, x.abs());
    let (int, frac) = s
        .split_once('.')
        .map_or((s.as_str(), None), |(a, b)| (a, Some(b)));
    let int = int
        .parse::<u64>()
        .map(thousands)
        .unwrap_or_else(|_| int.to_owned());
    let sign = if x < 0.0 { "-" } else { "" };
    match frac {
        Some(f) => format!("{sign}{int}.{f}"),
        None => format!("{sign}{int}"),
    }
}

/// Java's `Double.toString`: plain between 10^-3 and 10^7 (always with a `.`), otherwise computerised
/// scientific (`1.003791036E9`). Both use the shortest digits that round-trip, as Rust's formatting does.
pub fn java_double(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "NaN".into()
        } else if x > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    let a = x.abs();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        let s = format!("{x}");
        if s.contains('.') {
            s
        } else {
            format!("{s}.0")
        }
    } else {
        let s = format!("{x:E}");
        match s.split_once('E') {
            Some((m, e)) if !m.contains('.') => format!("{m}.0E{e}"),
            _ => s,
        }
    }
}

/// Seconds with millisecond precision, for the summary.
pub fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
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
        assert!(parse_size("lots").is_err());
        assert!(parse_size("").is_err());
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("5000/s"), Ok(5000.0));
        assert_eq!(parse_rate("2.5"), Ok(2.5));
        assert!(parse_rate("0").is_err());
        assert!(parse_rate("-1/s").is_err());
        assert!(parse_rate("fast").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("8h"), Ok(Duration::from_secs(28_800)));
        assert!(parse_duration("soon").is_err());
    }

    #[test]
    fn separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands_f(41_152.24, 1), "41,152.2");
        assert_eq!(thousands_f(0.5, 2), "0.50");
    }

    #[test]
    fn java_doubles_match_the_cxf_seed() {
        // Figures as printed by the CXF harness in the seed document.
        assert_eq!(java_double(1.003791036E9), "1.003791036E9");
        assert_eq!(java_double(2880038.624), "2880038.624");
        assert_eq!(java_double(348.5338799400768), "348.5338799400768");
        assert_eq!(java_double(1e9), "1.0E9");
        assert_eq!(java_double(12.0), "12.0");
        assert_eq!(java_double(0.0), "0.0");
    }
}
