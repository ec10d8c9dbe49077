//! The command line's exit statuses: 0 ok, 1 errors (unless --allow-errors) or failure to start, 2 usage.

use http::StatusCode;

use crate::support::{respond, run_bin, Counts, Server};

#[test]
fn exit_statuses() {
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let url = format!("http://{addr}");
    let refused = [
        "--url",
        url.as_str(),
        "--operation",
        "http-get",
        "--requests",
        "3",
    ];

    let out = run_bin(&refused);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("connect 3"), "{stdout}");

    // Nothing measured fails even with --allow-errors, and says why.
    let out = run_bin(&[&refused[..], &["--allow-errors"]].concat());
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no call succeeded: 3 failed"), "{stderr}");

    // Some calls failed, some succeeded: --allow-errors makes that a success.
    let server = Server::http(Counts::new(), |n, _| {
        if n % 2 == 0 {
            respond(StatusCode::OK, "ok")
        } else {
            respond(StatusCode::SERVICE_UNAVAILABLE, "busy")
        }
    });
    let half = ["--url", &server.url(), "--requests", "4"];
    assert_eq!(run_bin(&half).status.code(), Some(1));
    let out = run_bin(&[&half[..], &["--allow-errors"]].concat());
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("HTTP statuses  503 ×2"), "{stdout}");

    for usage in [
        &["--clients", "2"][..],
        &["http://127.0.0.1:99999"],
        &["--url", "http://127.0.0.1:99999", "--operation", "echo"],
        &["--url", url.as_str(), "--operation", "nope"],
        &[
            "--url",
            url.as_str(),
            "--operation",
            "get",
            "--duration",
            "1s",
            "--requests",
            "1",
        ],
        &["--url", "ftp://x", "--operation", "get"],
        &[],
    ] {
        let out = run_bin(usage);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{usage:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    let out = run_bin(&[
        "--url",
        "http://no-such-host.invalid:1",
        "--operation",
        "get",
        "--requests",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(1), "failure to start");
}
