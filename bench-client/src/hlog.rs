//! `--hlog`: per-second latency histograms in the HdrHistogram interval log format (readable by
//! HdrHistogram's `HistogramLogProcessor`, hdr-plot, etc.).
//!
//! Workers send a finished one-second histogram about once a second (never per request); this writer
//! merges the workers' histograms of the same second and writes each second once every worker is past it.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::latency::latency_histogram;

/// From a worker to the log writer.
#[derive(Debug)]
pub enum IntervalMsg {
    /// The latencies (µs) of calls that completed in second `idx` of the measured interval.
    Interval {
        worker: usize,
        idx: u64,
        hist: Histogram<u64>,
    },
    /// The worker has sent its last interval.
    Done { worker: usize },
}

/// Writes the log until every worker is done. `start` is the wall-clock start of the measured interval.
pub async fn write(
    path: PathBuf,
    start: SystemTime,
    workers: usize,
    mut rx: UnboundedReceiver<IntervalMsg>,
) -> anyhow::Result<()> {
    let file = File::create(&path).with_context(|| format!("creating {}", path.display()))?;
    let mut out = BufWriter::new(file);
    let mut serializer = V2DeflateSerializer::new();
    let mut log = IntervalLogWriterBuilder::new()
        .add_comment("bench-client latency intervals (microseconds)")
        .with_start_time(start)
        .with_base_time(start)
        .begin_log_with(&mut out, &mut serializer)
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    let mut pending: BTreeMap<u64, Histogram<u64>> = BTreeMap::new();
    // The latest second each worker has sent (u64::MAX once done); a second is complete when all are past it.
    let mut reached = vec![None::<u64>; workers];
    let mut done = 0;
    while done < workers {
        let Some(msg) = rx.recv().await else { break };
        match msg {
            IntervalMsg::Interval { worker, idx, hist } => {
                pending
                    .entry(idx)
                    .or_insert_with(latency_histogram)
                    .add(&hist)?;
                reached[worker] = Some(idx);
            }
            IntervalMsg::Done { worker } => {
                reached[worker] = Some(u64::MAX);
                done += 1;
            }
        }
        let complete_below = reached.iter().map(|r| r.unwrap_or(0)).min().unwrap_or(0);
        while let Some(entry) = pending.first_entry() {
            if *entry.key() >= complete_below && complete_below != u64::MAX {
                break;
            }
            let (idx, h) = entry.remove_entry();
            log.write_histogram(&h, Duration::from_secs(idx), Duration::from_secs(1), None)
                .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
        }
    }
    for (idx, h) in pending {
        log.write_histogram(&h, Duration::from_secs(idx), Duration::from_secs(1), None)
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    }
    drop(log);
    out.flush()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use bench_proto::results::decode_histogram;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    use super::*;

    fn hist(values: &[u64]) -> Histogram<u64> {
        let mut h = latency_histogram();
        for &v in values {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn seconds_of_all_workers_are_merged_in_order() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let path =
            std::env::temp_dir().join(format!("bench-client-hlog-{}.hlog", std::process::id()));
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        for m in [
            IntervalMsg::Interval {
                worker: 0,
                idx: 0,
                hist: hist(&[10, 20]),
            },
            IntervalMsg::Interval {
                worker: 1,
                idx: 0,
                hist: hist(&[30]),
            },
            IntervalMsg::Interval {
                worker: 1,
                idx: 2,
                hist: hist(&[40]),
            },
            IntervalMsg::Done { worker: 1 },
            IntervalMsg::Interval {
                worker: 0,
                idx: 1,
                hist: hist(&[50, 60, 70]),
            },
            IntervalMsg::Done { worker: 0 },
        ] {
            tx.send(m).unwrap();
        }
        rt.block_on(write(path.clone(), SystemTime::now(), 2, rx))
            .unwrap();
        let text = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let mut seen = Vec::new();
        for entry in IntervalLogIterator::new(&text) {
            if let LogEntry::Interval(h) = entry.unwrap() {
                let d = decode_histogram(h.encoded_histogram()).unwrap();
                seen.push((h.start_timestamp().as_secs(), d.len()));
            }
        }
        assert_eq!(seen, vec![(0, 3), (1, 3), (2, 1)]);
    }
}
