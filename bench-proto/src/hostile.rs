//! A hostile corpus: request bodies of a chosen size, one per shape of XML that could make a parser's cost
//! grow faster than the body (many attributes or namespace declarations, long names, deep nesting, floods of
//! elements, references, comments, CDATA, whitespace, huge numbers …), and the valid echo body of the same
//! size to compare them with. Used by the benchmarks, the instruction-count check, tests and fuzz seeds.

use crate::soap::colliding_prefixes;
use crate::soap::work::{ATTRIBUTE, DECLARATION, PROBE};
use crate::soap::{write_fault, Limits, SoapError};
use crate::{customer, cxf};

/// Which service a body is posted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    Cxf,
    Customer,
}

/// What the server must answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// A 200 echo (the shape is unusual but valid).
    Echo,
    /// A fault whose text contains this.
    Fault(&'static str),
}

/// One shape of hostile body.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// A short name, used as the benchmark id.
    pub name: &'static str,
    pub service: Service,
    /// Builds a body of about `size` bytes (at least the valid request it is built from).
    pub make: fn(usize) -> Vec<u8>,
    pub answer: Answer,
}

/// Every shape. The ones answered with an echo stay just within the default [`Limits`] all the way through
/// the body, which makes them the expensive ones; the faults must come as soon as a limit is passed.
pub const SHAPES: &[Shape] = &[
    shape(
        "attributes",
        Service::Cxf,
        attributes,
        Answer::Fault("xml-max-attributes = 64"),
    ),
    shape(
        "xmlns_declarations",
        Service::Cxf,
        xmlns_declarations,
        Answer::Fault("xml-max-namespace-declarations = 32"),
    ),
    shape(
        "xmlns_in_scope",
        Service::Cxf,
        xmlns_in_scope,
        Answer::Fault("xml-max-namespaces-in-scope = 64"),
    ),
    shape(
        "deep_nesting",
        Service::Cxf,
        deep_nesting,
        Answer::Fault("xml-max-depth = 64"),
    ),
    shape(
        "long_element_name",
        Service::Cxf,
        long_element_name,
        Answer::Fault("xml-max-name-len = 256"),
    ),
    shape(
        "long_attribute_name",
        Service::Cxf,
        long_attribute_name,
        Answer::Fault("xml-max-name-len = 256"),
    ),
    shape(
        "duplicate_attributes",
        Service::Cxf,
        duplicate_attributes,
        Answer::Fault("duplicate attribute"),
    ),
    shape(
        "unclosed_tag",
        Service::Cxf,
        unclosed_tag,
        Answer::Fault("malformed XML"),
    ),
    shape(
        "long_decimal",
        Service::Cxf,
        long_decimal,
        Answer::Fault("varDecimal"),
    ),
    shape(
        "long_namespace_uri",
        Service::Cxf,
        long_namespace_uri,
        Answer::Fault("bytes)', expected 'http"),
    ),
    shape(
        "tag_flood",
        Service::Customer,
        tag_flood,
        Answer::Fault("xml-max-items = 100000"),
    ),
    shape(
        "header_flood",
        Service::Cxf,
        header_flood,
        Answer::Fault("xml-max-header-elements = 128"),
    ),
    shape(
        "comment_flood",
        Service::Cxf,
        comment_flood,
        Answer::Fault("xml-max-comments = 256"),
    ),
    shape(
        "header_blocks_max_attributes",
        Service::Cxf,
        header_max_attributes,
        Answer::Echo,
    ),
    shape(
        "header_blocks_max_xmlns",
        Service::Cxf,
        header_max_xmlns,
        Answer::Echo,
    ),
    shape(
        "header_must_understand_scan",
        Service::Cxf,
        header_must_understand_scan,
        Answer::Echo,
    ),
    shape(
        "header_nested_blocks",
        Service::Cxf,
        header_nested_blocks,
        Answer::Echo,
    ),
    shape(
        "body_max_attributes",
        Service::Cxf,
        body_max_attributes,
        Answer::Echo,
    ),
    shape(
        "body_attribute_flood",
        Service::Cxf,
        body_attribute_flood,
        Answer::Fault("xml-max-work = 1024"),
    ),
    shape(
        "items_scope_scan",
        Service::Cxf,
        items_scope_scan,
        Answer::Echo,
    ),
    shape(
        "items_colliding_prefixes",
        Service::Cxf,
        items_colliding_prefixes,
        Answer::Echo,
    ),
    shape(
        "tags_colliding_prefixes",
        Service::Customer,
        tags_colliding_prefixes,
        Answer::Fault("xml-max-work = 1024"),
    ),
    shape("long_text", Service::Cxf, long_text, Answer::Echo),
    shape(
        "long_attribute_value",
        Service::Cxf,
        long_attribute_value,
        Answer::Echo,
    ),
    shape("entity_refs", Service::Cxf, entity_refs, Answer::Echo),
    shape("char_refs", Service::Cxf, char_refs, Answer::Echo),
    shape("attribute_refs", Service::Cxf, attribute_refs, Answer::Echo),
    shape("whitespace", Service::Cxf, whitespace, Answer::Echo),
    shape("comments", Service::Cxf, comments, Answer::Echo),
    shape(
        "one_long_comment",
        Service::Cxf,
        one_long_comment,
        Answer::Echo,
    ),
    shape(
        "processing_instructions",
        Service::Cxf,
        processing_instructions,
        Answer::Echo,
    ),
    shape("cdata_pieces", Service::Cxf, cdata_pieces, Answer::Echo),
    shape(
        "text_split_by_comments",
        Service::Cxf,
        text_split_by_comments,
        Answer::Echo,
    ),
    shape("wrapped_base64", Service::Cxf, wrapped_base64, Answer::Echo),
    shape("long_float", Service::Cxf, long_float, Answer::Echo),
    shape("leading_zeros", Service::Cxf, leading_zeros, Answer::Echo),
    shape("many_tags", Service::Customer, many_tags, Answer::Echo),
];

