//! The human summary on stdout, within 80 columns: what was run, counts and errors by kind, TOTAL and
//! PER-CLIENT throughput (each labelled), body MB/s, latency percentiles (corrected and uncorrected in open
//! loop), client CPU, system samples, first errors and warnings. Rendered from the results document, so
//! `merge` prints the same.

use std::fmt::Write as _;

use bench_proto::results::{ErrorKind, LatencySummary, Mode, ResultsDoc};

use super::{columns, shape};
use bench_proto::numbers::{thousands, thousands_f};

/// The summary, every line within 80 columns (but a single word wider than that, such as a long URL).
pub fn render(doc: &ResultsDoc, first_errors: &[(ErrorKind, String)]) -> String {
    let mut s = String::new();
    heading(&mut s, doc);
    let _ = writeln!(s);
    shape::aborted(&mut s, doc);
    calls(&mut s, doc);
    rates(&mut s, doc);
    latency(&mut s, doc);
    shape::phases(&mut s, doc);
    shape::operations(&mut s, doc);
    shape::stages(&mut s, doc);
    machine(&mut s, doc);
    notes(&mut s, first_errors, &doc.warnings);
    s
}

/// What was run: tool, operation and URL; the load model; how much was measured.
fn heading(s: &mut String, doc: &ResultsDoc) {
    let p = &doc.params;
    let label = doc
        .label
        .as_deref()
        .map(|l| format!("  [{l}]"))
        .unwrap_or_default();
    let title = format!(
        "{} {} · {} → {}{label}",
        doc.tool.name, doc.tool.version, p.operation, p.url
    );
    columns::words(s, "", 2, &title);
    let model = match p.rate {
        Some(r) => format!("open loop at {}/s", thousands_f(r, 1)),
        None if doc.latency_us.uncorrected.is_some() => "open loop".to_owned(),
        None => "closed loop".to_owned(),
    };
    let connections = if p.keepalive {
        "keep-alive"
    } else {
        "new connection per call"
    };
    let load = format!(
        "{model} · {} clients on {} threads · {connections}",
        thousands(p.clients),
        p.threads
    );
    columns::words(s, "  ", 2, &load);
    if let Some(shaped) = shape::load(doc) {
        columns::words(s, "  ", 2, &shaped);
    }
    let amount = match (p.duration_s, p.requests) {
        (Some(d), _) => format!("{d} s"),
        (None, Some(n)) => format!("{} calls", thousands(n)),
        _ => "?".to_owned(),
    };
    let think = if p.think_time_s > 0.0 {
        format!(" · think time {} s", p.think_time_s)
    } else {
        String::new()
    };
    let measured = format!("{amount} measured after {} s warm-up{think}", p.warmup_s);
    columns::words(s, "  ", 2, &measured);
    if doc.partial {
        let _ = writeln!(
            s,
            "  PARTIAL: stopped early; figures cover the measured part only"
        );
    }
}

/// Calls and errors: ok (and how many of those were fully validated), failed by kind and status, still
/// waiting at the end.
fn calls(s: &mut String, doc: &ResultsDoc) {
    let c = &doc.counts;
    let validated = if c.ok > 0 {
        format!(" ({} of them fully validated)", thousands(c.validated))
    } else {
        String::new()
    };
    let line = format!(
        "{} ok{validated}, {} failed",
        thousands(c.ok),
        thousands(c.errors_total)
    );
    columns::field(s, "Calls", &line);
    let kinds: Vec<String> = ErrorKind::ALL
        .iter()
        .filter(|&&k| c.errors.get(k) > 0)
        .map(|&k| format!("{} {}", k.as_str(), thousands(c.errors.get(k))))
        .collect();
    if kinds.is_empty() {
        columns::field(s, "Errors", "none");
    } else {
        columns::list(s, "Errors", &kinds);
    }
    if !c.http_status_codes.is_empty() {
        let codes = c
            .http_status_codes
            .iter()
            .map(|(code, n)| format!("{code} ×{}", thousands(*n)));
        columns::list(s, "HTTP statuses", codes);
    }
    if !c.failure_kinds.is_empty() {
        let kinds = c
            .failure_kinds
            .iter()
            .map(|(kind, n)| format!("{kind} ×{}", thousands(*n)));
        columns::list(s, "Faults by kind", kinds);
    }
    let f = &c.in_flight;
    if f.calls > 0 {
        let text = format!(
            "{} calls still waiting at the end (the longest {:.3} s; {} of them at or past the {} s \
             timeout, counted as timeouts)",
            thousands(f.calls),
            f.max_wait_us as f64 / 1e6,
            thousands(f.timed_out),
            doc.params.timeout_s
        );
        columns::field(s, "In flight", &text);
    }
}

