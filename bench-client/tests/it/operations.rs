//! Every operation against the in-process bench-server, closed and open loop, with exact counts; and the
//! load-model flags (duration, warm-up, think time, no keep-alive) doing what they say.

use bench_client::operation::{request_operations, Operation, Service};
use http::StatusCode;

use crate::support::{client, respond, Counts, Server};

#[test]
fn every_operation_closed_loop() {
    let server = Server::bench_server();
    let url = server.url();
    // ossj-order needs an application instance, a broker and back ends: tests/it/ossj.rs and bench-server's.
    for op in request_operations().filter(|op| op.service() != Service::Ossj) {
        let out = client(&[
            "--url",
            &url,
            "--operation",
            op.name(),
            "--clients",
            "3",
            "--requests",
            "30",
        ]);
        let d = &out.doc;
        assert_eq!(
            (d.counts.ok, d.counts.errors_total),
            (30, 0),
            "{op}: {:?}",
            out.first_errors
        );
        // 10 per connection are always validated: all 30 here.
        assert_eq!(d.counts.validated, 30, "{op}");
        assert_eq!(d.latency_us.corrected.count, 30, "{op}");
        assert!(
            d.latency_us.uncorrected.is_none() && d.histograms.uncorrected.is_none(),
            "{op}"
        );
        assert_eq!(d.params.operation, op.name());
        assert!(d.elapsed_s > 0.0 && d.throughput.total_per_s > 0.0, "{op}");
        if op != Operation::AddAsync {
            assert!(d.counts.bytes_received > 0, "{op}");
        }
        if op != Operation::HttpGet {
            assert!(d.counts.bytes_sent > 0, "{op}");
        }
    }
}

#[test]
fn every_operation_open_loop() {
    let server = Server::bench_server();
    let url = server.url();
    // ossj-order needs an application instance, a broker and back ends: tests/it/ossj.rs and bench-server's.
    for op in request_operations().filter(|op| op.service() != Service::Ossj) {
        let args = [
            "--url",
            &url,
            "--operation",
            op.name(),
            "--clients",
            "3",
            "--rate",
            "3000",
            "--requests",
            "30",
        ];
        let out = client(&args);
        let d = &out.doc;
        assert_eq!(
            (d.counts.ok, d.counts.errors_total),
            (30, 0),
            "{op}: {:?}",
            out.first_errors
        );
        assert_eq!(d.params.rate, Some(3000.0));
        let unc = d
            .latency_us
            .uncorrected
            .as_ref()
            .expect("open loop keeps the uncorrected histogram");
        assert_eq!((d.latency_us.corrected.count, unc.count), (30, 30), "{op}");
        // Measured from the intended send time, the corrected latency is never below the uncorrected.
        assert!(d.latency_us.corrected.max >= unc.max, "{op}");
        assert!(d.client.max_schedule_lag_us.is_some(), "{op}");
    }
}

#[test]
fn large_customer_messages_are_near_their_size() {
    let server = Server::bench_server();
    let out = client(&[
        "--url",
        &server.url(),
        "--operation",
        "echo",
        "--message-size",
        "100K",
        "--requests",
        "4",
    ]);
    let c = &out.doc.counts;
    assert_eq!((c.ok, c.errors_total), (4, 0), "{:?}", out.first_errors);
    let per_call = c.bytes_sent as f64 / 4.0;
    assert!(
        (per_call - 102_400.0).abs() < 0.05 * 102_400.0,
        "{per_call} bytes per request"
    );
    assert!(c.bytes_received as f64 > 0.9 * c.bytes_sent as f64);
}

#[test]
fn a_time_based_run_measures_exactly_its_duration() {
    let server = Server::bench_server();
    let out = client(&[
        "--url",
        &server.url(),
        "--operation",
        "http-get",
        "--clients",
        "2",
        "--duration",
        "300ms",
    ]);
    let d = &out.doc;
    assert_eq!(d.elapsed_s, 0.3);
    assert!(
        d.counts.ok > 0 && d.counts.errors_total == 0,
        "{:?}",
        out.first_errors
    );
    assert_eq!(d.latency_us.corrected.count, d.counts.ok);
    assert!((d.throughput.total_per_s - d.counts.ok as f64 / 0.3).abs() < 1e-6);
    assert!((d.throughput.per_client_per_s - d.throughput.total_per_s / 2.0).abs() < 1e-9);
}

