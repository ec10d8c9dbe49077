//! The types of the results document, field for field as in docs/contracts.md and schemas/results.v1.schema.json.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::ChatResults;
use super::{encode_histogram, ErrorCounts, LatencySummary, ShapeParams, ShapeResults};

/// One run of bench-client (or several merged): what was asked, what was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultsDoc {
    /// Always [`super::SCHEMA`].
    pub schema: String,
    /// True when the run was stopped early (SIGINT) and the figures cover only what was measured.
    pub partial: bool,
    pub tool: Tool,
    pub label: Option<String>,
    /// RFC 3339, UTC, when the measured interval began.
    pub started_at: String,
    pub mode: Mode,
    pub params: Params,
    /// The measured interval in seconds (after warm-up).
    pub elapsed_s: f64,
    pub counts: Counts,
    pub throughput: Throughput,
    pub latency_us: LatencyBlock,
    pub histograms: Histograms,
    pub client: ClientStats,
    pub system: Option<SystemBlock>,
    pub chat: Option<ChatResults>,
    pub warnings: Vec<String>,
    /// A shaped load's parts: per operation, per stage, phases, an early stop (issue 43).
    #[serde(flatten)]
    pub shape: ShapeResults,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

/// Which load bench-client generated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mode {
    #[serde(rename = "soap")]
    Soap,
    #[serde(rename = "http-get")]
    HttpGet,
    #[serde(rename = "chat")]
    Chat,
    /// The OSS/J portal transaction (an order posted through a broker to a back end).
    #[serde(rename = "ossj")]
    Ossj,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Soap => "soap",
            Mode::HttpGet => "http-get",
            Mode::Chat => "chat",
            Mode::Ossj => "ossj",
        }
    }
}

/// Everything the run was asked to do (durations in seconds, sizes in bytes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub url: String,
    pub operation: String,
    pub clients: u64,
    pub threads: u64,
    /// Open loop: the total intended rate in requests/s; `None` in closed loop.
    pub rate: Option<f64>,
    pub duration_s: Option<f64>,
    pub requests: Option<u64>,
    pub warmup_s: f64,
    pub think_time_s: f64,
    pub keepalive: bool,
    pub packet_size: u64,
    pub message_size: Option<u64>,
    pub timeout_s: f64,
    pub connect_timeout_s: f64,
    /// Responses fully parsed and compared: the first `validate_first` on each connection…
    /// (absent in documents written before these were recorded: read as 0)
    #[serde(default)]
    pub validate_first: u64,
    /// …and every `validate_every`-th after them (0: none).
    #[serde(default)]
    pub validate_every: u64,
    pub chat: Option<ChatParams>,
    /// A shaped load: mix, seed, arrivals, stages, abort rule (issue 43).
    #[serde(flatten)]
    pub shape: ShapeParams,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatParams {
    pub rooms: u64,
    pub users: u64,
    pub count: u64,
    pub pause_s: f64,
    pub runs: u64,
}

/// Counters of the measured interval. A call is either `ok` or counted under exactly one error kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub ok: u64,
    pub errors_total: u64,
    pub errors: ErrorCounts,
    /// Responses fully parsed and compared with what was sent (whether they passed or not).
    pub validated: u64,
    /// HTTP body bytes (the XML), not headers.
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// The `http_status` errors by status code (e.g. `{"503": 10}`). Always written, so a document's shape does
    /// not depend on the run's timing; absent in documents of older versions.
    #[serde(default)]
    pub http_status_codes: BTreeMap<u16, u64>,
    /// The `fault` errors of a service that names its failures (the OSS/J portal: `reply-timeout`,
    /// `broker-refused`, `backend-fault`, …) by kind; written only when there were such.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failure_kinds: BTreeMap<String, u64>,
    /// Calls still waiting for their response when the measured interval ended (always written; absent in
    /// documents of older versions).
    #[serde(default)]
    pub in_flight: InFlight,
}

