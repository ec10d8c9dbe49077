//! Envelope reading: prefixes, headers, refusals (DOCTYPE, depth, encodings), faults.

use super::*;

const BODY_OK: &str = r#"<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><a xmlns="urn:t">x</a></soap:Body></soap:Envelope>"#;

/// Opens `doc` and reads the single body element `{urn:t}a`'s text.
fn read_a(doc: &str) -> Result<String, SoapError> {
    let mut r = BodyReader::open(doc.as_bytes())?;
    r.child("urn:t", "a").map_err(|e| e.at("a"))?;
    let text = r.text().map_err(|e| e.at("a"))?.into_owned();
    r.finish()?;
    Ok(text)
}

#[test]
fn any_envelope_prefix_or_default_namespace() {
    for doc in [
        BODY_OK.to_owned(),
        BODY_OK.replace("soap:", "soapenv:").replace("xmlns:soap=", "xmlns:soapenv="),
        BODY_OK.replace("soap:", "s:").replace("xmlns:soap=", "xmlns:s="),
        r#"<Envelope xmlns="http://schemas.xmlsoap.org/soap/envelope/"><Body><t:a xmlns:t="urn:t">x</t:a></Body></Envelope>"#.into(),
        format!("<?xml version='1.0' encoding='utf-8'?>\n<!-- hi -->\n{BODY_OK}\n<!-- bye -->\n"),
        format!("\u{FEFF}{BODY_OK}"),
    ] {
        assert_eq!(read_a(&doc).unwrap(), "x", "{doc}");
    }
}

