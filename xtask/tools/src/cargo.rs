//! cargo and rustc (the toolchain this xtask runs under: `$CARGO`, `$RUSTC`): versions, the target
//! directory, and the release build of the two binaries.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use xshell::{cmd, Cmd, Shell};

use crate::Program;

pub const CARGO: Program = Program {
    name: "cargo",
    version_args: &["--version"],
    install: "install Rust with rustup (https://rustup.rs)",
    used_for: "every build",
};

/// The cargo running this xtask (`$CARGO`), else `cargo` on PATH.
pub fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// Whether `name` is one of the variables `cargo run` sets for the program it runs, about that program's own
/// package (`CARGO_MANIFEST_DIR`, `CARGO_PKG_NAME` …: xtask's, under `cargo xtask`).
fn own_package_var(name: &str) -> bool {
    name.starts_with("CARGO_PKG_")
        || matches!(
            name,
            "CARGO_MANIFEST_DIR"
                | "CARGO_MANIFEST_PATH"
                | "CARGO_MANIFEST_LINKS"
                | "CARGO_CRATE_NAME"
                | "CARGO_BIN_NAME"
                | "CARGO_PRIMARY_PACKAGE"
                | "CARGO_TARGET_TMPDIR"
        )
}

/// `c` without xtask's own package variables. A cargo started with them sees another environment than one
/// started from a shell, and build scripts that watch one of them run again, with every crate above them:
/// ring's watches `CARGO_MANIFEST_DIR`, so rustls and bench-client were rebuilt (fat LTO: minutes) by each
/// `cargo xtask run` or `icount` after a plain `cargo build --release`, and the other way round.
fn plain(mut c: Cmd<'_>) -> Cmd<'_> {
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(own_package_var) {
            c = c.env_remove(name);
        }
    }
    c
}

/// `cargo --version`.
pub fn version(sh: &Shell) -> Option<String> {
    let cargo = cargo();
    cmd!(sh, "{cargo} --version").quiet().read().ok()
}

/// `cargo ARGS…` with this terminal's output; Err when it fails.
pub fn run(sh: &Shell, args: &[&str]) -> anyhow::Result<()> {
    let cargo = cargo();
    plain(cmd!(sh, "{cargo} {args...}")).run()?;
    Ok(())
}

/// `rustc -vV` (`$RUSTC` or `rustc`): the version line and the host triple (what `cargo build` without
/// `--target` targets).
pub fn rustc(sh: &Shell) -> (Option<String>, Option<String>) {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = cmd!(sh, "{rustc} -vV").quiet().read() else {
        return (None, None);
    };
    let version = out.lines().next().map(str::to_owned);
    let host = out
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_owned);
    (version, host)
}

/// `rustc --version` (what dist builds record).
pub fn rustc_version(sh: &Shell) -> String {
    cmd!(sh, "rustc --version").read().unwrap_or_default()
}

/// Cargo's target directory as cargo itself resolves it (CARGO_TARGET_DIR, config, or `target/`).
pub fn target_dir(sh: &Shell) -> anyhow::Result<PathBuf> {
    let meta = plain(cmd!(sh, "cargo metadata --format-version 1 --no-deps"))
        .quiet()
        .read()?;
    let meta: serde_json::Value = serde_json::from_str(&meta).context("parsing cargo metadata")?;
    let dir = meta["target_directory"]
        .as_str()
        .context("cargo metadata has no target_directory")?;
    Ok(PathBuf::from(dir))
}

/// `cargo build --release -p P…`, its output on this terminal.
pub fn build_release(sh: &Shell, packages: &[&str]) -> anyhow::Result<()> {
    let cargo = cargo();
    let args: Vec<String> = packages
        .iter()
        .flat_map(|p| ["-p".to_owned(), (*p).to_owned()])
        .collect();
    plain(cmd!(sh, "{cargo} build --release {args...}"))
        .run()
        .context("building release binaries")
}

/// `cargo ARGS…` quietly with `env` added; its stdout. Err when it fails.
pub fn read(sh: &Shell, args: &[&str], env: &[(&str, &str)]) -> anyhow::Result<String> {
    let cargo = cargo();
    let mut c = plain(cmd!(sh, "{cargo} {args...}"));
    for (k, v) in env {
        c = c.env(k, v);
    }
    Ok(c.quiet().read()?)
}