/// Calls in flight when the run ended (its deadline or a stop). Those that had waited `--timeout` or
/// longer are also counted as `timeout` errors; the others are neither ok nor errors, only reported here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InFlight {
    pub calls: u64,
    /// The longest any of them had waited, in µs.
    pub max_wait_us: u64,
    /// How many of them had waited at least the timeout (included in `errors.timeout`).
    pub timed_out: u64,
}

impl InFlight {
    pub fn add(&mut self, other: &InFlight) {
        self.calls += other.calls;
        self.max_wait_us = self.max_wait_us.max(other.max_wait_us);
        self.timed_out += other.timed_out;
    }
}

impl Counts {
    pub fn add(&mut self, other: &Counts) {
        self.ok += other.ok;
        self.errors.add(&other.errors);
        self.errors_total = self.errors.total();
        self.validated += other.validated;
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        for (code, n) in &other.http_status_codes {
            *self.http_status_codes.entry(*code).or_default() += n;
        }
        for (kind, n) in &other.failure_kinds {
            *self.failure_kinds.entry(kind.clone()).or_default() += n;
        }
        self.in_flight.add(&other.in_flight);
    }
}

/// Successful calls per second. `per_client_per_s` is the rate one client (virtual user) saw:
/// CXF's "Overall Throughput" and the seeds' per-client figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    pub total_per_s: f64,
    pub per_client_per_s: f64,
    /// Body bytes per second, in MB (10^6 bytes).
    pub sent_mb_per_s: f64,
    pub received_mb_per_s: f64,
}

impl Throughput {
    pub(crate) fn compute(counts: &Counts, elapsed_s: f64, clients: u64) -> Throughput {
        if elapsed_s <= 0.0 {
            return Throughput::default();
        }
        let total = counts.ok as f64 / elapsed_s;
        Throughput {
            total_per_s: total,
            per_client_per_s: if clients == 0 {
                0.0
            } else {
                total / clients as f64
            },
            sent_mb_per_s: counts.bytes_sent as f64 / elapsed_s / 1e6,
            received_mb_per_s: counts.bytes_received as f64 / elapsed_s / 1e6,
        }
    }
}

/// Latency summaries in microseconds. `uncorrected` is only kept in open loop, where `corrected`
/// is measured from each request's intended send time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyBlock {
    pub corrected: LatencySummary,
    pub uncorrected: Option<LatencySummary>,
}

/// HdrHistogram V2 compressed, base64, values in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Histograms {
    pub corrected: String,
    pub uncorrected: Option<String>,
}

/// The client process's own resource use during the measured interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientStats {
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    /// (user + sys) / (elapsed × worker threads): near 1.0 the client, not the server, is the limit.
    pub cpu_utilisation: f64,
    /// Open loop: the furthest behind its intended send time any request went out.
    pub max_schedule_lag_us: Option<u64>,
}

/// `--monitor-pid`: the machine's CPU split and the monitored process's memory, about once a second, the
/// last sample covering whatever part of a second the measured interval ended in.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemBlock {
    pub samples: Vec<SystemSample>,
    pub mean: SystemMean,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemSample {
    /// Seconds since the measured interval began, when this sample's interval ended (it began at the
    /// previous sample's, or at 0).
    pub t_s: f64,
    pub user_pct: f64,
    pub sys_pct: f64,
    pub idle_pct: f64,
    /// `None` when the process could not be read (it exited).
    pub server_rss_kb: Option<u64>,
    /// Revision 2 of v1 (issue 44; all optional, absent where not sampled): the share of CPU time a hypervisor stole,
    /// context switches and softirqs per second of the server's host; the server process's CPU (% of one
    /// CPU), open fds and threads; bytes per second through its network namespace (every interface) and
    /// TCP segments retransmitted there per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ctxt_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub softirqs_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_fds: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_threads: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_rx_bytes_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_tx_bytes_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_retrans_per_s: Option<f64>,
}

