//! The data the CXF performance client sends, so that wsbench's load matches the published runs.

use super::{ColourEnum, NestedComplexType, Request, SimpleStruct};
use crate::xsd::{DateTime, Decimal, QName};

/// 256 bytes counting up from -128 (as Java bytes): the client's binary payload.
fn ramp() -> Vec<u8> {
    (0..=255u8).map(|b| b.wrapping_sub(128)).collect()
}

/// The item the CXF client fills once and sends `packet_size` times.
pub fn reference_item() -> NestedComplexType<'static> {
    const STRUCT_STRING: &str = "1234567890!@#$%^&*()abcdefghijk";
    NestedComplexType {
        var_string: "#12345ABc".into(),
        var_ubyte: 255,
        var_unsigned_long: 13_691_056_728,
        var_float: f32::MAX,
        var_qname: QName::new("http://cxf.apache.org", "return"),
        var_base64_binary: ramp().into(),
        var_hex_binary: ramp().into(),
        var_struct: SimpleStruct {
            var_float: f32::MAX,
            var_short: i16::MAX,
            var_string: STRUCT_STRING.into(),
            var_byte: i8::MAX,
            var_decimal: Decimal::new(31_415_926, 7),
            var_double: f64::MAX,
            var_date_time: DateTime {
                year: 2005,
                month: 12,
                day: 3,
                hour: 0,
                minute: 0,
                second: 9,
                nanos: 0,
                offset_minutes: Some(0),
            },
            var_attr_string: Some(STRUCT_STRING.into()),
        },
        var_enum: ColourEnum::Red,
    }
}

/// `echoComplexTypeDoc` with `packet_size` copies of the reference item.
pub fn echo_complex_request(packet_size: usize, id: i32) -> Request<'static> {
    Request::EchoComplex {
        items: vec![reference_item(); packet_size].into(),
        id,
    }
}

/// `echoStringDoc` as the CXF client sends it: a 64-character pattern repeated 16 times per packet.
pub fn echo_string_request(packet_size: usize) -> Request<'static> {
    const PATTERN: &str = "abcdefghijklmnopqrstuvwxyz0123456789!@#$%^&*()_+?><[]/0123456789";
    Request::EchoString(PATTERN.repeat(1024 / PATTERN.len() * packet_size).into())
}

/// `echoBase64Doc` as the CXF client sends it: the 256-byte ramp four times (1 KiB). The client ignores its
/// packet size for this operation.
pub fn echo_base64_request() -> Request<'static> {
    Request::EchoBase64(ramp().repeat(4).into())
}
