//! What a run records as it goes, beside the figures of [`super::ResultsDoc`]: where the document stands
//! (finished, stopped, or a checkpoint written while measuring), the time series of its intervals, the
//! recoveries after runs of failures, its connections and the client's own memory.
//!
//! These are top-level fields of the same JSON object as `ResultsDoc`'s, added to `wsbench.results/v1`
//! compatibly (all optional when reading): a reader takes `ResultsDoc` and `RunRecord` from the same text.

use serde::{Deserialize, Serialize};

use super::{
    decode_histogram, encode_histogram, new_histogram, ErrorCounts, LatencySummary, ResultsDoc,
    ResultsError,
};

/// The run's record. Every field is `None` in documents without one (older, chat and merged documents).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    // Absent, not null, when unknown (a merged document has a timeline only): the schema takes no null here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<RunState>,
    #[serde(default)]
    pub timeline: Option<Timeline>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<Connections>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_memory: Option<ClientMemory>,
    /// `--monitor-pid`: that process's CPU time over the measured interval.
    #[serde(default)]
    pub monitored_process: Option<ProcessCpu>,
    /// Revision 2 of v1 (issue 44): where the system samples and the monitored process's figures came
    /// from (this machine, or an agent on the server's host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<Sampling>,
}

impl RunRecord {
    /// The record of a results document's text (`None` fields where it has none).
    pub fn from_json(text: &[u8]) -> Result<RunRecord, serde_json::Error> {
        serde_json::from_slice(text)
    }
}

/// A results document and its record, serialised as the one JSON object they make.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct WithRecord<'a> {
    #[serde(flatten)]
    pub doc: &'a ResultsDoc,
    #[serde(flatten)]
    pub record: &'a RunRecord,
}

/// Where a document stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    /// A checkpoint written while measuring. A file that still says so once the client is gone is what a
    /// client that died (SIGKILL, a crash, the machine) left: its figures cover the first `elapsed_s`.
    Running,
    /// Measured to the end: the duration or the request count.
    Complete,
    /// Stopped early: SIGINT/SIGTERM, or a results write that failed.
    Stopped,
}

/// The measured interval, interval by interval. Times are seconds from t = 0, the start of the measured
/// interval, on the monotonic clock; `start_unix_us` and `start_monotonic_us` say when t = 0 was.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// t = 0 on the UTC wall clock, RFC 3339 with microseconds.
    pub start: String,
    /// t = 0 on the UTC wall clock, microseconds since the Unix epoch.
    pub start_unix_us: u64,
    /// t = 0 on this machine's CLOCK_MONOTONIC, in microseconds (comparable with other processes' readings
    /// of that clock on the same machine, and immune to wall-clock steps).
    pub start_monotonic_us: u64,
    /// The length of every interval but the last (`--interval`).
    pub interval_s: f64,
    pub intervals: Vec<Interval>,
    /// Each time calls failed and then succeeded again, in order of the first failure.
    pub recoveries: Vec<Recovery>,
}

impl Timeline {
    /// The timelines of several client processes that shared a step, as one: interval `k` of the result adds
    /// interval `k` of each (counts, errors and histograms added, p99 recomputed). Each process's intervals
    /// are on its own clock from its own t = 0, where its stages start too, so adding them by position adds
    /// the same second of each process's ramp; processes started a moment apart (containers are) are that
    /// far apart in wall-clock time. t = 0 is the earliest process's; recoveries are merged where they overlap.
    pub fn merge(parts: &[&Timeline]) -> Result<Timeline, ResultsError> {
        let first = parts.first().ok_or(ResultsError::Empty)?;
        let earliest = parts
            .iter()
            .min_by_key(|t| t.start_unix_us)
            .unwrap_or(first);
        let mut out = Timeline {
            start: earliest.start.clone(),
            start_unix_us: earliest.start_unix_us,
            start_monotonic_us: earliest.start_monotonic_us,
            interval_s: first.interval_s,
            intervals: Vec::new(),
            recoveries: Vec::new(),
        };
        let longest = parts.iter().map(|t| t.intervals.len()).max().unwrap_or(0);
        for k in 0..longest {
            let here: Vec<&Interval> = parts.iter().filter_map(|t| t.intervals.get(k)).collect();
            out.intervals.push(Interval::sum(&here)?);
        }
        for t in parts {
            if t.interval_s != first.interval_s {
                return Err(ResultsError::Mismatch {
                    what: "timeline interval",
                    a: format!("{} s", first.interval_s),
                    b: format!("{} s", t.interval_s),
                });
            }
            for r in &t.recoveries {
                Recovery::merge_into(&mut out.recoveries, r.clone());
            }
        }
        Ok(out)
    }
}