#[test]
fn headers_tolerated_unless_must_understand() {
    let with_header = |attrs: &str| {
        BODY_OK.replace("<soap:Body>", &format!(r#"<soap:Header><h:Trace xmlns:h="urn:h" {attrs}><h:id>1</h:id></h:Trace></soap:Header><soap:Body>"#))
    };
    assert_eq!(read_a(&with_header("")).unwrap(), "x");
    assert_eq!(
        read_a(&with_header(r#"soap:mustUnderstand="0""#)).unwrap(),
        "x"
    );
    assert_eq!(
        read_a(&with_header(
            r#"soap:actor="urn:someone-else" soap:mustUnderstand="1""#
        ))
        .unwrap(),
        "x"
    );
    // An unqualified mustUnderstand attribute is not SOAP's.
    assert_eq!(read_a(&with_header(r#"mustUnderstand="1""#)).unwrap(), "x");
    for must in [
        r#"soap:mustUnderstand="1""#,
        r#"soap:mustUnderstand="true""#,
    ] {
        let err = read_a(&with_header(must)).unwrap_err();
        assert_eq!(err, SoapError::MustUnderstand("{urn:h}Trace".into()));
        assert_eq!(err.fault().code, FaultCode::MustUnderstand);
    }
}

#[test]
fn doctype_and_entities_refused() {
    let doc = format!(r#"<?xml version="1.0"?><!DOCTYPE lol [<!ENTITY lol "lol">]>{BODY_OK}"#);
    assert_eq!(read_a(&doc).unwrap_err(), SoapError::Doctype);
    let undeclared = BODY_OK.replace(">x<", ">&lol;<");
    assert!(matches!(
        read_a(&undeclared).unwrap_err(),
        SoapError::Xml { .. }
    ));
    assert_eq!(
        read_a(&BODY_OK.replace(">x<", ">&lt;&#65;&#x42;<")).unwrap(),
        "<AB"
    );
}

#[test]
fn nesting_is_bounded() {
    let deep = |n: usize| {
        let open: String = (0..n).map(|_| "<h:x>").collect();
        let close: String = (0..n).map(|_| "</h:x>").collect();
        BODY_OK.replace(
            "<soap:Body>",
            &format!(r#"<soap:Header xmlns:h="urn:h">{open}{close}</soap:Header><soap:Body>"#),
        )
    };
    let max = Limits::DEFAULT_MAX_DEPTH;
    assert_eq!(read_a(&deep(max - 2)).unwrap(), "x");
    let err = read_a(&deep(max - 1)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Envelope/Header: elements are nested deeper than xml-max-depth = 64"
    );
    assert_eq!(read_a(&deep(100_000)).unwrap_err(), err);
}

#[test]
fn envelope_shape_errors() {
    let v12 = BODY_OK.replace(
        "http://schemas.xmlsoap.org/soap/envelope/",
        "http://www.w3.org/2003/05/soap-envelope",
    );
    let err = read_a(&v12).unwrap_err();
    assert!(matches!(err, SoapError::VersionMismatch(_)));
    assert_eq!(err.fault().code, FaultCode::VersionMismatch);
    assert!(matches!(
        read_a("<a/>").unwrap_err(),
        SoapError::NotEnvelope { .. }
    ));
    let no_body =
        r#"<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"></soap:Envelope>"#;
    assert_eq!(read_a(no_body).unwrap_err(), SoapError::NoBody);
    let latin1 = format!(r#"<?xml version="1.0" encoding="ISO-8859-1"?>{BODY_OK}"#);
    assert_eq!(
        read_a(&latin1).unwrap_err(),
        SoapError::Encoding("ISO-8859-1".into())
    );
    for broken in [
        "",
        "<soap:Envelope",
        &BODY_OK[..BODY_OK.len() - 3],
        &BODY_OK.replace("</a>", "</b>"),
    ] {
        assert!(
            matches!(read_a(broken).unwrap_err(), SoapError::Xml { .. }),
            "{broken}"
        );
    }
    let trailing = format!("{BODY_OK}<more/>");
    assert!(matches!(
        read_a(&trailing).unwrap_err(),
        SoapError::Xml { .. }
    ));
    let two = BODY_OK.replace("</soap:Body>", "<b/></soap:Body>");
    assert_eq!(
        read_a(&two).unwrap_err().to_string(),
        "Body: unexpected element 'b'"
    );
    let undeclared = BODY_OK.replace(r#"<a xmlns="urn:t">x</a>"#, "<t:a>x</t:a>");
    assert!(read_a(&undeclared)
        .unwrap_err()
        .to_string()
        .contains("undeclared prefix 't'"));
    let control = BODY_OK.replace(">x<", ">&#1;<");
    assert!(read_a(&control).is_err());
}

#[test]
fn text_joins_cdata_and_keeps_whitespace() {
    let doc = BODY_OK.replace(">x<", "> a <![CDATA[<b>]]><!-- c -->&amp; <");
    assert_eq!(read_a(&doc).unwrap(), " a <b>& ");
    let child = BODY_OK.replace(">x<", "><y/><");
    assert_eq!(
        read_a(&child).unwrap_err().to_string(),
        "a: unexpected element 'y'"
    );
}

#[test]
fn fault_round_trip() {
    for code in [
        FaultCode::Client,
        FaultCode::Server,
        FaultCode::VersionMismatch,
        FaultCode::MustUnderstand,
    ] {
        let fault = Fault {
            code,
            string: "bad <thing> & more".into(),
            detail: Some("d".into()),
        };
        let mut buf = Vec::new();
        write_fault(&mut buf, &fault);
        assert_eq!(parse_fault(&buf), Some(fault));
    }
    assert_eq!(parse_fault(BODY_OK.as_bytes()), None);
    assert_eq!(parse_fault(b"not xml"), None);
}

#[test]
fn foreign_fault_is_read() {
    let doc = r#"<?xml version="1.0"?>
<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/">
  <S:Header><x:h xmlns:x="urn:x" S:mustUnderstand="1"/></S:Header>
  <S:Body>
    <S:Fault>
      <faultcode>S:Client.Validation</faultcode>
      <faultstring xml:lang="en">Unmarshalling Error</faultstring>
      <detail><ns2:e xmlns:ns2="urn:e">why<ns2:more>not</ns2:more></ns2:e></detail>
    </S:Fault>
  </S:Body>
</S:Envelope>"#;
    let fault = parse_fault(doc.as_bytes()).unwrap();
    assert_eq!(fault.code, FaultCode::Client);
    assert_eq!(fault.string, "Unmarshalling Error");
    assert_eq!(fault.detail.as_deref(), Some("whynot"));
}

#[test]
fn error_faults_are_client_faults_saying_what_is_wrong() {
    let err = SoapError::InvalidField {
        field: String::new(),
        reason: crate::xsd::parse_unsigned_byte("256").unwrap_err(),
    }
    .at("varUByte")
    .at("item[0]")
    .at("in")
    .at("echoComplexTypeDoc");
    let fault = err.fault();
    assert_eq!(fault.code, FaultCode::Client);
    assert_eq!(
        fault.string,
        "echoComplexTypeDoc/in/item[0]/varUByte: '256' is not an xsd:unsignedByte (out of range)"
    );
}

/// Found by fuzzing (cxf and customer targets): faults quoted whole what the input put in an end tag or an
/// entity name, making a 3 KB fault of a 4 KB request.
#[test]
fn faults_stay_small_whatever_the_input_quotes() {
    let long = "x".repeat(3000);
    for doc in [
        BODY_OK.replace("</a>", &format!("</{long}>")),
        BODY_OK.replace(">x<", &format!(">&{long};<")),
        BODY_OK.replace(">x<", &format!("><{long}/><")),
        BODY_OK.replace("xmlns=\"urn:t\"", &format!("xmlns=\"urn:{long}\"")),
        // Found by fuzzing the customer target: a 2 KB encoding name.
        format!("<?xml version=\"1.0\" encoding=\"UTF-{long}\"?>{BODY_OK}"),
    ] {
        let fault = read_a(&doc).unwrap_err().fault();
        assert!(
            fault.string.len() < 500,
            "{} bytes: {}",
            fault.string.len(),
            &fault.string[..200]
        );
    }
}
