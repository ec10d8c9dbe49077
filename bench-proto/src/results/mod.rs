//! The results document (`wsbench.results/v1`): its types, the record a run keeps as it goes (`record`), the
//! HDR histogram codec it embeds, and exact merging.
//!
//! Only bench-client writes these documents (xtask reads them); this module does no I/O, so the
//! writer lives in bench-client and the same code serves `merge`, the report and the tests.

mod chat;
mod doc;
mod figures;
mod histogram;
mod merge;
mod record;
mod shapes;

pub use chat::{
    ChatCheck, ChatResults, ChatRun, InterArrival, MessageId, RunEnd, Violation, ViolationKind,
    Violations,
};
pub use doc::{
    ChatParams, ClientStats, Counts, Histograms, InFlight, LatencyBlock, Mode, Params, ResultsDoc,
    SystemBlock, SystemMean, SystemSample, Throughput, Tool,
};
pub use figures::{ErrorCounts, ErrorKind, LatencySummary};
pub use histogram::{decode_histogram, encode_histogram, new_histogram, SIGFIG};
pub use merge::{merge, merge_records};
pub use record::{
    ClientMemory, Connections, Interval, ProcessCpu, Recovery, RunRecord, RunState, Sampling,
    SamplingVia, Timeline, WithRecord, AGENT_TOKEN_ENV,
};
pub use shapes::{
    empty_histogram, AbortRule, Aborted, Arrivals, MixWeight, OperationResults, Part, Phase,
    Phases, Ramped, ShapeParams, ShapeResults, StageParam, StageResults,
};

/// The `schema` value of every document this version writes and reads.
pub const SCHEMA: &str = "wsbench.results/v1";

/// What can go wrong decoding or merging results documents.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("histogram is not valid base64: {0}")]
    Base64(#[from] base64::DecodeError),
    #[error("histogram is not a valid HdrHistogram V2 encoding: {0}")]
    Decode(#[from] hdrhistogram::serialization::DeserializeError),
    #[error("histograms could not be added: {0}")]
    Add(#[from] hdrhistogram::AdditionError),
    #[error("document schema is {found:?}, expected {expected:?}")]
    Schema {
        found: String,
        expected: &'static str,
    },
    #[error("nothing to merge")]
    Empty,
    #[error("cannot merge documents that differ in {what}: {a} vs {b}")]
    Mismatch {
        what: &'static str,
        a: String,
        b: String,
    },
    #[error("merging {0} results is not supported")]
    Unsupported(&'static str),
}
