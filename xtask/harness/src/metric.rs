//! The one list of what can be read off a step's results document: the published figures' metrics, the
//! thresholds' figures, `compare`'s rows and the charts' series all name a [`Metric`], and [`Metric::of`] is
//! the one function that reads it (in the unit the published figures use).

use bench_proto::results::{Mode, ResultsDoc};
use serde::{Deserialize, Serialize};

/// A measured figure of a step. Its key (`total_per_s`) is how scenario files and run.json name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Successful calls per second.
    TotalPerS,
    PerClientPerS,
    /// Successful calls per second, or the chat score for a chat step: what a step is said to do per second.
    ThroughputPerS,
    MeanLatencyMs,
    P50LatencyMs,
    P90LatencyMs,
    P99LatencyMs,
    #[serde(rename = "p99_9_latency_ms")]
    P999LatencyMs,
    MaxLatencyMs,
    /// Failed calls, counted.
    Errors,
    /// Failed calls as a percentage of all calls.
    ErrorsPct,
    ReceivedMbPerS,
    SentMbPerS,
    XmlMbPerS,
    /// The larger of sent and received: a figure given for a link that caps each direction.
    BusierMbPerS,
    ChatScoreMsgPerS,
    /// n server instances' throughput over n times one's: read across steps ([`Metric::of`] has none).
    ScalingEfficiency,
    CpuUserPct,
    CpuSysPct,
    CpuIdlePct,
    /// Per call, counted by `gate --scenarios` (callgrind, strace), kept in the results store: no results
    /// document gives them ([`Metric::of`] has none).
    ServerInstructionsPerCall,
    ClientInstructionsPerCall,
    ServerSyscallsPerCall,
    ClientSyscallsPerCall,
    /// Bytes the client sent and received through its TCP sockets per call (HTTP heads and bodies).
    BytesSentPerCall,
    BytesReceivedPerCall,
    /// `gate`'s hot paths, kept in the results store: instructions (callgrind) and wall-clock ns (criterion)
    /// per iteration.
    InstructionsPerIteration,
    NsPerIteration,
}

/// What a metric is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    PerS,
    Ms,
    /// Counted per call or per iteration (instructions, system calls, bytes).
    PerCall,
    Ns,
    MbPerS,
    Calls,
    Pct,
    /// A ratio (1.0 = perfect).
    Ratio,
}

impl Unit {
    /// How a value is followed: `ms`, `/s`, `%`.
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::PerS => "/s",
            Unit::Ms => "ms",
            Unit::PerCall => "/call",
            Unit::Ns => "ns",
            Unit::MbPerS => "MB/s",
            Unit::Calls => "calls",
            Unit::Pct => "%",
            Unit::Ratio => "×",
        }
    }
}

impl Metric {
    pub const ALL: [Metric; 28] = [
        Metric::TotalPerS,
        Metric::PerClientPerS,
        Metric::ThroughputPerS,
        Metric::MeanLatencyMs,
        Metric::P50LatencyMs,
        Metric::P90LatencyMs,
        Metric::P99LatencyMs,
        Metric::P999LatencyMs,
        Metric::MaxLatencyMs,
        Metric::Errors,
        Metric::ErrorsPct,
        Metric::ReceivedMbPerS,
        Metric::SentMbPerS,
        Metric::XmlMbPerS,
        Metric::BusierMbPerS,
        Metric::ChatScoreMsgPerS,
        Metric::ScalingEfficiency,
        Metric::CpuUserPct,
        Metric::CpuSysPct,
        Metric::CpuIdlePct,
        Metric::ServerInstructionsPerCall,
        Metric::ClientInstructionsPerCall,
        Metric::ServerSyscallsPerCall,
        Metric::ClientSyscallsPerCall,
        Metric::BytesSentPerCall,
        Metric::BytesReceivedPerCall,
        Metric::InstructionsPerIteration,
        Metric::NsPerIteration,
    ];

