//! The top of the module graph: parses the command line (`flags`), dispatches to the subcommand (`cmd`),
//! and maps the outcome to the exit status of the contract (docs/contracts.md).

use std::process::ExitCode;

use clap::Parser as _;

use crate::cmd;
use crate::flags::{Cli, Command, UsageError};
use crate::report::json::WriteError;

/// 0 ok; 1 errors during the run (without --allow-errors), nothing measured, or failure to start; 2 usage;
/// 3 the results could not be written (the run stopped there).
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing();
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) if e.downcast_ref::<UsageError>().is_some() => {
            eprintln!("bench-client: {e}");
            ExitCode::from(2)
        }
        Err(e) if e.downcast_ref::<WriteError>().is_some() => {
            eprintln!("bench-client: error: {e:#}");
            ExitCode::from(3)
        }
        Err(e) => {
            eprintln!("bench-client: error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match (cli.command, cli.run) {
        (Some(Command::Run(args)), _) | (None, Some(args)) => cmd::run::main(args),
        (Some(Command::Merge(args)), _) => cmd::merge::main(args),
        (Some(Command::Chat(args)), _) => cmd::chat::main(args),
        (None, None) => Err(UsageError(
            "nothing to do: give a URL (and --operation for a SOAP load; see --help)".into(),
        )
        .into()),
    }
}

fn init_tracing() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    // Ignored if a subscriber is already set (tests calling in-process).
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