/// Elapsed time, throughput (TOTAL and PER CLIENT, each labelled) and body MB/s.
fn rates(s: &mut String, doc: &ResultsDoc) {
    let (t, p) = (&doc.throughput, &doc.params);
    columns::field(s, "Elapsed", &format!("{:.3} s", doc.elapsed_s));
    let total = format!(
        "{} calls/s TOTAL (all {} clients together)",
        thousands_f(t.total_per_s, 1),
        thousands(p.clients)
    );
    columns::field(s, "Throughput", &total);
    let per_client = format!(
        "{} calls/s PER CLIENT (total / clients)",
        thousands_f(t.per_client_per_s, 2)
    );
    columns::field(s, "", &per_client);
    // Only SOAP bodies are XML; a plain HTTP load's bodies are whatever the endpoint sends.
    let what = if doc.mode == Mode::Soap {
        "XML"
    } else {
        "bodies"
    };
    let data = format!(
        "{:.2} MB/s of {what}: sent {:.2}, received {:.2} (MB = 10^6 bytes)",
        t.sent_mb_per_s + t.received_mb_per_s,
        t.sent_mb_per_s,
        t.received_mb_per_s
    );
    columns::field(s, "Data", &data);
}

/// Latency percentiles in ms, corrected and uncorrected in open loop, as two tables of at most 77 columns;
/// a run in which no call succeeded has none (failed calls are not timed).
fn latency(s: &mut String, doc: &ResultsDoc) {
    let l = &doc.latency_us;
    if l.corrected.count == 0 {
        columns::field(
            s,
            "Latency",
            "no latency: nothing completed (failed calls are not timed)",
        );
        return;
    }
    let rows: Vec<(&str, &LatencySummary)> = match &l.uncorrected {
        Some(u) => vec![("corrected", &l.corrected), ("uncorrected", u)],
        None => vec![("", &l.corrected)],
    };
    let head = |s: &mut String, first: &str, names: &[&str]| {
        let _ = write!(s, "  {first:<15}");
        for n in names {
            let _ = write!(s, "{n:>10}");
        }
        let _ = writeln!(s);
    };
    let ms = |us: f64| format!("{:.3}", us / 1000.0);
    head(s, "Latency (ms)", &["min", "mean", "stdev", "max"]);
    for (label, r) in &rows {
        let v = [ms(r.min as f64), ms(r.mean), ms(r.stdev), ms(r.max as f64)];
        row(s, label, &v);
    }
    head(s, "", &["p50", "p75", "p90", "p99", "p99.9", "p99.99"]);
    for (label, r) in &rows {
        let v = [r.p50, r.p75, r.p90, r.p99, r.p99_9, r.p99_99].map(|us| ms(us as f64));
        row(s, label, &v);
    }
    if l.uncorrected.is_some() {
        columns::words(
            s,
            "    ",
            4,
            "corrected: from each call's intended send time (coordinated omission counted); \
             uncorrected: from the actual send",
        );
    }
}

fn row(s: &mut String, label: &str, values: &[String]) {
    let _ = write!(s, "    {label:<13}");
    for v in values {
        let _ = write!(s, "{v:>10}");
    }
    let _ = writeln!(s);
}