impl Interval {
    /// The same interval of several processes added: counts, errors and histograms; the client RSS summed
    /// (every client process's), the server's readings the first process's that has them.
    fn sum(parts: &[&Interval]) -> Result<Interval, ResultsError> {
        let first = parts.first().ok_or(ResultsError::Empty)?;
        let mut corrected = new_histogram();
        let mut uncorrected = first.uncorrected.as_ref().map(|_| new_histogram());
        let mut out = Interval {
            t_s: first.t_s,
            ..Interval::default()
        };
        for i in parts {
            out.dur_s = out.dur_s.max(i.dur_s);
            out.ok += i.ok;
            out.errors.add(&i.errors);
            corrected.add(decode_histogram(&i.corrected)?)?;
            if let (Some(u), Some(text)) = (&mut uncorrected, &i.uncorrected) {
                u.add(decode_histogram(text)?)?;
            }
            out.client_rss_kb = match (out.client_rss_kb, i.client_rss_kb) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            };
            out.server_rss_kb = out.server_rss_kb.or(i.server_rss_kb);
            out.server_fds = out.server_fds.or(i.server_fds);
        }
        out.p99_us = match corrected.is_empty() {
            true => 0,
            false => corrected.value_at_quantile(0.99),
        };
        out.corrected = encode_histogram(&corrected);
        out.uncorrected = uncorrected.as_ref().map(encode_histogram);
        Ok(out)
    }
}

/// What completed within one interval. A call belongs to the interval it completed in; calls an open
/// loop could not send (its connection down) belong to the interval in which they were given up.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// When the interval began, in seconds from t = 0.
    pub t_s: f64,
    /// Its length (`interval_s`, but for a last interval cut by the end of the run).
    pub dur_s: f64,
    pub ok: u64,
    pub errors: ErrorCounts,
    /// The 99th percentile of this interval's ok calls, µs (0 when none); exact ones over several
    /// intervals come from adding their histograms.
    pub p99_us: u64,
    /// The latencies of this interval's ok calls, as `histograms.corrected`.
    pub corrected: String,
    /// Open loop: as `histograms.uncorrected`.
    pub uncorrected: Option<String>,
    /// The client process's resident memory at the end of the interval.
    pub client_rss_kb: Option<u64>,
    /// `--monitor-pid`: that process's resident memory at the end of the interval (`None` without one,
    /// or when it could not be read: it exited).
    #[serde(default)]
    pub server_rss_kb: Option<u64>,
    /// `--monitor-pid`: that process's open file descriptors (entries of /proc/PID/fd) at the end of the
    /// interval; a count that keeps growing under a steady load is a leak.
    #[serde(default)]
    pub server_fds: Option<u64>,
}

/// A run of failed calls and the successes that ended it: connections that failed and then succeeded
/// again, gathered while their failures overlap.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Recovery {
    /// The first of the failures, in seconds from t = 0.
    pub failed_from_s: f64,
    /// The first success after them: the first of these connections to succeed again.
    pub first_ok_s: f64,
    /// The last of these connections to succeed again.
    pub last_ok_s: f64,
    /// Connections that failed and then succeeded (one per run of failures).
    pub connections: u64,
    /// The failed calls of those runs.
    pub failures: u64,
}

