//! The schema types of the CXF performance service, as plain Rust values.

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;

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

/// `SimpleStruct`: seven elements in this order plus the optional attribute `varAttrString`. Parsed, its text
/// borrows from the request (or the parse's arena).
#[derive(Debug, Clone, PartialEq)]
pub struct SimpleStruct<'a> {
    pub var_float: f32,
    pub var_short: i16,
    pub var_string: Cow<'a, str>,
    pub var_byte: i8,
    pub var_decimal: Decimal,
    pub var_double: f64,
    pub var_date_time: DateTime,
    pub var_attr_string: Option<Cow<'a, str>>,
}

impl SimpleStruct<'_> {
    /// The same value, owning its text.
    pub(crate) fn to_owned_static(&self) -> SimpleStruct<'static> {
        SimpleStruct {
            var_string: Cow::Owned(self.var_string.to_string()),
            var_attr_string: self
                .var_attr_string
                .as_ref()
                .map(|a| Cow::Owned(a.to_string())),
            ..*self
        }
    }
}

/// `NestedComplexType`: one `item` of the `NestedComplexTypeSeq` that `echoComplexTypeDoc` echoes. Parsed, its
/// text borrows from the request and its decoded binaries from the parse's arena.
#[derive(Debug, Clone, PartialEq)]
pub struct NestedComplexType<'a> {
    pub var_string: Cow<'a, str>,
    pub var_ubyte: u8,
    pub var_unsigned_long: u64,
    pub var_float: f32,
    pub var_qname: QName<'a>,
    pub var_base64_binary: Cow<'a, [u8]>,
    pub var_hex_binary: Cow<'a, [u8]>,
    pub var_struct: SimpleStruct<'a>,
    pub var_enum: ColourEnum,
}

impl NestedComplexType<'_> {
    /// The same value, owning its text and bytes.
    pub(crate) fn to_owned_static(&self) -> NestedComplexType<'static> {
        NestedComplexType {
            var_string: Cow::Owned(self.var_string.to_string()),
            var_ubyte: self.var_ubyte,
            var_unsigned_long: self.var_unsigned_long,
            var_float: self.var_float,
            var_qname: self.var_qname.clone().into_owned(),
            var_base64_binary: Cow::Owned(self.var_base64_binary.to_vec()),
            var_hex_binary: Cow::Owned(self.var_hex_binary.to_vec()),
            var_struct: self.var_struct.to_owned_static(),
            var_enum: self.var_enum,
        }
    }
}

/// A `NestedComplexTypeSeq`'s items: a slice of the parse's arena, or a vector built by hand.
#[derive(Clone)]
pub enum Items<'a> {
    Borrowed(&'a [NestedComplexType<'a>]),
    Owned(Vec<NestedComplexType<'a>>),
}

impl<'a> Items<'a> {
    /// The items as a vector to change, copied out of the arena first if borrowed (as `Cow::to_mut`).
    pub fn to_mut(&mut self) -> &mut Vec<NestedComplexType<'a>> {
        if let Items::Borrowed(s) = *self {
            *self = Items::Owned(s.to_vec());
        }
        match self {
            Items::Owned(v) => v,
            Items::Borrowed(_) => unreachable!("made owned above"),
        }
    }

    /// The same items, owning everything.
    pub(crate) fn to_owned_static(&self) -> Items<'static> {
        Items::Owned(
            self.iter()
                .map(NestedComplexType::to_owned_static)
                .collect(),
        )
    }
}

impl<'a> Deref for Items<'a> {
    type Target = [NestedComplexType<'a>];
    fn deref(&self) -> &Self::Target {
        match self {
            Items::Borrowed(s) => s,
            Items::Owned(v) => v,
        }
    }
}

impl<'a> From<Vec<NestedComplexType<'a>>> for Items<'a> {
    fn from(v: Vec<NestedComplexType<'a>>) -> Self {
        Items::Owned(v)
    }
}

impl PartialEq for Items<'_> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl fmt::Debug for Items<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}
