//! A WSDL 1.1 document for a SOAP 1.1 document/literal service over HTTP: the services supply their schema
//! and operation names, this writes the messages, port type, binding and service around them.

use std::fmt::Write as _;

use crate::xsd::write_attr;

/// What differs between the services' WSDLs.
#[derive(Debug)]
pub struct WsdlSpec<'a> {
    /// `definitions/@name` and the service name.
    pub service: &'a str,
    /// Target namespace of the WSDL definitions (prefix `tns`).
    pub tns: &'a str,
    /// Namespace of the message elements (prefix `x1`; may equal `tns`).
    pub types_ns: &'a str,
    /// One `<xsd:schema>` element; it may use the prefixes `xsd` and `x1`.
    pub schema: &'a str,
    pub port_type: &'a str,
    pub binding: &'a str,
    pub port: &'a str,
    /// Operation names; `true` if the operation has an output (`{op}Response` element), `false` if one-way.
    /// Each input is the element named like the operation (wrapped document/literal).
    pub operations: &'a [(&'a str, bool)],
}

/// The whole WSDL document, with `soap:address location="endpoint_url"`.
pub fn wsdl(spec: &WsdlSpec<'_>, endpoint_url: &str) -> String {
    let mut location = Vec::new();
    write_attr(&mut location, endpoint_url);
    let location = String::from_utf8_lossy(&location);
    let WsdlSpec {
        service,
        tns,
        types_ns,
        schema,
        port_type,
        binding,
        port,
        operations,
    } = spec;
    let mut d = String::with_capacity(8 * 1024);
    // Writing to a String cannot fail.
    let _ = write!(
        d,
        r#"<?xml version="1.0" encoding="UTF-8"?>
<wsdl:definitions name="{service}" targetNamespace="{tns}"
    xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/"
    xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
    xmlns:xsd="http://www.w3.org/2001/XMLSchema"
    xmlns:tns="{tns}"
    xmlns:x1="{types_ns}">
  <wsdl:types>
{schema}  </wsdl:types>
"#
    );
    for &(op, two_way) in operations.iter() {
        let _ = writeln!(
            d,
            r#"  <wsdl:message name="{op}Request"><wsdl:part name="parameters" element="x1:{op}"/></wsdl:message>"#
        );
        if two_way {
            let _ = writeln!(
                d,
                r#"  <wsdl:message name="{op}Response"><wsdl:part name="parameters" element="x1:{op}Response"/></wsdl:message>"#
            );
        }
    }
    let _ = writeln!(d, r#"  <wsdl:portType name="{port_type}">"#);
    for &(op, two_way) in operations.iter() {
        let _ = writeln!(d, r#"    <wsdl:operation name="{op}">"#);
        let _ = writeln!(d, r#"      <wsdl:input message="tns:{op}Request"/>"#);
        if two_way {
            let _ = writeln!(d, r#"      <wsdl:output message="tns:{op}Response"/>"#);
        }
        d.push_str("    </wsdl:operation>\n");
    }
    let _ = write!(
        d,
        r#"  </wsdl:portType>
  <wsdl:binding name="{binding}" type="tns:{port_type}">
    <soap:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
"#
    );
    for &(op, two_way) in operations.iter() {
        let _ = writeln!(d, r#"    <wsdl:operation name="{op}">"#);
        d.push_str("      <soap:operation soapAction=\"\" style=\"document\"/>\n");
        d.push_str("      <wsdl:input><soap:body use=\"literal\"/></wsdl:input>\n");
        if two_way {
            d.push_str("      <wsdl:output><soap:body use=\"literal\"/></wsdl:output>\n");
        }
        d.push_str("    </wsdl:operation>\n");
    }
    let _ = write!(
        d,
        r#"  </wsdl:binding>
  <wsdl:service name="{service}">
    <wsdl:port name="{port}" binding="tns:{binding}">
      <soap:address location="{location}"/>
    </wsdl:port>
  </wsdl:service>
</wsdl:definitions>
"#
    );
    d
}
