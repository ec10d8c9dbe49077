//! `cargo xtask icount`: instructions per call under callgrind: the server's per operation, the client's beside wrk's (the harness's perf::icount).

pub(crate) use wsbench_harness::perf::icount::Args;

pub(crate) fn run(sh: &xshell::Shell, args: Args) -> anyhow::Result<()> {
    wsbench_harness::perf::icount::run(sh, args)
}
