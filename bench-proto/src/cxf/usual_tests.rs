//! The reader's fast paths for the usual start tags (`soap/usual.rs`) against the general path: each usual
//! message, and each variation of it that a fast path must refuse or read with care, parses exactly as its
//! twin written so that only the general path can read it, within every limit near the one that bites.

use std::mem::discriminant;

use super::*;
use crate::arena::Bump;
use crate::soap::{Limits, SoapError};

/// The usual request, as our writer (and CXF's client) writes it.
fn usual() -> String {
    let mut out = Vec::new();
    write_request(&echo_complex_request(2, 7), &mut out);
    String::from_utf8(out).expect("UTF-8")
}

/// `doc` with one more space in each tag a fast path reads: the same message, read the general way.
fn twin(doc: &str) -> String {
    doc.replace("</soap:Body>", "</soap:Body >")
        .replace("<soap:Envelope xmlns", "<soap:Envelope  xmlns")
        .replace("<echoComplexTypeDoc xmlns", "<echoComplexTypeDoc  xmlns")
        .replace("<varStruct varAttrString", "<varStruct  varAttrString")
        .replace("<varQName xmlns", "<varQName  xmlns")
}

/// Parses `doc` and its twin within `limits`: the same request for the same work (see `soap/work.rs`), or
/// errors of the same kind.
fn same_as_twin(doc: &str, limits: &Limits) -> Result<(), String> {
    let (a, b) = (Bump::new(), Bump::new());
    let fast = parse_request_in(doc.as_bytes(), limits, &a);
    let fast_work = crate::soap::last_spent();
    let general_doc = twin(doc);
    assert_ne!(general_doc, doc, "the twin must differ");
    let general = parse_request_in(general_doc.as_bytes(), limits, &b);
    let general_work = crate::soap::last_spent();
    let kind = |r: &Result<Request<'_>, SoapError>| r.as_ref().map_err(discriminant).err();
    match (&fast, &general) {
        (Ok(f), Ok(g)) if f == g && fast_work == general_work => Ok(()),
        (Err(_), Err(_)) if kind(&fast) == kind(&general) => Ok(()),
        _ => Err(format!(
            "{limits:?}\n{doc}\nfast: {fast:?} (work {fast_work})\ngeneral: {general:?} (work \
             {general_work})"
        )),
    }
}

#[test]
fn the_usual_message_and_its_variations_parse_as_their_twins() {
    let usual = usual();
    // The attribute's value up to its reference (which the leaf varString holds too).
    const A: &str = "=\"1234567890!@#$%^&amp;";
    let vary: &[(&str, &str)] = &[
        ("", ""),
        ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", ""),
        ("encoding=\"UTF-8\"", "encoding=\"ISO-8859-1\""),
        ("soap/envelope/\"", "soap/envelope\""),
        ("performance/types\"><in>", "performance/other\"><in>"),
        ("echoComplexTypeDoc", "echoNothing"),
        ("echoComplexTypeDoc", "echo:ComplexTypeDoc"),
        (A, "=\"^&lt;*()"),
        (A, "=\"^<*()"),
        (A, "=\"^&#9;*()"),
        (A, "=\"^\t*()"),
        (A, "=\"^&#1;*()"),
        (A, "=\"^é*()"),
        (A, "=\"^&bogus;*()"),
        (A, "=\"^'*()"),
        ("varAttrString=", "other="),
        (">q:return<", ">p:return<"),
        (">q:return<", "> q:return <"),
        (">q:return<", ">q:1bad<"),
        (">q:return<", ">return<"),
        (">q:return<", ">q:ré<"),
        ("xmlns:q=\"http://cxf.apache.org\"", "xmlns:q=\"\""),
        ("xmlns:q=\"http://cxf.apache.org\"", "xmlns:q=\"a&amp;b\""),
        ("xmlns:q=\"http://cxf.apache.org\"", "xmlns:q=\"a<b\""),
        ("xmlns:q=\"http://cxf.apache.org\"", "xmlns:q=\"a\tb\""),
        (
            "xmlns:q=\"http://cxf.apache.org\"",
            "xmlns:q=\"http://www.w3.org/XML/1998/namespace\"",
        ),
        (
            "xmlns:q=\"http://cxf.apache.org\"",
            "xmlns:q=\"http://www.w3.org/2000/xmlns/\"",
        ),
        (
            "xmlns:q=\"http://cxf.apache.org\">q:",
            "xmlns:xml=\"http://cxf.apache.org\">xml:",
        ),
        (
            "xmlns:q=\"http://cxf.apache.org\">q:",
            "xmlns:xmlns=\"http://cxf.apache.org\">xmlns:",
        ),
        (
            "xmlns:q=\"http://cxf.apache.org\">q:",
            "xmlns:1q=\"http://cxf.apache.org\">1q:",
        ),
        ("</varQName>", "</varQNam>"),
        ("<varUByte>255<", "<varUByte> 255 <"),
        ("<varUByte>255<", "<varUByte>256<"),
        ("<varUByte>255<", "<varUByte>&#50;55<"),
        (
            "<varUByte>255</varUByte>",
            "<varUByte a=\"1\">255</varUByte>",
        ),
        (
            "<varUByte>255</varUByte>",
            "<t:varUByte xmlns:t=\"http://cxf.apache.org/cxf/performance/types\">255</t:varUByte>",
        ),
        (
            "<varUByte>255</varUByte>",
            "<varUByte>255</varUByte><varUByte>255</varUByte>",
        ),
        ("<varUByte>255</varUByte>", ""),
        (">#12345ABc<", ">a&lt;b<"),
        (">#12345ABc<", ">a&#0;b<"),
        (">#12345ABc<", ">é<"),
        (">#12345ABc<", "><![CDATA[x]]><"),
        (">#12345ABc<", "><!--c-->x<"),
        ("<varString>#12345ABc</varString>", "<varString/>"),
        ("<varEnum>RED<", "<varEnum>PINK<"),
        ("<varEnum>RED<", "<varEnum> RED <"),
        ("<varDouble>", "<varDouble>x"),
        ("</varStruct>", "<extra/></varStruct>"),
        ("</varStruct>", "</varStruct><extra/>"),
        ("</varStruct>", "</varstruct>"),
        ("</soap:Envelope>", "</soap:Envelope><!--c-->"),
        ("</soap:Envelope>", "</soap:Envelope>x"),
        ("</soap:Envelope>", "</soap:Envelop>"),
        ("</soap:Body>", "<x/></soap:Body>"),
        ("</soap:Body>", "</soap:Bodyx>"),
    ];
    let mut failures = Vec::new();
    for (from, to) in vary {
        let doc = usual.replace(from, to);
        assert!(
            from.is_empty() || doc != usual,
            "{from} is not in the usual message"
        );
        failures.extend(same_as_twin(&doc, &Limits::default()).err());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_limit_bites_the_fast_paths_as_it_bites_the_general_path() {
    let usual = usual();
    let mut failures = Vec::new();
    let mut check = |limits: Limits| failures.extend(same_as_twin(&usual, &limits).err());
    let d = Limits::default();
    for n in 0..10 {
        check(Limits { max_depth: n, ..d });
        check(Limits {
            max_attributes: n,
            ..d
        });
        check(Limits {
            max_namespace_declarations: n,
            ..d
        });
        check(Limits {
            max_namespaces_in_scope: n,
            ..d
        });
    }
    for n in 0..24 {
        check(Limits {
            max_name_len: n,
            ..d
        });
    }
    // The message's work (248 units) is the budget of about 34 units per KiB of it (and of 4 KiB more).
    for n in 0..64 {
        check(Limits { max_work: n, ..d });
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
