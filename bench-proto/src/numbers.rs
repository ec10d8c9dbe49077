//! Numbers printed for people, the one home of every way wsbench writes a figure as text: bench-client's
//! console summary and progress, the harness's summary.md, report.html's tables and chart axes, `compare`.
//! Their parsing is [`crate::units`]. Pure: text from numbers.

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

/// A number for people: thousands separated, about four significant digits.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let a = v.abs();
    let decimals = if a >= 1000.0 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 1.0 {
        2
    } else if a >= 0.01 {
        3
    } else {
        return if a == 0.0 {
            "0".into()
        } else {
            format!("{v:.2e}")
        };
    };
    thousands_f(v, decimals)
}

/// A level or a share people wrote (a stage's 100 clients, a weight of 40 %): whole numbers without
/// decimals, others as [`num`].
pub fn level(x: f64) -> String {
    match x.fract() == 0.0 && x.abs() < 1e15 {
        true if x < 0.0 => format!("-{}", thousands(x.abs() as u64)),
        true => thousands(x as u64),
        false => num(x),
    }
}

/// A length of time for people: `6 h 59 m 50 s`, `2 m 5 s`, `9.5 s`, `0.8 s`.
pub fn span(secs: f64) -> String {
    if !secs.is_finite() || secs < 0.0 {
        return "? s".to_owned();
    }
    if secs < 60.0 {
        let t = format!("{secs:.1}");
        return format!("{} s", t.strip_suffix(".0").unwrap_or(&t));
    }
    let total = secs.round() as u64;
    let (h, m, s) = (total / 3600, total / 60 % 60, total % 60);
    let parts: Vec<String> = [(h, "h"), (m, "m"), (s, "s")]
        .iter()
        .skip_while(|(n, _)| *n == 0)
        .filter(|(n, _)| *n > 0)
        .map(|(n, u)| format!("{n} {u}"))
        .collect();
    parts.join(" ")
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

/// Axis numbers: short, no trailing zeros, SI suffixes for large values.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if a >= 1e6 {
        format!("{}M", trim(format!("{:.2}", v / 1e6)))
    } else if a >= 1e4 {
        format!("{}k", trim(format!("{:.1}", v / 1e3)))
    } else if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        trim(format!("{v:.2}"))
    } else {
        // Enough decimals for two significant digits: 0.05 ms, 0.0005 ms.
        let digits = ((-a.log10()).ceil() as usize + 1).max(3);
        trim(format!("{v:.digits$}"))
    }
}

/// Integers print without a fraction (client counts), other values with up to 2 decimals.
pub fn fmt_x(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// A figure of `compare`'s table: no separators, three significant digits or more (`1234`, `12.3`, `0.123`).
pub fn compact(v: f64) -> String {
    match v.abs() {
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 10.0 => format!("{v:.1}"),
        a if a >= 1.0 => format!("{v:.2}"),
        _ => format!("{v:.3}"),
    }
}

/// Milliseconds to about four significant digits, without separators (report.html's step table).
pub fn fmt_ms(ms: f64) -> String {
    match ms.abs() {
        a if a >= 1000.0 => format!("{ms:.0}"),
        a if a >= 100.0 => format!("{ms:.1}"),
        a if a >= 10.0 => format!("{ms:.2}"),
        _ => format!("{ms:.3}"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn levels_as_written() {
        use super::level;
        assert_eq!(level(20_000.0), "20,000");
        assert_eq!(level(40.0), "40");
        assert_eq!(level(12.5), "12.50");
        assert_eq!(level(-3.0), "-3");
    }

    #[test]
    fn spans_read_as_people_write_them() {
        use super::span;
        assert_eq!(span(25190.0), "6 h 59 m 50 s");
        assert_eq!(span(28800.0), "8 h");
        assert_eq!(span(125.0), "2 m 5 s");
        assert_eq!(span(9.5), "9.5 s");
        assert_eq!(span(10.0), "10 s");
    }

    use super::*;

    #[test]
    fn numbers_for_people() {
        assert_eq!(num(34853.86), "34,854");
        assert_eq!(num(1_003_791_036.0), "1,003,791,036");
        assert_eq!(num(348.53), "348.5");
        assert_eq!(num(2.869), "2.87");
        assert_eq!(num(0.5), "0.500");
        assert_eq!(num(-1234.0), "-1,234");
        assert_eq!(num(0.0), "0");
        assert_eq!(thousands(76), "76");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn milliseconds_to_four_digits() {
        assert_eq!(fmt_ms(1234.4), "1234");
        assert_eq!(fmt_ms(123.46), "123.5");
        assert_eq!(fmt_ms(12.346), "12.35");
        assert_eq!(fmt_ms(0.4), "0.400");
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
