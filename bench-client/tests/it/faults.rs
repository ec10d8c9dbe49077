//! The client keeps measuring through faults of the server: killed (every connection reset, then refused),
//! restarted on its port, paused (nothing answers). Failed calls are counted by kind in the intervals they
//! happened in, the first success after them is recorded, and an open loop counts the calls it could not
//! send while its connections were down as failures, not as late successes. The test follows the real
//! binary's checkpoints; fault times are taken on the wall clock the timeline is placed on.

use std::process::Stdio;
use std::time::{Duration, SystemTime};

use bench_proto::results::{decode_histogram, new_histogram, ResultsDoc, RunRecord};

use crate::support::{bin, schema_checked, signal, since_start, tmp, wait_for_doc, Child, Faulty};

/// Calls ok in the intervals that began at or after `t_s`.
fn ok_after(record: &RunRecord, t_s: f64) -> u64 {
    let t = record.timeline.as_ref().expect("a timeline");
    t.intervals
        .iter()
        .filter(|i| i.t_s >= t_s)
        .map(|i| i.ok)
        .sum()
}

fn intervals_after(record: &RunRecord, t_s: f64) -> usize {
    let t = record.timeline.as_ref().expect("a timeline");
    t.intervals.iter().filter(|i| i.t_s >= t_s).count()
}

fn start_client(server: &Faulty, json: &std::path::Path, load: &[&str]) -> Child {
    Child::spawn(
        bin()
            .args(["--url", &server.url()])
            .args([
                "--duration",
                "120s",
                "--interval",
                "250ms",
                "--allow-errors",
            ])
            .args(["--timeout", "5s", "--connect-timeout", "1s"])
            .args(load)
            .args(["--json", json.to_str().unwrap()])
            .stdout(Stdio::null())
            // Not captured: a client that fails to start says why beside the test's own failure.
            .stderr(Stdio::inherit()),
    )
}

/// SIGINT, then the final document.
fn stop(child: Child, json: &std::path::Path) -> (ResultsDoc, RunRecord) {
    signal(child.id(), "-INT");
    let out = child.wait(Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(0), "its stderr is above");
    let doc = serde_json::from_value(schema_checked(json)).expect("typed");
    (
        doc,
        RunRecord::from_json(&std::fs::read(json).unwrap()).unwrap(),
    )
}

/// Kills the server and restarts it once the client has counted failures; returns (killed, restarted).
fn kill_and_restart(server: &mut Faulty, json: &std::path::Path) -> (SystemTime, SystemTime) {
    let killed = SystemTime::now();
    server.kill();
    wait_for_doc(json, "connect errors while the server is down", |d, _| {
        d.counts.errors.connect > 0
    });
    let restarted = SystemTime::now();
    server.restart();
    (killed, restarted)
}

