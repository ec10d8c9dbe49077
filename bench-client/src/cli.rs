//! The top of the module graph: parses the command line (`flags`), dispatches to the subcommand (`cmd`),
//! and maps the outcome to the exit status of the contract (docs/contracts.md).

use std::process::ExitCode;

use clap::Parser as _;

use crate::cmd;
use crate::flags::{not_offered, Cli, Command, UsageError};
use crate::report::json::WriteError;

/// 0 ok; 1 errors during the run (without --allow-errors), nothing measured, or failure to start; 2 usage;
/// 3 the results could not be written (the run stopped there).
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => match not_offered(&e) {
            Some(why) => {
                eprintln!("bench-client: {why}");
                return ExitCode::from(2);
            }
            None => e.exit(),
        },
    };
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
    match cli.command {
        Some(Command::Run(args)) => cmd::run::main(args),
        // Without a URL or an operation, the run's validation says there is nothing to do.
        None => cmd::run::main(cli.run),
        Some(Command::Merge(args)) => cmd::merge::main(args),
        Some(Command::Chat(args)) => cmd::chat::main(args),
        Some(Command::Agent(args)) => cmd::agent::main(args),
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
