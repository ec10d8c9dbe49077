//! CXF codec: round trips, the wire form of the reference item, and every kind of bad request.

use std::borrow::Cow;

use super::*;
use crate::soap::{FaultCode, SoapError};

fn to_vec(req: &Request<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    write_request(req, &mut out);
    out
}

fn err_of(doc: &str) -> String {
    parse_request(doc.as_bytes()).unwrap_err().to_string()
}

#[test]
fn reference_item_round_trips() {
    let req = echo_complex_request(3, 42);
    let bytes = to_vec(&req);
    assert_eq!(parse_request(&bytes).unwrap(), req);
    let resp = req.into_echo_response();
    let mut out = Vec::new();
    write_response(&resp, &mut out);
    assert_eq!(parse_response(&out).unwrap(), resp);
    assert!(matches!(resp, Response::EchoComplex { id_out: 42, ref items } if items.len() == 3));
}

#[test]
fn reference_item_wire_form() {
    let text = String::from_utf8(to_vec(&echo_complex_request(1, 7))).unwrap();
    for part in [
        r#"<echoComplexTypeDoc xmlns="http://cxf.apache.org/cxf/performance/types"><in><item>"#,
        "<varString>#12345ABc</varString><varUByte>255</varUByte><varUnsignedLong>13691056728</varUnsignedLong>",
        "<varFloat>3.4028235E38</varFloat>",
        r#"<varQName xmlns:q="http://cxf.apache.org">q:return</varQName>"#,
        "<varBase64Binary>gIGCg4SF",
        "<varHexBinary>808182838485",
        r#"<varStruct varAttrString="1234567890!@#$%^&amp;*()abcdefghijk"><varFloat>3.4028235E38</varFloat>"#,
        "<varShort>32767</varShort><varString>1234567890!@#$%^&amp;*()abcdefghijk</varString><varByte>127</varByte>",
        "<varDecimal>3.1415926</varDecimal><varDouble>1.7976931348623157E308</varDouble>",
        "<varDateTime>2005-12-03T00:00:09Z</varDateTime></varStruct><varEnum>RED</varEnum></item></in><id>7</id>",
    ] {
        assert!(text.contains(part), "{part} not in {text}");
    }
    let item = reference_item();
    assert_eq!(item.var_hex_binary.len(), 256);
    assert_eq!(item.var_hex_binary[0] as i8, -128);
    assert_eq!(item.var_hex_binary[255] as i8, 127);
}

#[test]
fn string_and_base64_round_trip() {
    for req in [
        echo_string_request(2),
        echo_base64_request(),
        Request::EchoString(" <&>\"\r\n\t ".into()),
    ] {
        assert_eq!(parse_request(&to_vec(&req)).unwrap(), req);
    }
    match echo_string_request(1) {
        Request::EchoString(s) => assert_eq!(s.len(), 1024),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        echo_complex_request(0, 1),
        parse_request(&to_vec(&echo_complex_request(0, 1))).unwrap()
    );
}

#[test]
fn edge_values_round_trip() {
    let mut item = reference_item();
    item.var_float = f32::NEG_INFINITY;
    item.var_unsigned_long = u64::MAX;
    item.var_qname = crate::xsd::QName::new("", "local");
    item.var_base64_binary = Vec::new().into();
    item.var_struct.var_double = f64::INFINITY;
    item.var_struct.var_decimal = "-0.000100".parse().unwrap();
    item.var_struct.var_date_time = "1999-12-31T23:59:59.999-05:00".parse().unwrap();
    item.var_struct.var_attr_string = None;
    item.var_enum = ColourEnum::Blue;
    let mut nan = item.clone();
    nan.var_float = f32::NAN;
    let req = Request::EchoComplex {
        items: vec![item, nan].into(),
        id: i32::MIN,
    };
    let Request::EchoComplex { items, id } = parse_request(&to_vec(&req)).unwrap() else {
        panic!()
    };
    assert_eq!(id, i32::MIN);
    assert!(items[1].var_float.is_nan());
    assert_eq!(
        items[0],
        match &req {
            Request::EchoComplex { items, .. } => items[0].clone(),
            _ => unreachable!(),
        }
    );
}

