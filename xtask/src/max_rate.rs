//! `cargo xtask max-rate`: the highest open-loop rate the server sustains under a p99 SLO (the harness's perf::max_rate).

pub(crate) use wsbench_harness::perf::max_rate::Args;

pub(crate) fn run(sh: &xshell::Shell, args: Args) -> anyhow::Result<()> {
    wsbench_harness::perf::max_rate::run(sh, args)
}
