//! Criterion benchmarks of the VOLANO chat codec on VolanoMark's packets: decoding a chat request (what the
//! server does per message received), encoding the chat indication (once per message, shared by the room),
//! and decoding the indication (what each receiving client does).

use std::hint::black_box;

use bench_proto::chat::{decode, Chat, JString, Kind, Packet, MARK_TEXT, MARK_TEXT_TRIMMED};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn codec(c: &mut Criterion) {
    let room = JString::new("Room1").expect("ASCII");
    let user = JString::new("Mark1").expect("ASCII");
    let text = JString::new(MARK_TEXT).expect("ASCII");
    let trimmed = JString::new(MARK_TEXT_TRIMMED).expect("ASCII");
    let request = Chat {
        room_name: room.as_jstr(),
        user_name: user.as_jstr(),
        text: text.as_jstr(),
        ..Chat::default()
    };
    let indication = Chat {
        kind: Kind::Indication,
        text: trimmed.as_jstr(),
        ..request.clone()
    };
    let mut request_bytes = Vec::new();
    request.encode(&mut request_bytes);
    let mut indication_bytes = Vec::new();
    indication.encode(&mut indication_bytes);
    // Check the inputs once, so the benchmarks time the real work.
    let decoded = decode(&request_bytes, 8192)
        .expect("valid")
        .expect("complete");
    assert_eq!(decoded.1, request_bytes.len());
    assert!(matches!(decoded.0, Packet::Chat(ref p) if p.text == trimmed.as_jstr()));

    let mut g = c.benchmark_group("chat_codec");
    g.throughput(Throughput::Bytes(request_bytes.len() as u64));
    g.bench_function("decode_chat_request", |b| {
        b.iter(|| decode(black_box(&request_bytes), 8192))
    });
    let mut out = Vec::with_capacity(256);
    g.bench_function("encode_chat_indication", |b| {
        b.iter(|| {
            out.clear();
            black_box(&indication).encode(&mut out);
            out.len()
        })
    });
    g.bench_function("decode_chat_indication", |b| {
        b.iter(|| decode(black_box(&indication_bytes), 1 << 20))
    });
    g.finish();
}

criterion_group!(benches, codec);
criterion_main!(benches);
