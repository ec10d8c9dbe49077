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

pub(crate) mod argv;
pub(crate) mod artifacts;
pub(crate) mod backend;
pub(crate) mod baseline;
pub(crate) mod busy;
pub(crate) mod callgrind;
pub(crate) mod clock;
pub(crate) mod docker;
pub(crate) mod host;
pub(crate) mod interrupt;
pub(crate) mod local;
pub(crate) mod numbers;
pub(crate) mod paths;
pub(crate) mod pinning;
pub(crate) mod pipeline;
pub(crate) mod provenance;
pub(crate) mod ready;
pub(crate) mod report;
pub(crate) mod results;
pub(crate) mod rundoc;
pub(crate) mod scenario;
pub(crate) mod screenshot;
pub(crate) mod stats;
pub(crate) mod summary;
pub(crate) mod swarm;
pub(crate) mod testing;
pub(crate) mod thresholds;
pub(crate) mod wrk;
