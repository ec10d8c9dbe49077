//! wsbench load generator: SOAP/HTTP load (closed and open loop) and VOLANO chat load, HDR histograms,
//! validation, and the results document.
//!
//! `main` only parses the command line and calls [`cli::main`]; everything else is here so that the
//! integration tests drive the same code in-process.

pub mod chat;
pub mod cli;
pub mod config;
pub mod cpu;
pub mod engine;
pub mod hlog;
pub mod merge_cmd;
pub mod monitor;
pub mod operation;
pub mod progress;
pub mod report;
pub mod run_cmd;
pub mod units;
pub mod workload;
