//! xsd:boolean: `true`, `false`, `1`, `0`.

use super::{collapse, XsdError};

pub fn parse_boolean(raw: &str) -> Result<bool, XsdError> {
    match collapse(raw) {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(XsdError::new("boolean", raw)),
    }
}

/// Appends the canonical form, `true` or `false`.
pub fn write_boolean(out: &mut Vec<u8>, v: bool) {
    out.extend_from_slice(if v { b"true" } else { b"false" });
}