/// Over the whole measured interval. The CPU shares are `None` when nothing was sampled (an interval
/// shorter than the kernel's clock tick, or no /proc/stat): not measured, which is not 0 %.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemMean {
    #[serde(default)]
    pub user_pct: Option<f64>,
    #[serde(default)]
    pub sys_pct: Option<f64>,
    #[serde(default)]
    pub idle_pct: Option<f64>,
    pub server_rss_kb_max: Option<u64>,
    /// Revision 2 of v1 (issue 44), as the samples' (weighted means; `steal_max_pct`, `server_fds_max` and
    /// `server_threads_max` the most of any sample).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_max_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ctxt_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub softirqs_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_fds_max: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_threads_max: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_rx_bytes_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_tx_bytes_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_retrans_per_s: Option<f64>,
}

impl SystemMean {
    /// user, sys and idle %, or `None` when they were not measured (they are set together).
    pub fn cpu(&self) -> Option<(f64, f64, f64)> {
        Some((self.user_pct?, self.sys_pct?, self.idle_pct?))
    }
}

impl SystemBlock {
    /// The mean weights each sample by the time it covers, so a short last sample counts for what it is
    /// (samples all at one instant, with no time to weigh by, count alike).
    pub fn from_samples(samples: Vec<SystemSample>) -> SystemBlock {
        let mut prev = 0.0_f64;
        let mut weights: Vec<f64> = samples
            .iter()
            .map(|s| {
                let w = (s.t_s - prev).max(0.0);
                prev = prev.max(s.t_s);
                w
            })
            .collect();
        if weights.iter().sum::<f64>() <= 0.0 {
            weights.fill(1.0);
        }
        let covered: f64 = weights.iter().sum();
        let mean = |pct: fn(&SystemSample) -> f64| {
            let sum: f64 = samples.iter().zip(&weights).map(|(s, w)| w * pct(s)).sum();
            (covered > 0.0).then(|| sum / covered)
        };
        // Over the samples that have the figure (a figure is sampled in all of them or none).
        let mean_of = |f: fn(&SystemSample) -> Option<f64>| {
            let seen = samples
                .iter()
                .zip(&weights)
                .filter_map(|(s, w)| Some((f(s)?, *w)));
            let (sum, weight) = seen.fold((0.0, 0.0), |(s, c), (v, w)| (s + v * w, c + w));
            (weight > 0.0).then(|| sum / weight)
        };
        let max_of = |f: fn(&SystemSample) -> Option<u64>| samples.iter().filter_map(f).max();
        let mean = SystemMean {
            user_pct: mean(|s| s.user_pct),
            sys_pct: mean(|s| s.sys_pct),
            idle_pct: mean(|s| s.idle_pct),
            server_rss_kb_max: max_of(|s| s.server_rss_kb),
            steal_pct: mean_of(|s| s.steal_pct),
            steal_max_pct: samples.iter().filter_map(|s| s.steal_pct).reduce(f64::max),
            ctxt_per_s: mean_of(|s| s.ctxt_per_s),
            softirqs_per_s: mean_of(|s| s.softirqs_per_s),
            server_fds_max: max_of(|s| s.server_fds),
            server_threads_max: max_of(|s| s.server_threads),
            net_rx_bytes_per_s: mean_of(|s| s.net_rx_bytes_per_s),
            net_tx_bytes_per_s: mean_of(|s| s.net_tx_bytes_per_s),
            tcp_retrans_per_s: mean_of(|s| s.tcp_retrans_per_s),
        };
        SystemBlock { samples, mean }
    }
}

