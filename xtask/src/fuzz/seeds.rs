//! The seed corpus of every fuzz target, written from the real writers (valid requests and responses of every
//! operation, faults, chat packets) and the hostile corpus at small sizes into `DIR/<target>/` before each
//! run, so that no binary corpus is committed.

use std::path::Path;

use bench_proto::chat::{Chat, JString, Kind, MARK_TEXT};
use bench_proto::hostile::{Service, SHAPES};
use bench_proto::soap::{write_fault, Fault, FaultCode};
use bench_proto::{customer, cxf};

fn write(dir: &Path, target: &str, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let dir = dir.join(target);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join(name), bytes)
}

/// Writes the seeds of every target under `dir`.
pub(crate) fn write_seeds(dir: &Path) -> std::io::Result<()> {
    let mut soap = Vec::new();
    for (i, req) in [
        cxf::echo_complex_request(1, 7),
        cxf::echo_complex_request(2, -1),
        cxf::echo_string_request(1),
        cxf::echo_base64_request(),
    ]
    .iter()
    .enumerate()
    {
        let mut out = Vec::new();
        cxf::write_request(req, &mut out);
        soap.push(("cxf", format!("request-{i}"), out));
        let mut out = Vec::new();
        cxf::write_response(&req.clone().into_echo_response(), &mut out);
        soap.push(("cxf", format!("response-{i}"), out));
    }
    let customers = customer::generate(3, 1, 1);
    for (i, req) in [
        customer::Request::Add(customers.clone()),
        customer::Request::AddAsync(customers.clone()),
        customer::Request::Echo(customers.clone()),
        customer::get_request(2, 5),
    ]
    .iter()
    .enumerate()
    {
        let mut out = Vec::new();
        customer::write_request(req, &mut out);
        soap.push(("customer", format!("request-{i}"), out));
    }
    let mut out = Vec::new();
    customer::write_response(&customer::Response::Get(customers), &mut out);
    soap.push(("customer", "response-get".into(), out));
    let mut fault = Vec::new();
    write_fault(
        &mut fault,
        &Fault {
            code: FaultCode::Client,
            string: "bad <thing>".into(),
            detail: Some("why".into()),
        },
    );
    soap.push(("cxf", "fault".into(), fault));
    for shape in SHAPES {
        let target = match shape.service {
            Service::Cxf => "cxf",
            Service::Customer => "customer",
        };
        soap.push((
            target,
            format!("hostile-{}", shape.name),
            (shape.make)(4096),
        ));
    }
    for (target, name, bytes) in &soap {
        write(dir, target, name, bytes)?;
        // The envelope reader takes every SOAP message.
        write(dir, "envelope", &format!("{target}-{name}"), bytes)?;
    }
    let room = JString::new("Room1").unwrap_or_default();
    let user = JString::new("Mark1").unwrap_or_default();
    let text = JString::new(MARK_TEXT).unwrap_or_default();
    for (i, kind) in [Kind::Request, Kind::Indication].into_iter().enumerate() {
        let chat = Chat {
            kind,
            room_name: room.as_jstr(),
            user_name: user.as_jstr(),
            text: text.as_jstr(),
            ..Chat::default()
        };
        let mut bytes = Vec::new();
        chat.encode(&mut bytes);
        write(dir, "chat", &format!("chat-{i}"), &bytes)?;
    }
    Ok(())
}
