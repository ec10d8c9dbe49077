//! Parsing Customer service messages into typed values, every field validated; errors name the field's
//! path, e.g. `add/customer[3]/balance: '12,50' is not an xsd:decimal`.

use super::{AddSummary, Address, Customer, Operation, Request, Response, NS};
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
    let req = request_of(&mut r, op).map_err(|e| e.at(op.as_str()))?;
    r.finish()?;
    Ok(req)
}

/// The content of the wrapper of request `op`, up to its end tag (errors without the operation's name).
pub(super) fn request_of(r: &mut BodyReader<'_>, op: Operation) -> Result<Request, SoapError> {
    Ok(match op {
        Operation::Add => Request::Add(customers(r)?),
        Operation::AddAsync => Request::AddAsync(customers(r)?),
        Operation::Echo => Request::Echo(customers(r)?),
        Operation::Get => {
            let count = r.field(NS, "count", xsd::parse_unsigned_int)?;
            let offset = r.field(NS, "offset", xsd::parse_unsigned_long)?;
            r.end()?;
            Request::Get { count, offset }
        }
    })
}

/// Parses a response envelope. A fault in the Body is an error here; use `soap::parse_fault` to read it.
pub fn parse_response(body: &[u8]) -> Result<Response, SoapError> {
    let mut r = BodyReader::open(body)?;
    let op = r.operation(NS, Operation::from_response_element)?;
    let read = |r: &mut BodyReader<'_>| -> Result<Response, SoapError> {
        let resp = match op {
            Operation::Add | Operation::AddAsync => {
                let summary = AddSummary {
                    count: r.field(NS, "count", xsd::parse_unsigned_int)?,
                    first_id: r.field(NS, "firstId", xsd::parse_unsigned_long)?,
                    last_id: r.field(NS, "lastId", xsd::parse_unsigned_long)?,
                    stored: r.field(NS, "stored", xsd::parse_unsigned_long)?,
                };
                r.end()?;
                Response::Add(summary)
            }
            Operation::Get => Response::Get(customers(r)?),
            Operation::Echo => Response::Echo(customers(r)?),
        };
        Ok(resp)
    };
    let resp = read(&mut r).map_err(|e| e.at(op.response_element().unwrap_or_default()))?;
    r.finish()?;
    Ok(resp)
}

/// Zero or more `customer` elements up to the end of the wrapper.
fn customers(r: &mut BodyReader<'_>) -> Result<Vec<Customer>, SoapError> {
    r.repeated(NS, "customer", customer)
}

fn customer(r: &mut BodyReader<'_>) -> Result<Customer, SoapError> {
    let mut c = Customer {
        id: r.field(NS, "id", xsd::parse_unsigned_long)?,
        first_name: r.string_field(NS, "firstName")?,
        last_name: r.string_field(NS, "lastName")?,
        email: r.string_field(NS, "email")?,
        phone: r.string_field(NS, "phone")?,
        company: r.string_field(NS, "company")?,
        address: r.within(NS, "address", address)?,
        created: r.field(NS, "created", xsd::DateTime::parse)?,
        balance: r.field(NS, "balance", xsd::Decimal::parse)?,
        active: r.field(NS, "active", xsd::parse_boolean)?,
        tags: r.within(NS, "tags", |r| {
            r.repeated(NS, "tag", |r| Ok(r.text()?.into_owned()))
        })?,
        notes: String::new(),
    };
    // `notes` is optional and last.
    if let Some(el) = r.next_child()? {
        if el.local_name() != b"notes" || !r.is_in(&el, NS) {
            return Err(r.unexpected(&el));
        }
        c.notes = r.text().map_err(|e| e.at("notes"))?.into_owned();
        r.end()?;
    }
    Ok(c)
}

fn address(r: &mut BodyReader<'_>) -> Result<Address, SoapError> {
    let a = Address {
        street: r.string_field(NS, "street")?,
        city: r.string_field(NS, "city")?,
        region: r.string_field(NS, "region")?,
        postal_code: r.string_field(NS, "postalCode")?,
        country: r.field(NS, "country", country)?,
    };
    r.end()?;
    Ok(a)
}

/// An ISO 3166-1 alpha-2 code: two upper-case ASCII letters.
pub(super) fn country(s: &str) -> Result<String, XsdError> {
    let code = xsd::collapse(s);
    if code.len() == 2 && code.bytes().all(|b| b.is_ascii_uppercase()) {
        Ok(code.to_owned())
    } else {
        Err(XsdError::enumeration("CountryCode", s))
    }
}
