//! Parsing CXF performance messages into typed values, validating every field, in one pass. Values borrow from
//! the message where they need no unescaping; decoded binaries, expanded text and the item slice go into the
//! caller's arena. Errors name the field's path, e.g.
//! `echoComplexTypeDoc/in/item[0]/varUByte: '256' is not an xsd:unsignedByte`.

use std::borrow::Cow;

use super::{
    ColourEnum, Items, NestedComplexType, Operation, Request, Response, SimpleStruct,
    TYPES_NS as NS,
};
use crate::arena::Bump;
use crate::soap::{BodyReader, Limits, SoapError, UsualRun};
use crate::xsd::{self, XsdError};

/// Parses a request envelope (any prefixes; headers tolerated unless `mustUnderstand`) within the default
/// [`Limits`], into values that own their data (see [`parse_request_in`] for borrowed ones).
pub fn parse_request(body: &[u8]) -> Result<Request<'static>, SoapError> {
    parse_request_with(body, &Limits::default())
}

/// [`parse_request`] within `limits`.
pub fn parse_request_with(body: &[u8], limits: &Limits) -> Result<Request<'static>, SoapError> {
    let arena = Bump::new();
    parse_request_in(body, limits, &arena).map(|req| req.to_owned_static())
}

/// Parses a request within `limits`: its values borrow from `body` or, where they had to be decoded, from
/// `arena` (which is all this allocates in).
pub fn parse_request_in<'a>(
    body: &'a [u8],
    limits: &Limits,
    arena: &'a Bump,
) -> Result<Request<'a>, SoapError> {
    let mut r = BodyReader::open_with(body, limits)?;
    let op = r.operation(NS, Operation::from_name)?;
    let req = request_body(&mut r, op, arena).map_err(|e| e.at(op.as_str()))?;
    r.finish()?;
    Ok(req)
}

/// Parses a response envelope. A fault in the Body is an error here; use `soap::parse_fault` to read it.
pub fn parse_response(body: &[u8]) -> Result<Response<'static>, SoapError> {
    let arena = Bump::new();
    parse_response_in(body, &arena).map(|resp| resp.to_owned_static())
}

/// [`parse_response`] into values borrowed from `body` and `arena`, as [`parse_request_in`].
pub fn parse_response_in<'a>(body: &'a [u8], arena: &'a Bump) -> Result<Response<'a>, SoapError> {
    let mut r = BodyReader::open(body)?;
    let op = r.operation(NS, Operation::from_response_element)?;
    let resp = response_body(&mut r, op, arena).map_err(|e| e.at(op.response_element()))?;
    r.finish()?;
    Ok(resp)
}

fn request_body<'a>(
    r: &mut BodyReader<'a>,
    op: Operation,
    arena: &'a Bump,
) -> Result<Request<'a>, SoapError> {
    let req = match op {
        Operation::EchoStringDoc => Request::EchoString(r.str_field_in(NS, "in", arena)?.into()),
        Operation::EchoBase64Doc => Request::EchoBase64(base64(r, "in", arena)?),
        Operation::EchoComplexTypeDoc => {
            let items = r.within(NS, "in", |r| seq(r, arena))?;
            let id = r.field(NS, "id", xsd::parse_int)?;
            Request::EchoComplex { items, id }
        }
    };
    r.end()?;
    Ok(req)
}

fn response_body<'a>(
    r: &mut BodyReader<'a>,
    op: Operation,
    arena: &'a Bump,
) -> Result<Response<'a>, SoapError> {
    let resp = match op {
        Operation::EchoStringDoc => Response::EchoString(r.str_field_in(NS, "out", arena)?.into()),
        Operation::EchoBase64Doc => Response::EchoBase64(base64(r, "out", arena)?),
        Operation::EchoComplexTypeDoc => {
            let items = r.within(NS, "return", |r| seq(r, arena))?;
            let id_out = r.field(NS, "idout", xsd::parse_int)?;
            Response::EchoComplex { items, id_out }
        }
    };
    r.end()?;
    Ok(resp)
}

/// The content of a `NestedComplexTypeSeq`: zero or more `item`s.
#[inline]
fn seq<'a>(r: &mut BodyReader<'a>, arena: &'a Bump) -> Result<Items<'a>, SoapError> {
    r.repeated_in(NS, "item", arena, |r| item(r, arena))
        .map(Items::Borrowed)
}

fn base64<'a>(
    r: &mut BodyReader<'a>,
    name: &'static str,
    arena: &'a Bump,
) -> Result<Cow<'a, [u8]>, SoapError> {
    r.bytes_field(NS, name, |t| xsd::parse_base64_in(t, arena))
        .map(Cow::Borrowed)
}

