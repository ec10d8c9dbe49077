//! The one-pass echo against the two-pass path (parse the array, write the response): the same bytes, or the
//! same error, for valid requests written every way XML allows and broken ones (the hostile corpus: `hostile`'s tests).

use super::{serve_request, Served};
use crate::customer::{
    generate, generate_for_size, parse_request_with, write_request, write_response, Request,
    Response, NS,
};
use crate::soap::Limits;

/// What the two-pass path answers for `body`: the response written for an echo, the request otherwise.
fn two_pass(body: &[u8], limits: &Limits) -> Result<Result<Vec<u8>, Request>, String> {
    match parse_request_with(body, limits) {
        Ok(Request::Echo(cs)) => {
            let mut out = Vec::new();
            write_response(&Response::Echo(cs), &mut out);
            Ok(Ok(out))
        }
        Ok(other) => Ok(Err(other)),
        Err(e) => Err(e.to_string()),
    }
}

/// What [`serve_request`] answers, checking that it appends (and leaves `out` alone on an error).
fn one_pass(body: &[u8], limits: &Limits) -> Result<Result<Vec<u8>, Request>, String> {
    let before = b"earlier bytes".to_vec();
    let mut out = before.clone();
    let served = serve_request(body, limits, &mut out);
    assert!(out.starts_with(&before), "serve_request must append");
    let written = out[before.len()..].to_vec();
    match served {
        Ok(Served::Echoed { customers }) => {
            assert_eq!(
                customers,
                written.windows(10).filter(|w| w == b"<customer>").count()
            );
            Ok(Ok(written))
        }
        Ok(Served::Request(req)) => {
            assert!(written.is_empty(), "only an echo writes");
            Ok(Err(req))
        }
        Err(e) => {
            assert!(written.is_empty(), "an error leaves out as it was");
            Err(e.to_string())
        }
    }
}

fn same(body: &[u8], limits: &Limits) -> bool {
    let (one, two) = (one_pass(body, limits), two_pass(body, limits));
    assert_eq!(
        one.as_ref()
            .map(|r| r.as_ref().map(|b| String::from_utf8_lossy(b))),
        two.as_ref()
            .map(|r| r.as_ref().map(|b| String::from_utf8_lossy(b))),
        "for {}",
        String::from_utf8_lossy(&body[..body.len().min(2000)])
    );
    matches!(one, Ok(Ok(_)))
}

fn echo_text(customers: usize, seed: u64) -> String {
    let mut out = Vec::new();
    write_request(&Request::Echo(generate(customers, seed, 1)), &mut out);
    String::from_utf8(out).expect("UTF-8")
}

#[test]
fn generated_echoes_are_byte_equal() {
    let limits = Limits::default();
    for size in [0, 600, 1024, 10 * 1024, 100 * 1024] {
        for seed in [1, 2, 3] {
            let mut body = Vec::new();
            let cs = if size == 0 {
                Vec::new()
            } else {
                generate_for_size(size, seed)
            };
            write_request(&Request::Echo(cs), &mut body);
            assert!(same(&body, &limits), "size {size}");
        }
    }
}

/// Every way of writing the same customers (or nearly) that the serialiser does not use: each one echoed
/// as the two-pass path echoes it.
#[test]
fn unusual_but_valid_echoes_are_byte_equal() {
    let text = echo_text(3, 4);
    let prefixed = text
        .replace(
            &format!("<echo xmlns=\"{NS}\">"),
            &format!("<c:echo xmlns:c=\"{NS}\" xmlns=\"{NS}\">"),
        )
        .replace("</echo>", "</c:echo>")
        .replace("<customer>", "<c:customer>")
        .replace("</customer>", "</c:customer>")
        .replace("<street>", "<c:street>")
        .replace("</street>", "</c:street>");
    let variants: Vec<(&str, String)> = vec![
        ("pretty", text.replace("><", ">\n  <")),
        ("prefixed", prefixed),
        (
            "escaped",
            text.replacen("<city>", "<city>&amp;&#65;&gt;", 1),
        ),
        ("gt", text.replacen("<company>", "<company>a > b ", 1)),
        (
            "cdata",
            text.replacen("<email>", "<email><![CDATA[x<y]]>", 1),
        ),
        ("comment", text.replacen("<phone>", "<phone><!-- c -->", 1)),
        ("tab", text.replacen("<lastName>", "<lastName>\t", 1)),
        ("cr", text.replacen("<lastName>", "<lastName>a\r\nb", 1)),
        ("id_zeros", text.replacen("<id>", "<id>000", 1)),
        ("id_space", text.replacen("<id>", "<id> ", 1)),
        ("balance", text.replacen("<balance>", "<balance>+0", 1)),
        (
            "active",
            text.replace("<active>true<", "<active>1<")
                .replace("<active>false<", "<active>0<"),
        ),
        ("country", text.replacen("<country>", "<country> ", 1)),
        (
            "notes_empty",
            text.replacen("</tags>", "</tags><notes></notes>", 1),
        ),
        (
            "notes_escaped",
            text.replacen("</tags>", "</tags><notes>&lt;b&gt;</notes>", 1),
        ),
        (
            "notes_prefixed",
            text.replacen(
                "</tags>",
                &format!("</tags><n:notes xmlns:n=\"{NS}\">x</n:notes>"),
                1,
            ),
        ),
        ("tags_empty", {
            let (a, b) = (text.find("<tags>").unwrap(), text.find("</tags>").unwrap());
            format!("{}<tags/>{}", &text[..a], &text[b + "</tags>".len()..])
        }),
        ("tag_escaped", text.replacen("<tag>", "<tag>&amp;", 1)),
        ("tag_spaced_end", text.replacen("</tag>", "</tag >", 1)),
        ("end_spaced", text.replacen("</address>", "</address >", 1)),
        (
            "attribute",
            text.replacen("<customer>", "<customer a=\"1\">", 1),
        ),
        ("bom", format!("\u{FEFF}{text}")),
        (
            "header",
            text.replacen(
                "<soap:Body>",
                "<soap:Header><h xmlns=\"urn:x\">1</h></soap:Header><soap:Body>",
                1,
            ),
        ),
        ("fffd", text.replacen("<city>", "<city>\u{FFFD}\u{EFFF}", 1)),
    ];
    let limits = Limits::default();
    for (name, body) in &variants {
        assert_ne!(body, &text, "{name} changes nothing");
        assert!(same(body.as_bytes(), &limits), "{name} is refused");
    }
}

