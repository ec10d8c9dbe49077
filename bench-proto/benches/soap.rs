//! Codec throughput: parse and serialise of the 1-item echoComplexTypeDoc request and of a 100 KB customer
//! array, reported in MB/s of XML.

use std::hint::black_box;

use bench_proto::{customer, cxf};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn cxf_echo_complex(c: &mut Criterion) {
    let req = cxf::echo_complex_request(1, 1);
    let mut bytes = Vec::new();
    cxf::write_request(&req, &mut bytes);
    let mut g = c.benchmark_group("cxf_echoComplexTypeDoc_1_item");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("parse", |b| {
        b.iter(|| cxf::parse_request(black_box(&bytes)).unwrap())
    });
    let mut out = Vec::with_capacity(bytes.len());
    g.bench_function("serialise", |b| {
        b.iter(|| {
            out.clear();
            cxf::write_request(black_box(&req), &mut out);
        })
    });
    // What the server does per call: parse the request, write the response from the parsed values.
    g.bench_function("server_echo", |b| {
        b.iter(|| {
            out.clear();
            let parsed = cxf::parse_request(black_box(&bytes)).unwrap();
            cxf::write_response(&parsed.into_echo_response(), &mut out);
        })
    });
    g.finish();
}

fn customer_100k(c: &mut Criterion) {
    let req = customer::Request::Echo(customer::generate_for_size(100 * 1024, 1));
    let mut bytes = Vec::new();
    customer::write_request(&req, &mut bytes);
    let mut g = c.benchmark_group("customer_echo_100KB");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("parse", |b| {
        b.iter(|| customer::parse_request(black_box(&bytes)).unwrap())
    });
    let mut out = Vec::with_capacity(bytes.len());
    g.bench_function("serialise", |b| {
        b.iter(|| {
            out.clear();
            customer::write_request(black_box(&req), &mut out);
        })
    });
    g.finish();
}

criterion_group!(benches, cxf_echo_complex, customer_100k);
criterion_main!(benches);
