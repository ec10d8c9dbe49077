//! wsbench load generator: SOAP/HTTP load (closed and open loop) and VOLANO chat load, HDR histograms,
//! validation, and the results document.
//!
//! `main` only calls [`cli::main`]; everything else is here so that the integration tests drive the same
//! code in-process. Layers, bottom to top (a module imports only from layers below it):
//!
//! 1. `flags` (the command line as parsed), `operation`, `latency`, `cpu`, `signals`, `host` (the
//!    machine's limits), `readings` (/proc: the machine's and a process's counters), `token` (the agent's
//!    shared secret and its proofs);
//! 2. validated configuration: `config` (run) and `chat::load` (chat);
//! 3. components: `engine` + `workload` (run), `h2c` (run: does the server speak HTTP/2?), `chat` (chat),
//!    `monitor`, `agent` (the sampling agent and the run's session with it), `progress`, `hlog`, `report`,
//!    `abort` (thresholds judged while a run goes);
//! 4. pipelines: `measure` (run); `chat::run` (chat);
//! 5. `cmd` (one file per subcommand, none importing another), and `cli` (dispatch, exit status) at the top.

pub mod abort;
pub mod agent;
pub mod chat;
pub mod cli;
pub mod cmd;
pub mod config;
pub mod cpu;
pub mod engine;
pub mod flags;
pub mod h2c;
pub mod hlog;
pub mod host;
pub mod latency;
pub mod measure;
pub mod monitor;
pub mod operation;
pub mod progress;
pub mod readings;
pub mod report;
pub mod signals;
pub mod token;
pub mod workload;