#[test]
fn warm_up_calls_are_not_recorded() {
    let stats = Counts::new();
    let server = Server::http(stats.clone(), |_, _| respond(StatusCode::OK, "ok"));
    let out = client(&[
        "--url",
        &server.url(),
        "--operation",
        "http-get",
        "--warmup",
        "200ms",
        "--requests",
        "20",
    ]);
    assert_eq!(out.doc.counts.ok, 20);
    assert_eq!(out.doc.latency_us.corrected.count, 20);
    assert!(
        stats.requests() > 20,
        "the warm-up made calls too ({} in all)",
        stats.requests()
    );
    assert_eq!(out.doc.params.warmup_s, 0.2);
}

#[test]
fn no_keepalive_opens_a_connection_per_call() {
    let stats = Counts::new();
    let server = Server::http(stats.clone(), |_, _| respond(StatusCode::OK, "ok"));
    let out = client(&[
        "--url",
        &server.url(),
        "--operation",
        "http-get",
        "--clients",
        "2",
        "--no-keepalive",
        "--requests",
        "20",
    ]);
    assert_eq!(
        (out.doc.counts.ok, out.doc.counts.errors_total),
        (20, 0),
        "{:?}",
        out.first_errors
    );
    assert_eq!(stats.connections(), 20);
    assert!(!out.doc.params.keepalive);
    let stats = Counts::new();
    let server = Server::http(stats.clone(), |_, _| respond(StatusCode::OK, "ok"));
    let out = client(&[
        "--url",
        &server.url(),
        "--operation",
        "http-get",
        "--clients",
        "2",
        "--requests",
        "20",
    ]);
    assert_eq!(out.doc.counts.ok, 20);
    assert_eq!(
        stats.connections(),
        2,
        "keep-alive: one connection per client"
    );
}

#[test]
fn think_time_spaces_the_calls_of_a_client() {
    let server = Server::bench_server();
    let out = client(&[
        "--url",
        &server.url(),
        "--operation",
        "http-get",
        "--think-time",
        "20ms",
        "--requests",
        "4",
    ]);
    assert_eq!(out.doc.counts.ok, 4);
    // Three pauses between four calls.
    assert!(out.doc.elapsed_s >= 0.06, "{}", out.doc.elapsed_s);
    assert_eq!(out.doc.params.think_time_s, 0.02);
}

/// Open loop records the calls offered in the measured interval, no more: at most rate × duration (plus one
/// per connection for the boundary), even when the warm-up left a backlog that the schedule must not replay.
#[test]
fn open_loop_records_at_most_the_offered_calls() {
    let open_loop = |url: &str| {
        let out = client(&[
            "--url",
            url,
            "--operation",
            "http-get",
            "--rate",
            "200",
            "--warmup",
            "500ms",
            "--duration",
            "1s",
        ]);
        let c = &out.doc.counts;
        assert_eq!(c.errors_total, 0, "{:?}", out.first_errors);
        c.ok
    };
    let server = Server::bench_server();
    let ok = open_loop(&server.url());
    assert!(
        (160..=201).contains(&ok),
        "{ok} calls recorded at 200/s for 1 s"
    );

    // A server that stalls 400 ms in the middle of the warm-up (call 40 is due at 200 ms): the calls due
    // from then until the measured interval starts are late, and must neither be sent into it nor counted.
    let stats = Counts::new();
    let stalling = Server::http(stats.clone(), |n, _| {
        if n == 40 {
            std::thread::sleep(std::time::Duration::from_millis(400));
        }
        respond(StatusCode::OK, "ok")
    });
    let ok = open_loop(&stalling.url());
    assert!(
        (160..=201).contains(&ok),
        "{ok} calls recorded at 200/s for 1 s"
    );
    assert!(stats.requests() < 260, "{} calls sent", stats.requests());
}
