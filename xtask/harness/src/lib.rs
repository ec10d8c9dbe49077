//! wsbench's harness: scenario → plan → backends → the one step loop → a results directory, and the one
//! reader of a results directory. Above the tools crate (every program and /proc read behind its door),
//! below the report crate (summary.md, report.html) and xtask. Its modules by layer, bottom first (the table
//! the tidy test holds them to is `xtask/src/tidy/layers.rs`'s `HARNESS`):
//!
//! - base: `paths`, `atomic` (whole-or-nothing writes), `clock`, `interrupt` (Ctrl-C), `stats`, `pinning`, `screenshot`,
//!   `metric` (what can be read off a results document: the one list, the one reader);
//! - inputs: `thresholds`, `soak` (the soak verdict's limits and judge), `ready` (bench-server's READY line), `busy`,
//!   `sut` (which server a run measures), `faults` (the table of fault kinds, a file each), `portal` (the OSS/J
//!   portal's tiers: front end, back ends, the front end's configuration);
//! - plan: `scenario` (TOML → validated plan, in four jobs: file, set, validate, plan);
//! - commands: `limits` (the machine's connection limits against a plan), `argv` (the server's and the client's command lines, built once), `rundoc` (`run.json`, the one
//!   status rule), `artifacts` (arches, dist binaries, images, emulation), `containers` (what both container
//!   backends share);
//! - records: `provenance` (`provenance.json`, with the sections the backends fill in);
//! - readers: `results` (the one reader, with the one metric function), `baseline`, `backend` (the trait);
//! - history: `history` (the results store: every run recorded in one SQLite file, read back as trends);
//! - backends: `local` (processes), `docker` (containers), `swarm` (services on a Docker Swarm);
//! - run: `pipeline` (the one step loop, with one status rule, that writes a results directory);
//! - tools: `perf` (icount, calibrate, max-rate).

pub mod argv;
pub mod artifacts;
pub mod atomic;
pub mod backend;
pub mod baseline;
pub mod busy;
pub mod clock;
pub mod containers;
pub mod docker;
pub mod faults;
pub mod history;
pub mod interrupt;
pub mod limits;
pub mod local;
pub mod metric;
pub mod paths;
pub mod perf;
pub mod pinning;
pub mod pipeline;
pub mod portal;
pub mod provenance;
pub mod ready;
pub mod results;
pub mod rundoc;
pub mod scenario;
pub mod screenshot;
pub mod soak;
pub mod stats;
pub mod sut;
pub mod swarm;
pub mod thresholds;
