//! The SOAP envelope reader on any bytes: open, walk every element of the Body (reading text where there is
//! some), finish; and the fault reader. Nothing may panic, and the default limits must hold whatever comes.

#![no_main]

use bench_proto::soap::{parse_fault, BodyReader, Limits};
use libfuzzer_sys::fuzz_target;

/// Visits the children of the current element, depth first, reading the text of leaves.
fn walk(r: &mut BodyReader<'_>, depth: usize) {
    while let Ok(Some(_)) = r.next_child() {
        if depth % 2 == 0 {
            if r.text().is_err() {
                return;
            }
        } else {
            walk(r, depth + 1);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_depth: 16,
        ..Limits::default()
    };
    if let Ok(mut r) = BodyReader::open_with(data, &limits) {
        walk(&mut r, 1);
        let _ = r.finish();
    }
    let _ = parse_fault(data);
});