#[test]
fn a_killed_then_restarted_and_a_paused_server_are_measured_through() {
    let mut server = Faulty::start();
    let json = tmp("faults.json");
    let load = ["--operation", "echoComplexTypeDoc", "--clients", "4"];
    let child = start_client(&server, &json, &load);
    wait_for_doc(&json, "calls ok", |d, _| d.counts.ok > 0);

    let (killed, restarted) = kill_and_restart(&mut server, &json);
    let (_, r) = wait_for_doc(&json, "a recovery after the restart", |_, r| {
        let after = since_start(r, restarted);
        r.timeline
            .as_ref()
            .unwrap()
            .recoveries
            .iter()
            .any(|x| x.first_ok_s >= after)
    });
    let paused_from = since_start(&r, SystemTime::now());
    let resume = server.pause();
    let paused = SystemTime::now();
    wait_for_doc(&json, "two intervals of the pause", |_, r| {
        intervals_after(r, since_start(r, paused)) >= 2
    });
    let resumed = SystemTime::now();
    resume.send(()).unwrap();
    wait_for_doc(&json, "calls ok after the pause", |_, r| {
        ok_after(r, since_start(r, resumed)) > 0
    });
    let (doc, record) = stop(child, &json);

    let t = record.timeline.as_ref().unwrap();
    let (killed_s, restarted_s) = (
        since_start(&record, killed),
        since_start(&record, restarted),
    );
    // The kill: calls in flight broke (io), reconnections were refused (connect), all counted, in the
    // intervals of the outage.
    let e = &doc.counts.errors;
    assert!(
        e.connect > 0 && e.connect + e.io == doc.counts.errors_total,
        "{e:?}"
    );
    let in_outage: u64 = t
        .intervals
        .iter()
        .filter(|i| i.t_s + i.dur_s > killed_s && i.t_s < restarted_s + 2.0)
        .map(|i| i.errors.total())
        .sum();
    assert_eq!(
        in_outage, doc.counts.errors_total,
        "every failure falls in the outage"
    );
    // The recovery: failures from the kill on, the first success after the restart.
    let rec = t
        .recoveries
        .iter()
        .find(|x| x.first_ok_s >= restarted_s)
        .expect("a recovery after the restart");
    assert!(
        rec.failed_from_s >= killed_s - 0.01,
        "{rec:?} killed at {killed_s}"
    );
    assert!(rec.failures > 0 && rec.connections >= 1, "{rec:?}");
    eprintln!(
        "kill: {} failed calls, first success {:.3} s after the restart ({:.3} s after the kill)",
        doc.counts.errors_total,
        rec.first_ok_s - restarted_s,
        rec.first_ok_s - killed_s
    );
    // The pause: no failure (it was shorter than --timeout), but the calls caught in it waited it out.
    let (paused_s, resumed_s) = (since_start(&record, paused), since_start(&record, resumed));
    let mut after = new_histogram();
    for i in t.intervals.iter().filter(|i| i.t_s + i.dur_s > paused_from) {
        after.add(decode_histogram(&i.corrected).unwrap()).unwrap();
    }
    let waited_us = ((resumed_s - paused_s) * 1e6) as u64;
    assert!(
        after.max() >= waited_us / 2,
        "max {} µs, paused {waited_us} µs",
        after.max()
    );
    eprintln!(
        "pause of {:.3} s: longest call {:.3} s",
        resumed_s - paused_s,
        after.max() as f64 / 1e6
    );
}

#[test]
fn an_open_loop_counts_the_calls_it_could_not_send_as_failed() {
    let mut server = Faulty::start();
    let json = tmp("faults-open.json");
    let rate = 400.0;
    // Plain GETs, cheap enough for 100 calls/s on each connection to keep to their schedule.
    let child = start_client(&server, &json, &["--clients", "4", "--rate", "400"]);
    wait_for_doc(&json, "calls ok", |d, _| d.counts.ok > 0);
    let (killed, restarted) = kill_and_restart(&mut server, &json);
    wait_for_doc(&json, "calls ok after the restart", |_, r| {
        ok_after(r, since_start(r, restarted) + 0.25) > 0
    });
    let (doc, record) = stop(child, &json);
    let outage = since_start(&record, restarted) - since_start(&record, killed);
    let failed = doc.counts.errors_total;
    // Sends that came due while the connections were down are failures (not replayed late): about the
    // rate times the outage, far more than the connection attempts the backoff allows.
    assert!(
        failed as f64 >= 0.5 * rate * outage,
        "{failed} failed over an outage of {outage:.3} s at {rate}/s"
    );
    let offered = rate * doc.elapsed_s;
    let accounted = (doc.counts.ok + failed + doc.counts.in_flight.calls) as f64;
    assert!(
        accounted >= 0.8 * offered && accounted <= offered + 4.0,
        "{accounted} calls accounted for of {offered} offered"
    );
    eprintln!("open loop: {failed} calls lost over an outage of {outage:.3} s at {rate}/s");
}
