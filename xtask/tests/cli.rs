//! `cargo xtask` as a user meets it: the real binary, its exit code and what it prints on an error.

use std::process::Command;

/// Issue 27, item 14: with RUST_BACKTRACE=1 set, as many Rust users have it, a user's error (here, a scenario
/// that does not exist) prints the error and its causes, not anyhow's backtrace.
#[test]
fn a_user_error_prints_no_backtrace_under_rust_backtrace() {
    for var in ["RUST_BACKTRACE", "RUST_LIB_BACKTRACE"] {
        let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
            .args(["list", "no-such-scenario"])
            .env(var, "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.starts_with("error: "), "{err}");
        assert!(err.contains("no-such-scenario"), "{err}");
        assert!(!err.to_lowercase().contains("backtrace"), "{err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
    }
}
