//! cargo and rustc (the toolchain this xtask runs under: `$CARGO`, `$RUSTC`): versions, the target
//! directory, and the release build of the two binaries.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use xshell::{cmd, Shell};

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

/// `cargo --version`.
pub fn version(sh: &Shell) -> Option<String> {
    let cargo = cargo();
    cmd!(sh, "{cargo} --version").quiet().read().ok()
}

/// `cargo ARGS…` with this terminal's output; Err when it fails.
pub fn run(sh: &Shell, args: &[&str]) -> anyhow::Result<()> {
    let cargo = cargo();
    cmd!(sh, "{cargo} {args...}").run()?;
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
    let meta = cmd!(sh, "cargo metadata --format-version 1 --no-deps")
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
    cmd!(sh, "{cargo} build --release {args...}")
        .run()
        .context("building release binaries")
}

/// `cargo ARGS…` quietly with `env` added; its stdout. Err when it fails.
pub fn read(sh: &Shell, args: &[&str], env: &[(&str, &str)]) -> anyhow::Result<String> {
    let cargo = cargo();
    let mut c = cmd!(sh, "{cargo} {args...}");
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
    let mut c = cmd!(
        sh,
        "{program} build --release --target {triple} --target-dir {dir} {p...}"
    );
    for (k, v) in env {
        c = c.env(k, v);
    }
    c.run()?;
    Ok(())
}

/// `cross build --release --target TRIPLE` in the shell's directory, with `env` added (PATH among them).
pub fn cross_build(sh: &Shell, triple: &str, env: &[(String, String)]) -> anyhow::Result<()> {
    let mut c = cmd!(sh, "cross build --release --target {triple}");
    for (k, v) in env {
        c = c.env(k, v);
    }
    c.run()?;
    Ok(())
}
