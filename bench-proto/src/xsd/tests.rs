//! Edge cases of every xsd type: accepted forms, canonical output, rejected values.

use super::*;

fn out(f: impl FnOnce(&mut Vec<u8>)) -> String {
    let mut buf = Vec::new();
    f(&mut buf);
    String::from_utf8(buf).unwrap()
}

#[test]
fn integers_accept_signs_and_whitespace() {
    assert_eq!(parse_int(" +42\n").unwrap(), 42);
    assert_eq!(parse_int("-2147483648").unwrap(), i32::MIN);
    assert_eq!(parse_short("32767").unwrap(), i16::MAX);
    assert_eq!(parse_byte("-128").unwrap(), i8::MIN);
    assert_eq!(parse_unsigned_byte("255").unwrap(), 255);
    assert_eq!(parse_unsigned_byte("-0").unwrap(), 0);
    assert_eq!(
        parse_unsigned_long("18446744073709551615").unwrap(),
        u64::MAX
    );
    assert_eq!(parse_long("007").unwrap(), 7);
    assert_eq!(out(|o| write_int(o, u64::MAX)), "18446744073709551615");
    assert_eq!(out(|o| write_int(o, -5i8)), "-5");
}

#[test]
fn integers_reject_out_of_range_and_junk() {
    let e = parse_unsigned_byte("256").unwrap_err();
    assert_eq!(
        e.to_string(),
        "'256' is not an xsd:unsignedByte (out of range)"
    );
    assert!(parse_unsigned_long("18446744073709551616").is_err());
    assert_eq!(parse_unsigned_long("-1").unwrap_err().why, Some("negative"));
    assert!(parse_short("32768").is_err());
    assert!(parse_byte("128").is_err());
    for bad in ["", " ", "+", "-", "1.0", "1e3", "0x10", "1 2", "١"] {
        assert!(parse_int(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn booleans() {
    for (s, v) in [
        ("true", true),
        ("1", true),
        (" false ", false),
        ("0", false),
    ] {
        assert_eq!(parse_boolean(s).unwrap(), v);
    }
    for bad in ["True", "yes", "", "2"] {
        assert!(parse_boolean(bad).is_err());
    }
    assert_eq!(out(|o| write_boolean(o, true)), "true");
}

#[test]
fn floats_special_values() {
    assert_eq!(parse_float("INF").unwrap(), f32::INFINITY);
    assert_eq!(parse_float("+INF").unwrap(), f32::INFINITY);
    assert_eq!(parse_double("-INF").unwrap(), f64::NEG_INFINITY);
    assert!(parse_double("NaN").unwrap().is_nan());
    assert_eq!(out(|o| write_float(o, f32::NAN)), "NaN");
    assert_eq!(out(|o| write_double(o, f64::INFINITY)), "INF");
    assert_eq!(out(|o| write_double(o, f64::NEG_INFINITY)), "-INF");
    for bad in [
        "inf", "Infinity", "nan", "NAN", "-NaN", "", ".", "e5", "1e", "1.5.2", "1,5", "0x1p3",
    ] {
        assert!(parse_double(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn floats_lexical_forms() {
    assert_eq!(parse_double("1.5E3").unwrap(), 1500.0);
    assert_eq!(parse_double("-1.5e-3").unwrap(), -0.0015);
    assert_eq!(parse_double(".5").unwrap(), 0.5);
    assert_eq!(parse_double("5.").unwrap(), 5.0);
    assert_eq!(parse_double("+12").unwrap(), 12.0);
    assert_eq!(parse_float("3.4028235E38").unwrap(), f32::MAX);
    // Python's repr of f32::MAX as a double rounds to the same float.
    assert_eq!(parse_float("3.4028234663852886e+38").unwrap(), f32::MAX);
    // Beyond the range: XSD 1.1 rounds to infinity.
    assert_eq!(parse_float("1e39").unwrap(), f32::INFINITY);
    assert!(parse_double("-0").unwrap().is_sign_negative());
}

#[test]
fn floats_write_shortest_round_trip() {
    assert_eq!(out(|o| write_float(o, f32::MAX)), "3.4028235E38");
    assert_eq!(out(|o| write_double(o, f64::MAX)), "1.7976931348623157E308");
    assert_eq!(
        out(|o| write_double(o, f64::MIN_POSITIVE)),
        "2.2250738585072014E-308"
    );
    assert_eq!(out(|o| write_float(o, 2.7182817)), "2.7182817");
    assert_eq!(out(|o| write_double(o, 0.1)), "0.1");
    assert_eq!(out(|o| write_double(o, 1e10)), "1.0E10");
    assert_eq!(out(|o| write_double(o, -0.0)), "-0");
    assert_eq!(out(|o| write_double(o, 0.0)), "0");
    for v in [
        f64::MAX,
        f64::MIN_POSITIVE,
        5e-324,
        1.0 / 3.0,
        -123456.789e100,
        1e7,
        9_999_999.0,
    ] {
        assert_eq!(parse_double(&out(|o| write_double(o, v))).unwrap(), v);
    }
    for v in [f32::MAX, f32::MIN_POSITIVE, 1e-45, 0.1, -7.5e20] {
        assert_eq!(parse_float(&out(|o| write_float(o, v))).unwrap(), v);
    }
}

#[test]
fn decimals_are_exact() {
    let d = Decimal::parse("3.1415926").unwrap();
    assert_eq!((d.mantissa(), d.scale()), (31_415_926, 7));
    assert_eq!(d.to_string(), "3.1415926");
    assert_eq!(Decimal::parse("-0.0050").unwrap().to_string(), "-0.0050");
    assert_eq!(Decimal::parse("-12.5").unwrap(), Decimal::new(-125, 1));
    assert_eq!(Decimal::parse("+.5").unwrap().to_string(), "0.5");
    assert_eq!(Decimal::parse("7.").unwrap().to_string(), "7");
    assert_eq!(Decimal::parse("-0.00").unwrap().to_string(), "0.00");
    assert_eq!(Decimal::parse(" 00042 ").unwrap().to_string(), "42");
    let big = "-9999999999999999999999999999999999999.5";
    assert_eq!(Decimal::parse(big).unwrap().to_string(), big);
    // More than fits in i128.
    assert!(Decimal::parse("999999999999999999999999999999999999999999").is_err());
    for bad in ["", ".", "-", "1e5", "INF", "NaN", "1.2.3", "1,5", "- 1"] {
        assert!(Decimal::parse(bad).is_err(), "{bad:?}");
    }
}

/// Around the 18 digits a u64 holds whatever they are: the same mantissa as i128 arithmetic gives.
#[test]
fn decimals_of_every_length_keep_their_digits() {
    for n in 1..=24usize {
        for digits in [
            "9".repeat(n),
            "1".repeat(n),
            format!("{}7", "0".repeat(n - 1)),
        ] {
            for (sign, neg) in [("", false), ("-", true), ("+", false)] {
                let split = n / 2;
                let text = format!("{sign}{}.{}", &digits[..split], &digits[split..]);
                let expected: i128 = digits.parse().unwrap();
                let d = Decimal::parse(&text).unwrap();
                assert_eq!(
                    d.mantissa(),
                    if neg { -expected } else { expected },
                    "{text}"
                );
                assert_eq!(usize::from(d.scale()), n - split, "{text}");
            }
        }
    }
}

#[test]
fn datetimes_with_and_without_timezones() {
    let dt = DateTime::parse("2005-12-03T00:00:09Z").unwrap();
    assert_eq!(dt.offset_minutes, Some(0));
    assert_eq!(dt.to_string(), "2005-12-03T00:00:09Z");
    assert_eq!(DateTime::parse("2005-12-03T00:00:09.000Z").unwrap(), dt);
    assert_eq!(DateTime::parse("2005-12-03T00:00:09+00:00").unwrap(), dt);
    let local = DateTime::parse("2024-02-29T23:59:59.5").unwrap();
    assert_eq!((local.nanos, local.offset_minutes), (500_000_000, None));
    assert_eq!(local.to_string(), "2024-02-29T23:59:59.5");
    let east = DateTime::parse("2001-10-26T21:32:52.123456789+14:00").unwrap();
    assert_eq!(east.offset_minutes, Some(840));
    assert_eq!(east.to_string(), "2001-10-26T21:32:52.123456789+14:00");
    let west = DateTime::parse("2001-10-26T21:32:52-05:30").unwrap();
    assert_eq!(west.offset_minutes, Some(-330));
    assert_eq!(west.to_string(), "2001-10-26T21:32:52-05:30");
    assert_eq!(
        DateTime::parse("-0044-03-15T12:00:00").unwrap().to_string(),
        "-0044-03-15T12:00:00"
    );
    assert_eq!(
        DateTime::parse("12345-01-01T00:00:00Z").unwrap().year,
        12345
    );
    assert_eq!(DateTime::parse("2000-01-01T24:00:00").unwrap().hour, 24);
}

#[test]
fn datetimes_validate_ranges() {
    for bad in [
        "2023-02-29T00:00:00",       // not a leap year
        "1900-02-29T00:00:00",       // century rule
        "2005-13-01T00:00:00",       // month
        "2005-04-31T00:00:00",       // day
        "2005-12-03T25:00:00",       // hour
        "2005-12-03T24:00:01",       // 24 only as 24:00:00
        "2005-12-03T10:60:00",       // minute
        "2005-12-03T10:00:60",       // no leap seconds
        "2005-12-03T10:00:00+14:30", // offset beyond 14:00
        "2005-12-03T10:00:00+05:60",
        "2005-12-03T10:00:00.",
        "2005-12-03T10:00:00.1234567891",
        "2005-12-03 10:00:00",
        "2005-12-03",
        "05-12-03T10:00:00",
        "02005-12-03T10:00:00",
        "2005-12-03T10:00:00z",
        "2005-12-03T10:00:00+0100",
        "",
    ] {
        assert!(DateTime::parse(bad).is_err(), "{bad:?}");
    }
    assert!(DateTime::parse("2000-02-29T00:00:00").is_ok());
    assert_eq!(
        DateTime::parse("2005-02-30T00:00:00")
            .unwrap_err()
            .to_string(),
        "'2005-02-30T00:00:00' is not an xsd:dateTime (day out of range)"
    );
}

#[test]
fn base64_tolerates_whitespace() {
    let data: Vec<u8> = (0..=255).collect();
    let text = out(|o| write_base64(o, &data));
    assert_eq!(parse_base64(&text).unwrap(), data);
    let wrapped: String = text
        .as_bytes()
        .chunks(76)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect::<Vec<_>>()
        .join("\r\n ");
    assert_eq!(parse_base64(&format!("\n  {wrapped}\n")).unwrap(), data);
    assert_eq!(parse_base64("").unwrap(), Vec::<u8>::new());
    for bad in ["abc", "a===", "@@@@", "YQ"] {
        assert!(parse_base64(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn hex_both_cases_uppercase_out() {
    assert_eq!(parse_hex("00ff7Fa0").unwrap(), vec![0, 255, 127, 160]);
    assert_eq!(out(|o| write_hex(o, &[0, 255, 127, 160])), "00FF7FA0");
    assert_eq!(
        parse_hex("abc").unwrap_err().why,
        Some("odd number of digits")
    );
    assert!(parse_hex("zz").is_err());
    assert!(parse_hex("ab cd").is_err());
}

#[test]
fn qname_lexical_split() {
    assert_eq!(
        QName::split_lexical(" ns:return ").unwrap(),
        (Some("ns"), "return")
    );
    assert_eq!(QName::split_lexical("return").unwrap(), (None, "return"));
    assert_eq!(
        QName::split_lexical("_x-1.é:ünï").unwrap(),
        (Some("_x-1.é"), "ünï")
    );
    for bad in [
        "", ":a", "a:", "a:b:c", "1a", "a b", "{urn:x}a", "-a", "a/b",
    ] {
        assert!(QName::split_lexical(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn escaping_and_character_checks() {
    assert_eq!(
        out(|o| write_text(o, "a<b>&c\r\"")),
        "a&lt;b&gt;&amp;c&#13;\""
    );
    assert_eq!(
        out(|o| write_attr(o, "\"x\"\t\n")),
        "&quot;x&quot;&#9;&#10;"
    );
    assert!(check_chars("tab\tnew\nline é 😀").is_ok());
    assert_eq!(check_chars("bell\u{7}"), Err('\u{7}'));
    assert_eq!(check_chars("\u{FFFE}"), Err('\u{FFFE}'));
}

#[test]
fn long_bad_values_are_shortened_in_errors() {
    let huge = "x".repeat(10_000);
    let msg = parse_int(&huge).unwrap_err().to_string();
    assert!(msg.len() < 100, "{msg}");
    assert!(msg.contains("10000 bytes"));
}

/// The float writers as they were (std's formatting), to compare the ryu-based ones with.
fn std_float_text(v: f64, display: String, lower_exp: String) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-INF" } else { "INF" }.into();
    }
    let a = v.abs();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        return display;
    }
    let mut s = lower_exp.replace('e', "E");
    let e = s.find('E').unwrap();
    if !s[..e].contains('.') {
        s.insert_str(e, ".0");
    }
    s
}

#[test]
fn floats_write_as_std_formatting_did() {
    // xorshift64*: many bit patterns, every exponent range.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let mut doubles: Vec<f64> = vec![
        1e-3,
        9.999e-4,
        1e7,
        9_999_999.0,
        1e7 - 0.5,
        0.1,
        5e-324,
        1.0,
        100.0,
        -0.0,
        0.0,
    ];
    let mut floats: Vec<f32> = vec![
        1e-3,
        1e7,
        9_999_999.0,
        0.1,
        1e-45,
        1.0,
        100.0,
        f32::MAX,
        -0.0,
    ];
    for _ in 0..20_000 {
        let bits = next();
        doubles.push(f64::from_bits(bits));
        floats.push(f32::from_bits(bits as u32));
        // Also numbers of a human scale, where plain and scientific notation meet.
        doubles.push((bits % 100_000_000) as f64 / 10f64.powi((bits >> 60) as i32));
        floats.push((bits % 100_000_000) as f32 / 10f32.powi((bits >> 60) as i32));
    }
    // Where two shortest forms are equally short, std and ryu may pick different last digits; both read back
    // to the same value. Everything else must be identical.
    let same = |ours: &str, std: &str, reads_back: bool| {
        let exp = |s: &str| s.find('E').map(|e| s[e..].to_owned());
        ours == std || (reads_back && ours.len() == std.len() && exp(ours) == exp(std))
    };
    for v in doubles {
        let want = std_float_text(v, format!("{v}"), format!("{v:e}"));
        let got = out(|o| write_double(o, v));
        let back = parse_double(&got).unwrap();
        assert!(same(&got, &want, back == v), "{v:e}: {got} vs {want}");
    }
    for v in floats {
        let want = std_float_text(f64::from(v), format!("{v}"), format!("{v:e}"));
        let got = out(|o| write_float(o, v));
        let back = parse_float(&got).unwrap();
        assert!(same(&got, &want, back == v), "{v:e}: {got} vs {want}");
    }
}

#[test]
fn hex_of_every_length_and_any_bad_digit() {
    let data: Vec<u8> = (0..=255u8).collect();
    for len in [0, 1, 3, 4, 5, 8, 13, 256] {
        let mut text = Vec::new();
        write_hex(&mut text, &data[..len]);
        let text = String::from_utf8(text).unwrap();
        assert_eq!(parse_hex(&text).unwrap(), &data[..len]);
        assert_eq!(parse_hex(&text.to_lowercase()).unwrap(), &data[..len]);
        for at in 0..text.len() {
            let mut bad = text.clone().into_bytes();
            bad[at] = b'g';
            assert!(
                parse_hex(std::str::from_utf8(&bad).unwrap()).is_err(),
                "{len} {at}"
            );
        }
    }
}
