//! The VOLANO chat codec on any bytes: decode packet after packet; each decoded packet must encode and decode
//! back to itself.

#![no_main]

use bench_proto::chat;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut rest = data;
    while let Ok(Some((packet, used))) = chat::decode(rest, 8192) {
        assert!(used > 0 && used <= rest.len(), "used {used} of {}", rest.len());
        let mut bytes = Vec::new();
        packet.encode(&mut bytes);
        let (again, n) = chat::decode(&bytes, 1 << 20)
            .expect("an encoded packet decodes")
            .expect("an encoded packet is complete");
        assert_eq!(n, bytes.len());
        assert_eq!(again, packet);
        rest = &rest[used..];
    }
});
