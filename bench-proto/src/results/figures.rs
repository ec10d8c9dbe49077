//! The figures every part of a results document counts in: calls failed by kind, and a latency summary
//! computed from its histogram.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Why a call failed; each failed call is counted under exactly one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The TCP connection could not be made (refused, timed out, no local port left).
    Connect,
    /// No complete response within `--timeout`.
    Timeout,
    /// A non-2xx status that is not a SOAP fault.
    HttpStatus,
    /// A SOAP fault.
    Fault,
    /// A response that is not what was asked for (unparseable, or not equal to what was sent).
    Validation,
    /// The connection broke or the bytes were not HTTP.
    Io,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 6] = [
        ErrorKind::Connect,
        ErrorKind::Timeout,
        ErrorKind::HttpStatus,
        ErrorKind::Fault,
        ErrorKind::Validation,
        ErrorKind::Io,
    ];

    /// The JSON key, also used in the human summary.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Connect => "connect",
            ErrorKind::Timeout => "timeout",
            ErrorKind::HttpStatus => "http_status",
            ErrorKind::Fault => "fault",
            ErrorKind::Validation => "validation",
            ErrorKind::Io => "io",
        }
    }

    /// A dense index, for per-worker counter arrays.
    pub fn index(self) -> usize {
        self as usize
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCounts {
    pub connect: u64,
    pub timeout: u64,
    pub http_status: u64,
    pub fault: u64,
    pub validation: u64,
    pub io: u64,
}

impl ErrorCounts {
    pub fn get(&self, kind: ErrorKind) -> u64 {
        match kind {
            ErrorKind::Connect => self.connect,
            ErrorKind::Timeout => self.timeout,
            ErrorKind::HttpStatus => self.http_status,
            ErrorKind::Fault => self.fault,
            ErrorKind::Validation => self.validation,
            ErrorKind::Io => self.io,
        }
    }

    pub fn get_mut(&mut self, kind: ErrorKind) -> &mut u64 {
        match kind {
            ErrorKind::Connect => &mut self.connect,
            ErrorKind::Timeout => &mut self.timeout,
            ErrorKind::HttpStatus => &mut self.http_status,
            ErrorKind::Fault => &mut self.fault,
            ErrorKind::Validation => &mut self.validation,
            ErrorKind::Io => &mut self.io,
        }
    }

    pub fn total(&self) -> u64 {
        ErrorKind::ALL.iter().map(|&k| self.get(k)).sum()
    }

    pub fn add(&mut self, other: &ErrorCounts) {
        for k in ErrorKind::ALL {
            *self.get_mut(k) += other.get(k);
        }
    }

    /// From an array indexed by [`ErrorKind::index`].
    pub fn from_array(a: &[u64; 6]) -> ErrorCounts {
        let mut e = ErrorCounts::default();
        for k in ErrorKind::ALL {
            *e.get_mut(k) = a[k.index()];
        }
        e
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub min: u64,
    pub mean: f64,
    pub stdev: f64,
    pub max: u64,
    pub p50: u64,
    pub p75: u64,
    pub p90: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub p99_99: u64,
}

impl LatencySummary {
    pub fn from_histogram(h: &Histogram<u64>) -> LatencySummary {
        if h.is_empty() {
            return LatencySummary::default();
        }
        LatencySummary {
            count: h.len(),
            min: h.min(),
            mean: h.mean(),
            stdev: h.stdev(),
            max: h.max(),
            p50: h.value_at_quantile(0.50),
            p75: h.value_at_quantile(0.75),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p99_9: h.value_at_quantile(0.999),
            p99_99: h.value_at_quantile(0.9999),
        }
    }
}
