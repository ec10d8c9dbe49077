//! The WSDL 1.1 document served at `PATH?wsdl`: exactly the messages `parse_request` accepts.

use super::NS;
use crate::soap::{self, WsdlSpec};

const SCHEMA: &str = r#"    <xsd:schema targetNamespace="http://wsbench.dev/customer" elementFormDefault="qualified">
      <xsd:simpleType name="CountryCode">
        <xsd:restriction base="xsd:string"><xsd:pattern value="[A-Z]{2}"/></xsd:restriction>
      </xsd:simpleType>
      <xsd:complexType name="Address">
        <xsd:sequence>
          <xsd:element name="street" type="xsd:string"/>
          <xsd:element name="city" type="xsd:string"/>
          <xsd:element name="region" type="xsd:string"/>
          <xsd:element name="postalCode" type="xsd:string"/>
          <xsd:element name="country" type="x1:CountryCode"/>
        </xsd:sequence>
      </xsd:complexType>
      <xsd:complexType name="Tags">
        <xsd:sequence>
          <xsd:element name="tag" type="xsd:string" minOccurs="0" maxOccurs="unbounded"/>
        </xsd:sequence>
      </xsd:complexType>
      <xsd:complexType name="Customer">
        <xsd:sequence>
          <xsd:element name="id" type="xsd:unsignedLong"/>
          <xsd:element name="firstName" type="xsd:string"/>
          <xsd:element name="lastName" type="xsd:string"/>
          <xsd:element name="email" type="xsd:string"/>
          <xsd:element name="phone" type="xsd:string"/>
          <xsd:element name="company" type="xsd:string"/>
          <xsd:element name="address" type="x1:Address"/>
          <xsd:element name="created" type="xsd:dateTime"/>
          <xsd:element name="balance" type="xsd:decimal"/>
          <xsd:element name="active" type="xsd:boolean"/>
          <xsd:element name="tags" type="x1:Tags"/>
          <xsd:element name="notes" type="xsd:string" minOccurs="0"/>
        </xsd:sequence>
      </xsd:complexType>
      <xsd:complexType name="CustomerArray">
        <xsd:sequence>
          <xsd:element name="customer" type="x1:Customer" minOccurs="0" maxOccurs="unbounded"/>
        </xsd:sequence>
      </xsd:complexType>
      <xsd:element name="add" type="x1:CustomerArray"/>
      <xsd:element name="addAsync" type="x1:CustomerArray"/>
      <xsd:element name="echo" type="x1:CustomerArray"/>
      <xsd:element name="echoResponse" type="x1:CustomerArray"/>
      <xsd:element name="getResponse" type="x1:CustomerArray"/>
      <xsd:element name="get">
        <xsd:complexType>
          <xsd:sequence>
            <xsd:element name="count" type="xsd:unsignedInt"/>
            <xsd:element name="offset" type="xsd:unsignedLong"/>
          </xsd:sequence>
        </xsd:complexType>
      </xsd:element>
      <xsd:element name="addResponse">
        <xsd:complexType>
          <xsd:sequence>
            <xsd:element name="count" type="xsd:unsignedInt"/>
            <xsd:element name="firstId" type="xsd:unsignedLong"/>
            <xsd:element name="lastId" type="xsd:unsignedLong"/>
            <xsd:element name="stored" type="xsd:unsignedLong"/>
          </xsd:sequence>
        </xsd:complexType>
      </xsd:element>
    </xsd:schema>
"#;

/// The WSDL with `soap:address location="endpoint_url"`.
pub fn wsdl(endpoint_url: &str) -> String {
    let spec = WsdlSpec {
        service: "CustomerService",
        tns: NS,
        types_ns: NS,
        schema: SCHEMA,
        port_type: "CustomerPortType",
        binding: "CustomerBinding",
        port: "CustomerPort",
        operations: &[
            ("add", true),
            ("addAsync", false),
            ("get", true),
            ("echo", true),
        ],
    };
    soap::wsdl(&spec, endpoint_url)
}
