//! The harness: the shared layers every subcommand builds on, and which import no subcommand. From the bottom:
//!
//! - `paths`, `interrupt`, `host`, `pinning` — the workspace, Ctrl-C, this machine, CPU placement.
//! - `scenario` (TOML → validated plan), `argv` (the server's and the client's command lines, built once),
//!   `ready` (bench-server's READY line), `artifacts` (arches, dist binaries, images, emulation).
//! - `rundoc` (`run.json`), `provenance` (`provenance.json`), `results` (the one reader of a results
//!   directory, with the one metric function), `summary` (`summary.md`) and `report` (`report.html`); `stats`,
//!   `thresholds`, `busy`, `baseline`, `screenshot` beside them.
//! - `backend` (the `Backend` trait), its implementations `local` (processes), `docker` (containers) and
//!   `swarm` (services on a Docker Swarm, with the local multi-engine swarm of `cargo xtask swarm up`), and
//!   `pipeline`: the one step loop, with one status rule, that writes a results directory.
//! - `testing`: the named steps of `cargo xtask test`, which subcommands contribute to; `wrk` (the reference
//!   load generator's POST script, for `icount` and `calibrate`).

pub mod argv;
pub mod artifacts;
pub mod backend;
pub mod baseline;
pub mod busy;
pub mod clock;
pub mod containers;
pub mod docker;
pub mod interrupt;
pub mod local;
pub mod numbers;
pub mod paths;
pub mod perf;
pub mod pinning;
pub mod pipeline;
pub mod provenance;
pub mod ready;
pub mod results;
pub mod rundoc;
pub mod scenario;
pub mod screenshot;
pub mod stats;
pub mod swarm;
pub mod thresholds;
