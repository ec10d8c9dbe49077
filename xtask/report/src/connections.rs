//! `## Connections and memory`: for runs that hold many connections (1,000 or more in a step), what holding
//! them cost — connection set-up, server RSS and CPU per call, the client's own memory — beside p99. Pure: a
//! loaded results directory in, Markdown lines out.

use bench_proto::numbers::{num, thousands};
use wsbench_harness::results;

/// Steps holding at least this many connections get a row.
const MANY: u32 = 1000;

/// The section's lines (none when no step holds many connections).
pub(crate) fn section(loaded: &results::Run) -> Vec<String> {
    let mut o = Vec::new();
    let steps: Vec<_> = loaded
        .steps
        .iter()
        .filter(|s| s.meta.clients.is_some_and(|c| c >= MANY))
        .collect();
    if steps.is_empty() {
        return o;
    }
    o.push("\n## Connections and memory\n".to_owned());
    o.push("| step | connections opened / failed | set-up p50 / p99 ms | all connected after s | source addresses | server RSS max MiB | server CPU per call µs | client RSS start / connected / max MiB | p99 ms |".to_owned());
    o.push("|---|---|---|---|---|---|---|---|---|".to_owned());
    let mib = |kb: Option<u64>| kb.map_or("–".to_owned(), |kb| num(kb as f64 / 1024.0));
    for s in steps {
        let (Ok(d), Some(r)) = (&s.doc, &s.record) else {
            o.push(format!(
                "| {} | no record in the step's document | | | | | | | |",
                s.meta.id
            ));
            continue;
        };
        let c = r.connections.as_ref();
        let opened = c.map_or("–".to_owned(), |c| {
            format!("{} / {}", thousands(c.opened), thousands(c.failed))
        });
        let setup = c.map_or("–".to_owned(), |c| {
            format!(
                "{} / {}",
                num(c.setup_us.p50 as f64 / 1000.0),
                num(c.setup_us.p99 as f64 / 1000.0)
            )
        });
        let initial = c.map_or("–".to_owned(), |c| num(c.initial_s));
        let sources = c.map_or("–".to_owned(), |c| match c.source_ips.len() {
            0 => "the system's".to_owned(),
            n => format!("{n} ({} …)", c.source_ips[0]),
        });
        let rss = mib(d.system.as_ref().and_then(|s| s.mean.server_rss_kb_max));
        let per_call = r
            .monitored_process
            .as_ref()
            .filter(|_| d.counts.ok > 0)
            .map_or("–".to_owned(), |p| {
                num((p.cpu_user_s + p.cpu_sys_s) * 1e6 / d.counts.ok as f64)
            });
        let client = r.client_memory.as_ref().map_or("–".to_owned(), |m| {
            format!(
                "{} / {} / {}",
                mib(m.rss_kb_start),
                mib(m.rss_kb_connected),
                mib(m.rss_kb_max)
            )
        });
        let l = &d.latency_us.corrected;
        let p99 = if l.count > 0 {
            num(l.p99 as f64 / 1000.0)
        } else {
            "–".to_owned()
        };
        o.push(format!(
            "| {} | {opened} | {setup} | {initial} | {sources} | {rss} | {per_call} | {client} | {p99} |",
            s.meta.id
        ));
    }
    o.push("\nSet-up: TCP connect (plus TLS and the HTTP/2 handshake if any) of every connection opened, the \
        initial ones and any reconnection. Server CPU per call: bench-server's user + system CPU over the measured \
        interval (/proc/PID/stat) ÷ ok calls; RSS sampled once a second. Client RSS: before connecting, once \
        connected, and the most at any interval's end. p99 is open-loop corrected (from each call's intended \
        send time).".to_owned());
    o
}
