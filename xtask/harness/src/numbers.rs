//! Numbers for people, the same in summary.md, report.html and the console: thousands separated, about four
//! significant digits.

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
    let s = format!("{a:.decimals$}");
    let (int, frac) = s
        .split_once('.')
        .map_or((s.as_str(), None), |(i, f)| (i, Some(f)));
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let sign = if v < 0.0 { "-" } else { "" };
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// A count for people: thousands separated.
pub fn int(n: u64) -> String {
    num(n as f64)
        .split('.')
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// A level or a share people wrote (a stage's 100 clients, a weight of 40 %): whole numbers without
/// decimals, others as [`num`].
pub fn level(x: f64) -> String {
    match x.fract() == 0.0 && x.abs() < 1e15 {
        true if x < 0.0 => format!("-{}", int(x.abs() as u64)),
        true => int(x as u64),
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
        assert_eq!(int(76), "76");
        assert_eq!(int(1_234_567), "1,234,567");
    }
}
