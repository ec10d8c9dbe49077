//! Parsing CXF performance messages into typed values, validating every field. Errors name the field's
//! path, e.g. `echoComplexTypeDoc/in/item[0]/varUByte: '256' is not an xsd:unsignedByte`.

use super::{
    ColourEnum, NestedComplexType, Operation, Request, Response, SimpleStruct, TYPES_NS as NS,
};
use crate::soap::{BodyReader, Limits, SoapError};
use crate::xsd::{self, XsdError};

/// Parses a request envelope (any prefixes; headers tolerated unless `mustUnderstand`) within the default
/// [`Limits`].
pub fn parse_request(body: &[u8]) -> Result<Request, SoapError> {
    parse_request_with(body, &Limits::default())
}

/// [`parse_request`] within `limits`.
pub fn parse_request_with(body: &[u8], limits: &Limits) -> Result<Request, SoapError> {
    let mut r = BodyReader::open_with(body, limits)?;
    let op = r.operation(NS, Operation::from_name)?;
    let req = request_body(&mut r, op).map_err(|e| e.at(op.as_str()))?;
    r.finish()?;
    Ok(req)
}

/// Parses a response envelope. A fault in the Body is an error here; use `soap::parse_fault` to read it.
pub fn parse_response(body: &[u8]) -> Result<Response, SoapError> {
    let mut r = BodyReader::open(body)?;
    let op = r.operation(NS, Operation::from_response_element)?;
    let resp = response_body(&mut r, op).map_err(|e| e.at(op.response_element()))?;
    r.finish()?;
    Ok(resp)
}

fn request_body(r: &mut BodyReader<'_>, op: Operation) -> Result<Request, SoapError> {
    let req = match op {
        Operation::EchoStringDoc => Request::EchoString(r.string_field(NS, "in")?),
        Operation::EchoBase64Doc => {
            Request::EchoBase64(r.bytes_field(NS, "in", xsd::parse_base64_bytes)?)
        }
        Operation::EchoComplexTypeDoc => {
            let items = r.within(NS, "in", seq)?;
            let id = r.field(NS, "id", xsd::parse_int)?;
            Request::EchoComplex { items, id }
        }
    };
    r.end()?;
    Ok(req)
}

fn response_body(r: &mut BodyReader<'_>, op: Operation) -> Result<Response, SoapError> {
    let resp = match op {
        Operation::EchoStringDoc => Response::EchoString(r.string_field(NS, "out")?),
        Operation::EchoBase64Doc => {
            Response::EchoBase64(r.bytes_field(NS, "out", xsd::parse_base64_bytes)?)
        }
        Operation::EchoComplexTypeDoc => {
            let items = r.within(NS, "return", seq)?;
            let id_out = r.field(NS, "idout", xsd::parse_int)?;
            Response::EchoComplex { items, id_out }
        }
    };
    r.end()?;
    Ok(resp)
}

/// The content of a `NestedComplexTypeSeq`: zero or more `item`s.
fn seq(r: &mut BodyReader<'_>) -> Result<Vec<NestedComplexType>, SoapError> {
    r.repeated(NS, "item", item)
}

fn item(r: &mut BodyReader<'_>) -> Result<NestedComplexType, SoapError> {
    let it = NestedComplexType {
        var_string: r.string_field(NS, "varString")?,
        var_ubyte: r.field(NS, "varUByte", xsd::parse_unsigned_byte)?,
        var_unsigned_long: r.field(NS, "varUnsignedLong", xsd::parse_unsigned_long)?,
        var_float: r.field(NS, "varFloat", xsd::parse_float)?,
        var_qname: r.qname_field(NS, "varQName")?,
        var_base64_binary: r.bytes_field(NS, "varBase64Binary", xsd::parse_base64_bytes)?,
        var_hex_binary: r.bytes_field(NS, "varHexBinary", xsd::parse_hex_bytes)?,
        var_struct: simple_struct(r)?,
        var_enum: r.field(NS, "varEnum", |s| {
            ColourEnum::parse(s).ok_or_else(|| XsdError::enumeration("ColourEnum", s))
        })?,
    };
    r.end()?;
    Ok(it)
}

fn simple_struct<'a>(r: &mut BodyReader<'a>) -> Result<SimpleStruct, SoapError> {
    let el = r.child(NS, "varStruct").map_err(|e| e.at("varStruct"))?;
    let read = |r: &mut BodyReader<'a>| -> Result<SimpleStruct, SoapError> {
        let var_attr_string = r.attribute(&el, "varAttrString")?;
        let s = SimpleStruct {
            var_float: r.field(NS, "varFloat", xsd::parse_float)?,
            var_short: r.field(NS, "varShort", xsd::parse_short)?,
            var_string: r.string_field(NS, "varString")?,
            var_byte: r.field(NS, "varByte", xsd::parse_byte)?,
            var_decimal: r.field(NS, "varDecimal", xsd::Decimal::parse)?,
            var_double: r.field(NS, "varDouble", xsd::parse_double)?,
            var_date_time: r.field(NS, "varDateTime", xsd::DateTime::parse)?,
            var_attr_string,
        };
        r.end()?;
        Ok(s)
    };
    read(r).map_err(|e| e.at("varStruct"))
}