fn item<'a>(r: &mut BodyReader<'a>, arena: &'a Bump) -> Result<NestedComplexType<'a>, SoapError> {
    // Two levels below the item (varStruct's fields); the longest names are 15 bytes.
    let usual = r.usual_run(NS, 2, 15, arena, |run| usual_item(run, arena));
    let it = match usual {
        Some(it) => it,
        None => general_item(r, arena)?,
    };
    r.end()?;
    Ok(it)
}

/// The item as nearly every client writes it, read in one go; `None` for any other form.
fn usual_item<'a>(run: &mut UsualRun<'_, 'a>, arena: &'a Bump) -> Option<NestedComplexType<'a>> {
    let base64 = |t: &[u8]| xsd::parse_base64_in(t, arena);
    let hex = |t: &[u8]| xsd::parse_hex_in(t, arena);
    Some(NestedComplexType {
        var_string: run.text("varString")?.into(),
        var_ubyte: run.value("varUByte", xsd::parse_unsigned_byte)?,
        var_unsigned_long: run.value("varUnsignedLong", xsd::parse_unsigned_long)?,
        var_float: run.value("varFloat", xsd::parse_float)?,
        var_qname: run.qname("varQName")?,
        var_base64_binary: Cow::Borrowed(run.bytes("varBase64Binary", base64)?),
        var_hex_binary: Cow::Borrowed(run.bytes("varHexBinary", hex)?),
        var_struct: usual_struct(run)?,
        var_enum: run.value("varEnum", colour)?,
    })
}

fn usual_struct<'a>(run: &mut UsualRun<'_, 'a>) -> Option<SimpleStruct<'a>> {
    let var_attr_string = run.open_with_attribute("varStruct", "varAttrString")?;
    let s = SimpleStruct {
        var_float: run.value("varFloat", xsd::parse_float)?,
        var_short: run.value("varShort", xsd::parse_short)?,
        var_string: run.text("varString")?.into(),
        var_byte: run.value("varByte", xsd::parse_byte)?,
        var_decimal: run.value("varDecimal", xsd::Decimal::parse)?,
        var_double: run.value("varDouble", xsd::parse_double)?,
        var_date_time: run.value("varDateTime", xsd::DateTime::parse)?,
        var_attr_string: Some(Cow::Borrowed(var_attr_string)),
    };
    run.close("varStruct")?;
    Some(s)
}

fn colour(s: &str) -> Result<ColourEnum, XsdError> {
    ColourEnum::parse(s).ok_or_else(|| XsdError::enumeration("ColourEnum", s))
}

/// The item in any form the schema allows, field by field; its end is left to the caller.
fn general_item<'a>(
    r: &mut BodyReader<'a>,
    arena: &'a Bump,
) -> Result<NestedComplexType<'a>, SoapError> {
    Ok(NestedComplexType {
        var_string: r.str_field_in(NS, "varString", arena)?.into(),
        var_ubyte: r.field(NS, "varUByte", xsd::parse_unsigned_byte)?,
        var_unsigned_long: r.field(NS, "varUnsignedLong", xsd::parse_unsigned_long)?,
        var_float: r.field(NS, "varFloat", xsd::parse_float)?,
        var_qname: r.qname_field_in(NS, "varQName", arena)?,
        var_base64_binary: base64(r, "varBase64Binary", arena)?,
        var_hex_binary: r
            .bytes_field(NS, "varHexBinary", |t| xsd::parse_hex_in(t, arena))?
            .into(),
        var_struct: simple_struct(r, arena)?,
        var_enum: r.field(NS, "varEnum", colour)?,
    })
}

fn simple_struct<'a>(
    r: &mut BodyReader<'a>,
    arena: &'a Bump,
) -> Result<SimpleStruct<'a>, SoapError> {
    let read = |r: &mut BodyReader<'a>| -> Result<SimpleStruct<'a>, SoapError> {
        let (_, var_attr_string) =
            r.child_with_attribute_in(NS, "varStruct", "varAttrString", arena)?;
        let s = SimpleStruct {
            var_float: r.field(NS, "varFloat", xsd::parse_float)?,
            var_short: r.field(NS, "varShort", xsd::parse_short)?,
            var_string: r.str_field_in(NS, "varString", arena)?.into(),
            var_byte: r.field(NS, "varByte", xsd::parse_byte)?,
            var_decimal: r.field(NS, "varDecimal", xsd::Decimal::parse)?,
            var_double: r.field(NS, "varDouble", xsd::parse_double)?,
            var_date_time: r.field(NS, "varDateTime", xsd::DateTime::parse)?,
            var_attr_string: var_attr_string.map(Cow::Borrowed),
        };
        r.end()?;
        Ok(s)
    };
    read(r).map_err(|e| e.at("varStruct"))
}
