//! The Customer service's request handling as bench-server does it: `echo` in one pass, each field parsed and
//! checked as [`parse_request`](super::parse_request) checks it and written back at once, without building the
//! customer array; the response is byte for byte what [`write_response`](super::write_response) writes for the
//! parsed array, and a bad request the same error. The other operations are parsed for the caller.

mod out;

use super::parse::{country, request_of};
use super::{Operation, Request, NS};
use crate::soap::{
    end_element, envelope_end, envelope_start, start_element_ns, BodyReader, Limits, SoapError,
};
use crate::xsd::{self, write_boolean, write_int, write_text};
use out::{is_verbatim, Echo};

/// What [`serve_request`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Served {
    /// An `echo`: its response envelope is written.
    Echoed {
        /// Customers echoed.
        customers: usize,
    },
    /// Any other request, parsed, for the caller to perform (nothing written).
    Request(Request),
}

/// Reads the request envelope `body` within `limits`: an `echo` is answered into `out` (appended) as it is
/// read; any other operation is returned parsed. On an error `out` is as it was, and the error is what
/// [`parse_request_with`](super::parse_request_with) returns for `body`.
pub fn serve_request(body: &[u8], limits: &Limits, out: &mut Vec<u8>) -> Result<Served, SoapError> {
    let start = out.len();
    let served = serve(body, limits, out);
    if served.is_err() {
        out.truncate(start);
    }
    served
}

fn serve(body: &[u8], limits: &Limits, out: &mut Vec<u8>) -> Result<Served, SoapError> {
    let mut r = BodyReader::open_with(body, limits)?;
    let op = r.operation(NS, Operation::from_name)?;
    if op != Operation::Echo {
        let req = request_of(&mut r, op).map_err(|e| e.at(op.as_str()))?;
        r.finish()?;
        return Ok(Served::Request(req));
    }
    // About as big as the request.
    out.reserve(body.len() + 64);
    envelope_start(out);
    start_element_ns(out, "echoResponse", NS);
    let mut echo = Echo::new(r.input(), out);
    let (customers, _) = r
        .each(NS, "customer", |r, from| customer(r, &mut echo, from))
        .map_err(|e| e.at(op.as_str()))?;
    echo.flush();
    end_element(out, "echoResponse");
    envelope_end(out);
    r.finish()?;
    Ok(Served::Echoed { customers })
}

/// A typed leaf field: `parse` as `BodyReader::field` reads it, `write` the serialiser's form of its value.
macro_rules! typed {
    ($r:expr, $echo:expr, $name:literal, $parse:expr, $write:expr) => {{
        let (r, echo): (&mut BodyReader<'a>, &mut Echo<'_, 'a>) = ($r, $echo);
        let parse = $parse;
        let fast = r
            .written_leaf(NS, $name)
            .and_then(|leaf| Some((leaf, parse(r.leaf_text(&leaf)?).ok()?)));
        let value = match fast {
            Some((leaf, value)) => {
                r.take_written_leaf(&leaf);
                value
            }
            None => r.field(NS, $name, parse)?,
        };
        let out = echo.out();
        out.extend_from_slice(concat!("<", $name, ">").as_bytes());
        ($write)(&mut *out, value);
        out.extend_from_slice(concat!("</", $name, ">").as_bytes());
    }};
}

/// An xsd:string leaf field, read as `BodyReader::string_field` reads it: copied where its text is its own
/// value and needs no escaping (then the element as written is what the serialiser writes).
macro_rules! string {
    ($r:expr, $echo:expr, $name:literal) => {{
        let (r, echo): (&mut BodyReader<'a>, &mut Echo<'_, 'a>) = ($r, $echo);
        match r.written_leaf(NS, $name).filter(|l| is_verbatim(l.raw)) {
            Some(leaf) => {
                r.take_written_leaf(&leaf);
                echo.copy(leaf.at, leaf.whole.len());
            }
            None => {
                let text = r.string_field(NS, $name)?;
                let out = echo.out();
                out.extend_from_slice(concat!("<", $name, ">").as_bytes());
                write_text(out, &text);
                out.extend_from_slice(concat!("</", $name, ">").as_bytes());
            }
        }
    }};
}

/// One customer, its start tag read from offset `from`; as `parse.rs`'s `customer` reads it.
fn customer<'a>(
    r: &mut BodyReader<'a>,
    echo: &mut Echo<'_, 'a>,
    from: usize,
) -> Result<(), SoapError> {
    echo.markup(from, r.position(), b"<customer>");
    typed!(r, echo, "id", xsd::parse_unsigned_long, write_int);
    string!(r, echo, "firstName");
    string!(r, echo, "lastName");
    string!(r, echo, "email");
    string!(r, echo, "phone");
    string!(r, echo, "company");
    let from = r.position();
    r.within(NS, "address", |r| address(r, echo, from))?;
    typed!(
        r,
        echo,
        "created",
        xsd::DateTime::parse,
        |out, v: xsd::DateTime| v.write(out)
    );
    typed!(
        r,
        echo,
        "balance",
        xsd::Decimal::parse,
        |out, v: xsd::Decimal| v.write(out)
    );
    typed!(r, echo, "active", xsd::parse_boolean, write_boolean);
    let from = r.position();
    r.within(NS, "tags", |r| tags(r, echo, from))?;
    notes_and_end(r, echo)
}

/// The address, its start tag read from offset `from`, up to its end tag.
fn address<'a>(
    r: &mut BodyReader<'a>,
    echo: &mut Echo<'_, 'a>,
    from: usize,
) -> Result<(), SoapError> {
    echo.markup(from, r.position(), b"<address>");
    string!(r, echo, "street");
    string!(r, echo, "city");
    string!(r, echo, "region");
    string!(r, echo, "postalCode");
    typed!(r, echo, "country", country, |out, v: String| write_text(
        out, &v
    ));
    let from = r.position();
    r.end()?;
    echo.markup(from, r.position(), b"</address>");
    Ok(())
}

/// The tags, their start tag read from offset `from`, up to their end tag.
fn tags<'a>(r: &mut BodyReader<'a>, echo: &mut Echo<'_, 'a>, from: usize) -> Result<(), SoapError> {
    echo.markup(from, r.position(), b"<tags>");
    let (_, end) = r.each(NS, "tag", |r, from| {
        let at = r.position();
        echo.markup(from, at, b"<tag>");
        let text = r.text()?;
        echo.text_then(at, r.position(), &text, b"</tag>");
        Ok(())
    })?;
    echo.markup(end, r.position(), b"</tags>");
    Ok(())
}

/// The optional notes (written only when not empty, as the serialiser does) and the customer's end tag.
fn notes_and_end<'a>(r: &mut BodyReader<'a>, echo: &mut Echo<'_, 'a>) -> Result<(), SoapError> {
    let from = r.position();
    let Some(el) = r.next_child()? else {
        echo.markup(from, r.position(), b"</customer>");
        return Ok(());
    };
    if el.local_name() != b"notes" || !r.is_in(&el, NS) {
        return Err(r.unexpected(&el));
    }
    let at = r.position();
    let text = r.text().map_err(|e| e.at("notes"))?;
    if !text.is_empty() {
        echo.markup(from, at, b"<notes>");
        echo.text_then(at, r.position(), &text, b"</notes>");
    }
    let from = r.position();
    r.end()?;
    echo.markup(from, r.position(), b"</customer>");
    Ok(())
}

#[cfg(test)]
mod tests;
