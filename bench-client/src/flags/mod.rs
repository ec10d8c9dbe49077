//! The command line's flags, parsed by clap: the bottom of the module graph (they import nothing of the
//! crate but the operation catalogue). Validation against each other is `config` (run) and `chat::load`
//! (chat); dispatch is `cli`, at the top.

mod chat;
mod merge;
mod output;
mod run;
mod usage;

use clap::{Parser, Subcommand};

pub use chat::ChatArgs;
pub use merge::MergeArgs;
pub use output::Format;
pub use run::{HttpEngine, RunArgs};
pub use usage::{usage_error, UsageError};

#[derive(Debug, Parser)]
#[command(
    name = "bench-client",
    version,
    about = "wsbench load generator: closed- and open-loop SOAP/HTTP load with HDR latency histograms",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// `bench-client --url … --operation …` is `bench-client run --url … --operation …`.
    #[command(flatten)]
    pub run: Option<RunArgs>,
}

// Parsed once per process: the size of `Run`'s flags costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate SOAP/HTTP load and report throughput and latency (the default subcommand).
    Run(RunArgs),
    /// Merge results documents of several client processes or hosts exactly (histograms added).
    Merge(MergeArgs),
    /// VolanoMark's chat workload against a VOLANO-protocol chat server: score, fan-out latency, validation.
    Chat(ChatArgs),
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::operation::Operation;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("bench-client").chain(args.iter().copied()))
    }

    #[test]
    fn run_is_the_default_subcommand() {
        let a = parse(&["--operation", "echo", "--clients", "4"]).unwrap();
        assert_eq!(a.run.as_ref().unwrap().url, None);
        assert!(a.command.is_none());
        let r = a.run.unwrap();
        assert_eq!(r.operation, Some(Operation::Echo));
        assert_eq!(r.clients, 4);
        let b = parse(&[
            "run",
            "--url",
            "http://x",
            "--operation",
            "get",
            "--duration",
            "8h",
        ])
        .unwrap();
        let Some(Command::Run(r)) = b.command else {
            panic!("expected run")
        };
        assert_eq!(r.duration, Some(Duration::from_secs(28_800)));
    }

    #[test]
    fn wrk_and_oha_short_flags_and_a_positional_url() {
        let a = parse(&[
            "-c",
            "10",
            "-d",
            "5s",
            "-t",
            "2",
            "http://x/",
            "-H",
            "A: b",
            "-H",
            "C: d",
        ])
        .unwrap();
        let r = a.run.unwrap();
        assert_eq!(r.url_arg.as_deref(), Some("http://x/"));
        assert_eq!((r.clients, r.threads), (10, Some(2)));
        assert_eq!(r.duration, Some(Duration::from_secs(5)));
        assert_eq!(r.headers, ["A: b", "C: d"]);
        let r = parse(&["-n", "7", "-R", "50", "-m", "POST", "http://x"])
            .unwrap()
            .run
            .unwrap();
        assert_eq!((r.requests, r.rate), (Some(7), Some(50.0)));
        assert_eq!(r.method.as_deref(), Some("POST"));
    }

    #[test]
    fn merge_needs_no_run_flags() {
        let a = parse(&["merge", "a.json", "b.json", "--json", "out.json"]).unwrap();
        let Some(Command::Merge(m)) = a.command else {
            panic!("expected merge")
        };
        assert_eq!(m.inputs.len(), 2);
    }

    #[test]
    fn usage_errors() {
        assert!(parse(&["--url", "http://x", "--operation", "nope"]).is_err());
        let both = [
            "--url",
            "http://x",
            "--operation",
            "echo",
            "--duration",
            "1s",
            "--requests",
            "5",
        ];
        assert!(parse(&both).is_err());
        assert!(parse(&["--url", "http://x", "--operation", "echo", "--clients", "0"]).is_err());
        assert!(parse(&[
            "--url",
            "http://x",
            "--operation",
            "echo",
            "--message-size",
            "big"
        ])
        .is_err());
        assert!(parse(&["merge", "--json", "out.json"]).is_err());
    }
}
