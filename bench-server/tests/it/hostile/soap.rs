//! Hostile SOAP: malformed XML, DOCTYPEs (XXE, entity expansion), encodings, nesting, attribute and
//! namespace floods, envelope shape, bad values, and an escaping-heavy echo. Each must get a SOAP 1.1 fault
//! (or, for the valid ones, the right answer) at bounded memory.

use bench_proto::soap::{parse_fault, FaultCode};
use bench_proto::{customer, cxf};

use super::harness::{exchange, soap_request, Server};

const TYPES: &str = cxf::TYPES_NS;
const ENV: &str = "http://schemas.xmlsoap.org/soap/envelope/";

fn envelope(body: &str) -> Vec<u8> {
    format!(r#"<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="{ENV}"><soap:Body>{body}</soap:Body></soap:Envelope>"#)
        .into_bytes()
}

fn echo_string(inner: &str) -> Vec<u8> {
    envelope(&format!(
        r#"<p:echoStringDoc xmlns:p="{TYPES}"><p:in>{inner}</p:in></p:echoStringDoc>"#
    ))
}

fn complex() -> String {
    let mut out = Vec::new();
    cxf::write_request(&cxf::echo_complex_request(1, 5), &mut out);
    String::from_utf8(out).unwrap()
}

/// `text` with the first `from` replaced by `to` (which must occur).
fn replace(text: &str, from: &str, to: &str) -> Vec<u8> {
    assert!(text.contains(from), "{from:?} not in {text}");
    text.replacen(from, to, 1).into_bytes()
}

/// The expected SOAP fault code.
struct Bad {
    name: &'static str,
    path: &'static str,
    body: Vec<u8>,
    code: FaultCode,
    /// A word the faultstring must contain (case-insensitive), when the concept has a stable name.
    says: &'static str,
}

fn bad(name: &'static str, body: Vec<u8>, says: &'static str) -> Bad {
    Bad {
        name,
        path: cxf::PATH,
        body,
        code: FaultCode::Client,
        says,
    }
}

/// A valid echoBase64Doc (its one field binary: no text is ever asked for) with `markup` spliced in at `at`,
/// each `\u{1}` of it made the byte 0xFF, which is never UTF-8.
fn base64_with_bad_byte(at: &str, markup: &str) -> Vec<u8> {
    let mut b = Vec::new();
    cxf::write_request(&cxf::Request::EchoBase64(b"hello".to_vec().into()), &mut b);
    let text = String::from_utf8(b).unwrap();
    let mut body = replace(&text, at, &format!("{at}{markup}"));
    for byte in &mut body {
        if *byte == 1 {
            *byte = 0xFF;
        }
    }
    body
}

/// Malformed UTF-8 where no field is read: not well-formed XML (XML 1.0 §4.3.3), so a Client fault, wherever
/// it sits (issue 30, item 2).
fn bad_utf8_anywhere() -> Vec<Bad> {
    let op = "<echoBase64Doc xmlns=\"http://cxf.apache.org/cxf/performance/types\"";
    let body = "<soap:Body>";
    let cases: [(&'static str, &str, String); 8] = [
        (
            "utf-8: invalid byte in an unknown attribute's name",
            op,
            " a\u{1}b=\"v\"".into(),
        ),
        (
            "utf-8: invalid byte in an unknown attribute's value",
            op,
            " a=\"v\u{1}\"".into(),
        ),
        (
            "utf-8: invalid byte in an xmlns prefix",
            op,
            " xmlns:q\u{1}=\"urn:q\"".into(),
        ),
        (
            "utf-8: invalid byte in a namespace URI",
            op,
            " xmlns:q=\"urn:\u{1}\"".into(),
        ),
        (
            "utf-8: invalid byte in a comment",
            body,
            "<!-- \u{1} -->".into(),
        ),
        (
            "utf-8: invalid byte in a processing instruction",
            body,
            "<?pi \u{1}?>".into(),
        ),
        (
            "utf-8: invalid byte in header-block text",
            "<soap:Envelope xmlns:soap=\"http://schemas.xmlsoap.org/soap/envelope/\">",
            "<soap:Header><h:t xmlns:h=\"urn:h\">\u{1}</h:t></soap:Header>".into(),
        ),
        (
            "utf-8: invalid byte after the Envelope, in a comment",
            "</soap:Envelope>",
            "<!--\u{1}-->".into(),
        ),
    ];
    cases
        .into_iter()
        .map(|(name, at, markup)| bad(name, base64_with_bad_byte(at, &markup), "utf-8"))
        .collect()
}

fn table() -> Vec<Bad> {
    let lol = |depth: usize| {
        let mut decls = String::from(r#"<!ENTITY l0 "lollollollollollollollollollol">"#);
        for i in 1..depth {
            decls += &format!(r#"<!ENTITY l{i} "{}">"#, format!("&l{};", i - 1).repeat(10));
        }
        format!(
            r#"<?xml version="1.0"?><!DOCTYPE e [{decls}]><soap:Envelope xmlns:soap="{ENV}"><soap:Body><p:echoStringDoc xmlns:p="{TYPES}"><p:in>&l{};</p:in></p:echoStringDoc></soap:Body></soap:Envelope>"#,
            depth - 1
        )
        .into_bytes()
    };
    let attrs: String = (0..10_000).map(|i| format!(" a{i}=\"v\"")).collect();
    let xmlns: String = (0..20_000)
        .map(|i| format!(" xmlns:n{i}=\"urn:n{i}\""))
        .collect();
    let c = complex();
    let mut table = vec![
        bad("xml: truncated", echo_string("x").split_at(60).0.to_vec(), "xml"),
        bad("xml: mismatched end tag", envelope(&format!(r#"<p:echoStringDoc xmlns:p="{TYPES}"><p:in>x</p:out></p:echoStringDoc>"#)), "xml"),
        bad("xml: not XML at all", b"this is not xml".to_vec(), ""),
        bad("xml: empty body", Vec::new(), ""),
        bad("xml: unclosed attribute quote", envelope(&format!(r#"<p:echoStringDoc xmlns:p="{TYPES}" a="x><p:in>x</p:in></p:echoStringDoc>"#)), ""),
        bad("xml: unterminated CDATA section", echo_string("<![CDATA[x"), ""),
        bad("xml: undeclared prefix", envelope("<q:echoStringDoc><q:in>x</q:in></q:echoStringDoc>"), ""),
        bad("xml: undefined entity", echo_string("&nope;"), ""),
        bad("xml: character reference to NUL", echo_string("&#0;"), ""),
        bad("xml: character reference past Unicode", echo_string("&#99999999;"), ""),
        bad("xml: raw NUL byte", echo_string("a\0b"), ""),
        bad("xml: content after the envelope", { let mut b = echo_string("x"); b.extend_from_slice(b"<more/>"); b }, ""),
        bad("xml: 1 MB element name", envelope(&format!("<{} xmlns=\"{TYPES}\"/>", "n".repeat(1 << 20))), ""),
        bad("xxe: external entity on a local file", format!(r#"<?xml version="1.0"?><!DOCTYPE e [<!ENTITY x SYSTEM "file:///etc/passwd">]><soap:Envelope xmlns:soap="{ENV}"><soap:Body><p:echoStringDoc xmlns:p="{TYPES}"><p:in>&x;</p:in></p:echoStringDoc></soap:Body></soap:Envelope>"#).into_bytes(), "DOCTYPE"),
        bad("xxe: external DTD", format!(r#"<?xml version="1.0"?><!DOCTYPE e SYSTEM "http://127.0.0.1:1/evil.dtd"><soap:Envelope xmlns:soap="{ENV}"/>"#).into_bytes(), "DOCTYPE"),
        bad("xxe: parameter entity", format!(r#"<?xml version="1.0"?><!DOCTYPE e [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]><soap:Envelope xmlns:soap="{ENV}"/>"#).into_bytes(), "DOCTYPE"),
        bad("entities: billion laughs", lol(10), "DOCTYPE"),
        bad("entities: quadratic blowup (one big entity, many uses)", format!(r#"<?xml version="1.0"?><!DOCTYPE e [<!ENTITY a "{}">]><soap:Envelope xmlns:soap="{ENV}"><soap:Body><p:echoStringDoc xmlns:p="{TYPES}"><p:in>{}</p:in></p:echoStringDoc></soap:Body></soap:Envelope>"#, "a".repeat(50_000), "&a;".repeat(50_000)).into_bytes(), "DOCTYPE"),
        bad("encoding: UTF-16 with a BOM", { let mut b = vec![0xFF, 0xFE]; for u in String::from_utf8(echo_string("x")).unwrap().encode_utf16() { b.extend_from_slice(&u.to_le_bytes()); } b }, ""),
        bad("encoding: declared ISO-8859-1 with Latin-1 bytes", { let mut b = echo_string("caf\u{e9}"); let s = String::from_utf8(b.clone()).unwrap().replace("UTF-8", "ISO-8859-1").replace('\u{e9}', "\u{1}"); b = s.into_bytes(); let i = b.iter().position(|&x| x == 1).unwrap(); b[i] = 0xE9; b }, ""),
        bad("encoding: invalid UTF-8 in text", { let mut b = echo_string("ab"); let i = b.windows(2).position(|w| w == b"ab").unwrap(); b[i] = 0xC3; b[i + 1] = 0x28; b }, ""),
        bad("encoding: overlong UTF-8 for '<'", { let mut b = echo_string("ab"); let i = b.windows(2).position(|w| w == b"ab").unwrap(); b[i] = 0xC0; b[i + 1] = 0xBC; b }, ""),
        bad("encoding: UTF-8-encoded surrogate", { let mut b = echo_string("abc"); let i = b.windows(3).position(|w| w == b"abc").unwrap(); b[i..i + 3].copy_from_slice(&[0xED, 0xA0, 0x80]); b }, ""),
        bad("depth: 100,000 nested elements in the body", envelope(&format!("{}{}", "<a>".repeat(100_000), "</a>".repeat(100_000))), ""),
        bad("depth: 100,000 nested elements in a header", format!(r#"<soap:Envelope xmlns:soap="{ENV}"><soap:Header>{}{}</soap:Header><soap:Body/></soap:Envelope>"#, "<a>".repeat(100_000), "</a>".repeat(100_000)).into_bytes(), ""),
        bad("flood: 10,000 attributes on one element", envelope(&format!(r#"<p:echoStringDocX xmlns:p="{TYPES}"{attrs}><p:in>x</p:in></p:echoStringDocX>"#)), ""),
        bad("flood: 20,000 namespace declarations", envelope(&format!(r#"<p:echoStringDocX xmlns:p="{TYPES}"{xmlns}><p:in>x</p:in></p:echoStringDocX>"#)), ""),
        bad("flood: 1 MB of comments and PIs", envelope(&format!(r#"<p:echoStringDocX xmlns:p="{TYPES}">{}</p:echoStringDocX>"#, "<!-- c --><?pi x?>".repeat(60_000))), ""),
        bad("envelope: unknown operation", envelope(&format!(r#"<p:frobnicate xmlns:p="{TYPES}"/>"#)), "unknown"),
        bad("envelope: operation in the wrong namespace", envelope("<echoStringDoc xmlns=\"urn:wrong\"><in>x</in></echoStringDoc>"), ""),
        bad("envelope: two operations in the body", envelope(&format!(r#"<p:echoStringDoc xmlns:p="{TYPES}"><p:in>x</p:in></p:echoStringDoc><p:echoStringDoc xmlns:p="{TYPES}"><p:in>y</p:in></p:echoStringDoc>"#)), ""),
        bad("envelope: no Body", format!(r#"<soap:Envelope xmlns:soap="{ENV}"><soap:Header/></soap:Envelope>"#).into_bytes(), ""),
        bad("envelope: root is not an Envelope", format!(r#"<soap:Body xmlns:soap="{ENV}"/>"#).into_bytes(), ""),
        bad("value: unsignedByte 256", replace(&c, "varUByte>255<", "varUByte>256<"), "varUByte"),
        bad("value: short past i16", replace(&c, "varShort>32767<", "varShort>99999999999<"), "varShort"),
        bad("value: enum not in the schema", replace(&c, "RED<", "PURPLE<"), "varEnum"),
        bad("value: dateTime month 13", replace(&c, "2005-12-03T00:00:09", "2005-13-03T00:00:09"), "varDateTime"),
        bad("value: CDATA hiding markup in a number", replace(&c, "<varShort>", "<varShort><![CDATA[<1>]]>"), "varShort"),
        bad("value: base64 with a bad character", { let mut b = Vec::new(); cxf::write_request(&cxf::Request::EchoBase64(b"hello".to_vec().into()), &mut b); replace(&String::from_utf8(b).unwrap(), "aGVsbG8=", "a!GVsbG8=") }, ""),
        bad("value: a required field missing", envelope(&format!(r#"<p:echoComplexTypeDoc xmlns:p="{TYPES}"><p:in/></p:echoComplexTypeDoc>"#)), "missing"),
    ];
    table.extend(bad_utf8_anywhere());
    let mut get = Vec::new();
    customer::write_request(&customer::get_request(7, 0), &mut get);
    let get = String::from_utf8(get).unwrap();
    for (name, body, says) in [
        (
            "customer: get count not a number",
            replace(&get, ">7<", ">seven<"),
            "count",
        ),
        (
            "customer: get count beyond the limit",
            replace(&get, ">7<", ">4000000000<"),
            "count",
        ),
        (
            "customer: a CXF operation",
            {
                let mut b = Vec::new();
                cxf::write_request(&cxf::Request::EchoString("x".into()), &mut b);
                b
            },
            "unknown",
        ),
    ] {
        table.push(Bad {
            path: customer::PATH,
            ..bad(name, body, says)
        });
    }
    table.push(Bad {
        code: FaultCode::VersionMismatch,
        ..bad(
            "envelope: SOAP 1.2 namespace",
            br#"<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body/></env:Envelope>"#.to_vec(),
            "",
        )
    });
    table.push(Bad {
        code: FaultCode::MustUnderstand,
        ..bad(
            "envelope: mustUnderstand header",
            format!(r#"<soap:Envelope xmlns:soap="{ENV}"><soap:Header><t:tx xmlns:t="urn:tx" soap:mustUnderstand="1">1</t:tx></soap:Header><soap:Body><p:echoStringDoc xmlns:p="{TYPES}"><p:in>x</p:in></p:echoStringDoc></soap:Body></soap:Envelope>"#).into_bytes(),
            "",
        )
    });
    table
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_soap() {
    let server = Server::start(&[]);
    let table = table();
    let rows = table.len();
    for case in table {
        server
            .case(case.name, 24, async {
                let reply = exchange(server.http, &soap_request(case.path, &case.body)).await;
                assert_eq!(reply.status, 500, "{}: {}", case.name, reply.text());
                let fault = parse_fault(&reply.body)
                    .unwrap_or_else(|| panic!("{}: no fault in {}", case.name, reply.text()));
                assert_eq!(fault.code, case.code, "{}: {}", case.name, fault.string);
                assert!(!fault.string.is_empty(), "{}", case.name);
                assert!(
                    fault
                        .string
                        .to_lowercase()
                        .contains(&case.says.to_lowercase()),
                    "{}: faultstring {:?} should mention {:?}",
                    case.name,
                    fault.string,
                    case.says
                );
            })
            .await;
    }

    // Valid but costly: 2 MB of '>' (legal unescaped in text) come back escaped, 8 MB, and intact.
    server
        .case(
            "encoding: 2 MB of characters that expand when escaped",
            48,
            async {
                let text = ">".repeat(2 << 20);
                let body = echo_string(&text);
                let reply = exchange(server.http, &soap_request(cxf::PATH, &body)).await;
                assert_eq!(reply.status, 200);
                assert_eq!(
                    cxf::parse_response(&reply.body).expect("echo response"),
                    cxf::Response::EchoString(text.into())
                );
            },
        )
        .await;

    // A UTF-8 BOM before the declaration is allowed.
    server
        .case("encoding: UTF-8 BOM", 16, async {
            let mut body = vec![0xEF, 0xBB, 0xBF];
            body.extend_from_slice(&echo_string("bom"));
            let reply = exchange(server.http, &soap_request(cxf::PATH, &body)).await;
            assert!(
                reply.status == 200 || reply.status == 500,
                "{}",
                reply.text()
            );
            if reply.status == 500 {
                assert_eq!(
                    parse_fault(&reply.body).expect("fault").code,
                    FaultCode::Client
                );
            }
        })
        .await;
    assert_eq!(server.cases_run(), rows + 2);
}
