//! Serialising Customer service messages into a caller's buffer (appending), elements unprefixed under a
//! default namespace declared on the wrapper.

use super::{AddSummary, Customer, Request, Response, NS};
use crate::soap::{el, end_element, envelope_end, envelope_start, start_element_ns, text_el};
use crate::xsd::{write_boolean, write_int};

/// Appends the whole SOAP envelope for `req`.
pub fn write_request(req: &Request, out: &mut Vec<u8>) {
    let name = req.operation().as_str();
    envelope_start(out);
    start_element_ns(out, name, NS);
    match req {
        Request::Add(cs) | Request::AddAsync(cs) | Request::Echo(cs) => {
            cs.iter().for_each(|c| write_customer(out, c))
        }
        Request::Get { count, offset } => {
            el!(out, "count", |out: &mut Vec<u8>| write_int(out, *count));
            el!(out, "offset", |out: &mut Vec<u8>| write_int(out, *offset));
        }
    }
    end_element(out, name);
    envelope_end(out);
}

/// Appends the whole SOAP envelope for `resp`.
pub fn write_response(resp: &Response, out: &mut Vec<u8>) {
    // Every response variant has a wrapper element; only the one-way request lacks one.
    let name = resp.operation().response_element().unwrap_or("addResponse");
    envelope_start(out);
    start_element_ns(out, name, NS);
    match resp {
        Response::Add(summary) => write_summary(out, summary),
        Response::Get(cs) | Response::Echo(cs) => cs.iter().for_each(|c| write_customer(out, c)),
    }
    end_element(out, name);
    envelope_end(out);
}

fn write_summary(out: &mut Vec<u8>, s: &AddSummary) {
    el!(out, "count", |out: &mut Vec<u8>| write_int(out, s.count));
    el!(out, "firstId", |out: &mut Vec<u8>| write_int(
        out, s.first_id
    ));
    el!(out, "lastId", |out: &mut Vec<u8>| write_int(out, s.last_id));
    el!(out, "stored", |out: &mut Vec<u8>| write_int(out, s.stored));
}

/// Appends one `<customer>` element (in the default namespace of the context).
pub fn write_customer(out: &mut Vec<u8>, c: &Customer) {
    out.extend_from_slice(b"<customer>");
    el!(out, "id", |out: &mut Vec<u8>| write_int(out, c.id));
    text_el!(out, "firstName", &c.first_name);
    text_el!(out, "lastName", &c.last_name);
    text_el!(out, "email", &c.email);
    text_el!(out, "phone", &c.phone);
    text_el!(out, "company", &c.company);
    out.extend_from_slice(b"<address>");
    text_el!(out, "street", &c.address.street);
    text_el!(out, "city", &c.address.city);
    text_el!(out, "region", &c.address.region);
    text_el!(out, "postalCode", &c.address.postal_code);
    text_el!(out, "country", &c.address.country);
    out.extend_from_slice(b"</address>");
    el!(out, "created", |out: &mut Vec<u8>| c.created.write(out));
    el!(out, "balance", |out: &mut Vec<u8>| c.balance.write(out));
    el!(out, "active", |out: &mut Vec<u8>| write_boolean(
        out, c.active
    ));
    out.extend_from_slice(b"<tags>");
    for tag in &c.tags {
        text_el!(out, "tag", tag);
    }
    out.extend_from_slice(b"</tags>");
    if !c.notes.is_empty() {
        text_el!(out, "notes", &c.notes);
    }
    out.extend_from_slice(b"</customer>");
}