#[test]
fn bad_echoes_fail_as_the_two_pass_path_fails() {
    let text = echo_text(3, 5);
    let variants = [
        text.replacen("<balance>", "<balance>12,50", 1),
        text.replacen("<email>", "<mail>", 1)
            .replacen("</email>", "</mail>", 1),
        text.replacen("<country>", "<country>usa", 1),
        text.replacen("</tags>", "</tags><notes>a</notes><extra/>", 1),
        text.replacen("</tags>", "</tags><extra/>", 1),
        text.replace(NS, "http://wsbench.dev/other"),
        text.replacen("<tag>", "<tag><b/>", 1),
        text.replacen("<tag>", "<tag/x><tag>", 1),
        text.replacen("<tag>", "<tag/ ><tag>", 1),
        text.replacen("<city>", "<city>&bogus;", 1),
        text.replacen("<city>", "<city>&#1;", 1),
        text.replacen("<id>", "<id>-", 1),
        text.replacen("</customer>", "</customer><customer/>", 1),
        text.replacen("</soap:Body>", "<x/></soap:Body>", 1),
    ];
    let limits = Limits::default();
    for body in &variants {
        assert!(!same(body.as_bytes(), &limits));
    }
    // Every cut of a small request: an error (or, at the very end, the echo) where the two-pass path has it.
    let small = echo_text(1, 6);
    for end in 0..small.len() {
        let cut = &small.as_bytes()[..end];
        if std::str::from_utf8(cut).is_ok() {
            same(cut, &limits);
        }
    }
    // Within tight limits: one customer more than allowed, elements nested too deep for the reader.
    let tight = Limits {
        max_items: 2,
        ..Limits::default()
    };
    assert!(!same(text.as_bytes(), &tight));
    let shallow = Limits {
        max_depth: 5,
        ..Limits::default()
    };
    assert!(!same(text.as_bytes(), &shallow));
}

#[test]
fn other_operations_are_returned_parsed() {
    let limits = Limits::default();
    for req in [
        Request::Add(generate(2, 1, 1)),
        Request::AddAsync(generate(1, 2, 1)),
        Request::Get {
            count: 5,
            offset: 7,
        },
    ] {
        let mut body = Vec::new();
        write_request(&req, &mut body);
        let mut out = Vec::new();
        assert_eq!(
            serve_request(&body, &limits, &mut out),
            Ok(Served::Request(req))
        );
        assert!(out.is_empty());
    }
}

/// Empty elements, `<tag/>`, read by the sequence's fast path for them (a flood of them is a hostile shape):
/// each answered as its twin `<tag />`, which only the general path reads, by both paths, within every limit
/// near the ones that bite (the tags are 6 deep; 3 and 5 of them).
#[test]
fn empty_elements_read_as_their_twins() {
    let text = echo_text(2, 7);
    let with_tags = |tags: &str| {
        let (a, b) = (text.find("<tags>").unwrap(), text.find("</tags>").unwrap());
        format!("{}<tags>{tags}{}", &text[..a], &text[b..])
    };
    let bodies = [
        with_tags("<tag/><tag>x</tag><tag/>"),
        with_tags("<tag/><tag/><tag/><tag/><tag/>"),
        with_tags("<tag/><b/>"),
        text.replacen("<firstName>", "<firstName/><firstName>", 1),
        text.replacen("<notes>", "<notes/><notes>", 1),
    ];
    let d = Limits::default();
    let mut limits = vec![d];
    limits.extend((4..8).map(|n| Limits { max_depth: n, ..d }));
    limits.extend((0..7).map(|n| Limits { max_items: n, ..d }));
    limits.extend((0..4).map(|n| Limits { max_work: n, ..d }));
    // The work budget is checked where the general path reads a tag, so a message over it may be refused at
    // another element: the same fault, another path.
    let work = |r: &Result<Result<Vec<u8>, Request>, String>| {
        r.as_ref().err().map(|e| e.contains("xml-max-work ="))
    };
    for body in &bodies {
        let twin = body.replace("/>", " />");
        assert_ne!(&twin, body);
        for l in &limits {
            for read in [one_pass, two_pass] {
                let (fast, general) = (read(body.as_bytes(), l), read(twin.as_bytes(), l));
                if work(&fast) == Some(true) {
                    assert_eq!(work(&general), Some(true), "{l:?}\n{body}");
                } else {
                    assert_eq!(fast, general, "{l:?}\n{body}");
                }
            }
            same(body.as_bytes(), l);
        }
    }
}
