//! The schema types of the CXF performance service, as plain Rust values.

use std::fmt;

use crate::xsd::{DateTime, Decimal, QName};

/// `ColourEnum`: an xsd:string restricted to three values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColourEnum {
    Red,
    Green,
    Blue,
}

impl ColourEnum {
    /// The enumeration value on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Red => "RED",
            Self::Green => "GREEN",
            Self::Blue => "BLUE",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match crate::xsd::collapse(s) {
            "RED" => Some(Self::Red),
            "GREEN" => Some(Self::Green),
            "BLUE" => Some(Self::Blue),
            _ => None,
        }
    }
}

impl fmt::Display for ColourEnum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `SimpleStruct`: seven elements in this order plus the optional attribute `varAttrString`.
#[derive(Debug, Clone, PartialEq)]
pub struct SimpleStruct {
    pub var_float: f32,
    pub var_short: i16,
    pub var_string: String,
    pub var_byte: i8,
    pub var_decimal: Decimal,
    pub var_double: f64,
    pub var_date_time: DateTime,
    pub var_attr_string: Option<String>,
}

/// `NestedComplexType`: one `item` of the `NestedComplexTypeSeq` that `echoComplexTypeDoc` echoes.
#[derive(Debug, Clone, PartialEq)]
pub struct NestedComplexType {
    pub var_string: String,
    pub var_ubyte: u8,
    pub var_unsigned_long: u64,
    pub var_float: f32,
    pub var_qname: QName,
    pub var_base64_binary: Vec<u8>,
    pub var_hex_binary: Vec<u8>,
    pub var_struct: SimpleStruct,
    pub var_enum: ColourEnum,
}