pub const CARGO_FUZZ: Program = Program {
    name: "cargo-fuzz",
    version_args: &["fuzz", "--version"],
    install: "cargo install cargo-fuzz --locked",
    used_for: "fuzzing (cargo xtask fuzz)",
};

/// `cargo-fuzz` on the PATH (or in cargo's bin directory), installed from crates.io when missing.
pub fn cargo_fuzz(sh: &Shell) -> anyhow::Result<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let candidates = |home: &Option<PathBuf>| {
        let mut c = vec![PathBuf::from("cargo-fuzz")];
        if let Some(h) = home {
            c.push(h.join("bin/cargo-fuzz"));
        }
        c
    };
    let works = |p: &Path| {
        cmd!(sh, "{p} fuzz --version")
            .quiet()
            .ignore_stderr()
            .read()
            .is_ok()
    };
    if let Some(found) = candidates(&home).into_iter().find(|p| works(p)) {
        return Ok(found);
    }
    println!("fuzz: installing cargo-fuzz from crates.io (once)");
    run(sh, &["install", "cargo-fuzz", "--locked"]).context("cargo install cargo-fuzz")?;
    candidates(&home).into_iter().find(|p| works(p)).context(
        "cargo-fuzz was installed but cannot be run (is cargo's bin directory on the PATH?)",
    )
}

/// The directory of `triple`'s standard library (`rustc --print target-libdir --target TRIPLE`).
pub fn target_libdir(sh: &Shell, triple: &str) -> Option<PathBuf> {
    cmd!(sh, "rustc --print target-libdir --target {triple}")
        .quiet()
        .ignore_stderr()
        .read()
        .ok()
        .map(|d| PathBuf::from(d.trim()))
}

/// `cross --version`'s first line, run with `path` as PATH (cross checks its toolchain even for --version).
pub fn cross_version(sh: &Shell, path: &str) -> Option<String> {
    let out = cmd!(sh, "cross --version")
        .env("PATH", path)
        .quiet()
        .ignore_stderr()
        .read()
        .ok()?;
    crate::first_line(&out)
}

/// `PROGRAM build --release --target TRIPLE --target-dir DIR -p P…` (`cargo` or `cross`) with `env` added,
/// its output on this terminal.
pub fn build_target(
    sh: &Shell,
    program: &str,
    triple: &str,
    dir: &Path,
    packages: &[&str],
    env: &[(String, String)],
) -> anyhow::Result<()> {
    let p: Vec<String> = packages
        .iter()
        .flat_map(|p| ["-p".to_owned(), (*p).to_owned()])
        .collect();
    let mut c = plain(cmd!(
        sh,
        "{program} build --release --target {triple} --target-dir {dir} {p...}"
    ));
    for (k, v) in env {
        c = c.env(k, v);
    }
    c.run()?;
    Ok(())
}

/// `cross build --release --target TRIPLE` in the shell's directory, with `env` added (PATH among them).
pub fn cross_build(sh: &Shell, triple: &str, env: &[(String, String)]) -> anyhow::Result<()> {
    let mut c = plain(cmd!(sh, "cross build --release --target {triple}"));
    for (k, v) in env {
        c = c.env(k, v);
    }
    c.run()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::own_package_var;

    /// What `cargo run` sets about the package it runs goes; what cargo and rustup need to find the
    /// toolchain, and settings a user made, stay.
    #[test]
    fn only_the_own_package_variables_are_removed() {
        for gone in [
            "CARGO_MANIFEST_DIR",
            "CARGO_MANIFEST_PATH",
            "CARGO_PKG_NAME",
            "CARGO_PKG_VERSION_MAJOR",
            "CARGO_PKG_RUST_VERSION",
            "CARGO_CRATE_NAME",
            "CARGO_BIN_NAME",
            "CARGO_PRIMARY_PACKAGE",
        ] {
            assert!(own_package_var(gone), "{gone}");
        }
        for kept in [
            "CARGO",
            "CARGO_HOME",
            "CARGO_TARGET_DIR",
            "CARGO_ENCODED_RUSTFLAGS",
            "RUSTFLAGS",
            "RUSTUP_TOOLCHAIN",
            "PATH",
        ] {
            assert!(!own_package_var(kept), "{kept}");
        }
    }
}
