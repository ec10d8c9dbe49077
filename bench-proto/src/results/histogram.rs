//! The histogram codec of the results document: HdrHistogram V2 compressed ("HISTFAAA…"), base64.
//!
//! The standard encoding, so other HdrHistogram tools (Java, Go, Python) read the same bytes.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;

use super::ResultsError;

/// Significant figures every wsbench latency histogram keeps (values in microseconds).
pub const SIGFIG: u8 = 3;

/// An empty, auto-resizing latency histogram (1 µs resolution, 3 significant figures).
pub fn new_histogram() -> Histogram<u64> {
    // Cannot fail: 3 significant figures is within hdrhistogram's 0..=5.
    Histogram::new(SIGFIG).expect("3 significant figures is a valid histogram precision")
}

/// V2 compressed, base64 (standard alphabet, padded), as `HistogramLogWriter` and `hdr-plot` read it.
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    // Serialising into a Vec cannot hit an I/O error, and a u64 histogram's length fits usize on
    // every platform wsbench builds for, so the only failure modes are unreachable here.
    V2DeflateSerializer::new()
        .serialize(h, &mut buf)
        .expect("serialising a histogram into memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(&buf)
}

/// The inverse of [`encode_histogram`]; the result auto-resizes so that others can be added to it.
pub fn decode_histogram(s: &str) -> Result<Histogram<u64>, ResultsError> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(s.trim())?;
    let mut h: Histogram<u64> = Deserializer::new().deserialize(&mut bytes.as_slice())?;
    h.auto(true);
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_every_count() {
        let mut h = new_histogram();
        for v in [1u64, 7, 250, 251, 10_000, 3_600_000_000] {
            h.record_n(v, v % 5 + 1).unwrap();
        }
        let s = encode_histogram(&h);
        assert!(s.starts_with("HISTF"), "{s}");
        let back = decode_histogram(&s).unwrap();
        assert_eq!(back, h);
        assert_eq!(back.len(), h.len());
        assert_eq!(back.max(), h.max());
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(matches!(
            decode_histogram("not base64!"),
            Err(ResultsError::Base64(_))
        ));
        assert!(matches!(
            decode_histogram("AAAA"),
            Err(ResultsError::Decode(_))
        ));
    }
}
