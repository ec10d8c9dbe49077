//! Serialising CXF performance messages. Elements are written unprefixed under a default namespace declared
//! once on the wrapper element; every function appends to the caller's buffer.

use super::{NestedComplexType, Request, Response, SimpleStruct, TYPES_NS};
use crate::soap::{
    element, end_element, envelope_end, envelope_start, start_element, start_element_ns,
    text_element,
};
use crate::xsd::{write_attr, write_base64, write_double, write_float, write_hex, write_int};

/// Appends the whole SOAP envelope for `req`.
pub fn write_request(req: &Request, out: &mut Vec<u8>) {
    let op = req.operation();
    envelope_start(out);
    start_element_ns(out, op.as_str(), TYPES_NS);
    match req {
        Request::EchoString(s) => text_element(out, "in", s),
        Request::EchoBase64(b) => element(out, "in", |out| write_base64(out, b)),
        Request::EchoComplex { items, id } => {
            write_seq(out, "in", items);
            element(out, "id", |out| write_int(out, id));
        }
    }
    end_element(out, op.as_str());
    envelope_end(out);
}

/// Appends the whole SOAP envelope for `resp`.
pub fn write_response(resp: &Response, out: &mut Vec<u8>) {
    let name = resp.operation().response_element();
    envelope_start(out);
    start_element_ns(out, name, TYPES_NS);
    match resp {
        Response::EchoString(s) => text_element(out, "out", s),
        Response::EchoBase64(b) => element(out, "out", |out| write_base64(out, b)),
        Response::EchoComplex { items, id_out } => {
            write_seq(out, "return", items);
            element(out, "idout", |out| write_int(out, id_out));
        }
    }
    end_element(out, name);
    envelope_end(out);
}

/// A `NestedComplexTypeSeq` named `name`.
fn write_seq(out: &mut Vec<u8>, name: &str, items: &[NestedComplexType]) {
    start_element(out, name);
    for item in items {
        write_item(out, item);
    }
    end_element(out, name);
}

fn write_item(out: &mut Vec<u8>, it: &NestedComplexType) {
    start_element(out, "item");
    text_element(out, "varString", &it.var_string);
    element(out, "varUByte", |out| write_int(out, it.var_ubyte));
    element(out, "varUnsignedLong", |out| {
        write_int(out, it.var_unsigned_long)
    });
    element(out, "varFloat", |out| write_float(out, it.var_float));
    it.var_qname.write_element(out, "varQName", TYPES_NS);
    element(out, "varBase64Binary", |out| {
        write_base64(out, &it.var_base64_binary)
    });
    element(out, "varHexBinary", |out| {
        write_hex(out, &it.var_hex_binary)
    });
    write_struct(out, &it.var_struct);
    element(out, "varEnum", |out| {
        out.extend_from_slice(it.var_enum.as_str().as_bytes())
    });
    end_element(out, "item");
}

fn write_struct(out: &mut Vec<u8>, s: &SimpleStruct) {
    match &s.var_attr_string {
        Some(attr) => {
            out.extend_from_slice(b"<varStruct varAttrString=\"");
            write_attr(out, attr);
            out.extend_from_slice(b"\">");
        }
        None => start_element(out, "varStruct"),
    }
    element(out, "varFloat", |out| write_float(out, s.var_float));
    element(out, "varShort", |out| write_int(out, s.var_short));
    text_element(out, "varString", &s.var_string);
    element(out, "varByte", |out| write_int(out, s.var_byte));
    element(out, "varDecimal", |out| s.var_decimal.write(out));
    element(out, "varDouble", |out| write_double(out, s.var_double));
    element(out, "varDateTime", |out| s.var_date_time.write(out));
    end_element(out, "varStruct");
}
