//! The typed error for a value that is not in a type's lexical space.

use std::fmt;

/// A lexical value that an xsd type does not accept. `Display` reads like
/// `'256' is not an xsd:unsignedByte (out of range)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{value}' is not {}{ty}{}", if *.builtin { "an xsd:" } else { "a valid " }, Why(.why))]
pub struct XsdError {
    /// The xsd type name, e.g. `unsignedByte`.
    pub ty: &'static str,
    /// The offending text, shortened so a huge bad value cannot make a huge fault.
    pub value: String,
    /// True for XML Schema built-in types, false for a schema's own simple types (enumerations).
    pub builtin: bool,
    /// What exactly is wrong, when more can be said than "not in the lexical space".
    pub why: Option<&'static str>,
}

/// Values longer than this are cut in error messages.
const MAX_SHOWN: usize = 48;

impl XsdError {
    pub fn new(ty: &'static str, value: &str) -> Self {
        Self {
            ty,
            value: shorten(value),
            builtin: true,
            why: None,
        }
    }

    /// `value` is not one of the values of the enumerated simple type `ty`.
    pub fn enumeration(ty: &'static str, value: &str) -> Self {
        Self {
            ty,
            value: shorten(value),
            builtin: false,
            why: None,
        }
    }

    pub fn because(ty: &'static str, value: &str, why: &'static str) -> Self {
        Self {
            ty,
            value: shorten(value),
            builtin: true,
            why: Some(why),
        }
    }
}

fn shorten(value: &str) -> String {
    if value.len() <= MAX_SHOWN {
        return value.to_owned();
    }
    let mut end = MAX_SHOWN;
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &value[..end], value.len())
}

struct Why<'a>(&'a Option<&'static str>);

impl fmt::Display for Why<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(why) => write!(f, " ({why})"),
            None => Ok(()),
        }
    }
}
