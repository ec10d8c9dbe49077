//! The human summary on stdout: what was run, counts and errors by kind, TOTAL and PER-CLIENT throughput
//! (each labelled), body MB/s, latency percentiles (corrected and uncorrected in open loop), client CPU,
//! system samples, first errors and warnings. Rendered from the results document, so `merge` prints the same.

use std::fmt::Write as _;

use bench_proto::results::{ErrorKind, LatencySummary, ResultsDoc};

use crate::units::{thousands, thousands_f};

pub fn render(doc: &ResultsDoc, first_errors: &[(ErrorKind, String)]) -> String {
    let mut s = String::new();
    let p = &doc.params;
    let _ = writeln!(
        s,
        "{} {} · {} → {}{}",
        doc.tool.name,
        doc.tool.version,
        p.operation,
        p.url,
        doc.label
            .as_deref()
            .map(|l| format!("  [{l}]"))
            .unwrap_or_default()
    );
    let model = match p.rate {
        Some(r) => format!("open loop at {}/s", thousands_f(r, 1)),
        None => "closed loop".to_owned(),
    };
    let amount = match (p.duration_s, p.requests) {
        (Some(d), _) => format!("{d} s"),
        (None, Some(n)) => format!("{} calls", thousands(n)),
        _ => "?".to_owned(),
    };
    let _ = writeln!(
        s,
        "  {model} · {} clients on {} threads · {} · {amount} measured after {} s warm-up{}",
        thousands(p.clients),
        p.threads,
        if p.keepalive {
            "keep-alive"
        } else {
            "new connection per call"
        },
        p.warmup_s,
        if p.think_time_s > 0.0 {
            format!(" · think time {} s", p.think_time_s)
        } else {
            String::new()
        }
    );
    if doc.partial {
        let _ = writeln!(
            s,
            "  PARTIAL: stopped early; figures cover the measured part only"
        );
    }
    let c = &doc.counts;
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "  Calls          {} ok, {} failed  ({} responses fully validated)",
        thousands(c.ok),
        thousands(c.errors_total),
        thousands(c.validated)
    );
    let kinds: Vec<String> = ErrorKind::ALL
        .iter()
        .map(|&k| format!("{} {}", k.as_str(), thousands(c.errors.get(k))))
        .collect();
    let _ = writeln!(s, "  Errors         {}", kinds.join("  "));
    if !c.http_status_codes.is_empty() {
        let codes: Vec<String> = c
            .http_status_codes
            .iter()
            .map(|(code, n)| format!("{code} ×{}", thousands(*n)))
            .collect();
        let _ = writeln!(s, "  HTTP statuses  {}", codes.join("  "));
    }
    let f = &c.in_flight;
    if f.calls > 0 {
        let _ = writeln!(
            s,
            "  In flight      {} calls still waiting at the end (the longest {:.3} s; {} of them at or past the {} s timeout, counted as timeouts)",
            thousands(f.calls),
            f.max_wait_us as f64 / 1e6,
            thousands(f.timed_out),
            p.timeout_s
        );
    }
    let _ = writeln!(s, "  Elapsed        {:.3} s", doc.elapsed_s);
    let t = &doc.throughput;
    let _ = writeln!(
        s,
        "  Throughput     {} calls/s TOTAL (all {} clients together)",
        thousands_f(t.total_per_s, 1),
        thousands(p.clients)
    );
    let _ = writeln!(
        s,
        "                 {} calls/s PER CLIENT (one client's rate: total / clients)",
        thousands_f(t.per_client_per_s, 2)
    );
    let _ = writeln!(
        s,
        "  Data           sent {:.2} MB/s, received {:.2} MB/s, {:.2} MB/s of XML in all (bodies; MB = 10^6 bytes)",
        t.sent_mb_per_s,
        t.received_mb_per_s,
        t.sent_mb_per_s + t.received_mb_per_s
    );
    let _ = writeln!(
        s,
        "  Latency (ms)   {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "min", "mean", "stdev", "max", "p50", "p75", "p90", "p99", "p99.9", "p99.99"
    );
    match &doc.latency_us.uncorrected {
        Some(u) => {
            latency_row(&mut s, "corrected", &doc.latency_us.corrected);
            latency_row(&mut s, "uncorrected", u);
            let _ = writeln!(
                s,
                "    corrected: from each call's intended send time (coordinated omission counted); uncorrected: from the actual send"
            );
        }
        None => latency_row(&mut s, "", &doc.latency_us.corrected),
    }
    let cl = &doc.client;
    let _ = writeln!(
        s,
        "  Client CPU     user {:.2} s, sys {:.2} s: {:.0}% of {} worker thread(s){}",
        cl.cpu_user_s,
        cl.cpu_sys_s,
        cl.cpu_utilisation * 100.0,
        p.threads,
        cl.max_schedule_lag_us
            .map(|l| format!("; max schedule lag {:.3} ms", l as f64 / 1000.0))
            .unwrap_or_default()
    );
    if let Some(sys) = &doc.system {
        let m = &sys.mean;
        let pct = |v: Option<f64>| v.map_or_else(|| "n/a".to_owned(), |v| format!("{v:.1}%"));
        let _ = writeln!(
            s,
            "  System         user {}  sys {}  idle {}  (over {} samples); monitored RSS max {}",
            pct(m.user_pct),
            pct(m.sys_pct),
            pct(m.idle_pct),
            sys.samples.len(),
            m.server_rss_kb_max
                .map(|k| format!("{} kB", thousands(k)))
                .unwrap_or_else(|| "n/a".into())
        );
    }
    if !first_errors.is_empty() {
        let _ = writeln!(s, "  First error of each kind:");
        for (k, d) in first_errors {
            let _ = writeln!(s, "    {}: {d}", k.as_str());
        }
    }
    for w in &doc.warnings {
        let _ = writeln!(s, "  WARNING: {w}");
    }
    s
}