impl Recovery {
    fn overlaps(&self, other: &Recovery) -> bool {
        self.failed_from_s <= other.last_ok_s && other.failed_from_s <= self.last_ok_s
    }

    fn absorb(&mut self, other: &Recovery) {
        self.failed_from_s = self.failed_from_s.min(other.failed_from_s);
        self.first_ok_s = self.first_ok_s.min(other.first_ok_s);
        self.last_ok_s = self.last_ok_s.max(other.last_ok_s);
        self.connections += other.connections;
        self.failures += other.failures;
    }

    /// Adds `r` to `list` (kept in order of `failed_from_s`), merged with every recovery it overlaps.
    pub fn merge_into(list: &mut Vec<Recovery>, r: Recovery) {
        let mut merged = r;
        list.retain(|x| {
            let overlapping = x.overlaps(&merged);
            if overlapping {
                merged.absorb(x);
            }
            !overlapping
        });
        // Absorbing may have widened it over ones kept before: settle until nothing overlaps.
        while let Some(i) = list.iter().position(|x| x.overlaps(&merged)) {
            let x = list.remove(i);
            merged.absorb(&x);
        }
        let at = list.partition_point(|x| x.failed_from_s <= merged.failed_from_s);
        list.insert(at, merged);
    }
}

/// Every connection the run opened: the initial ones (before the clock starts) and every reconnection.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Connections {
    /// Connections opened.
    pub opened: u64,
    /// Connection attempts that failed (refused, timed out, no local port, TLS refused).
    pub failed: u64,
    /// From the start until every connection had made its first attempt, in seconds.
    pub initial_s: f64,
    /// The set-up time of each connection opened, µs: TCP, plus TLS and the HTTP/2 handshake if any.
    pub setup_us: LatencySummary,
    /// Their histogram, as `histograms.corrected`.
    pub setup_histogram: String,
    /// The local addresses the connections were spread over, in turn (empty: the system chose).
    pub source_ips: Vec<String>,
}

/// The client process's resident memory (VmRSS), kB.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientMemory {
    /// Before connecting.
    pub rss_kb_start: Option<u64>,
    /// Once the initial connections were made.
    pub rss_kb_connected: Option<u64>,
    /// The most seen at the end of any interval.
    pub rss_kb_max: Option<u64>,
}

/// The environment variable that carries an agent's token to `bench-client agent` and to the run
/// (`--agent`): never a command line, which provenance records and `ps` shows.
pub const AGENT_TOKEN_ENV: &str = "WSBENCH_AGENT_TOKEN";

/// Where the server's figures were read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    /// `local` (`--monitor-pid`: this machine's /proc) or `agent` (`--agent`: the server host's).
    pub via: SamplingVia,
    /// `--agent`: the agent's address, as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The sampled host, as it names itself, its kernel and CPUs online.
    pub hostname: Option<String>,
    pub kernel: Option<String>,
    pub cpus: Option<u32>,
    /// The sampled process, its pid on that host and its command name.
    pub pid: Option<u32>,
    pub process: Option<String>,
    /// `--agent`: the agent's own CPU time over the measured interval, s, and per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_cpu_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_cpu_per_s: Option<f64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SamplingVia {
    #[default]
    Local,
    Agent,
}

