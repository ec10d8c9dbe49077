//! Exact merging of results documents from several client processes or hosts into one.
//!
//! Counters and histograms are added (no averaging of percentiles); the measured interval is the
//! longest one; clients, threads and rates are summed; throughput and percentiles are recomputed
//! from the sums, so merging N documents gives what one client process doing all of it would have.

use std::collections::BTreeSet;

use super::{
    decode_histogram, new_histogram, ClientStats, Mode, ProcessCpu, ResultsDoc, ResultsError,
    RunRecord, SCHEMA,
};

pub fn merge(docs: &[ResultsDoc]) -> Result<ResultsDoc, ResultsError> {
    let first = docs.first().ok_or(ResultsError::Empty)?;
    for d in docs {
        if d.schema != SCHEMA {
            return Err(ResultsError::Schema {
                found: d.schema.clone(),
                expected: SCHEMA,
            });
        }
        same("mode", first.mode.as_str(), d.mode.as_str())?;
        same("operation", &first.params.operation, &d.params.operation)?;
        same(
            "loop model",
            loop_model(first.params.rate),
            loop_model(d.params.rate),
        )?;
    }
    if first.mode == Mode::Chat {
        // A chat score is a per-run average over rooms; adding two is not obviously meaningful.
        return Err(ResultsError::Unsupported("chat"));
    }

    let mut out = first.clone();
    let mut corrected = new_histogram();
    let mut uncorrected = first
        .histograms
        .uncorrected
        .as_ref()
        .map(|_| new_histogram());
    out.counts = Default::default();
    out.client = ClientStats::default();
    let mut cpu_capacity_s = 0.0;
    let mut labels = BTreeSet::new();
    let mut warnings = Vec::new();
    for (i, d) in docs.iter().enumerate() {
        corrected.add(decode_histogram(&d.histograms.corrected)?)?;
        match (&mut uncorrected, &d.histograms.uncorrected) {
            (Some(u), Some(s)) => u.add(decode_histogram(s)?)?,
            (None, None) => {}
            _ => return Err(mismatch_uncorrected()),
        }
        out.counts.add(&d.counts);
        if i > 0 {
            out.shape.merge(&d.shape)?;
        }
        out.partial |= d.partial;
        out.elapsed_s = out.elapsed_s.max(d.elapsed_s);
        if d.started_at < out.started_at {
            out.started_at.clone_from(&d.started_at);
        }
        if i > 0 {
            let (p, q) = (&mut out.params, &d.params);
            p.clients += q.clients;
            p.threads += q.threads;
            p.rate = p.rate.zip(q.rate).map(|(a, b)| a + b);
            p.requests = p.requests.zip(q.requests).map(|(a, b)| a + b);
            p.duration_s = max_opt(p.duration_s, q.duration_s);
        }
        out.client.cpu_user_s += d.client.cpu_user_s;
        out.client.cpu_sys_s += d.client.cpu_sys_s;
        out.client.max_schedule_lag_us =
            max_opt(out.client.max_schedule_lag_us, d.client.max_schedule_lag_us);
        cpu_capacity_s += d.elapsed_s * d.params.threads as f64;
        if out.system.is_none() {
            out.system.clone_from(&d.system);
        }
        labels.extend(d.label.clone());
        for w in &d.warnings {
            if !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
    }
    out.label = (!labels.is_empty()).then(|| labels.into_iter().collect::<Vec<_>>().join("+"));
    out.warnings = warnings;
    out.client.cpu_utilisation = if cpu_capacity_s > 0.0 {
        (out.client.cpu_user_s + out.client.cpu_sys_s) / cpu_capacity_s
    } else {
        0.0
    };
    out.set_latency(&corrected, uncorrected.as_ref());
    out.recompute_throughput();
    Ok(out)
}

/// The record of a merged document: the server's figures of its parts' records (`merge` keeps no other part
/// of a record). Parts that sampled the same process (the same pid on the same host: client tasks of one
/// server instance) overlap in time, so that process counts once, by the part that saw it use the most CPU;
/// distinct processes (the instances of a step) are added. The merged `monitored_process` is so the servers'
/// CPU over the measured interval, for CPU per call, under the first process's pid; `sampling` is the first
/// sampled part's (as the merged `system` block is the first part's).
pub fn merge_records(records: &[RunRecord]) -> RunRecord {
    let mut seen: Vec<((Option<&str>, u32), ProcessCpu)> = Vec::new();
    for r in records {
        let Some(p) = &r.monitored_process else {
            continue;
        };
        let host = r.sampling.as_ref().and_then(|s| s.hostname.as_deref());
        let key = (host, p.pid);
        match seen.iter_mut().find(|(k, _)| *k == key) {
            Some((_, q)) if q.cpu_user_s + q.cpu_sys_s < p.cpu_user_s + p.cpu_sys_s => {
                *q = p.clone()
            }
            Some(_) => {}
            None => seen.push((key, p.clone())),
        }
    }
    let monitored_process = seen.first().map(|(_, first)| ProcessCpu {
        pid: first.pid,
        cpu_user_s: seen.iter().map(|(_, p)| p.cpu_user_s).sum(),
        cpu_sys_s: seen.iter().map(|(_, p)| p.cpu_sys_s).sum(),
    });
    RunRecord {
        monitored_process,
        sampling: records.iter().find_map(|r| r.sampling.clone()),
        ..RunRecord::default()
    }
}

fn same(what: &'static str, a: &str, b: &str) -> Result<(), ResultsError> {
    if a == b {
        Ok(())
    } else {
        Err(ResultsError::Mismatch {
            what,
            a: a.to_owned(),
            b: b.to_owned(),
        })
    }
}

fn loop_model(rate: Option<f64>) -> &'static str {
    if rate.is_some() {
        "open loop"
    } else {
        "closed loop"
    }
}

