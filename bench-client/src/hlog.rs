//! `--hlog`: each interval's latency histogram in the HdrHistogram interval log format (readable by
//! HdrHistogram's `HistogramLogProcessor`, hdr-plot, etc.), written as the interval closes.
//!
//! The collector merges the workers' histograms of an interval; this writer gets the merged one and writes
//! it as one line (a `LineWriter` hands each whole line to the kernel), so a client killed at any moment
//! leaves a log whose lines are all complete, up to its last closed interval. Intervals without a
//! successful call are written too (empty): the log has no holes.

use std::fs::File;
use std::io::{LineWriter, Write as _};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;

/// One interval: its start and length from the start of the measured interval, and its latencies (µs).
#[derive(Debug)]
pub struct Entry {
    pub start: Duration,
    pub length: Duration,
    pub hist: Histogram<u64>,
}

/// The log's writer, a task of its own on the pipeline's runtime.
#[derive(Debug)]
pub struct Hlog {
    tx: UnboundedSender<Entry>,
    task: JoinHandle<anyhow::Result<()>>,
}

impl Hlog {
    /// Creates the log at `path`; `start` is the wall-clock start of the measured interval.
    pub fn start(path: PathBuf, start: SystemTime) -> Hlog {
        let (tx, rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(write(path, start, rx));
        Hlog { tx, task }
    }

    /// Queues an interval; `false` once the writer has stopped on an error ([`Hlog::finish`] says which).
    pub fn write(&self, entry: Entry) -> bool {
        self.tx.send(entry).is_ok()
    }

    /// Writes what is queued and closes the log.
    pub async fn finish(self) -> anyhow::Result<()> {
        drop(self.tx);
        self.task.await.context("the hlog writer failed")?
    }
}

async fn write(
    path: PathBuf,
    start: SystemTime,
    mut rx: UnboundedReceiver<Entry>,
) -> anyhow::Result<()> {
    let failed = |e: &dyn std::fmt::Display| anyhow::anyhow!("writing {}: {e}", path.display());
    let file = File::create(&path).with_context(|| format!("creating {}", path.display()))?;
    let mut out = LineWriter::with_capacity(1 << 16, file);
    let mut serializer = V2DeflateSerializer::new();
    let mut log = IntervalLogWriterBuilder::new()
        .add_comment("bench-client latency intervals (microseconds)")
        .with_start_time(start)
        .with_base_time(start)
        .begin_log_with(&mut out, &mut serializer)
        .map_err(|e| failed(&e))?;
    while let Some(e) = rx.recv().await {
        log.write_histogram(&e.hist, e.start, e.length, None)
            .map_err(|e| failed(&e))?;
    }
    drop(log);
    out.flush().map_err(|e| failed(&e))
}

#[cfg(test)]
mod tests {
    use bench_proto::results::decode_histogram;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    use super::*;
    use crate::latency::latency_histogram;

    fn hist(values: &[u64]) -> Histogram<u64> {
        let mut h = latency_histogram();
        for &v in values {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn each_interval_is_one_complete_line_as_soon_as_it_is_written() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let path =
            std::env::temp_dir().join(format!("bench-client-hlog-{}.hlog", std::process::id()));
        let read = |path: &PathBuf| {
            let text = std::fs::read(path).unwrap();
            let mut seen = Vec::new();
            for entry in IntervalLogIterator::new(&text) {
                if let LogEntry::Interval(h) = entry.unwrap() {
                    let d = decode_histogram(h.encoded_histogram()).unwrap();
                    seen.push((h.start_timestamp().as_secs(), d.len()));
                }
            }
            seen
        };
        let second = Duration::from_secs(1);
        rt.block_on(async {
            let log = Hlog::start(path.clone(), SystemTime::now());
            for (i, values) in [&[10, 20, 30][..], &[], &[40]].into_iter().enumerate() {
                let start = second * i as u32;
                assert!(log.write(Entry {
                    start,
                    length: second,
                    hist: hist(values)
                }));
            }
            // Written before the log is closed: what a killed client leaves.
            let mut seen = Vec::new();
            for _ in 0..100 {
                tokio::task::yield_now().await;
                seen = read(&path);
                if seen.len() == 3 {
                    break;
                }
            }
            assert_eq!(seen, vec![(0, 3), (1, 0), (2, 1)]);
            log.finish().await.unwrap();
        });
        std::fs::remove_file(&path).unwrap();
    }
}