/// A process's CPU time over the measured interval (from /proc/PID/stat).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessCpu {
    pub pid: u32,
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(from: f64, first: f64, last: f64) -> Recovery {
        Recovery {
            failed_from_s: from,
            first_ok_s: first,
            last_ok_s: last,
            connections: 1,
            failures: 2,
        }
    }

    #[test]
    fn overlapping_recoveries_merge_and_others_stay_in_order() {
        let mut list = Vec::new();
        Recovery::merge_into(&mut list, r(10.0, 12.0, 12.0));
        Recovery::merge_into(&mut list, r(1.0, 2.0, 2.0));
        Recovery::merge_into(&mut list, r(11.0, 11.5, 13.0));
        assert_eq!(list.len(), 2);
        assert_eq!(list[0], r(1.0, 2.0, 2.0));
        let m = &list[1];
        assert_eq!(
            (m.failed_from_s, m.first_ok_s, m.last_ok_s),
            (10.0, 11.5, 13.0)
        );
        assert_eq!((m.connections, m.failures), (2, 4));
        // One that bridges both joins all three.
        Recovery::merge_into(&mut list, r(1.5, 10.5, 10.5));
        assert_eq!(list.len(), 1);
        let m = &list[0];
        assert_eq!(
            (m.failed_from_s, m.first_ok_s, m.last_ok_s),
            (1.0, 2.0, 13.0)
        );
        assert_eq!((m.connections, m.failures), (4, 8));
    }

    fn second(t_s: f64, latencies: &[u64], io: u64) -> Interval {
        let mut h = new_histogram();
        for &v in latencies {
            h.record(v).unwrap();
        }
        Interval {
            t_s,
            dur_s: 1.0,
            ok: latencies.len() as u64,
            errors: ErrorCounts {
                io,
                ..ErrorCounts::default()
            },
            p99_us: if h.is_empty() {
                0
            } else {
                h.value_at_quantile(0.99)
            },
            corrected: encode_histogram(&h),
            client_rss_kb: Some(100),
            ..Interval::default()
        }
    }

    /// Issue 43, item 4: the timelines of client processes that shared a step add second by second, exactly.
    #[test]
    fn timelines_add_second_by_second() {
        let a = Timeline {
            start_unix_us: 2_000,
            interval_s: 1.0,
            intervals: vec![second(0.0, &[100, 200], 0), second(1.0, &[300], 1)],
            recoveries: vec![r(1.0, 1.5, 1.5)],
            ..Timeline::default()
        };
        let b = Timeline {
            start_unix_us: 1_000,
            interval_s: 1.0,
            intervals: vec![
                second(0.0, &[9_000], 2),
                second(1.0, &[], 0),
                second(2.0, &[50], 0),
            ],
            recoveries: vec![r(1.2, 1.4, 1.8)],
            ..Timeline::default()
        };
        let m = Timeline::merge(&[&a, &b]).unwrap();
        assert_eq!(m.start_unix_us, 1_000, "the earliest process's t = 0");
        let oks: Vec<u64> = m.intervals.iter().map(|i| i.ok).collect();
        assert_eq!(oks, [3, 1, 1]);
        let io: Vec<u64> = m.intervals.iter().map(|i| i.errors.io).collect();
        assert_eq!(io, [2, 1, 0]);
        let whole = second(0.0, &[100, 200, 9_000], 2);
        assert_eq!(m.intervals[0].p99_us, whole.p99_us);
        assert_eq!(
            decode_histogram(&m.intervals[0].corrected).unwrap(),
            decode_histogram(&whole.corrected).unwrap()
        );
        assert_eq!(m.intervals[0].client_rss_kb, Some(200));
        assert_eq!(m.recoveries.len(), 1, "overlapping recoveries are one");
        let mut c = a.clone();
        c.interval_s = 10.0;
        assert!(matches!(
            Timeline::merge(&[&a, &c]),
            Err(ResultsError::Mismatch { .. })
        ));
    }

    #[test]
    fn a_document_without_a_record_reads_as_none() {
        let rec =
            RunRecord::from_json(br#"{"schema":"wsbench.results/v1","partial":false}"#).unwrap();
        assert_eq!(rec, RunRecord::default());
        let rec = RunRecord::from_json(br#"{"state":"running","other":1}"#).unwrap();
        assert_eq!(rec.state, Some(RunState::Running));
    }
}