fn mismatch_uncorrected() -> ResultsError {
    ResultsError::Mismatch {
        what: "uncorrected histogram",
        a: "present".into(),
        b: "absent".into(),
    }
}

fn max_opt<T: PartialOrd>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b > a { b } else { a }),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use hdrhistogram::Histogram;

    use super::super::*;
    use super::*;

    fn doc(values: &[u64], errors: u64, elapsed_s: f64, clients: u64) -> ResultsDoc {
        let mut h = new_histogram();
        for &v in values {
            h.record(v).unwrap();
        }
        let mut d = ResultsDoc {
            schema: SCHEMA.into(),
            partial: false,
            tool: Tool {
                name: "bench-client".into(),
                version: "0.1.0".into(),
            },
            label: Some("x".into()),
            started_at: "2026-11-29T19:30:00Z".into(),
            mode: Mode::Soap,
            params: Params {
                url: "http://127.0.0.1:8080".into(),
                operation: "echoComplexTypeDoc".into(),
                clients,
                threads: 1,
                rate: None,
                duration_s: Some(elapsed_s),
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
            elapsed_s,
            counts: Counts {
                ok: values.len() as u64,
                errors: ErrorCounts {
                    io: errors,
                    ..Default::default()
                },
                bytes_sent: 100 * values.len() as u64,
                bytes_received: 200 * values.len() as u64,
                ..Default::default()
            },
            throughput: Throughput::default(),
            latency_us: LatencyBlock::default(),
            histograms: Histograms::default(),
            client: ClientStats {
                cpu_user_s: 1.0,
                cpu_sys_s: 0.5,
                ..Default::default()
            },
            system: None,
            chat: None,
            warnings: vec![],
            shape: Default::default(),
        };
        d.set_latency(&h, None);
        d.recompute_throughput();
        d
    }

    fn record(host: &str, pid: u32, user: f64, sys: f64) -> RunRecord {
        RunRecord {
            monitored_process: Some(ProcessCpu {
                pid,
                cpu_user_s: user,
                cpu_sys_s: sys,
            }),
            sampling: Some(Sampling {
                via: SamplingVia::Agent,
                hostname: Some(host.into()),
                pid: Some(pid),
                ..Sampling::default()
            }),
            ..RunRecord::default()
        }
    }

    #[test]
    fn a_server_sampled_by_several_clients_counts_once_and_servers_add_up() {
        let merged = merge_records(&[
            record("n1", 7, 2.0, 1.0),
            // The same server, seen by another client over a slightly shorter span.
            record("n1", 7, 1.9, 0.9),
            // The same pid on another node: another server.
            record("n2", 7, 4.0, 0.5),
            RunRecord::default(),
        ]);
        let p = merged.monitored_process.unwrap();
        assert_eq!((p.pid, p.cpu_user_s, p.cpu_sys_s), (7, 6.0, 1.5));
        assert_eq!(merged.sampling.unwrap().hostname.as_deref(), Some("n1"));
        assert_eq!(merged.state, None, "only the server's figures are merged");
        let none = merge_records(&[RunRecord::default()]);
        assert_eq!(none, RunRecord::default());
    }

    #[test]
    fn merging_equals_one_big_run() {
        let all: Vec<u64> = (0..10_000u64).map(|i| (i * 7919) % 50_000 + 30).collect();
        let (a, b) = all.split_at(3_333);
        let merged = merge(&[doc(a, 1, 10.0, 3), doc(b, 2, 9.5, 7)]).unwrap();
        let big = doc(&all, 3, 10.0, 10);
        assert_eq!(merged.counts, big.counts);
        assert_eq!(merged.latency_us, big.latency_us);
        // The encodings may differ in array sizing; the recorded counts must not.
        let (m, b) = (&merged.histograms.corrected, &big.histograms.corrected);
        assert_eq!(decode_histogram(m).unwrap(), decode_histogram(b).unwrap());
        assert_eq!(merged.throughput, big.throughput);
        assert_eq!(merged.params.clients, 10);
        assert_eq!(merged.elapsed_s, 10.0);
        assert_eq!(merged.client.cpu_user_s, 2.0);
    }

    #[test]
    fn merged_percentiles_are_not_averages_of_percentiles() {
        let merged = merge(&[doc(&[100; 99], 0, 1.0, 1), doc(&[10_000], 0, 1.0, 1)]).unwrap();
        let h: Histogram<u64> = decode_histogram(&merged.histograms.corrected).unwrap();
        assert_eq!(h.len(), 100);
        assert_eq!(merged.latency_us.corrected.p50, 100);
        assert!(merged.latency_us.corrected.max >= 10_000);
    }

    #[test]
    fn refuses_mixed_operations_and_schemas() {
        let a = doc(&[1], 0, 1.0, 1);
        let mut b = a.clone();
        b.params.operation = "echo".into();
        assert!(matches!(
            merge(&[a.clone(), b]),
            Err(ResultsError::Mismatch { .. })
        ));
        let mut c = a.clone();
        c.schema = "other/v9".into();
        assert!(matches!(merge(&[a, c]), Err(ResultsError::Schema { .. })));
        assert!(matches!(merge(&[]), Err(ResultsError::Empty)));
    }

    #[test]
    fn document_round_trips_through_json() {
        let d = doc(&[5, 6, 7], 1, 2.0, 2);
        let s = serde_json::to_string(&d).unwrap();
        let back: ResultsDoc = serde_json::from_str(&s).unwrap();
        assert_eq!(back, d);
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(v["mode"], "soap");
        assert_eq!(v["counts"]["errors"]["io"], 1);
        assert!(v["latency_us"]["uncorrected"].is_null());
    }
}
