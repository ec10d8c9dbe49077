//! Many connections: 2,000 keep-alive connections, each making one echo call a second (open loop), all
//! opened, all calling, their set-up times and the client's memory reported. (The 10,000-connection
//! figures are a benchmark's, measured by hand and by xtask, not asserted here.)

use bench_proto::results::{ResultsDoc, RunRecord};

use crate::support::{run_bin, schema_checked, tmp, Server};

#[test]
fn two_thousand_connections_each_calling_once_a_second() {
    const CONNECTIONS: u64 = 2_000;
    // The server runs in this process: it holds a socket per connection too.
    let (soft, _) = bench_client::host::raise_nofile().unwrap();
    assert!(
        soft > 2 * CONNECTIONS + 200,
        "RLIMIT_NOFILE {soft} is too low for this test"
    );
    let server = Server::bench_server();
    let json = tmp("connections.json");
    let n = CONNECTIONS.to_string();
    let out = run_bin(&[
        "--url",
        &server.url(),
        "--operation",
        "echoComplexTypeDoc",
        "--clients",
        &n,
        "--rate",
        &n,
        "--warmup",
        "1s",
        "--duration",
        "3s",
        "--interval",
        "1s",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let doc: ResultsDoc = serde_json::from_value(schema_checked(&json)).expect("typed");
    let record = RunRecord::from_json(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc.counts.errors_total, 0);
    // Three calls are due on each connection; how many made it is the machine's business (a benchmark's
    // figure), that they were made on the connections opened once, with no failure, is this test's.
    assert!(doc.counts.ok >= CONNECTIONS, "{} calls ok", doc.counts.ok);
    let c = record.connections.as_ref().expect("connections");
    assert_eq!(
        (c.opened, c.failed, c.setup_us.count),
        (CONNECTIONS, 0, CONNECTIONS)
    );
    assert!(c.setup_us.p50 > 0 && c.initial_s > 0.0, "{c:?}");
    let m = record.client_memory.as_ref().expect("client memory");
    assert!(m.rss_kb_connected > m.rss_kb_start, "{m:?}");
    eprintln!(
        "{CONNECTIONS} connections: set-up p50 {} µs, p99 {} µs, all in {:.3} s; client RSS {:?} kB \
         before, {:?} once connected; p99 {} µs",
        c.setup_us.p50,
        c.setup_us.p99,
        c.initial_s,
        m.rss_kb_start,
        m.rss_kb_connected,
        doc.latency_us.corrected.p99
    );
}
