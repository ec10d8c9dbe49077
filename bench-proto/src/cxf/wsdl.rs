//! The WSDL 1.1 document served at `PATH?wsdl`: exactly the messages `parse_request` accepts.

use super::{SERVICE_NS, TYPES_NS};
use crate::soap::{self, WsdlSpec};

const SCHEMA: &str = r#"    <xsd:schema targetNamespace="http://cxf.apache.org/cxf/performance/types"
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
"#;

/// The WSDL with `soap:address location="endpoint_url"`.
pub fn wsdl(endpoint_url: &str) -> String {
    let spec = WsdlSpec {
        service: "PerfService",
        tns: SERVICE_NS,
        types_ns: TYPES_NS,
        schema: SCHEMA,
        port_type: "DocPortType",
        binding: "SoapHttpDocLitBinding",
        port: "SoapHttpDocLitPort",
        operations: &[
            ("echoStringDoc", true),
            ("echoBase64Doc", true),
            ("echoComplexTypeDoc", true),
        ],
    };
    soap::wsdl(&spec, endpoint_url)
}
