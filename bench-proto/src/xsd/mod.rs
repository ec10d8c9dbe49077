//! Lexical forms of the XML Schema built-in types the SOAP services use: parse (with the `collapse` whitespace
//! rule) into typed values and write their canonical form into a caller's buffer.

mod binary;
mod boolean;
mod datetime;
mod decimal;
mod error;
mod float;
mod int;
mod qname;
mod text;

#[cfg(test)]
mod tests;

pub use binary::{
    parse_base64, parse_base64_bytes, parse_base64_in, parse_hex, parse_hex_bytes, parse_hex_in,
    write_base64, write_hex,
};
pub use boolean::{parse_boolean, write_boolean};
pub use datetime::DateTime;
pub use decimal::Decimal;
pub use error::XsdError;
pub use float::{parse_double, parse_float, write_double, write_float};
pub use int::{
    parse_byte, parse_int, parse_long, parse_short, parse_unsigned_byte, parse_unsigned_int,
    parse_unsigned_long, write_int,
};
pub use qname::QName;
pub use text::{check_chars, collapse, collapse_bytes, write_attr, write_text, WriteFmt};
