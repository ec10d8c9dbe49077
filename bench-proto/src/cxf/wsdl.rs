//! The WSDL 1.1 document served at `PATH?wsdl`: exactly the messages `parse_request` accepts.

use crate::xsd::write_attr;

const HEAD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<wsdl:definitions name="PerfService"
    targetNamespace="http://cxf.apache.org/cxf/performance"
    xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/"
    xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
    xmlns:xsd="http://www.w3.org/2001/XMLSchema"
    xmlns:tns="http://cxf.apache.org/cxf/performance"
    xmlns:x1="http://cxf.apache.org/cxf/performance/types">
  <wsdl:types>
    <xsd:schema targetNamespace="http://cxf.apache.org/cxf/performance/types"
        elementFormDefault="qualified">
      <xsd:simpleType name="ColourEnum">
        <xsd:restriction base="xsd:string">
          <xsd:enumeration value="RED"/>
          <xsd:enumeration value="GREEN"/>
          <xsd:enumeration value="BLUE"/>
        </xsd:restriction>
      </xsd:simpleType>
      <xsd:complexType name="SimpleStruct">
        <xsd:sequence>
          <xsd:element name="varFloat" type="xsd:float"/>
          <xsd:element name="varShort" type="xsd:short"/>
          <xsd:element name="varString" type="xsd:string"/>
          <xsd:element name="varByte" type="xsd:byte"/>
          <xsd:element name="varDecimal" type="xsd:decimal"/>
          <xsd:element name="varDouble" type="xsd:double"/>
          <xsd:element name="varDateTime" type="xsd:dateTime"/>
        </xsd:sequence>
        <xsd:attribute name="varAttrString" type="xsd:string"/>
      </xsd:complexType>
      <xsd:complexType name="NestedComplexType">
        <xsd:sequence>
          <xsd:element name="varString" type="xsd:string"/>
          <xsd:element name="varUByte" type="xsd:unsignedByte"/>
          <xsd:element name="varUnsignedLong" type="xsd:unsignedLong"/>
          <xsd:element name="varFloat" type="xsd:float"/>
          <xsd:element name="varQName" type="xsd:QName"/>
          <xsd:element name="varBase64Binary" type="xsd:base64Binary"/>
          <xsd:element name="varHexBinary" type="xsd:hexBinary"/>
          <xsd:element name="varStruct" type="x1:SimpleStruct"/>
          <xsd:element name="varEnum" type="x1:ColourEnum"/>
        </xsd:sequence>
      </xsd:complexType>
      <xsd:complexType name="NestedComplexTypeSeq">
        <xsd:sequence>
          <xsd:element name="item" type="x1:NestedComplexType" minOccurs="0" maxOccurs="unbounded"/>
        </xsd:sequence>
      </xsd:complexType>
      <xsd:element name="echoStringDoc">
        <xsd:complexType>
          <xsd:sequence><xsd:element name="in" type="xsd:string"/></xsd:sequence>
        </xsd:complexType>
      </xsd:element>
      <xsd:element name="echoStringDocResponse">
        <xsd:complexType>
          <xsd:sequence><xsd:element name="out" type="xsd:string"/></xsd:sequence>
        </xsd:complexType>
      </xsd:element>
      <xsd:element name="echoBase64Doc">
        <xsd:complexType>
          <xsd:sequence><xsd:element name="in" type="xsd:base64Binary"/></xsd:sequence>
        </xsd:complexType>
      </xsd:element>
      <xsd:element name="echoBase64DocResponse">
        <xsd:complexType>
          <xsd:sequence><xsd:element name="out" type="xsd:base64Binary"/></xsd:sequence>
        </xsd:complexType>
      </xsd:element>
      <xsd:element name="echoComplexTypeDoc">
        <xsd:complexType>
          <xsd:sequence>
            <xsd:element name="in" type="x1:NestedComplexTypeSeq"/>
            <xsd:element name="id" type="xsd:int"/>
          </xsd:sequence>
        </xsd:complexType>
      </xsd:element>
      <xsd:element name="echoComplexTypeDocResponse">
        <xsd:complexType>
          <xsd:sequence>
            <xsd:element name="return" type="x1:NestedComplexTypeSeq"/>
            <xsd:element name="idout" type="xsd:int"/>
          </xsd:sequence>
        </xsd:complexType>
      </xsd:element>
    </xsd:schema>
  </wsdl:types>
"#;

/// The three operations; the message, port type and binding blocks are the same shape for each.
const OPERATIONS: [&str; 3] = ["echoStringDoc", "echoBase64Doc", "echoComplexTypeDoc"];

/// The WSDL with `soap:address location="endpoint_url"`.
pub fn wsdl(endpoint_url: &str) -> String {
    let mut doc = String::with_capacity(8 * 1024);
    doc.push_str(HEAD);
    for op in OPERATIONS {
        doc.push_str(&format!(
            r#"  <wsdl:message name="{op}Request"><wsdl:part name="parameters" element="x1:{op}"/></wsdl:message>
  <wsdl:message name="{op}Response"><wsdl:part name="parameters" element="x1:{op}Response"/></wsdl:message>
"#
        ));
    }
    doc.push_str("  <wsdl:portType name=\"DocPortType\">\n");
    for op in OPERATIONS {
        doc.push_str(&format!(
            r#"    <wsdl:operation name="{op}">
      <wsdl:input message="tns:{op}Request"/>
      <wsdl:output message="tns:{op}Response"/>
    </wsdl:operation>
"#
        ));
    }
    doc.push_str(
        r#"  </wsdl:portType>
  <wsdl:binding name="SoapHttpDocLitBinding" type="tns:DocPortType">
    <soap:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
"#,
    );
    for op in OPERATIONS {
        doc.push_str(&format!(
            r#"    <wsdl:operation name="{op}">
      <soap:operation soapAction="" style="document"/>
      <wsdl:input><soap:body use="literal"/></wsdl:input>
      <wsdl:output><soap:body use="literal"/></wsdl:output>
    </wsdl:operation>
"#
        ));
    }
    let mut location = Vec::new();
    write_attr(&mut location, endpoint_url);
    doc.push_str(&format!(
        r#"  </wsdl:binding>
  <wsdl:service name="PerfService">
    <wsdl:port name="SoapHttpDocLitPort" binding="tns:SoapHttpDocLitBinding">
      <soap:address location="{}"/>
    </wsdl:port>
  </wsdl:service>
</wsdl:definitions>
"#,
        String::from_utf8_lossy(&location)
    ));
    doc
}