/// The client's CPU and (open loop) schedule lag; the system's CPU and the monitored process's RSS.
fn machine(s: &mut String, doc: &ResultsDoc) {
    let (cl, p) = (&doc.client, &doc.params);
    let cpu = format!(
        "user {:.2} s, sys {:.2} s: {:.0}% of {} worker thread(s)",
        cl.cpu_user_s,
        cl.cpu_sys_s,
        cl.cpu_utilisation * 100.0,
        p.threads,
    );
    columns::field(s, "Client CPU", &cpu);
    if let Some(lag) = cl.max_schedule_lag_us {
        let text = format!("at most {:.3} ms behind the schedule", lag as f64 / 1000.0);
        columns::field(s, "Schedule lag", &text);
    }
    if let Some(sys) = &doc.system {
        let m = &sys.mean;
        let pct = |v: Option<f64>| v.map_or_else(|| "n/a".to_owned(), |v| format!("{v:.1}%"));
        let text = format!(
            "user {}, sys {}, idle {} (over {} samples)",
            pct(m.user_pct),
            pct(m.sys_pct),
            pct(m.idle_pct),
            sys.samples.len(),
        );
        columns::field(s, "System", &text);
        let rss = m
            .server_rss_kb_max
            .map(|k| format!("max {} MiB", thousands_f(k as f64 / 1024.0, 1)))
            .unwrap_or_else(|| "n/a".into());
        columns::field(s, "Monitored RSS", &rss);
    }
}

/// The first failure of each kind, described, and the warnings.
fn notes(s: &mut String, first_errors: &[(ErrorKind, String)], warnings: &[String]) {
    if !first_errors.is_empty() {
        let _ = writeln!(s, "  First error of each kind:");
        for (k, d) in first_errors {
            columns::words(s, &format!("    {}: ", k.as_str()), 6, d);
        }
    }
    for w in warnings {
        columns::words(s, "  WARNING: ", 4, w);
    }
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
                shape: Default::default(),
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
                ..SystemSample::default()
            }])),
            chat: None,
            warnings: vec!["client CPU at 97%".into()],
            shape: Default::default(),
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
            text.contains("sent 1.00, received 2.00 (MB = 10^6 bytes)"),
            "{text}"
        );
        assert!(text.contains("p99.99"), "{text}");
        assert!(
            text.contains("fault: HTTP 500: soap:Server: boom"),
            "{text}"
        );
        assert!(text.contains("WARNING: client CPU at 97%"), "{text}");
        assert!(text.contains("Monitored RSS  max 10.0 MiB"), "{text}");
        assert!(!text.contains("uncorrected"), "{text}");
    }

    #[test]
    fn every_line_fits_80_columns_with_every_field_present() {
        let mut doc = sample_doc();
        doc.params.rate = Some(123_456.0);
        doc.params.think_time_s = 0.25;
        doc.params.clients = 10_000;
        doc.partial = true;
        doc.latency_us.uncorrected = Some(doc.latency_us.corrected.clone());
        doc.counts.errors = ErrorCounts {
            connect: 1_234_567,
            timeout: 1_234_567,
            http_status: 1_234_567,
            fault: 1_234_567,
            validation: 1_234_567,
            io: 1_234_567,
        };
        doc.counts.http_status_codes = (500..520).map(|c| (c, 12_345)).collect();
        doc.counts.in_flight.calls = 9_999;
        doc.counts.in_flight.max_wait_us = 31_000_000;
        doc.client.max_schedule_lag_us = Some(1_234_567);
        doc.throughput.sent_mb_per_s = 12_345.678;
        doc.warnings.push("w ".repeat(100));
        let first = [(ErrorKind::Io, "connection error: ".repeat(10))];
        let text = render(&doc, &first);
        for line in text.lines() {
            assert!(
                line.chars().count() <= 80,
                "{} columns: {line}",
                line.chars().count()
            );
        }
        assert!(
            text.contains("p99.99") && text.contains("uncorrected"),
            "{text}"
        );
    }

    #[test]
    fn bodies_are_xml_only_in_a_soap_load() {
        let mut doc = sample_doc();
        assert!(render(&doc, &[]).contains("3.00 MB/s of XML:"));
        doc.mode = Mode::HttpGet;
        let text = render(&doc, &[]);
        assert!(
            text.contains("3.00 MB/s of bodies:") && !text.contains("XML"),
            "{text}"
        );
    }

    #[test]
    fn a_run_without_a_success_has_no_latency_row() {
        let mut doc = sample_doc();
        doc.counts.ok = 0;
        doc.latency_us = Default::default();
        let text = render(&doc, &[]);
        assert!(text.contains("no latency: nothing completed"), "{text}");
        assert!(!text.contains("Latency (ms)"), "{text}");
        assert!(!text.contains("fully validated"), "{text}");
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
