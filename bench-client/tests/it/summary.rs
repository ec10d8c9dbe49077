//! The console summary (issue 27, item 12): within 80 columns as wrk's and oha's are, saying what its
//! figures are of — bodies or XML, no latency when nothing succeeded, validations of successful calls only.

use http::StatusCode;

use crate::support::{respond, run_bin, schema_checked, tmp, Counts, Server};

fn stdout_of(args: &[&str]) -> String {
    let out = run_bin(args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.code().is_some(),
        "{args:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn assert_fits_80_columns(text: &str) {
    for line in text.lines() {
        let columns = line.chars().count();
        assert!(columns <= 80, "{columns} columns: {line:?}\n{text}");
    }
}

#[test]
fn the_summary_fits_80_columns_and_names_what_the_bytes_were() {
    let server = Server::bench_server();
    let health = format!("{}/health", server.url());
    let text = stdout_of(&["-c", "2", "-n", "200", &health]);
    assert_fits_80_columns(&text);
    assert!(
        text.contains("MB/s of bodies:") && !text.contains("XML"),
        "{text}"
    );
    assert!(text.contains("200 ok ("), "{text}");

    // Open loop: both latency tables, and SOAP bodies, which are XML.
    let soap = [
        "--url",
        &server.url(),
        "--operation",
        "echoComplexTypeDoc",
        "-c",
        "2",
        "-n",
        "50",
        "-R",
        "1000",
    ];
    let text = stdout_of(&soap);
    assert_fits_80_columns(&text);
    assert!(text.contains("MB/s of XML:"), "{text}");
    assert!(
        text.contains("uncorrected") && text.contains("p99.99"),
        "{text}"
    );
}

#[test]
fn a_run_in_which_nothing_succeeded_has_no_latency_and_no_validations() {
    let server = Server::http(Counts::new(), |_, _| {
        respond(StatusCode::INTERNAL_SERVER_ERROR, "no")
    });
    let json = tmp("nothing-succeeded.json");
    let text = stdout_of(&["-n", "50", &server.url(), "--json", json.to_str().unwrap()]);
    assert_fits_80_columns(&text);
    assert!(text.contains("no latency: nothing completed"), "{text}");
    assert!(!text.contains("Latency (ms)"), "{text}");
    // Validations counted are of calls that succeeded: none here (the first 10 were sampled, and failed).
    assert!(text.contains("0 ok, 50 failed"), "{text}");
    assert!(!text.contains("validated"), "{text}");
    assert_eq!(
        schema_checked(&json)["counts"]["validated"].as_u64(),
        Some(0)
    );
}
