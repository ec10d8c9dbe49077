//! The hostile corpus under criterion: for each shape of `bench_proto::hostile`, at 1 MB and at the server's
//! default body limit (8 MiB), the time of what an echo server does with it (parse within the default limits,
//! then write the echo or the fault), beside the valid echo body of the same size. Each group's ids sort the
//! valid body first, so criterion's report shows every shape next to its yardstick; `time / valid time` is the
//! ratio issue 11 bounds at 3. Nothing here asserts a time: the noise-free ratios come from
//! `cargo xtask gate --tier hostile` (callgrind), which holds every shape to 3.
//!
//! `cargo bench -p bench-proto --bench hostile -- 1MB/` runs only the 1 MB group.

use std::hint::black_box;
use std::time::Duration;

use bench_proto::hostile::{echo_service, valid_echo, Service, SHAPES};
use bench_proto::soap::Limits;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn corpus(c: &mut Criterion) {
    let limits = Limits::default();
    for (label, size) in [("1MB", 1 << 20), ("8MiB", 8 << 20)] {
        let mut g = c.benchmark_group(format!("hostile_{label}"));
        g.sample_size(10);
        g.warm_up_time(Duration::from_millis(500));
        g.measurement_time(Duration::from_secs(2));
        let mut out = Vec::with_capacity(2 * size);
        for service in [Service::Cxf, Service::Customer] {
            let body = valid_echo(service, size);
            g.throughput(Throughput::Bytes(body.len() as u64));
            let id = format!("0_valid_echo_{service:?}").to_lowercase();
            g.bench_function(BenchmarkId::from_parameter(id), |b| {
                b.iter(|| {
                    out.clear();
                    let _ = black_box(echo_service(service, black_box(&body), &limits, &mut out));
                })
            });
        }
        for shape in SHAPES {
            let body = (shape.make)(size);
            g.throughput(Throughput::Bytes(body.len() as u64));
            g.bench_function(BenchmarkId::from_parameter(shape.name), |b| {
                b.iter(|| {
                    out.clear();
                    let _ = black_box(echo_service(
                        shape.service,
                        black_box(&body),
                        &limits,
                        &mut out,
                    ));
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, corpus);
criterion_main!(benches);
