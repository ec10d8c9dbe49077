//! wrk, the reference HTTP load generator (`icount`, `calibrate`): its command line, a Lua script that posts a
//! body, and its summary parsed once.

use xshell::{cmd, Shell};

use crate::Program;

pub const WRK: Program = Program {
    name: "wrk",
    version_args: &["-v"],
    install: "apt-get install wrk",
    used_for: "calibration and the client rows of icount",
};

/// What wrk's summary says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// `52000 requests in 10.00s, …`.
    pub requests: Option<u64>,
    /// `Requests/sec:  12345.67`.
    pub rate: Option<f64>,
    /// The `Non-2xx or 3xx responses` or `Socket errors` line, when there is one.
    pub errors: Option<String>,
}

/// Parses wrk's summary.
pub fn parse(text: &str) -> Summary {
    Summary {
        requests: text
            .lines()
            .find_map(|l| l.trim().split_once(" requests in "))
            .and_then(|(n, _)| n.trim().parse().ok()),
        rate: text
            .lines()
            .find_map(|l| l.trim().strip_prefix("Requests/sec:"))
            .and_then(|v| v.trim().parse().ok()),
        errors: text
            .lines()
            .find(|l| l.contains("Non-2xx") || l.contains("Socket errors"))
            .map(|l| l.trim().to_owned()),
    }
}

/// `wrk -t THREADS -c CONNS -d DURATION [-s SCRIPT] URL`.
pub fn argv(
    threads: u32,
    conns: u32,
    duration: &str,
    script: Option<&str>,
    url: &str,
) -> Vec<String> {
    let mut v = vec![
        "wrk".to_owned(),
        format!("-t{threads}"),
        format!("-c{conns}"),
        format!("-d{duration}"),
    ];
    if let Some(s) = script {
        v.extend(["-s".to_owned(), s.to_owned()]);
    }
    v.push(url.to_owned());
    v
}

/// Runs `prefix… wrk …` (a `taskset -c CPUS` prefix, or none) and returns its output and its summary.
pub fn run(sh: &Shell, prefix: &[String], wrk: &[String]) -> anyhow::Result<(String, Summary)> {
    let argv: Vec<&String> = prefix.iter().chain(wrk).collect();
    let (program, args) = argv.split_first().expect("a command line");
    let text = cmd!(sh, "{program} {args...}").quiet().read()?;
    let summary = parse(&text);
    Ok((text, summary))
}

/// A wrk script that posts `body` with `content_type` and an empty SOAPAction.
pub fn post_script(body: &str, content_type: &str) -> String {
    let body = body.replace('\\', "\\\\").replace('"', "\\\"");
    format!(
        "wrk.method = \"POST\"\nwrk.body = \"{body}\"\nwrk.headers[\"Content-Type\"] = \"{content_type}\"\nwrk.headers[\"SOAPAction\"] = \"\\\"\\\"\"\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_wrks_summary() {
        let text = "Running 2s test @ http://127.0.0.1:1/health\n  1 threads and 1 connections\n  52000 requests in 10.00s, 5.1MB read\n  Non-2xx or 3xx responses: 3\nRequests/sec:  12345.67\n";
        let s = parse(text);
        assert_eq!(s.requests, Some(52000));
        assert_eq!(s.rate, Some(12345.67));
        assert_eq!(s.errors.as_deref(), Some("Non-2xx or 3xx responses: 3"));
        assert_eq!(parse("nothing"), Summary::default());
        assert_eq!(
            argv(1, 2, "3s", None, "u"),
            ["wrk", "-t1", "-c2", "-d3s", "u"]
        );
    }
}