impl ResultsDoc {
    /// Sets the latency summaries and the encoded histograms from the histograms themselves, so a
    /// document's percentiles always agree with the histograms it carries.
    pub fn set_latency(
        &mut self,
        corrected: &Histogram<u64>,
        uncorrected: Option<&Histogram<u64>>,
    ) {
        self.latency_us = LatencyBlock {
            corrected: LatencySummary::from_histogram(corrected),
            uncorrected: uncorrected.map(LatencySummary::from_histogram),
        };
        self.histograms = Histograms {
            corrected: encode_histogram(corrected),
            uncorrected: uncorrected.map(encode_histogram),
        };
    }

    /// Recomputes `throughput` from `counts`, `elapsed_s` and `params.clients`.
    pub fn recompute_throughput(&mut self) {
        self.counts.errors_total = self.counts.errors.total();
        self.throughput = Throughput::compute(&self.counts, self.elapsed_s, self.params.clients);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t_s: f64, user_pct: f64, sys_pct: f64, rss: Option<u64>) -> SystemSample {
        SystemSample {
            t_s,
            user_pct,
            sys_pct,
            idle_pct: 100.0 - user_pct - sys_pct,
            server_rss_kb: rss,
            ..SystemSample::default()
        }
    }

    #[test]
    fn nothing_sampled_is_not_measured_not_zero() {
        let b = SystemBlock::from_samples(Vec::new());
        assert_eq!(b.mean.user_pct, None);
        assert_eq!(b.mean.sys_pct, None);
        assert_eq!(b.mean.idle_pct, None);
        assert_eq!(b.mean.server_rss_kb_max, None);
    }

    #[test]
    fn a_short_last_sample_weighs_what_it_covers() {
        // One whole second at 10 % user, then a quarter second at 50 %: (1 × 10 + 0.25 × 50) / 1.25 = 18.
        let b = SystemBlock::from_samples(vec![
            sample(1.0, 10.0, 20.0, Some(5)),
            sample(1.25, 50.0, 40.0, Some(7)),
        ]);
        assert!((b.mean.user_pct.unwrap() - 18.0).abs() < 1e-9);
        assert!((b.mean.sys_pct.unwrap() - 24.0).abs() < 1e-9);
        assert!((b.mean.idle_pct.unwrap() - 58.0).abs() < 1e-9);
        assert_eq!(b.mean.server_rss_kb_max, Some(7));
    }

    #[test]
    fn figures_added_later_are_means_and_maxima_of_the_samples_that_have_them() {
        let with = |t_s, steal, fds| SystemSample {
            steal_pct: Some(steal),
            server_fds: Some(fds),
            ..sample(t_s, 10.0, 10.0, None)
        };
        // 1 s at 2 % steal, then 3 s at 10 %: (2 + 30) / 4 = 8 %, the worst second 10 %.
        let b = SystemBlock::from_samples(vec![with(1.0, 2.0, 9), with(4.0, 10.0, 12)]);
        assert_eq!(b.mean.steal_pct, Some(8.0));
        assert_eq!(b.mean.steal_max_pct, Some(10.0));
        assert_eq!(b.mean.server_fds_max, Some(12));
        assert_eq!(b.mean.ctxt_per_s, None, "not sampled: absent, not 0");
        let old = SystemBlock::from_samples(vec![sample(1.0, 1.0, 1.0, Some(1))]);
        let text = serde_json::to_string(&old).unwrap();
        assert!(
            !text.contains("steal"),
            "older figures write as before: {text}"
        );
    }

    #[test]
    fn samples_at_one_instant_take_their_plain_mean() {
        let b = SystemBlock::from_samples(vec![sample(0.0, 30.0, 10.0, None)]);
        assert_eq!(b.mean.user_pct, Some(30.0));
    }

    #[test]
    fn documents_written_before_the_shares_were_optional_still_read() {
        let m: SystemMean = serde_json::from_str(
            r#"{"user_pct":1.5,"sys_pct":2.0,"idle_pct":96.5,"server_rss_kb_max":null}"#,
        )
        .unwrap();
        assert_eq!(m.user_pct, Some(1.5));
    }
}
