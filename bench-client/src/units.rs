//! Printing of figures in the summary: thousands separators, seconds, and Java's `Double.toString` (for the
//! CXF-format block). Their parsing is bench-proto's `units`, shared with xtask.

use std::time::Duration;

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
