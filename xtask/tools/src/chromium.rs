//! Chromium (Debian's `chromium`), headless: draws a page and takes its screenshot.

use std::path::Path;

use anyhow::Context as _;
use xshell::{cmd, Shell};

use crate::Program;

pub const CHROMIUM: Program = Program {
    name: "chromium",
    version_args: &["--version"],
    install: "apt-get install chromium",
    used_for: "drawing the reports in the test steps",
};

/// The browser's name on PATH (`chromium`, or Ubuntu's `chromium-browser`).
pub fn find() -> anyhow::Result<&'static str> {
    let other = Program {
        name: "chromium-browser",
        ..CHROMIUM
    };
    [CHROMIUM, other]
        .into_iter()
        .find(|p| p.path().is_some())
        .map(|p| p.name)
        .context("headless Chromium renders the reports in this test: apt-get install chromium")
}

/// Screenshots `url` into `png` in a `width`×`height` window, with a fresh profile in `profile`; at most 60 s.
pub fn screenshot(
    sh: &Shell,
    url: &str,
    png: &Path,
    (width, height): (u32, u32),
    profile: &Path,
) -> anyhow::Result<()> {
    let browser = find()?;
    let shot = format!("--screenshot={}", png.display());
    let size = format!("--window-size={width},{height}");
    let data = format!("--user-data-dir={}", profile.display());
    // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    cmd!(
        sh,
        "timeout 60 {browser} --headless --no-sandbox --disable-gpu --hide-scrollbars {data} {size} {shot} {url}"
    )
    .quiet()
    .ignore_stderr()
    .ignore_stdout()
    .run()
    .with_context(|| format!("{browser} could not render {url}"))
}

/// The DOM of `url` after its scripts ran (`--dump-dom`), with a fresh profile in `profile`; at most 60 s.
pub fn dump_dom(sh: &Shell, url: &str, profile: &Path) -> anyhow::Result<String> {
    let browser = find()?;
    let data = format!("--user-data-dir={}", profile.display());
    cmd!(
        sh,
        "timeout 60 {browser} --headless --no-sandbox --disable-gpu {data} --dump-dom {url}"
    )
    .quiet()
    .ignore_stderr()
    .read()
    .with_context(|| format!("{browser} could not load {url}"))
}
