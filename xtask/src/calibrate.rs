//! `cargo xtask calibrate`: bench-client against wrk on the same endpoint, the requests/s ratio (the harness's perf::calibrate).

pub(crate) use wsbench_harness::perf::calibrate::Args;

pub(crate) fn run(sh: &xshell::Shell, args: Args) -> anyhow::Result<()> {
    wsbench_harness::perf::calibrate::run(sh, args)
}
