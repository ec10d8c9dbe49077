//! bench-client in place of wrk and oha (issue 27, item 9): their command lines run as they would there,
//! wrk's meaning winning where the two clash, and their flags that bench-client does not offer are refused
//! with the reason.

use crate::support::{run_bin, schema_checked, tmp, Server};

/// The run's parameters as its results document records them.
fn params(args: &[&str], name: &str) -> serde_json::Value {
    let json = tmp(name);
    let out = run_bin(&[args, &["--json", json.to_str().unwrap()]].concat());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    schema_checked(&json)["params"].clone()
}

#[test]
fn wrk_command_line() {
    let server = Server::bench_server();
    let url = format!("{}/health", server.url());
    // wrk reads bare numbers as seconds; --latency asks for what is always printed.
    let p = params(
        &[
            "--latency",
            "-c",
            "2",
            "-t",
            "1",
            "-d",
            "1",
            "--timeout",
            "2",
            &url,
        ],
        "wrk.json",
    );
    assert_eq!(
        (p["clients"].as_u64(), p["threads"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(
        (p["duration_s"].as_f64(), p["timeout_s"].as_f64()),
        (Some(1.0), Some(2.0))
    );
}

#[test]
fn oha_command_line() {
    let server = Server::bench_server();
    let url = format!("{}/health", server.url());
    // -z is oha's duration and -q its rate limit, here the open loop's rate.
    let p = params(&["-z", "1s", "-q", "100", "-c", "2", &url], "oha-z.json");
    assert_eq!(
        (p["duration_s"].as_f64(), p["rate"].as_f64()),
        (Some(1.0), Some(100.0))
    );
    let p = params(
        &[
            "-n",
            "0.2k",
            "-c",
            "2",
            "--no-tui",
            "--disable-keepalive",
            "-A",
            "text/plain",
            &url,
        ],
        "oha-n.json",
    );
    assert_eq!(p["requests"].as_u64(), Some(200));
    assert_eq!(p["keepalive"].as_bool(), Some(false));
}

#[test]
fn flags_not_offered_say_why() {
    for (args, said) in [
        (
            &["-s", "post.lua"][..],
            "wrk's -s is not offered: Lua scripts are not run",
        ),
        (
            &["-w", "-z", "1s"],
            "oha's -w is not offered: calls in flight at the deadline",
        ),
        (
            &["--output-format", "json"],
            "oha's --output-format is not offered",
        ),
        (&["-p", "4"], "every connection has one call in flight"),
        (&["-d", "{}"], "oha's -d, a body, is --body"),
    ] {
        let out = run_bin(&[args, &["http://127.0.0.1:9/"]].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(said), "{args:?}: {stderr}");
    }
}

#[test]
fn json_takes_a_path_never_the_url() {
    let server = Server::bench_server();
    let url = format!("{}/health", server.url());
    // oha before 1.9 had a --json that took no value: here the URL must not become the path.
    let out = run_bin(&["-c", "2", "-n", "10", "--json", &url]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("is a URL: --json needs where to write"),
        "{stderr}"
    );
    assert!(stderr.contains("`--json -`"), "{stderr}");
    let out = run_bin(&["-c", "2", "-n", "10", "--json", "-", &url]);
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("the document on stdout");
    assert_eq!(doc["counts"]["ok"].as_u64(), Some(10));
}
