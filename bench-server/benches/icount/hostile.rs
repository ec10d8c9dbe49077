//! The hostile corpus in the instruction-count binary: `hostile_<size>/<shape>` hot paths (an echo server's work
//! on one body of `bench_proto::hostile`, within the default limits), and `hostile-list SIZE…`, the cases of
//! the gate's hostile tier (`cargo xtask gate --tier hostile`), which counts each against the valid echo body
//! of its service and size.

use std::hint::black_box;

use bench_proto::hostile::{echo_service, valid_echo, Service, SHAPES};
use bench_proto::soap::Limits;

/// The sizes a name may ask for.
const SIZES: &[(&str, usize)] = &[("64KB", 64 << 10), ("1MB", 1 << 20), ("8MiB", 8 << 20)];

/// Shapes whose 1 MB hot paths the gate's instruction tier counts (`icount list`): the two valid echoes and the
/// costliest shapes of the corpus, so that a slower hostile path shows up as a regression. The hostile tier
/// holds every shape to its ratio.
const GATED: &[&str] = &[
    "valid_echo_cxf",
    "valid_echo_customer",
    "header_blocks_max_attributes",
    "header_must_understand_scan",
    "items_scope_scan",
    "comments",
];

/// `(name, iterations)` of the hostile hot paths the gate counts.
pub(crate) fn gated() -> impl Iterator<Item = (String, u64)> {
    GATED.iter().map(|s| (format!("hostile_1MB/{s}"), 1))
}

/// The valid echo of each service: what its shapes are compared with.
fn valid_of(service: Service) -> &'static str {
    match service {
        Service::Cxf => "valid_echo_cxf",
        Service::Customer => "valid_echo_customer",
    }
}

/// `hostile-list SIZE…`: a line per case of the gate's hostile tier at each size, `name bytes valid`: the hot
/// path of the shape, the size of its body, and the hot path of the valid echo it is compared with (the valid
/// echoes are cases too, each its own reference).
pub(crate) fn list(sizes: &[String]) -> Result<(), String> {
    for size in sizes {
        for service in [Service::Cxf, Service::Customer] {
            let valid = format!("hostile_{size}/{}", valid_of(service));
            let (_, body) = body_of(&valid).ok_or_else(|| format!("unknown size {size}"))?;
            println!("{valid} {} {valid}", body.len());
        }
        for shape in SHAPES {
            let name = format!("hostile_{size}/{}", shape.name);
            let (service, body) = body_of(&name).ok_or_else(|| format!("unknown size {size}"))?;
            println!("{name} {} hostile_{size}/{}", body.len(), valid_of(service));
        }
    }
    Ok(())
}

/// The body and service of `hostile_<size>/<shape>`, if that is such a name.
fn body_of(name: &str) -> Option<(Service, Vec<u8>)> {
    let (size, shape) = name.strip_prefix("hostile_")?.split_once('/')?;
    let size = SIZES.iter().find(|(label, _)| *label == size)?.1;
    match shape {
        "valid_echo_cxf" => Some((Service::Cxf, valid_echo(Service::Cxf, size))),
        "valid_echo_customer" => Some((Service::Customer, valid_echo(Service::Customer, size))),
        _ => {
            let shape = SHAPES.iter().find(|s| s.name == shape)?;
            Some((shape.service, (shape.make)(size)))
        }
    }
}

/// The work of a hostile hot path, if `name` is one.
pub(crate) fn setup(name: &str) -> Option<Box<dyn FnMut()>> {
    let (service, body) = body_of(name)?;
    let limits = Limits::default();
    let mut out = Vec::with_capacity(2 * body.len());
    Some(Box::new(move || {
        out.clear();
        let _ = black_box(echo_service(service, black_box(&body), &limits, &mut out));
    }))
}
