//! `bench-client`: the wsbench load generator's command line (see docs/contracts.md).

fn main() -> std::process::ExitCode {
    bench_client::cli::main()
}
