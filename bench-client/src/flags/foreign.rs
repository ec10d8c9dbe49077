//! wrk's and oha's flags that bench-client does not offer, each with the reason and what to use instead:
//! when clap finds one of them unknown, the user reads why rather than a guess at a similar flag.

/// (flag, tool, why it is not offered and what to use instead).
const NOT_OFFERED: &[(&str, &str, &str)] = &[
    ("-s", "wrk", SCRIPT),
    ("--script", "wrk", SCRIPT),
    ("-w", "oha", WAIT),
    ("--wait-ongoing-requests-after-deadline", "oha", WAIT),
    ("--burst-delay", "oha", BURST),
    ("--burst-rate", "oha", BURST),
    ("--rand-regex-url", "oha", ONE_URL),
    ("--urls-from-file", "oha", ONE_URL),
    ("--max-repeat", "oha", ONE_URL),
    ("--dump-urls", "oha", ONE_URL),
    ("-x", "oha", PROXY),
    ("--proxy-header", "oha", PROXY),
    ("--proxy-http-version", "oha", PROXY),
    ("--proxy-http2", "oha", PROXY),
    ("-Z", "oha", ONE_BODY),
    ("-F", "oha", ONE_BODY),
    ("--form", "oha", ONE_BODY),
    (
        "--aws-session",
        "oha",
        "requests are not signed: give the headers with -H",
    ),
    (
        "--aws-sigv4",
        "oha",
        "requests are not signed: give the headers with -H",
    ),
    (
        "--no-pre-lookup",
        "oha",
        "the host is resolved once, before the run",
    ),
    ("--cert", "oha", "no client certificates"),
    ("--key", "oha", "no client certificates"),
    (
        "--connect-to",
        "oha",
        "put the address in the URL and the name in --host",
    ),
    ("--unix-socket", "oha", "TCP only"),
    ("--vsock-addr", "oha", "TCP only"),
    (
        "--stats-success-breakdown",
        "oha",
        "latency is timed for successful calls only; failed calls are counted by kind and status",
    ),
    (
        "--db-url",
        "oha",
        "the results document (--json) holds histograms, not each request",
    ),
    ("--debug", "oha", "no single-request dump: try curl -v"),
    ("-o", "oha", OUTPUT),
    ("--output", "oha", OUTPUT),
    ("--output-format", "oha", OUTPUT),
    ("-j", "oha", OUTPUT),
    (
        "-u",
        "oha",
        "latency is printed in ms (the results document holds µs)",
    ),
    (
        "--time-unit",
        "oha",
        "latency is printed in ms (the results document holds µs)",
    ),
];

const SCRIPT: &str =
    "Lua scripts are not run: shape the request with -m, -H, --body or --body-file";
const WAIT: &str = "calls in flight at the deadline are not waited for: they are reported apart \
                    (\"In flight\", counts.in_flight)";
const BURST: &str = "no bursts: -R/-q spreads the calls evenly over time";
const ONE_URL: &str = "one URL per run";
const PROXY: &str = "no proxy: connections go straight to the URL's address";
const ONE_BODY: &str = "one request body per run: --body or --body-file (-D)";
const OUTPUT: &str =
    "the results are written with --json FILE (or --json - for standard output): a \
                      wsbench.results/v1 document, not oha's layout";

/// What to tell a user who gave one of wrk's or oha's flags that bench-client does not offer: `None` if
/// `e` is about anything else.
pub fn not_offered(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let flag = arg.split_once('=').map_or(arg.as_str(), |(f, _)| f);
    NOT_OFFERED
        .iter()
        .find(|(f, _, _)| *f == flag)
        .map(|(f, tool, why)| format!("{tool}'s {f} is not offered: {why} (docs/contracts.md)"))
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;
    use crate::flags::Cli;

    fn refusal(args: &[&str]) -> Option<String> {
        let e = Cli::try_parse_from(std::iter::once("bench-client").chain(args.iter().copied()))
            .expect_err("refused");
        not_offered(&e)
    }

    #[test]
    fn each_foreign_flag_is_refused_with_its_reason() {
        for (flag, tool, why) in NOT_OFFERED {
            let said = refusal(&[flag, "x", "http://127.0.0.1:9/"])
                .unwrap_or_else(|| panic!("{flag}: clap accepted it or gave another error"));
            assert!(said.starts_with(&format!("{tool}'s {flag} ")), "{said}");
            assert!(said.contains(why), "{said}");
        }
        let said = refusal(&["--output-format=json", "http://127.0.0.1:9/"]).unwrap();
        assert!(said.contains("--json FILE"), "{said}");
        assert_eq!(refusal(&["--no-such-flag", "http://127.0.0.1:9/"]), None);
    }
}
