//! Serialising CXF performance messages. Elements are written unprefixed under a default namespace declared
//! once on the wrapper element; every function appends to the caller's buffer.

use super::{NestedComplexType, Request, Response, SimpleStruct, TYPES_NS};
use crate::soap::{
    el, end_element, envelope_end, envelope_start, start_element, start_element_ns, text_el,
};
use crate::xsd::{write_attr, write_base64, write_double, write_float, write_hex, write_int};

/// Appends the whole SOAP envelope for `req`.
pub fn write_request(req: &Request<'_>, out: &mut Vec<u8>) {
    let op = req.operation();
    envelope_start(out);
    start_element_ns(out, op.as_str(), TYPES_NS);
    match req {
        Request::EchoString(s) => text_el!(out, "in", s),
        Request::EchoBase64(b) => el!(out, "in", |out: &mut Vec<u8>| write_base64(out, b)),
        Request::EchoComplex { items, id } => {
            write_seq(out, "in", items);
            el!(out, "id", |out: &mut Vec<u8>| write_int(out, *id));
        }
    }
    end_element(out, op.as_str());
    envelope_end(out);
}

/// Appends the whole SOAP envelope for `resp`.
pub fn write_response(resp: &Response<'_>, out: &mut Vec<u8>) {
    let name = resp.operation().response_element();
    envelope_start(out);
    start_element_ns(out, name, TYPES_NS);
    match resp {
        Response::EchoString(s) => text_el!(out, "out", s),
        Response::EchoBase64(b) => el!(out, "out", |out: &mut Vec<u8>| write_base64(out, b)),
        Response::EchoComplex { items, id_out } => {
            write_seq(out, "return", items);
            el!(out, "idout", |out: &mut Vec<u8>| write_int(out, *id_out));
        }
    }
    end_element(out, name);
    envelope_end(out);
}

/// A `NestedComplexTypeSeq` named `name`.
fn write_seq(out: &mut Vec<u8>, name: &str, items: &[NestedComplexType<'_>]) {
    start_element(out, name);
    for item in items {
        write_item(out, item);
    }
    end_element(out, name);
}

fn write_item(out: &mut Vec<u8>, it: &NestedComplexType<'_>) {
    out.extend_from_slice(b"<item>");
    text_el!(out, "varString", &it.var_string);
    el!(out, "varUByte", |out: &mut Vec<u8>| write_int(
        out,
        it.var_ubyte
    ));
    el!(out, "varUnsignedLong", |out: &mut Vec<u8>| {
        write_int(out, it.var_unsigned_long)
    });
    el!(out, "varFloat", |out: &mut Vec<u8>| write_float(
        out,
        it.var_float
    ));
    it.var_qname.write_element(out, "varQName", TYPES_NS);
    el!(out, "varBase64Binary", |out: &mut Vec<u8>| {
        write_base64(out, &it.var_base64_binary)
    });
    el!(out, "varHexBinary", |out: &mut Vec<u8>| {
        write_hex(out, &it.var_hex_binary)
    });
    write_struct(out, &it.var_struct);
    el!(out, "varEnum", |out: &mut Vec<u8>| {
        out.extend_from_slice(it.var_enum.as_str().as_bytes())
    });
    out.extend_from_slice(b"</item>");
}

fn write_struct(out: &mut Vec<u8>, s: &SimpleStruct<'_>) {
    match &s.var_attr_string {
        Some(attr) => {
            out.extend_from_slice(b"<varStruct varAttrString=\"");
            write_attr(out, attr);
            out.extend_from_slice(b"\">");
        }
        None => out.extend_from_slice(b"<varStruct>"),
    }
    el!(out, "varFloat", |out: &mut Vec<u8>| write_float(
        out,
        s.var_float
    ));
    el!(out, "varShort", |out: &mut Vec<u8>| write_int(
        out,
        s.var_short
    ));
    text_el!(out, "varString", &s.var_string);
    el!(out, "varByte", |out: &mut Vec<u8>| write_int(
        out, s.var_byte
    ));
    el!(out, "varDecimal", |out: &mut Vec<u8>| s
        .var_decimal
        .write(out));
    el!(out, "varDouble", |out: &mut Vec<u8>| write_double(
        out,
        s.var_double
    ));
    el!(out, "varDateTime", |out: &mut Vec<u8>| s
        .var_date_time
        .write(out));
    out.extend_from_slice(b"</varStruct>");
}