const fn shape(
    name: &'static str,
    service: Service,
    make: fn(usize) -> Vec<u8>,
    answer: Answer,
) -> Shape {
    Shape {
        name,
        service,
        make,
        answer,
    }
}

/// The valid echo request of about `size` bytes for `service`: CXF items (1.75 KB each) or customers.
pub fn valid_echo(service: Service, size: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(size + 4096);
    match service {
        Service::Cxf => {
            cxf::write_request(&cxf::echo_complex_request(cxf_items(size), 1), &mut out)
        }
        Service::Customer => customer::write_request(
            &customer::Request::Echo(customer::generate_for_size(size, 1)),
            &mut out,
        ),
    }
    out
}

/// What an echo server does with `body`: parse it within `limits`, then write the echo (`Ok`) or the fault
/// (`Err`, with the reason) into `out`.
pub fn echo_service(
    service: Service,
    body: &[u8],
    limits: &Limits,
    out: &mut Vec<u8>,
) -> Result<(), SoapError> {
    let written = match service {
        Service::Cxf => cxf::parse_request_with(body, limits)
            .map(|req| cxf::write_response(&req.into_echo_response(), out)),
        Service::Customer => customer::parse_request_with(body, limits).map(|req| match req {
            customer::Request::Echo(cs) => {
                customer::write_response(&customer::Response::Echo(cs), out)
            }
            other => customer::write_request(&other, out),
        }),
    };
    if let Err(e) = &written {
        write_fault(out, &e.fault());
    }
    written
}

/// How many reference items make a request of about `size` bytes.
fn cxf_items(size: usize) -> usize {
    let len = |n| {
        let mut out = Vec::new();
        cxf::write_request(&cxf::echo_complex_request(n, 1), &mut out);
        out.len()
    };
    let (one, two) = (len(1), len(2));
    (size.saturating_sub(one) / (two - one) + 1).max(1)
}