    /// Its name in scenario files and run.json (`total_per_s`).
    pub fn key(self) -> &'static str {
        match self {
            Metric::TotalPerS => "total_per_s",
            Metric::PerClientPerS => "per_client_per_s",
            Metric::ThroughputPerS => "throughput_per_s",
            Metric::MeanLatencyMs => "mean_latency_ms",
            Metric::P50LatencyMs => "p50_latency_ms",
            Metric::P90LatencyMs => "p90_latency_ms",
            Metric::P99LatencyMs => "p99_latency_ms",
            Metric::P999LatencyMs => "p99_9_latency_ms",
            Metric::MaxLatencyMs => "max_latency_ms",
            Metric::Errors => "errors",
            Metric::ErrorsPct => "errors_pct",
            Metric::ReceivedMbPerS => "received_mb_per_s",
            Metric::SentMbPerS => "sent_mb_per_s",
            Metric::XmlMbPerS => "xml_mb_per_s",
            Metric::BusierMbPerS => "busier_mb_per_s",
            Metric::ChatScoreMsgPerS => "chat_score_msg_per_s",
            Metric::ScalingEfficiency => "scaling_efficiency",
            Metric::CpuUserPct => "cpu_user_pct",
            Metric::CpuSysPct => "cpu_sys_pct",
            Metric::CpuIdlePct => "cpu_idle_pct",
            Metric::ServerInstructionsPerCall => "server_instructions_per_call",
            Metric::ClientInstructionsPerCall => "client_instructions_per_call",
            Metric::ServerSyscallsPerCall => "server_syscalls_per_call",
            Metric::ClientSyscallsPerCall => "client_syscalls_per_call",
            Metric::BytesSentPerCall => "bytes_sent_per_call",
            Metric::BytesReceivedPerCall => "bytes_received_per_call",
            Metric::InstructionsPerIteration => "instructions_per_iteration",
            Metric::NsPerIteration => "ns_per_iteration",
        }
    }

    /// In words, for people.
    pub fn name(self) -> &'static str {
        match self {
            Metric::TotalPerS => "total throughput",
            Metric::PerClientPerS => "throughput per client",
            Metric::ThroughputPerS => "throughput",
            Metric::MeanLatencyMs => "mean latency",
            Metric::P50LatencyMs => "p50 latency",
            Metric::P90LatencyMs => "p90 latency",
            Metric::P99LatencyMs => "p99 latency",
            Metric::P999LatencyMs => "p99.9 latency",
            Metric::MaxLatencyMs => "max latency",
            Metric::Errors => "failed calls",
            Metric::ErrorsPct => "failed calls %",
            Metric::ReceivedMbPerS => "MB/s received by the client",
            Metric::SentMbPerS => "MB/s sent by the client",
            Metric::XmlMbPerS => "MB/s of XML (sent + received)",
            Metric::BusierMbPerS => "MB/s of XML in the busier direction",
            Metric::ChatScoreMsgPerS => "chat messages/s (VolanoMark score)",
            Metric::ScalingEfficiency => "scaling efficiency",
            Metric::CpuUserPct => "system CPU user %",
            Metric::CpuSysPct => "system CPU sys %",
            Metric::CpuIdlePct => "system CPU idle %",
            Metric::ServerInstructionsPerCall => "server instructions per call",
            Metric::ClientInstructionsPerCall => "client instructions per call",
            Metric::ServerSyscallsPerCall => "server system calls per call",
            Metric::ClientSyscallsPerCall => "client system calls per call",
            Metric::BytesSentPerCall => "bytes sent per call",
            Metric::BytesReceivedPerCall => "bytes received per call",
            Metric::InstructionsPerIteration => "instructions per iteration (hot path)",
            Metric::NsPerIteration => "ns per iteration (hot path)",
        }
    }

    /// Its short name, as thresholds and `compare` write it (`p99`, `mean`, `throughput`); None for metrics
    /// they do not name.
    pub fn short(self) -> Option<&'static str> {
        Some(match self {
            Metric::ThroughputPerS => "throughput",
            Metric::MeanLatencyMs => "mean",
            Metric::P50LatencyMs => "p50",
            Metric::P90LatencyMs => "p90",
            Metric::P99LatencyMs => "p99",
            Metric::P999LatencyMs => "p99.9",
            Metric::MaxLatencyMs => "max",
            Metric::Errors | Metric::ErrorsPct => "errors",
            _ => return None,
        })
    }

    /// The corrected latency percentile it is (50, 90, 99, 99.9, 100 = max), if it is one.
    pub fn percentile(self) -> Option<f64> {
        match self {
            Metric::P50LatencyMs => Some(50.0),
            Metric::P90LatencyMs => Some(90.0),
            Metric::P99LatencyMs => Some(99.0),
            Metric::P999LatencyMs => Some(99.9),
            Metric::MaxLatencyMs => Some(100.0),
            _ => None,
        }
    }

    pub fn unit(self) -> Unit {
        match self {
            Metric::TotalPerS
            | Metric::PerClientPerS
            | Metric::ThroughputPerS
            | Metric::ChatScoreMsgPerS => Unit::PerS,
            Metric::MeanLatencyMs
            | Metric::P50LatencyMs
            | Metric::P90LatencyMs
            | Metric::P99LatencyMs
            | Metric::P999LatencyMs
            | Metric::MaxLatencyMs => Unit::Ms,
            Metric::Errors => Unit::Calls,
            Metric::ErrorsPct | Metric::CpuUserPct | Metric::CpuSysPct | Metric::CpuIdlePct => {
                Unit::Pct
            }
            Metric::ReceivedMbPerS
            | Metric::SentMbPerS
            | Metric::XmlMbPerS
            | Metric::BusierMbPerS => Unit::MbPerS,
            Metric::ScalingEfficiency => Unit::Ratio,
            Metric::ServerInstructionsPerCall
            | Metric::ClientInstructionsPerCall
            | Metric::ServerSyscallsPerCall
            | Metric::ClientSyscallsPerCall
            | Metric::BytesSentPerCall
            | Metric::BytesReceivedPerCall
            | Metric::InstructionsPerIteration => Unit::PerCall,
            Metric::NsPerIteration => Unit::Ns,
        }
    }

    /// The metric's value in a results document, in the unit the published figures use; None for one the
    /// document cannot give (no latency measured, no chat score, no system samples, a figure across steps).
    pub fn of(self, doc: &ResultsDoc) -> Option<f64> {
        let lat = &doc.latency_us.corrected;
        let ms = |us: f64| (lat.count > 0).then_some(us / 1000.0);
        let system = doc.system.as_ref().map(|s| &s.mean);
        let t = &doc.throughput;
        let c = &doc.counts;
        match self {
            Metric::TotalPerS => Some(t.total_per_s),
            Metric::PerClientPerS => Some(t.per_client_per_s),
            Metric::ThroughputPerS => match &doc.chat {
                Some(chat) if doc.mode == Mode::Chat => Some(chat.score_msg_per_s),
                _ => Some(t.total_per_s),
            },
            Metric::MeanLatencyMs => ms(lat.mean),
            Metric::P50LatencyMs => ms(lat.p50 as f64),
            Metric::P90LatencyMs => ms(lat.p90 as f64),
            Metric::P99LatencyMs => ms(lat.p99 as f64),
            Metric::P999LatencyMs => ms(lat.p99_9 as f64),
            Metric::MaxLatencyMs => ms(lat.max as f64),
            Metric::Errors => Some(c.errors_total as f64),
            Metric::ErrorsPct => {
                let all = c.ok + c.errors_total;
                (all > 0).then(|| c.errors_total as f64 * 100.0 / all as f64)
            }
            Metric::ReceivedMbPerS => Some(t.received_mb_per_s),
            Metric::SentMbPerS => Some(t.sent_mb_per_s),
            Metric::XmlMbPerS => Some(t.sent_mb_per_s + t.received_mb_per_s),
            Metric::BusierMbPerS => Some(t.sent_mb_per_s.max(t.received_mb_per_s)),
            Metric::ChatScoreMsgPerS => doc.chat.as_ref().map(|c| c.score_msg_per_s),
            Metric::ScalingEfficiency => None,
            Metric::CpuUserPct => system.and_then(|m| m.user_pct),
            Metric::CpuSysPct => system.and_then(|m| m.sys_pct),
            Metric::CpuIdlePct => system.and_then(|m| m.idle_pct),
            Metric::ServerInstructionsPerCall
            | Metric::ClientInstructionsPerCall
            | Metric::ServerSyscallsPerCall
            | Metric::ClientSyscallsPerCall
            | Metric::BytesSentPerCall
            | Metric::BytesReceivedPerCall
            | Metric::InstructionsPerIteration
            | Metric::NsPerIteration => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_is_listed_once_and_its_key_reads_back() {
        for (i, m) in Metric::ALL.iter().enumerate() {
            assert!(!Metric::ALL[..i].contains(m), "{m:?} twice");
            let json = serde_json::to_string(m).unwrap();
            assert_eq!(json, format!("\"{}\"", m.key()));
            assert_eq!(serde_json::from_str::<Metric>(&json).unwrap(), *m);
        }
    }
}
