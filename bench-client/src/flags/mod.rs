//! The command line's flags, parsed by clap: the bottom of the module graph (they import nothing of the
//! crate but the operation catalogue). Validation against each other is `config` (run) and `chat::load`
//! (chat); dispatch is `cli`, at the top.

mod agent;
mod chat;
mod compat;
mod foreign;
mod merge;
mod output;
mod run;
mod usage;
mod values;

use clap::{Parser, Subcommand};

pub use agent::AgentArgs;
pub use chat::ChatArgs;
pub use compat::{Compat, HttpVersion};
pub use foreign::not_offered;
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
    subcommand_negates_reqs = true,
    disable_version_flag = true,
    after_help = "wrk's and oha's flags: each flag above names the one it stands for; where the two \
                  tools disagree (oha's -d, -t, -T), wrk's meaning wins. Those not offered (wrk's -s; \
                  oha's -w, -x, -o, -Z, …) are refused with the reason. See docs/contracts.md."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Print the version. [wrk: -v/--version; oha: -V/--version]
    #[arg(short = 'V', visible_short_alias = 'v', long, action = clap::ArgAction::Version)]
    version: Option<bool>,
    /// `bench-client --url … --operation …` is `bench-client run --url … --operation …`. Not an `Option`:
    /// clap leaves the group of an `Option` of flattened flags empty when they flatten more flags
    /// (`Compat`), so it would always be `None`.
    #[command(flatten)]
    pub run: RunArgs,
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
    /// Sample this host and a server process on it for runs elsewhere (`--agent HOST:PORT`): CPU with
    /// steal, the process's CPU, RSS, fds and threads, network bytes and retransmits.
    Agent(AgentArgs),
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
        assert_eq!(a.run.url, None);
        assert!(a.command.is_none());
        let r = a.run;
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
        let r = a.run;
        assert_eq!(r.url_arg.as_deref(), Some("http://x/"));
        assert_eq!((r.clients, r.threads), (10, Some(2)));
        assert_eq!(r.duration, Some(Duration::from_secs(5)));
        assert_eq!(r.headers, ["A: b", "C: d"]);
        let r = parse(&["-n", "7", "-R", "50", "-m", "POST", "http://x"])
            .unwrap()
            .run;
        assert_eq!((r.requests, r.rate), (Some(7), Some(50.0)));
        assert_eq!(r.method.as_deref(), Some("POST"));
    }

    #[test]
    fn every_wrk_flag_is_read_as_wrk_reads_it() {
        let r = parse(&[
            "--connections",
            "1k",
            "--threads",
            "2",
            "--duration",
            "3",
            "--header",
            "A: b",
            "--latency",
            "--timeout",
            "2",
            "http://x/",
        ])
        .unwrap()
        .run;
        assert_eq!((r.clients, r.threads), (1000, Some(2)));
        assert_eq!(r.duration, Some(Duration::from_secs(3)));
        assert_eq!(r.timeout, Duration::from_secs(2));
        assert_eq!(r.headers, ["A: b"]);
        assert!(r.compat.latency);
        let r = parse(&["-L", "-T", "2m", "-d", "1M", "http://x/"])
            .unwrap()
            .run;
        assert_eq!(r.timeout, Duration::from_secs(120));
        assert_eq!(r.duration, Some(Duration::from_secs(60)));
        assert!(r.compat.latency);
        assert_eq!(
            parse(&["-v"]).unwrap_err().kind(),
            clap::error::ErrorKind::DisplayVersion
        );
    }

    #[test]
    fn every_oha_flag_that_does_not_clash_with_wrk_is_read_as_oha_reads_it() {
        let r = parse(&[
            "-n",
            "10k",
            "-c",
            "50",
            "-p",
            "1",
            "-q",
            "100",
            "--latency-correction",
            "--no-tui",
            "--fps",
            "16",
            "-m",
            "PUT",
            "-H",
            "A: b",
            "--connect-timeout",
            "3s",
            "-A",
            "text/plain",
            "-D",
            "body.json",
            "-a",
            "u:p",
            "--http-version",
            "2",
            "--host",
            "h",
            "--disable-compression",
            "-r",
            "0",
            "--disable-keepalive",
            "--ipv4",
            "--cacert",
            "ca.pem",
            "--insecure",
            "--no-color",
            "https://x/",
        ])
        .unwrap()
        .run;
        assert_eq!(
            (r.requests, r.clients, r.rate),
            (Some(10_000), 50, Some(100.0))
        );
        assert_eq!(r.connect_timeout, Duration::from_secs(3));
        assert_eq!(
            r.body_file.as_deref(),
            Some(std::path::Path::new("body.json"))
        );
        assert_eq!(r.compat.http_version, Some(HttpVersion::Http2));
        assert!(r.no_keepalive && r.insecure && r.compat.ipv4);
        assert_eq!(
            r.compat.headers(),
            ["Accept: text/plain", "Authorization: Basic dTpw", "Host: h"]
        );
        let r = parse(&["-z", "3s", "--disable-color", "http://x/"])
            .unwrap()
            .run;
        assert_eq!(r.duration, Some(Duration::from_secs(3)));
        assert!(r.compat.no_color);
        // Where oha and wrk clash, wrk wins: -d is a duration, -t threads, -T a timeout.
        assert!(parse(&["-d", "{}", "http://x/"]).is_err());
        assert!(parse(&["-t", "5s", "http://x/"]).is_err());
        assert!(parse(&["-T", "text/plain", "http://x/"]).is_err());
        // Values that would change what oha does, and bench-client cannot: refused.
        assert!(parse(&["-p", "2", "http://x/"]).is_err());
        assert!(parse(&["-r", "10", "http://x/"]).is_err());
        assert!(parse(&["--http-version", "1.0", "http://x/"]).is_err());
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