fn latency_row(s: &mut String, label: &str, l: &LatencySummary) {
    let ms = |us: f64| format!("{:.3}", us / 1000.0);
    let _ = writeln!(
        s,
        "    {label:<11}  {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        ms(l.min as f64),
        ms(l.mean),
        ms(l.stdev),
        ms(l.max as f64),
        ms(l.p50 as f64),
        ms(l.p75 as f64),
        ms(l.p90 as f64),
        ms(l.p99 as f64),
        ms(l.p99_9 as f64),
        ms(l.p99_99 as f64),
    );
}

#[cfg(test)]
pub(crate) mod tests {
    use bench_proto::results::{
        Counts, ErrorCounts, Mode, Params, SystemBlock, SystemSample, SCHEMA,
    };

    use super::*;

    pub(crate) fn sample_doc() -> ResultsDoc {
        let mut h = crate::latency::latency_histogram();
        for v in 1..=1000u64 {
            h.record(v * 10).unwrap();
        }
        let mut doc = ResultsDoc {
            schema: SCHEMA.into(),
            partial: false,
            tool: crate::report::json::tool(),
            label: Some("clients=100".into()),
            started_at: "2026-11-29T19:30:00Z".into(),
            mode: Mode::Soap,
            params: Params {
                url: "http://127.0.0.1:8080".into(),
                operation: "echoComplexTypeDoc".into(),
                clients: 100,
                threads: 2,
                rate: None,
                duration_s: Some(30.0),
                requests: None,
                warmup_s: 0.0,
                think_time_s: 0.0,
                keepalive: true,
                packet_size: 1,
                message_size: None,
                timeout_s: 30.0,
                connect_timeout_s: 5.0,
                validate_first: 10,
                validate_every: 100,
                chat: None,
            },
            elapsed_s: 30.0,
            counts: Counts {
                ok: 1000,
                errors: ErrorCounts {
                    fault: 2,
                    ..Default::default()
                },
                bytes_sent: 30_000_000,
                bytes_received: 60_000_000,
                ..Default::default()
            },
            throughput: Default::default(),
            latency_us: Default::default(),
            histograms: Default::default(),
            client: Default::default(),
            system: Some(SystemBlock::from_samples(vec![SystemSample {
                t_s: 1.0,
                user_pct: 30.0,
                sys_pct: 40.0,
                idle_pct: 30.0,
                server_rss_kb: Some(10_240),
            }])),
            chat: None,
            warnings: vec!["client CPU at 97%".into()],
        };
        doc.set_latency(&h, None);
        doc.recompute_throughput();
        doc
    }

    #[test]
    fn summary_labels_total_and_per_client_throughput() {
        let text = render(
            &sample_doc(),
            &[(ErrorKind::Fault, "HTTP 500: soap:Server: boom".into())],
        );
        assert!(
            text.contains("33.3 calls/s TOTAL (all 100 clients together)"),
            "{text}"
        );
        assert!(text.contains("0.33 calls/s PER CLIENT"), "{text}");
        assert!(text.contains("fault 2"), "{text}");
        assert!(
            text.contains("sent 1.00 MB/s, received 2.00 MB/s"),
            "{text}"
        );
        assert!(text.contains("p99.99"), "{text}");
        assert!(
            text.contains("fault: HTTP 500: soap:Server: boom"),
            "{text}"
        );
        assert!(text.contains("WARNING: client CPU at 97%"), "{text}");
        assert!(text.contains("RSS max 10,240 kB"), "{text}");
        assert!(!text.contains("uncorrected"), "{text}");
    }

    #[test]
    fn open_loop_shows_both_histograms() {
        let mut doc = sample_doc();
        doc.params.rate = Some(500.0);
        doc.latency_us.uncorrected = Some(doc.latency_us.corrected.clone());
        let text = render(&doc, &[]);
        assert!(text.contains("open loop at 500.0/s"), "{text}");
        assert!(
            text.contains("corrected") && text.contains("uncorrected"),
            "{text}"
        );
    }
}
