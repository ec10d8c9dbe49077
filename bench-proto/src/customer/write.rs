//! Serialising Customer service messages into a caller's buffer (appending), elements unprefixed under a
//! default namespace declared on the wrapper.

use super::{AddSummary, Customer, Request, Response, NS};
use crate::soap::{
    element, end_element, envelope_end, envelope_start, start_element, start_element_ns,
    text_element,
};
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
            element(out, "count", |out| write_int(out, count));
            element(out, "offset", |out| write_int(out, offset));
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
    element(out, "count", |out| write_int(out, s.count));
    element(out, "firstId", |out| write_int(out, s.first_id));
    element(out, "lastId", |out| write_int(out, s.last_id));
    element(out, "stored", |out| write_int(out, s.stored));
}

/// Appends one `<customer>` element (in the default namespace of the context).
pub fn write_customer(out: &mut Vec<u8>, c: &Customer) {
    start_element(out, "customer");
    element(out, "id", |out| write_int(out, c.id));
    text_element(out, "firstName", &c.first_name);
    text_element(out, "lastName", &c.last_name);
    text_element(out, "email", &c.email);
    text_element(out, "phone", &c.phone);
    text_element(out, "company", &c.company);
    start_element(out, "address");
    text_element(out, "street", &c.address.street);
    text_element(out, "city", &c.address.city);
    text_element(out, "region", &c.address.region);
    text_element(out, "postalCode", &c.address.postal_code);
    text_element(out, "country", &c.address.country);
    end_element(out, "address");
    element(out, "created", |out| c.created.write(out));
    element(out, "balance", |out| c.balance.write(out));
    element(out, "active", |out| write_boolean(out, c.active));
    start_element(out, "tags");
    for tag in &c.tags {
        text_element(out, "tag", tag);
    }
    end_element(out, "tags");
    if !c.notes.is_empty() {
        text_element(out, "notes", &c.notes);
    }
    end_element(out, "customer");
}
