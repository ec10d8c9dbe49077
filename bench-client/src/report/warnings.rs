//! Warnings that a run's figures may describe the client, not the server: client CPU saturation,
//! open-loop schedule lag or a rate not reached, local port exhaustion, an interrupted run.

use bench_proto::results::ResultsDoc;

use bench_proto::numbers::thousands;

/// Client CPU share of its worker threads above which the client is likely the bottleneck.
const CPU_BUSY: f64 = 0.90;
/// Open loop: schedule lag above this means requests went out noticeably late.
const LAG_US: u64 = 10_000;
/// Open loop: share of the requested rate below which the rate was not reached.
const RATE_REACHED: f64 = 0.95;

/// Warnings for a finished run (its counts, client stats and params already filled in); `stopped_by` says
/// what stopped a partial one.
pub(crate) fn for_run(doc: &ResultsDoc, addr_not_avail: u64, stopped_by: &str) -> Vec<String> {
    let mut w = Vec::new();
    if doc.partial {
        w.push(format!(
            "stopped early ({stopped_by}): the results cover only what was measured before the stop"
        ));
    }
    let cpu = doc.client.cpu_utilisation;
    if cpu >= CPU_BUSY {
        w.push(format!(
            "client CPU at {:.0}% of its {} worker thread(s): the client may be the bottleneck \
             (give it more cores or hosts, and merge the results)",
            cpu * 100.0,
            doc.params.threads
        ));
    }
    if let Some(rate) = doc.params.rate {
        let calls = doc.counts.ok + doc.counts.errors_total;
        let achieved = if doc.elapsed_s > 0.0 {
            calls as f64 / doc.elapsed_s
        } else {
            0.0
        };
        if doc.elapsed_s > 0.0 && achieved < RATE_REACHED * rate {
            w.push(format!(
                "open loop: {achieved:.1} calls/s made of {rate:.1}/s requested ({:.0}%); each connection has one \
                 call in flight, so the server is slower than the schedule or there are too few --clients",
                100.0 * achieved / rate
            ));
        }
        if let Some(lag) = doc.client.max_schedule_lag_us.filter(|&l| l > LAG_US) {
            w.push(format!(
                "open loop: a request went out {:.1} ms behind its schedule (latency is counted from the \
                 schedule; if the client CPU is busy, the client is part of that)",
                lag as f64 / 1000.0
            ));
        }
    }
    if addr_not_avail > 0 {
        w.push(format!(
            "{} connect errors were EADDRNOTAVAIL: no local port left (TIME_WAIT); widen \
             net.ipv4.ip_local_port_range or enable net.ipv4.tcp_tw_reuse",
            thousands(addr_not_avail)
        ));
    }
    if let Some(why) = nothing_measured(doc) {
        w.push(why);
    }
    w
}

/// The warning of a checkpoint: a document written while the run was still measuring.
pub(crate) fn for_checkpoint(doc: &ResultsDoc) -> String {
    format!(
        "checkpoint after {:.1} s: written while the run was measuring; if the client is gone, the run was cut \
         short here",
        doc.elapsed_s
    )
}

/// Why a run with no successful call measured nothing (`None` if some call succeeded): such a run fails,
/// whatever `--allow-errors` says.
pub(crate) fn nothing_measured(doc: &ResultsDoc) -> Option<String> {
    let c = &doc.counts;
    if c.ok > 0 {
        return None;
    }
    let waiting = if c.in_flight.calls > 0 {
        format!(
            "; {} calls were still waiting for a response at the end (the longest for {:.3} s, --timeout {} s)",
            thousands(c.in_flight.calls),
            c.in_flight.max_wait_us as f64 / 1e6,
            doc.params.timeout_s
        )
    } else {
        String::new()
    };
    Some(if c.errors_total > 0 {
        format!(
            "no call succeeded: {} failed{waiting}",
            thousands(c.errors_total)
        )
    } else if c.in_flight.calls > 0 {
        format!("nothing measured: no call completed{waiting}")
    } else {
        "nothing measured: no call was made".to_owned()
    })
}
