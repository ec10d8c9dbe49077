//! The command line's exit statuses: 0 ok, 1 errors (unless --allow-errors) or failure to start, 2 usage.

use crate::support::run_bin;

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

    let out = run_bin(&[&refused[..], &["--allow-errors"]].concat());
    assert_eq!(out.status.code(), Some(0));

    for usage in [
        &["--url", url.as_str()][..],
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