/// A hand-written request the way other stacks write it: prefixes everywhere, whitespace, an
/// `xsi:type`, QName prefix declared on an ancestor, base64 wrapped over lines.
const FOREIGN: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"
                  xmlns:typ="http://cxf.apache.org/cxf/performance/types" xmlns:c="http://cxf.apache.org">
  <soapenv:Header/>
  <soapenv:Body>
    <typ:echoComplexTypeDoc>
      <typ:in>
        <typ:item>
          <typ:varString>#12345ABc</typ:varString>
          <typ:varUByte> 255 </typ:varUByte>
          <typ:varUnsignedLong>13691056728</typ:varUnsignedLong>
          <typ:varFloat>3.4028235E38</typ:varFloat>
          <typ:varQName>c:return</typ:varQName>
          <typ:varBase64Binary>
            gIGCg4SFhoeIiYqLjI2Oj5CRkpOUlZaXmJmam5ydnp+goaKjpKWmp6ipqqusra6vsLGys7S1tre4
            ubq7vL2+v8DBwsPExcbHyMnKy8zNzs/Q0dLT1NXW19jZ2tvc3d7f4OHi4+Tl5ufo6err7O3u7/Dx
            8vP09fb3+Pn6+/z9/v8AAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyAhIiMkJSYnKCkq
            KywtLi8wMTIzNDU2Nzg5Ojs8PT4/QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl9gYWJj
            ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+fw==
          </typ:varBase64Binary>
          <typ:varHexBinary>808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f</typ:varHexBinary>
          <typ:varStruct varAttrString="1234567890!@#$%^&amp;*()abcdefghijk" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="typ:SimpleStruct">
            <typ:varFloat>3.4028235E+38</typ:varFloat>
            <typ:varShort>32767</typ:varShort>
            <typ:varString><![CDATA[1234567890!@#$%^&*()abcdefghijk]]></typ:varString>
            <typ:varByte>127</typ:varByte>
            <typ:varDecimal>3.1415926</typ:varDecimal>
            <typ:varDouble>1.7976931348623157E308</typ:varDouble>
            <typ:varDateTime>2005-12-03T00:00:09.000+00:00</typ:varDateTime>
          </typ:varStruct>
          <typ:varEnum>RED</typ:varEnum>
        </typ:item>
      </typ:in>
      <typ:id>1</typ:id>
    </typ:echoComplexTypeDoc>
  </soapenv:Body>
</soapenv:Envelope>"#;

#[test]
fn foreign_prefixes_parse_to_the_reference_item() {
    assert_eq!(
        parse_request(FOREIGN.as_bytes()).unwrap(),
        echo_complex_request(1, 1)
    );
    let default_ns = FOREIGN.replace("typ:", "").replace(
        "<echoComplexTypeDoc>",
        r#"<echoComplexTypeDoc xmlns="http://cxf.apache.org/cxf/performance/types">"#,
    );
    assert_eq!(
        parse_request(default_ns.as_bytes()).unwrap(),
        echo_complex_request(1, 1)
    );
    let s_prefix = FOREIGN
        .replace("soapenv:", "s:")
        .replace("xmlns:soapenv", "xmlns:s");
    assert_eq!(
        parse_request(s_prefix.as_bytes()).unwrap(),
        echo_complex_request(1, 1)
    );
}

#[test]
fn invalid_fields_name_their_path() {
    let cases = [
        ("<typ:varUByte> 255 </typ:varUByte>", "<typ:varUByte>256</typ:varUByte>",
         "echoComplexTypeDoc/in/item[0]/varUByte: '256' is not an xsd:unsignedByte (out of range)"),
        ("<typ:varEnum>RED</typ:varEnum>", "<typ:varEnum>PURPLE</typ:varEnum>",
         "echoComplexTypeDoc/in/item[0]/varEnum: 'PURPLE' is not a valid ColourEnum"),
        ("<typ:varByte>127</typ:varByte>", "<typ:varByte>x</typ:varByte>",
         "echoComplexTypeDoc/in/item[0]/varStruct/varByte: 'x' is not an xsd:byte"),
        ("<typ:varQName>c:return</typ:varQName>", "<typ:varQName>zz:return</typ:varQName>",
         "echoComplexTypeDoc/in/item[0]/varQName: 'zz:return' is not an xsd:QName (undeclared prefix)"),
        ("<typ:varDateTime>2005-12-03T00:00:09.000+00:00</typ:varDateTime>", "",
         "echoComplexTypeDoc/in/item[0]/varStruct/varDateTime: missing"),
        ("<typ:varFloat>3.4028235E38</typ:varFloat>", "",
         "echoComplexTypeDoc/in/item[0]/varFloat: expected element 'varFloat', found 'typ:varQName'"),
        ("<typ:id>1</typ:id>", "<typ:id>1</typ:id><typ:extra/>", "echoComplexTypeDoc: unexpected element 'typ:extra'"),
        ("<typ:id>1</typ:id>", "<id>1</id>",
         "echoComplexTypeDoc/id: element is in namespace '', expected 'http://cxf.apache.org/cxf/performance/types'"),
        ("<typ:id>1</typ:id>", "", "echoComplexTypeDoc/id: missing"),
        ("<typ:varShort>32767</typ:varShort>", "<typ:varShort>3<b/></typ:varShort>",
         "echoComplexTypeDoc/in/item[0]/varStruct/varShort: unexpected element 'b'"),
    ];
    for (from, to, expected) in cases {
        assert!(FOREIGN.contains(from), "{from}");
        assert_eq!(err_of(&FOREIGN.replace(from, to)), expected);
    }
    let two_items = FOREIGN.replace("</typ:item>", "</typ:item><typ:item/>");
    assert_eq!(
        err_of(&two_items),
        "echoComplexTypeDoc/in/item[1]/varString: missing"
    );
}

#[test]
fn unknown_operation_and_wrong_namespace() {
    let unknown = FOREIGN.replace("echoComplexTypeDoc>", "echoNothing>");
    assert_eq!(
        parse_request(unknown.as_bytes()).unwrap_err(),
        SoapError::UnknownOperation {
            ns: TYPES_NS.into(),
            local: "echoNothing".into()
        }
    );
    let wrong_ns = FOREIGN.replace(
        r#"xmlns:typ="http://cxf.apache.org/cxf/performance/types""#,
        r#"xmlns:typ="http://cxf.apache.org/cxf/performance""#,
    );
    let err = parse_request(wrong_ns.as_bytes()).unwrap_err();
    assert_eq!(err.to_string(), "echoComplexTypeDoc: element is in namespace 'http://cxf.apache.org/cxf/performance', expected 'http://cxf.apache.org/cxf/performance/types'");
    assert_eq!(err.fault().code, FaultCode::Client);
    let empty =
        r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body/></s:Envelope>"#;
    assert_eq!(
        parse_request(empty.as_bytes()).unwrap_err(),
        SoapError::EmptyBody
    );
    // A response is not a request.
    let mut resp = Vec::new();
    write_response(&echo_complex_request(1, 1).into_echo_response(), &mut resp);
    assert!(matches!(
        parse_request(&resp).unwrap_err(),
        SoapError::UnknownOperation { .. }
    ));
}

#[test]
fn wsdl_names_everything_the_parser_accepts() {
    let doc = wsdl("http://127.0.0.1:8080/x?a=1&b=2");
    assert!(doc.contains(r#"<soap:address location="http://127.0.0.1:8080/x?a=1&amp;b=2"/>"#));
    for name in [
        "echoStringDoc",
        "echoBase64DocResponse",
        "echoComplexTypeDocResponse",
        "NestedComplexTypeSeq",
        "varAttrString",
        "varQName",
        "PerfService",
        "SoapHttpDocLitPort",
        "DocPortType",
        TYPES_NS,
        SERVICE_NS,
    ] {
        assert!(doc.contains(name), "{name}");
    }
    // Well-formed: our own reader walks it to the end without error.
    let mut reader = quick_xml::Reader::from_str(&doc);
    loop {
        match reader.read_event().unwrap() {
            quick_xml::events::Event::Eof => break,
            _ => continue,
        }
    }
}

#[test]
fn no_truncation_or_byte_flip_panics() {
    let mut bytes = Vec::new();
    write_request(&echo_complex_request(1, 1), &mut bytes);
    for end in 0..bytes.len() {
        assert!(parse_request(&bytes[..end]).is_err());
    }
    let mut mutated = bytes.clone();
    // Every 5th byte keeps this fast in debug builds and still hits every kind of markup.
    for i in (0..bytes.len()).step_by(5) {
        for b in [b'<', b'&', b':', 0xFF] {
            mutated[i] = b;
            let _ = parse_request(&mutated);
            let _ = parse_response(&mutated);
        }
        mutated[i] = bytes[i];
    }
}

/// A string field written as the client writes it (unprefixed, in the default namespace) takes the leaf path:
/// its references are expanded there, and what that path cannot take is still refused, as by the general one.
#[test]
fn string_leaves_expand_references_and_refuse_what_is_not_xml() {
    let text = String::from_utf8(to_vec(&echo_complex_request(1, 1))).unwrap();
    let field = "<varString>#12345ABc</varString>";
    assert!(text.contains(field));
    let with = |value: &str| text.replace(field, &format!("<varString>{value}</varString>"));
    let Request::EchoComplex { items, .. } =
        parse_request(with("a&amp;b&#x41;&lt;").as_bytes()).unwrap()
    else {
        panic!("not echoComplexTypeDoc");
    };
    assert_eq!(items[0].var_string, "a&bA<");
    assert!(parse_request(with("a&bogus;").as_bytes()).is_err());
    assert!(
        err_of(&with("a&#1;")).contains("U+0001"),
        "{}",
        err_of(&with("a&#1;"))
    );
}

/// Text is cut from the input, checked as UTF-8 once as a whole as the message is opened: non-ASCII text reads
/// as itself, in fields and attributes, and a message with a byte that is not UTF-8 anywhere is refused, at that
/// byte.
#[test]
fn text_is_checked_as_utf8_once_and_bad_bytes_are_still_refused() {
    let text = String::from_utf8(to_vec(&echo_complex_request(1, 1))).unwrap();
    let field = "<varString>#12345ABc</varString>";
    let attr = "varAttrString=\"";
    assert!(text.contains(field) && text.contains(attr));
    let wide = text
        .replace(field, "<varString>é€😀&amp;</varString>")
        .replace(attr, "varAttrString=\"ü");
    let Request::EchoComplex { items, .. } = parse_request(wide.as_bytes()).unwrap() else {
        panic!("not echoComplexTypeDoc");
    };
    assert_eq!(items[0].var_string, "é€😀&");
    assert!(items[0]
        .var_struct
        .var_attr_string
        .as_deref()
        .unwrap()
        .starts_with('ü'));

    let bad = text
        .replace(field, "<varString>a\u{1}b</varString>")
        .replace('\u{1}', "\u{fffd}");
    let mut bytes = bad.into_bytes();
    let at = bytes
        .windows(3)
        .position(|w| w == "\u{fffd}".as_bytes())
        .unwrap();
    bytes.splice(at..at + 3, [0xFF]);
    let err = parse_request(&bytes).unwrap_err();
    assert_eq!(err.fault().code, FaultCode::Client);
    let err = err.to_string();
    assert!(err.contains("utf-8"), "{err}");
    // The check of the whole message reports where: the byte after `a`.
    assert!(err.contains(&format!("at byte {at}:")), "{err}");

    // Outside every field read (an unknown attribute, a comment, a skipped header block) a bad byte is
    // refused all the same, in a message of binary fields that never asks for text.
    let base64 = to_vec(&echo_base64_request());
    assert!(parse_request(&base64).is_ok());
    for (at, markup) in [
        ("<echoBase64Doc ", &b"a=\"\xFF\" "[..]),
        ("<soap:Body>", b"<!--\xFF-->"),
        ("<soap:Body>", b"<?pi \xFF?>"),
    ] {
        let text = String::from_utf8(base64.clone()).unwrap();
        let i = text.find(at).unwrap() + at.len();
        let mut bad = base64.clone();
        bad.splice(i..i, markup.iter().copied());
        let err = parse_request(&bad).unwrap_err().to_string();
        assert!(err.contains("not UTF-8"), "{err}");
    }
}

/// Parsed in an arena, text without references is a slice of the request itself; what had to be decoded or
/// expanded lives in the arena; and the value is the one the owning parse gives.
#[test]
fn values_borrow_from_the_body_and_the_arena() {
    let bytes = to_vec(&echo_complex_request(2, 5));
    let arena = crate::arena::Bump::new();
    let req = parse_request_in(&bytes, &crate::soap::Limits::default(), &arena).unwrap();
    assert_eq!(req, parse_request(&bytes).unwrap());
    let Request::EchoComplex { items, .. } = &req else {
        panic!("not echoComplexTypeDoc");
    };
    let in_body = |s: &[u8]| bytes.as_ptr_range().contains(&s.as_ptr());
    // Borrowed, but not from the body: from the arena (the only other place a parse puts data).
    let in_arena = |s: &[u8]| !in_body(s);
    assert!(matches!(items, Items::Borrowed(_)));
    let it = &items[1];
    for text in [&it.var_string, &it.var_qname.local, &it.var_qname.namespace] {
        assert!(
            matches!(text, Cow::Borrowed(_)) && in_body(text.as_bytes()),
            "{text}"
        );
    }
    // `&amp;` in both: expanded into the arena.
    let s = &it.var_struct;
    for text in [&s.var_string, s.var_attr_string.as_ref().unwrap()] {
        assert!(
            matches!(text, Cow::Borrowed(_)) && in_arena(text.as_bytes()),
            "{text}"
        );
    }
    for bytes in [&it.var_base64_binary, &it.var_hex_binary] {
        assert!(matches!(bytes, Cow::Borrowed(_)) && in_arena(bytes));
    }
}
