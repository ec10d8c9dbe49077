//! `cargo xtask`: parses flags, roots an xshell `Shell` at the project root and dispatches to one module per subcommand.

mod bench;
mod build;
mod calibrate;
mod compare;
mod cross_image;
mod doctor;
mod durability;
mod execute;
mod fuzz;
mod gate;
mod history;
mod icount;
mod list;
mod max_rate;
mod peers;
mod report;
mod run;
mod swarm;
mod test;
mod testing;
#[cfg(test)]
mod tidy;
mod verify;

use clap::{Parser, Subcommand};
use xshell::Shell;

#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "wsbench task runner"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// List every scenario: name, description, the seed it reproduces.
    List(list::Args),
    /// List the peer servers (peers/*/peer.toml): stacks, configurations, whether each is built.
    Peers(peers::Args),
    /// Run a named scenario and write results with provenance.
    Run(run::Args),
    /// Check, without load, that servers answer every call of a scenario right (`--sut`, `--target`).
    Verify(verify::Args),
    /// Report what this machine has and lacks for each feature.
    Doctor(doctor::Args),
    /// Build server and client for x86_64 and/or ppc64le into target/dist.
    Build(build::Args),
    /// Build the local builder images for `cargo xtask build --builder cross` (debootstrap, docker import).
    CrossImage(cross_image::Args),
    /// The test command: fmt, clippy, tests, docs, quick scenarios.
    Test(test::Args),
    /// Run the criterion benchmarks, with baselines.
    Bench(bench::Args),
    /// Regression gate: compare this tree against a base revision.
    Gate(gate::Args),
    /// Results over time: the runs recorded in results/wsbench.sqlite, trends, change points, exports.
    History(history::Args),
    /// Render report.html and charts for result directories.
    Report(report::Args),
    /// Compare two runs step by step.
    Compare(compare::Args),
    /// Calibrate bench-client against wrk on the same endpoint (requests/s ratio).
    Calibrate(calibrate::Args),
    /// Search the highest open-loop rate the server sustains under a p99 SLO.
    MaxRate(max_rate::Args),
    /// Instructions per call (callgrind): the server's per operation, the client's beside wrk's.
    Icount(icount::Args),
    /// Fuzz the SOAP reader, the CXF and Customer parsers and the chat codec (cargo-fuzz).
    Fuzz(fuzz::Args),
    /// Docker Swarm helpers: check the swarm, label nodes, a local multi-engine swarm (up --local N / down).
    Swarm(swarm::Args),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // The error and its causes, `{:#}`: not `{:?}`, which appends anyhow's backtrace whenever
            // RUST_BACKTRACE is set, as many Rust users have it. An error here is the user's to act on (a
            // scenario that does not exist, a run that failed a check); a bug panics, and keeps its backtrace.
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn dispatch(cli: Cli) -> anyhow::Result<()> {
    let sh = Shell::new()?;
    sh.change_dir(wsbench_harness::paths::project_root());
    match cli.cmd {
        Cmd::List(args) => list::run(&sh, args),
        Cmd::Peers(args) => peers::run(&sh, args),
        Cmd::Run(args) => run::run(&sh, args),
        Cmd::Verify(args) => verify::run(&sh, args),
        Cmd::Doctor(args) => doctor::run(&sh, args),
        Cmd::Build(args) => build::run(&sh, args),
        Cmd::CrossImage(args) => cross_image::run(&sh, args),
        Cmd::Test(args) => test::run(&sh, args),
        Cmd::Bench(args) => bench::run(&sh, args),
        Cmd::Gate(args) => gate::run(&sh, args),
        Cmd::History(args) => history::run(&sh, args),
        Cmd::Report(args) => report::run(&sh, args),
        Cmd::Compare(args) => compare::run(&sh, args),
        Cmd::Calibrate(args) => calibrate::run(&sh, args),
        Cmd::MaxRate(args) => max_rate::run(&sh, args),
        Cmd::Icount(args) => icount::run(&sh, args),
        Cmd::Fuzz(args) => fuzz::run(&sh, args),
        Cmd::Swarm(args) => swarm::run(&sh, args),
    }
}