/// The 1-item reference request as text.
fn cxf_text() -> String {
    let mut out = Vec::new();
    cxf::write_request(&cxf::echo_complex_request(1, 1), &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// The reference request with its first `from` replaced by `prefix`, `unit` repeated, and `suffix`, the
/// repetitions making the body about `size` bytes.
fn grow(size: usize, from: &str, prefix: &str, unit: &str, suffix: &str) -> Vec<u8> {
    let base = cxf_text();
    let count = size.saturating_sub(base.len()) / unit.len().max(1);
    let mut to = String::with_capacity(prefix.len() + count * unit.len() + suffix.len());
    to.push_str(prefix);
    for _ in 0..count.max(1) {
        to.push_str(unit);
    }
    to.push_str(suffix);
    base.replacen(from, &to, 1).into_bytes()
}

/// `count` copies of `f(i)` joined.
fn numbered(count: usize, f: impl Fn(usize) -> String) -> String {
    (0..count).map(f).collect()
}

/// Replaces the first occurrence of `from` with `to` in the reference request.
fn edit(from: &str, to: &str) -> String {
    cxf_text().replacen(from, to, 1)
}

/// Pads `doc` to about `size` bytes with a comment after the Envelope (read only if nothing failed before).
fn padded(doc: String, size: usize) -> Vec<u8> {
    let mut out = doc.into_bytes();
    if out.len() + 7 < size {
        out.extend_from_slice(b"<!--");
        out.resize(size - 3, b'x');
        out.extend_from_slice(b"-->");
    }
    out
}

const ENV_OPEN: &str = "<soap:Envelope xmlns:soap=\"http://schemas.xmlsoap.org/soap/envelope/\">";

/// The reference request with a Header holding `header`.
fn header_text(header: &str) -> String {
    edit(
        ENV_OPEN,
        &format!("{ENV_OPEN}<soap:Header xmlns:h=\"urn:h\">{header}</soap:Header>"),
    )
}

fn with_header(header: &str) -> Vec<u8> {
    header_text(header).into_bytes()
}

fn attributes(size: usize) -> Vec<u8> {
    let attrs = numbered(size / 10, |i| format!(" a{i}=\"\""));
    edit("<varStruct ", &format!("<varStruct{attrs} ")).into_bytes()
}

fn xmlns_declarations(size: usize) -> Vec<u8> {
    let attrs = numbered(size / 20, |i| format!(" xmlns:p{i}=\"urn:{i}\""));
    edit("<varStruct ", &format!("<varStruct{attrs} ")).into_bytes()
}

/// 32 declarations per element (allowed) on nested Header elements, until the scope holds too many.
fn xmlns_in_scope(size: usize) -> Vec<u8> {
    let decls = |level: usize| numbered(32, |i| format!(" xmlns:l{level}p{i}=\"urn:{i}\""));
    let open = numbered(3, |l| format!("<h:x{}>", decls(l)));
    padded(
        String::from_utf8_lossy(&with_header(&format!("{open}</h:x></h:x></h:x>"))).into_owned(),
        size,
    )
}

fn deep_nesting(size: usize) -> Vec<u8> {
    let n = size / 11;
    with_header(&format!("{}{}", "<h:x>".repeat(n), "</h:x>".repeat(n)))
}

fn long_element_name(size: usize) -> Vec<u8> {
    let name = format!("h:{}", "n".repeat(size / 2));
    with_header(&format!("<{name}></{name}>"))
}

fn long_attribute_name(size: usize) -> Vec<u8> {
    edit(
        "<varStruct ",
        &format!("<varStruct {}=\"\" ", "n".repeat(size)),
    )
    .into_bytes()
}

fn duplicate_attributes(size: usize) -> Vec<u8> {
    padded(edit("<varStruct ", "<varStruct a=\"1\" a=\"2\" "), size)
}

/// A start tag that never ends: the tokenizer must not rescan it.
fn unclosed_tag(size: usize) -> Vec<u8> {
    let mut out = edit("</soap:Envelope>", "").into_bytes();
    out.extend_from_slice(b"<h:x");
    while out.len() < size {
        out.extend_from_slice(b" a=\">\" b='>'");
    }
    out
}

fn long_decimal(size: usize) -> Vec<u8> {
    grow(size, ">3.1415926<", ">3.", "1", "<")
}

fn long_namespace_uri(size: usize) -> Vec<u8> {
    let text = cxf_text().replacen(
        cxf::TYPES_NS,
        &format!("urn:{}", "u".repeat(size.saturating_sub(1800))),
        1,
    );
    text.into_bytes()
}

/// The customer service's `tags` sequence flooded with empty tags, past the item limit.
fn tag_flood(size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    customer::write_request(
        &customer::Request::Echo(customer::generate(1, 1, 1)),
        &mut out,
    );
    let text = String::from_utf8_lossy(&out);
    let tags = "<tag/>".repeat(size / 6);
    text.replacen("<tags>", &format!("<tags>{tags}"), 1)
        .into_bytes()
}

/// `text` (a request with one item, the hostile part in or around it) with plain reference items added after
/// that item until the body is about `size` bytes.
fn with_items(text: &str, size: usize) -> Vec<u8> {
    let reference = cxf_text();
    let (Some(start), Some(end)) = (reference.find("<item>"), reference.find("</item>")) else {
        return text.as_bytes().to_vec();
    };
    let item = &reference[start..end + "</item>".len()];
    let Some(at) = text.find("</item>").map(|i| i + "</item>".len()) else {
        return text.as_bytes().to_vec();
    };
    let count = size.saturating_sub(text.len()) / item.len();
    let mut out = String::with_capacity(text.len() + count * item.len());
    out.push_str(&text[..at]);
    for _ in 0..count {
        out.push_str(item);
    }
    out.push_str(&text[at..]);
    out.into_bytes()
}

/// Header blocks with as many attributes as an element may have, as many (up to as many as the Header may
/// hold) as the work budget allows at this size: the last block takes what is left.
fn header_max_attributes(size: usize) -> Vec<u8> {
    let make = |n: usize| {
        let blocks: String = (0..n.div_ceil(64))
            .map(|b| {
                let attrs = numbered((n - 64 * b).min(64), |i| format!(" a{i}=\"\""));
                format!("<h:b{attrs}/>")
            })
            .collect();
        with_items(&header_text(&blocks), size)
    };
    most_accepted(Service::Cxf, 128 * 64, work_estimate(size, ATTRIBUTE), make)
}

/// Header blocks declaring as many namespaces as an element may, as many as the work budget allows.
fn header_max_xmlns(size: usize) -> Vec<u8> {
    let make = |n: usize| {
        let blocks: String = (0..n.div_ceil(32))
            .map(|b| {
                let decls = numbered((n - 32 * b).min(32), |i| format!(" xmlns:p{i}=\"u\""));
                format!("<h:b{decls}/>")
            })
            .collect();
        with_items(&header_text(&blocks), size)
    };
    let unit = ATTRIBUTE + DECLARATION;
    most_accepted(Service::Cxf, 128 * 32, work_estimate(size, unit), make)
}

/// A full scope (31 prefixes and `soap` on the Envelope, `h` and 31 more on the Header) and the Header's blocks
/// with a `mustUnderstand` attribute for each prefix of the Envelope, as many as the work budget allows:
/// each is looked up (none is the envelope's).
fn header_must_understand_scan(size: usize) -> Vec<u8> {
    let env_decls = numbered(31, |i| format!(" xmlns:p{i}=\"urn:p{i}\""));
    let header_decls = numbered(31, |i| format!(" xmlns:r{i}=\"urn:r{i}\""));
    let make = |n: usize| {
        let blocks: String = (0..n.div_ceil(31))
            .map(|b| {
                let marks = (n - 31 * b).min(31);
                format!(
                    "<h:b{}/>",
                    numbered(marks, |i| format!(" p{i}:mustUnderstand=\"1\""))
                )
            })
            .collect();
        let text = header_text(&blocks)
            .replacen(
                ENV_OPEN,
                &format!("<soap:Envelope{env_decls} {}", &ENV_OPEN[15..]),
                1,
            )
            .replacen(
                "<soap:Header xmlns:h=\"urn:h\">",
                &format!("<soap:Header xmlns:h=\"urn:h\"{header_decls}>"),
                1,
            );
        with_items(&text, size)
    };
    // An attribute and its lookup (a probe or two).
    let unit = ATTRIBUTE + 3 * PROBE;
    most_accepted(Service::Cxf, 128 * 31, work_estimate(size, unit), make)
}

fn header_flood(size: usize) -> Vec<u8> {
    with_header(&"<h:b/>".repeat(size / 6))
}

/// Header blocks nested as deep as allowed, as many elements as the Header may hold.
fn header_nested_blocks(size: usize) -> Vec<u8> {
    let nest = format!("{}{}", "<h:b>".repeat(62), "</h:b>".repeat(62));
    with_items(
        &header_text(&format!("{}{}", nest.repeat(2), "<h:b/>".repeat(4))),
        size,
    )
}

/// Items of about `size` bytes in all, whose elements, in document order, carry as many attributes as
/// allowed until `attributes` are placed (the reader checks and ignores them).
fn attributed_items(size: usize, mut attributes: usize) -> Vec<u8> {
    let text = cxf_text();
    let start = text.find("<item>").unwrap_or(0);
    let end = text.find("</item>").map_or(start, |e| e + "</item>".len());
    let (head, item, tail) = (&text[..start], &text[start..end], &text[end..]);
    let mut out = String::with_capacity(size + item.len());
    out.push_str(head);
    loop {
        for (i, piece) in item.split("<var").enumerate() {
            if i == 0 {
                out.push_str(piece);
                continue;
            }
            // After the element's name: at the first space or `>`. 63: varQName and varStruct have one
            // attribute of their own.
            let name_end = piece.find([' ', '>']).unwrap_or(piece.len());
            let here = attributes.min(63);
            attributes -= here;
            out.push_str("<var");
            out.push_str(&piece[..name_end]);
            out.push_str(&numbered(here, |i| format!(" a{i}=\"\"")));
            out.push_str(&piece[name_end..]);
        }
        if out.len() + tail.len() >= size {
            break;
        }
    }
    out.push_str(tail);
    out.into_bytes()
}

/// Every element of every item with as many attributes as allowed: past the work budget at any size.
fn body_attribute_flood(size: usize) -> Vec<u8> {
    attributed_items(size, usize::MAX)
}

/// Items whose elements carry as many attributes as allowed, as many as the work budget allows; plain items
/// after them.
fn body_max_attributes(size: usize) -> Vec<u8> {
    let make = |n| attributed_items(size, n);
    most_accepted(Service::Cxf, size / 5, work_estimate(size, ATTRIBUTE), make)
}

/// The body `make(n)` for the largest `n` up to `max` that `service` answers within the default limits,
/// looked for from `estimate` up or down: the costliest message of its shape that is accepted (`make` grows
/// the hostile part with `n`, padding the rest to the same size).
fn most_accepted(
    service: Service,
    max: usize,
    estimate: usize,
    make: impl Fn(usize) -> Vec<u8>,
) -> Vec<u8> {
    let limits = Limits::default();
    let mut out = Vec::new();
    let mut accepted = |n: usize| {
        out.clear();
        echo_service(service, &make(n), &limits, &mut out).is_ok()
    };
    // Steps that double from the estimate until the edge lies between `lo` (accepted, or 0) and `hi` (refused,
    // or past `max`); then halves.
    let estimate = estimate.min(max);
    let (mut lo, mut hi) = (0, max + 1);
    let mut step = 1;
    if accepted(estimate) {
        lo = estimate;
        while lo + step <= max {
            if !accepted(lo + step) {
                hi = lo + step;
                break;
            }
            lo += step;
            step *= 2;
        }
    } else {
        hi = estimate;
        while step <= hi {
            if accepted(hi - step) {
                lo = hi - step;
                break;
            }
            hi -= step;
            step *= 2;
        }
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if accepted(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    make(lo)
}

/// About how many pieces of `unit` work fit in the budget of a message of `size` bytes, after what its valid
/// items charge (two attributes, a declaration and a lookup per 1.75 KB item).
fn work_estimate(size: usize, unit: u64) -> usize {
    let budget = (size as u64 + 4096) * Limits::DEFAULT_MAX_WORK as u64 / 1024;
    let items = (2 * ATTRIBUTE + DECLARATION + PROBE) * size as u64 / 1757;
    (budget.saturating_sub(items) / unit) as usize
}

/// The valid echo of many items, every element of the body written with the prefix `t`, bound first of a full
/// scope (`t` and 30 more prefixes on the Envelope with `soap`, 31 on the Body, `q` on each varQName).
fn items_scope_scan(size: usize) -> Vec<u8> {
    let env: Vec<String> = (0..30).map(|i| format!("p{i}")).collect();
    let body: Vec<String> = (0..31).map(|i| format!("q{i}")).collect();
    items_prefixed(size, "t", (&env, &body), usize::MAX)
}

/// Items whose elements are written with the last of 61 prefixes chosen to collide in the reader's table of
/// prefixes, so that each lookup examines them all: as many elements (in document order) as the work
/// budget allows, the rest in the default namespace.
fn items_colliding_prefixes(size: usize) -> Vec<u8> {
    let prefixes = colliding_prefixes(61, 128);
    let (env, body) = prefixes.split_at(31);
    let make = |n| items_prefixed(size, "", (env, body), n);
    // An element's lookup: about 60 probes.
    most_accepted(
        Service::Cxf,
        size / 10,
        work_estimate(size, 60 * PROBE),
        make,
    )
}

/// The valid echo of many items, its first `n` elements from the wrapper on written with the prefix `t`,
/// bound on the Envelope beside `soap` and the prefixes of `decls.0`; `decls.1` declared on the Body. With
/// `t` empty, the last of `decls.1` is `t`, and the Body declares the default namespace for the rest.
fn items_prefixed(size: usize, t: &str, decls: (&[String], &[String]), n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    cxf::write_request(&cxf::echo_complex_request(cxf_items(size), 1), &mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let wrapper = format!("<echoComplexTypeDoc xmlns=\"{}\">", cxf::TYPES_NS);
    let body_start = text.find(&wrapper).unwrap_or(0);
    let (head, rest) = text.split_at(body_start);
    let rest = rest.replacen(&wrapper, "<echoComplexTypeDoc>", 1);
    let decl = |p: &String| format!(" xmlns:{p}=\"urn:{p}\"");
    let (env, body): (String, String) = (
        decls.0.iter().map(decl).collect(),
        decls.1.iter().map(decl).collect(),
    );
    let types = cxf::TYPES_NS;
    let (t, env, body) = match (t, decls.1.last()) {
        ("", Some(last)) => {
            let body = body.replacen(&format!("urn:{last}"), types, 1);
            (last.as_str(), env, format!("{body} xmlns=\"{types}\""))
        }
        _ => (t, format!(" xmlns:{t}=\"{types}\"{env}"), body),
    };
    let head = head
        .replacen(
            ENV_OPEN,
            &format!("<soap:Envelope{env} {}", &ENV_OPEN[15..]),
            1,
        )
        .replacen("<soap:Body>", &format!("<soap:Body{body}>"), 1);
    format!("{head}{}", prefix_elements(&rest, t, n)).into_bytes()
}

/// `xml` (elements without attributes that end in `/>`) with its first `n` elements written with the
/// prefix `t`, start and end tags alike; end tags of elements opened before it are left as they are.
fn prefix_elements(xml: &str, t: &str, n: usize) -> String {
    let mut out = String::with_capacity(xml.len() + 2 * (t.len() + 1) * n.min(xml.len()));
    let mut open: Vec<bool> = Vec::new();
    let mut started = 0;
    let mut rest = xml;
    while let Some(lt) = rest.find('<') {
        out.push_str(&rest[..lt]);
        rest = &rest[lt..];
        if let Some(after) = rest.strip_prefix("</") {
            out.push_str("</");
            if open.pop() == Some(true) {
                out.push_str(t);
                out.push(':');
            }
            rest = after;
        } else {
            out.push('<');
            let prefixed = started < n;
            started += 1;
            open.push(prefixed);
            if prefixed {
                out.push_str(t);
                out.push(':');
            }
            rest = &rest[1..];
        }
    }
    out.push_str(rest);
    out
}

/// The customer service's `tags` flooded with empty tags written with the last of 62 prefixes chosen to
/// collide in the reader's table of prefixes: past the work budget at any size.
fn tags_colliding_prefixes(size: usize) -> Vec<u8> {
    let prefixes = colliding_prefixes(62, 128);
    let Some((t, body)) = prefixes[31..].split_last() else {
        return Vec::new();
    };
    let decls = |names: &[String]| -> String {
        names
            .iter()
            .map(|p| format!(" xmlns:{p}=\"urn:{p}\""))
            .collect()
    };
    let mut out = Vec::new();
    customer::write_request(
        &customer::Request::Echo(customer::generate(1, 1, 1)),
        &mut out,
    );
    let tag = format!("<{t}:tag/>");
    String::from_utf8_lossy(&out)
        .replacen(
            ENV_OPEN,
            &format!(
                "<soap:Envelope{} {}",
                decls(&prefixes[..31]),
                &ENV_OPEN[15..]
            ),
            1,
        )
        .replacen(
            "<soap:Body>",
            &format!("<soap:Body{} xmlns:{t}=\"{}\">", decls(body), customer::NS),
            1,
        )
        .replacen(
            "<tags>",
            &format!("<tags>{}", tag.repeat(size / tag.len())),
            1,
        )
        .into_bytes()
}

fn long_text(size: usize) -> Vec<u8> {
    grow(size, ">#12345ABc<", ">", "abcdefgh", "<")
}

fn long_attribute_value(size: usize) -> Vec<u8> {
    grow(
        size,
        "varAttrString=\"1234567890!@#$%^&amp;*()abcdefghijk\"",
        "varAttrString=\"",
        "abcdefgh",
        "\"",
    )
}

fn entity_refs(size: usize) -> Vec<u8> {
    grow(size, ">#12345ABc<", ">", "&amp;&lt;&gt;&quot;&apos;", "<")
}

fn char_refs(size: usize) -> Vec<u8> {
    grow(size, ">#12345ABc<", ">", "&#65;&#x42;&#x1F600;", "<")
}

fn attribute_refs(size: usize) -> Vec<u8> {
    let refs = "&#65;&amp;&#x9;".repeat(size / 15);
    edit("varAttrString=\"", &format!("varAttrString=\"{refs}")).into_bytes()
}

fn whitespace(size: usize) -> Vec<u8> {
    grow(size, "<item>", "", " \t\r\n", "<item>")
}

/// As many comments as allowed, between the items.
fn comments(size: usize) -> Vec<u8> {
    with_items(
        &edit("<item>", &format!("{}<item>", "<!---->".repeat(256))),
        size,
    )
}

fn comment_flood(size: usize) -> Vec<u8> {
    grow(size, "<item>", "", "<!---->", "<item>")
}

fn one_long_comment(size: usize) -> Vec<u8> {
    let comment = format!("<!--{}-->", "- > -".repeat(size / 5));
    edit("<item>", &format!("{comment}<item>")).into_bytes()
}

fn processing_instructions(size: usize) -> Vec<u8> {
    with_items(
        &edit("<item>", &format!("{}<item>", "<?a?>".repeat(256))),
        size,
    )
}

fn cdata_pieces(size: usize) -> Vec<u8> {
    grow(size, ">#12345ABc<", ">", "<![CDATA[]]>", "<")
}

/// A text cut into as many pieces as the comment limit allows.
fn text_split_by_comments(size: usize) -> Vec<u8> {
    with_items(
        &edit(">#12345ABc<", &format!(">{}<", "a<!---->".repeat(256))),
        size,
    )
}

fn wrapped_base64(size: usize) -> Vec<u8> {
    // 57 bytes per 76-character line, wrapped the MIME way.
    let line = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4\r\n";
    let text = cxf_text();
    let start = text.find("<varBase64Binary>").unwrap_or(0) + "<varBase64Binary>".len();
    let end = text.find("</varBase64Binary>").unwrap_or(start);
    let lines = line.repeat(size.saturating_sub(text.len()) / line.len() + 1);
    format!("{}{lines}{}", &text[..start], &text[end..]).into_bytes()
}

fn long_float(size: usize) -> Vec<u8> {
    grow(size, ">3.4028235E38<", ">1.", "0", "<")
}

fn leading_zeros(size: usize) -> Vec<u8> {
    grow(size, ">255<", ">", "0", "255<")
}

/// One customer with as many tags as the item limit allows.
fn many_tags(size: usize) -> Vec<u8> {
    let mut c = customer::generate(1, 1, 1);
    c[0].tags = vec![String::new(); (size / 11).min(Limits::DEFAULT_MAX_ITEMS)];
    let mut out = Vec::new();
    customer::write_request(&customer::Request::Echo(c), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shape, at 1 MB, gets the answer it should, and is about the size asked for.
    #[test]
    fn every_shape_is_answered_as_it_should() {
        let size = 1 << 20;
        let limits = Limits::default();
        let mut out = Vec::new();
        for shape in SHAPES {
            let body = (shape.make)(size);
            assert!(
                body.len() > size / 2 && body.len() < size + size / 4,
                "{}: {} bytes",
                shape.name,
                body.len()
            );
            out.clear();
            let got = echo_service(shape.service, &body, &limits, &mut out);
            match (shape.answer, got) {
                (Answer::Echo, Ok(())) => {}
                (Answer::Fault(needle), Err(e)) => {
                    let text = e.to_string();
                    assert!(
                        text.len() < 400,
                        "{}: a fault of {} bytes",
                        shape.name,
                        text.len()
                    );
                    assert!(text.contains(needle), "{}: {text}", shape.name);
                }
                (want, got) => {
                    let got = format!("{got:?}");
                    panic!(
                        "{}: wanted {want:?}, got {}",
                        shape.name,
                        &got[..got.len().min(300)]
                    )
                }
            }
        }
    }

    /// The costly shapes that are answered stay at the limits: one less and they are refused.
    #[test]
    fn costly_shapes_sit_at_the_limits() {
        let d = Limits::default();
        let cases: &[(&str, Limits)] = &[
            (
                "header_blocks_max_attributes",
                Limits {
                    max_attributes: 63,
                    ..d
                },
            ),
            (
                "header_blocks_max_attributes",
                Limits {
                    max_work: 1000,
                    ..d
                },
            ),
            (
                "header_blocks_max_xmlns",
                Limits {
                    max_namespace_declarations: 31,
                    ..d
                },
            ),
            (
                "header_blocks_max_xmlns",
                Limits {
                    max_work: 1000,
                    ..d
                },
            ),
            (
                "header_must_understand_scan",
                Limits {
                    max_namespaces_in_scope: 63,
                    ..d
                },
            ),
            (
                "header_must_understand_scan",
                Limits {
                    max_work: 1000,
                    ..d
                },
            ),
            ("header_nested_blocks", Limits { max_depth: 63, ..d }),
            (
                "header_nested_blocks",
                Limits {
                    max_header_elements: 127,
                    ..d
                },
            ),
            (
                "body_max_attributes",
                Limits {
                    max_attributes: 63,
                    ..d
                },
            ),
            (
                "body_max_attributes",
                Limits {
                    max_work: 1000,
                    ..d
                },
            ),
            (
                "items_colliding_prefixes",
                Limits {
                    max_namespaces_in_scope: 63,
                    ..d
                },
            ),
            (
                "items_colliding_prefixes",
                Limits {
                    max_work: 1000,
                    ..d
                },
            ),
            (
                "items_scope_scan",
                Limits {
                    max_namespaces_in_scope: 63,
                    ..d
                },
            ),
            (
                "comments",
                Limits {
                    max_comments: 255,
                    ..d
                },
            ),
            (
                "processing_instructions",
                Limits {
                    max_comments: 255,
                    ..d
                },
            ),
            (
                "text_split_by_comments",
                Limits {
                    max_comments: 255,
                    ..d
                },
            ),
        ];
        let mut out = Vec::new();
        for (name, limits) in cases {
            let shape = SHAPES.iter().find(|s| s.name == *name).unwrap();
            let body = (shape.make)(64 << 10);
            assert!(
                echo_service(shape.service, &body, &d, &mut out).is_ok(),
                "{name}"
            );
            let Err(err) = echo_service(shape.service, &body, limits, &mut out) else {
                panic!("{name} passes with {limits:?}");
            };
            assert!(matches!(err, SoapError::Limit { .. }), "{name}: {err}");
        }
    }

    #[test]
    fn valid_echo_bodies_have_the_size_asked_for() {
        for service in [Service::Cxf, Service::Customer] {
            let body = valid_echo(service, 1 << 20);
            assert!(
                (1_000_000..1_100_000).contains(&body.len()),
                "{service:?}: {}",
                body.len()
            );
            let mut out = Vec::new();
            echo_service(service, &body, &Limits::default(), &mut out).unwrap();
        }
    }

    /// Whether the one-pass Customer echo answers `body` as [`echo_service`] (the two-pass path) does: the
    /// same bytes, or the same error with nothing written. True when it echoed.
    fn one_pass_as_two_pass(body: &[u8], limits: &Limits) -> bool {
        let mut two = Vec::new();
        let two_pass = echo_service(Service::Customer, body, limits, &mut two);
        let mut one = Vec::new();
        let echoed = match (customer::serve_request(body, limits, &mut one), two_pass) {
            (Ok(customer::Served::Echoed { .. }), Ok(())) => true,
            (Ok(customer::Served::Request(_)), Ok(())) => {
                assert!(one.is_empty(), "only an echo writes");
                return false;
            }
            (Err(a), Err(b)) => {
                assert_eq!(a.to_string(), b.to_string());
                assert!(one.is_empty(), "an error leaves out as it was");
                return false;
            }
            (a, b) => panic!("one pass {a:?}, two pass {b:?}"),
        };
        assert_eq!(String::from_utf8_lossy(&one), String::from_utf8_lossy(&two));
        echoed
    }

    #[test]
    fn the_customer_echo_answers_the_corpus_as_the_two_pass_path_answers() {
        let limits = Limits::default();
        for shape in SHAPES {
            for size in [2_000, 20_000] {
                one_pass_as_two_pass(&(shape.make)(size), &limits);
            }
        }
        for size in [2_000, 20_000] {
            assert!(one_pass_as_two_pass(
                &valid_echo(Service::Customer, size),
                &limits
            ));
        }
    }
}
